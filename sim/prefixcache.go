package sim

import (
	"container/list"
	"encoding/json"
	"hash"
	"hash/fnv"
	"io"
	"strings"
)

// cacheBlock is how many prompt tokens one prefix-cache block holds, as
// vLLM's default block size.
const cacheBlock = 16

// prefixCache is an LRU of prompt blocks keyed by the hash of the whole
// prompt up to and including the block, as vLLM's automatic prefix caching
// keys them: a block hits only when everything before it matched too.
type prefixCache struct {
	capacity int // in blocks
	order    *list.List
	blocks   map[uint64]*list.Element
}

func newPrefixCache(tokens int) *prefixCache {
	if tokens < cacheBlock {
		return nil
	}
	return &prefixCache{capacity: tokens / cacheBlock, order: list.New(), blocks: map[uint64]*list.Element{}}
}

// admit returns how many leading tokens of a prompt of n tokens, with these
// block hashes, the cache holds, then keeps its blocks as most recent. At
// least the last token is always computed, as in vLLM.
func (c *prefixCache) admit(hashes []uint64, n int) int {
	if c == nil {
		return 0
	}
	hit := 0
	for hit < len(hashes) {
		if _, ok := c.blocks[hashes[hit]]; !ok {
			break
		}
		hit++
	}
	for _, h := range hashes {
		if e, ok := c.blocks[h]; ok {
			c.order.MoveToFront(e)
			continue
		}
		c.blocks[h] = c.order.PushFront(h)
		if c.order.Len() > c.capacity {
			oldest := c.order.Back()
			delete(c.blocks, oldest.Value.(uint64))
			c.order.Remove(oldest)
		}
	}
	return min(hit*cacheBlock, max(n-1, 0))
}

// promptBlocks hashes a prompt's full blocks of tokens: a chat prompt's
// tokens are, per message, its role and template tokens then its words; a
// completion's, its words.
func (req *generateRequest) promptBlocks(chat bool) []uint64 {
	b := blockHasher{h: fnv.New64a(), hashes: []uint64{}} // not nil: the usage then reports the cache
	if chat {
		for _, m := range req.Messages {
			b.add("<|" + m.Role + "|>")
			for range chatTemplateTokens - 1 {
				b.add("<|t|>")
			}
			b.addText(m.Content)
		}
	} else {
		b.addText(req.Prompt)
	}
	return b.hashes
}

// blockHasher hashes tokens in order, one FNV-1a over all of them so far,
// keeping its value at the end of each full block.
type blockHasher struct {
	h      hash.Hash64
	n      int
	hashes []uint64
}

func (b *blockHasher) add(token string) {
	_, _ = io.WriteString(b.h, token)
	_, _ = b.h.Write([]byte{0}) // tokens apart: "ab"+"c" is not "a"+"bc"
	b.n++
	if b.n%cacheBlock == 0 {
		b.hashes = append(b.hashes, b.h.Sum64())
	}
}

// addText adds the words of a JSON string, list of strings or content parts.
func (b *blockHasher) addText(raw json.RawMessage) {
	eachText(raw, func(text string) {
		for _, w := range strings.Fields(text) {
			b.add(w)
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
