package shard

import (
	"fmt"
	"github.com/llmprobe/llmprobe/config"
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

func TestParse(t *testing.T) {
	if s, err := Parse("2/3"); err != nil || s != (Shard{2, 3}) {
		t.Errorf("2/3: %v %v", s, err)
	}
	for _, bad := range []string{"3/3", "-1/2", "a/b", "1", "0/0"} {
		if _, err := Parse(bad); err == nil {
			t.Errorf("%q accepted", bad)
		}
	}
}

// Every arrival index has exactly one taker, and each shard takes its
// count to within one.
func TestTakesEveryArrivalOnce(t *testing.T) {
	for _, n := range []int{1, 3, 7} {
		counts := make([]int, n)
		for a := range 100 {
			takers := 0
			for i := range n {
				if (Shard{i, n}).Takes(a) {
					takers++
					counts[i]++
				}
			}
			if takers != 1 {
				t.Fatalf("N=%d: arrival %d has %d takers", n, a, takers)
			}
		}
		for i, c := range counts {
			if c < 100/n || c > 100/n+1 {
				t.Errorf("N=%d: shard %d takes %d of 100", n, i, c)
			}
		}
	}
	if !(Shard{}).Takes(5) {
		t.Error("the zero shard does not take everything")
	}
}

// A shard's configuration keeps its own targets and the bursts against
// them, and leaves the rest to the other shards.
func TestFilter(t *testing.T) {
	c := &config.Config{}
	for i := range 40 {
		name := fmt.Sprintf("t%d", i)
		c.Targets = append(c.Targets, config.Target{Name: name})
		c.Bursts = append(c.Bursts, config.Burst{Name: "b" + name, Target: name})
	}
	if (Shard{0, 1}).Filter(c) != c {
		t.Error("the only shard got a copy")
	}
	targets, bursts := 0, 0
	for i := range 3 {
		f := Shard{i, 3}.Filter(c)
		for _, tg := range f.Targets {
			if OwnerOf(tg.Name, 3) != i {
				t.Errorf("shard %d keeps target %s", i, tg.Name)
			}
		}
		for _, b := range f.Bursts {
			if OwnerOf(b.Target, 3) != i {
				t.Errorf("shard %d keeps burst %s against %s", i, b.Name, b.Target)
			}
		}
		targets, bursts = targets+len(f.Targets), bursts+len(f.Bursts)
	}
	if targets != 40 || bursts != 40 || len(c.Targets) != 40 {
		t.Errorf("the shards keep %d targets and %d bursts of 40 each (the whole still has %d)", targets, bursts, len(c.Targets))
	}
}

func TestComparedTargetsShareAShard(t *testing.T) {
	c := &config.Config{}
	for i := range 40 {
		c.Targets = append(c.Targets, config.Target{Name: fmt.Sprintf("t%d", i)})
	}
	// A chain and a cycle: t5-t17-t30 and t8-t9-t8.
	c.Comparisons = []config.Comparison{{Baseline: "t30", Candidate: "t17"}, {Baseline: "t17", Candidate: "t5"}, {Baseline: "t8", Candidate: "t9"}, {Baseline: "t9", Candidate: "t8"}}
	for _, group := range [][]string{{"t5", "t17", "t30"}, {"t8", "t9"}} {
		holders := 0
		for i := range 7 {
			held := map[string]bool{}
			for _, tg := range (Shard{i, 7}).Filter(c).Targets {
				held[tg.Name] = true
			}
			n := 0
			for _, name := range group {
				if held[name] {
					n++
				}
			}
			if n != 0 && n != len(group) {
				t.Errorf("shard %d of 7 holds %d of compared targets %v", i, n, group)
			}
			if n > 0 {
				holders++
			}
		}
		if holders != 1 {
			t.Errorf("%v held by %d shards, want 1", group, holders)
		}
	}
}
