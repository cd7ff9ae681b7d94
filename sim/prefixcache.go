package sim

import (
	"encoding/json"
	"strings"

	"github.com/llmprobe/llmprobe/sim/internal/content"
	"github.com/llmprobe/llmprobe/sim/internal/prefixcache"
)

// promptBlocks hashes a prompt's full blocks of tokens: a chat prompt's
// tokens are, per message, its role and template tokens then its words; a
// completion's, its words.
func (req *generateRequest) promptBlocks(chat bool) []uint64 {
	b := prefixcache.NewHasher()
	if chat {
		for _, m := range req.Messages {
			b.Add("<|" + m.Role + "|>")
			for range chatTemplateTokens - 1 {
				b.Add("<|t|>")
			}
			addText(b, m.Content)
		}
	} else {
		addText(b, req.Prompt)
	}
	return b.Hashes()
}

// addText adds the words of a JSON string, list of strings or content parts.
func addText(b *prefixcache.Hasher, raw json.RawMessage) {
	content.EachText(raw, func(text string) {
		for _, w := range strings.Fields(text) {
			b.Add(w)
		}
	})
}

// promptDetails is what the usage says of the prefix cache: nothing without
// one (blocks are hashed only with a cache).
func (s *sequence) promptDetails() *promptDetails {
	if s == nil || s.blocks == nil {
		return nil
	}
	return &promptDetails{CachedTokens: s.cachedTokens}
}
