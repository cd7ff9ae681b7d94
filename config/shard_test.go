package config

import (
	"fmt"
	"testing"
)

func TestShardsOwnEveryTargetOnce(t *testing.T) {
	targets := make([]string, 600)
	for i := range targets {
		targets[i] = fmt.Sprintf("vllm-%03d", i)
	}
	for _, n := range []int{1, 2, 3, 5, 8} {
		counts := make([]int, n)
		for _, tg := range targets {
			owners := 0
			for i := range n {
				if (Shard{i, n}).Owns(tg) {
					owners++
					counts[i]++
				}
			}
			if owners != 1 {
				t.Fatalf("N=%d: %s has %d owners", n, tg, owners)
			}
		}
		for i, c := range counts {
			if want := len(targets) / n; c < want*7/10 || c > want*13/10 {
				t.Errorf("N=%d: shard %d owns %d targets, want about %d", n, i, c, want)
			}
		}
	}
	// Going from N to N+1 moves about 1/(N+1) of the targets, and only to the new shard.
	for _, n := range []int{2, 4, 7} {
		moved := 0
		for _, tg := range targets {
			before, after := OwnerOf(tg, n), OwnerOf(tg, n+1)
			if before != after {
				moved++
				if after != n {
					t.Fatalf("%s moved from %d to %d, not to the new shard %d", tg, before, after, n)
				}
			}
		}
		if want := len(targets) / (n + 1); moved > want*3/2 {
			t.Errorf("N=%d->%d moved %d targets, want about %d", n, n+1, moved, want)
		}
	}
}

func TestParseShard(t *testing.T) {
	if s, err := ParseShard("2/3"); err != nil || s != (Shard{2, 3}) {
		t.Errorf("2/3: %v %v", s, err)
	}
	for _, bad := range []string{"3/3", "-1/2", "a/b", "1", "0/0"} {
		if _, err := ParseShard(bad); err == nil {
			t.Errorf("%q accepted", bad)
		}
	}
}
