// Package prefixcache is the simulated engine's prefix cache: an LRU of
// prompt blocks keyed as vLLM's automatic prefix caching keys them.
package prefixcache

import (
	"container/list"
	"hash"
	"hash/fnv"
	"io"
)

// Block is how many prompt tokens one block holds, as vLLM's default
// block size.
const Block = 16

// Cache is an LRU of prompt blocks keyed by the hash of the whole prompt up
// to and including the block: a block hits only when everything before it
// matched too.
type Cache struct {
	capacity int // in blocks
	order    *list.List
	blocks   map[uint64]*list.Element
}

// New returns a cache of tokens prompt tokens, nil (no cache) below a block.
func New(tokens int) *Cache {
	if tokens < Block {
		return nil
	}
	return &Cache{capacity: tokens / Block, order: list.New(), blocks: map[uint64]*list.Element{}}
}

// Admit looks up a prompt of n tokens by its block hashes, stores its
// blocks, and returns how many of its tokens the cache served: the leading
// run of blocks that hit, never the whole prompt (the last token is
// always computed, as vLLM does). A nil cache serves none.
func (c *Cache) Admit(hashes []uint64, n int) int {
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
	return min(hit*Block, max(n-1, 0))
}

// Hasher hashes a prompt token by token into its blocks' keys.
type Hasher struct {
	h      hash.Hash64
	n      int
	hashes []uint64
}

// NewHasher starts a prompt.
func NewHasher() *Hasher {
	return &Hasher{h: fnv.New64a(), hashes: []uint64{}} // not nil: the usage then reports the cache
}

// Add hashes one token.
func (b *Hasher) Add(token string) {
	_, _ = io.WriteString(b.h, token)
	_, _ = b.h.Write([]byte{0}) // tokens apart: "ab"+"c" is not "a"+"bc"
	b.n++
	if b.n%Block == 0 {
		b.hashes = append(b.hashes, b.h.Sum64())
	}
}

// Hashes are the keys of the prompt's full blocks so far.
func (b *Hasher) Hashes() []uint64 { return b.hashes }
