// Package shard splits llmprobe's work among replicas by i/N: each target
// to one replica (--shard), each arrival of a burst to one replica
// (--burst.shard).
package shard

import (
	"fmt"
	"hash/fnv"
	"strconv"
	"strings"

	"github.com/llmprobe/llmprobe/config"
)

// Shard is one replica's share, Index of Count. The zero Shard, like one
// of one, is the whole.
type Shard struct {
	Index, Count int
}

// Parse reads "i/N" with 0 <= i < N; "" means the only shard.
func Parse(s string) (Shard, error) {
	if s == "" {
		return Shard{0, 1}, nil
	}
	is, ns, ok := strings.Cut(s, "/")
	i, err1 := strconv.Atoi(is)
	n, err2 := strconv.Atoi(ns)
	if !ok || err1 != nil || err2 != nil || n < 1 || i < 0 || i >= n {
		return Shard{}, fmt.Errorf("shard %q must be i/N with 0 <= i < N, like 0/3", s)
	}
	return Shard{i, n}, nil
}

// Owns reports whether this shard probes the named target. Targets are
// spread by rendezvous hashing of their names, so every target has exactly
// one owner and changing N moves only about 1/N of them.
func (s Shard) Owns(target string) bool {
	if s.Count <= 1 {
		return true
	}
	return OwnerOf(target, s.Count) == s.Index
}

// OwnerOf is the shard, out of n, with the highest hash for the target.
func OwnerOf(target string, n int) int {
	best, owner := uint64(0), 0
	for i := range n {
		h := fnv.New64a()
		fmt.Fprintf(h, "%s\x00%d", target, i)
		// fnv of near-equal inputs is correlated; a final mix spreads it.
		if v := mix(h.Sum64()); v > best || i == 0 {
			best, owner = v, i
		}
	}
	return owner
}

func mix(x uint64) uint64 {
	x ^= x >> 33
	x *= 0xff51afd7ed558ccd
	x ^= x >> 33
	x *= 0xc4ceb9fe1a85ec53
	x ^= x >> 33
	return x
}

// Takes reports whether this shard sends arrival n of a burst's whole
// plan: round robin by index rather than a hash of it, so every shard gets
// the same count to within one and an exact rate/N share.
func (s Shard) Takes(n int) bool {
	return s.Count <= 1 || n%s.Count == s.Index
}

// Filter returns c with the targets this shard does not own left out, and
// bursts against them too; c itself when the shard is the whole. The
// targets of a comparison share one owner (that of the group's first name),
// since a comparison probes both of its targets from one replica.
func (s Shard) Filter(c *config.Config) *config.Config {
	if s.Count <= 1 {
		return c
	}
	group := groups(c)
	out := *c
	out.Targets = nil
	for _, t := range c.Targets {
		if s.Owns(group.root(t.Name)) {
			out.Targets = append(out.Targets, t)
		}
	}
	out.Bursts = nil
	for _, b := range c.Bursts {
		if s.Owns(group.root(b.Target)) {
			out.Bursts = append(out.Bursts, b)
		}
	}
	return &out
}

// targetGroups joins the targets that comparisons link (union-find): each
// name maps towards the smallest name of its group.
type targetGroups map[string]string

func groups(c *config.Config) targetGroups {
	g := targetGroups{}
	for _, cmp := range c.Comparisons {
		a, b := g.root(cmp.Baseline), g.root(cmp.Candidate)
		if a != b {
			g[max(a, b)] = min(a, b)
		}
	}
	return g
}

// root names target's group.
func (g targetGroups) root(target string) string {
	p, ok := g[target]
	if !ok || p == target {
		return target
	}
	r := g.root(p)
	g[target] = r
	return r
}
