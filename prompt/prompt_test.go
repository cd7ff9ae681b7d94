package prompt

import (
	"encoding/json"
	"math"
	"reflect"
	"slices"
	"strings"
	"sync"
	"testing"
	"unsafe"

	"github.com/llmprobe/llmprobe/config"
	"github.com/llmprobe/llmprobe/internal/testkit"
)

func TestPromptLengthsAndNonce(t *testing.T) {
	s := testkit.Scenario()
	s.PromptTokens = config.Distribution{Kind: config.DistFixed, Value: 100}
	b := NewBuilder(s, Source{}, 7)
	seen := map[string]bool{}
	for range 200 {
		p, maxTokens := b.Next()
		if n := len(strings.Fields(p.Text + p.Tail)); n != 100 || p.RequestedTokens != 100 {
			t.Fatalf("prompt has %d words, requested %d; want 100", n, p.RequestedTokens)
		}
		if maxTokens != 6 {
			t.Fatalf("max tokens = %d", maxTokens)
		}
		head := strings.Join(strings.Fields(p.Text)[:nonceWords], " ")
		if seen[head] {
			t.Fatalf("nonce %q repeated: prompts would share a cached prefix", head)
		}
		seen[head] = true
	}
}

func TestSharedPrefix(t *testing.T) {
	s := testkit.Scenario()
	s.PromptTokens = config.Distribution{Kind: config.DistFixed, Value: 64}
	s.SharedPrefixTokens = 32
	a, _ := NewBuilder(s, Source{}, 1).Next()
	b, _ := NewBuilder(s, Source{}, 2).Next()
	wa, wb := strings.Fields(a.Text+a.Tail), strings.Fields(b.Text+b.Tail)
	if strings.Join(wa[:32], " ") != strings.Join(wb[:32], " ") {
		t.Error("two builders of one scenario disagree on the shared prefix")
	}
	if strings.Join(wa[32:36], " ") == strings.Join(wb[32:36], " ") {
		t.Error("the nonce after the shared prefix is the same")
	}
	if len(wa) != 64 || a.RequestedTokens != 64 {
		t.Errorf("length %d, requested %d", len(wa), a.RequestedTokens)
	}
}

// A salt changes the n-th prompt's nonce, the same way for every builder
// with that salt, and nothing else: not its lengths, prefix or body.
func TestSaltChangesOnlyTheNonce(t *testing.T) {
	s := testkit.Scenario()
	s.PromptTokens = config.Distribution{Kind: config.DistUniform, Min: 40, Max: 80}
	s.SharedPrefixTokens = 16
	plain, salted, again, other := NewBuilder(s, Source{}, 5), NewBuilder(s, Source{}, 5), NewBuilder(s, Source{}, 5), NewBuilder(s, Source{}, 5)
	salted.Salt, again.Salt, other.Salt = 1, 1, 2
	for n := range uint64(50) {
		p, pMax := plain.At(n)
		q, qMax := salted.At(n)
		r, _ := again.At(n)
		o, _ := other.At(n)
		wp, wq := strings.Fields(p.Text+p.Tail), strings.Fields(q.Text+q.Tail)
		if pMax != qMax || p.RequestedTokens != q.RequestedTokens || p.Tail != q.Tail || len(wp) != len(wq) {
			t.Fatalf("prompt %d: the salt changed more than the nonce: %d/%d tokens, max %d/%d", n, p.RequestedTokens, q.RequestedTokens, pMax, qMax)
		}
		if !slices.Equal(wp[:16], wq[:16]) {
			t.Fatalf("prompt %d: the salt changed the shared prefix", n)
		}
		if slices.Equal(wp[16:16+nonceWords], wq[16:16+nonceWords]) {
			t.Fatalf("prompt %d: the salted nonce is the plain one: %v", n, wq[16:16+nonceWords])
		}
		if r.Text != q.Text || o.Text == q.Text {
			t.Fatalf("prompt %d: the same salt gave %q and %q, another %q", n, q.Text, r.Text, o.Text)
		}
	}
}

func TestLengthDistributions(t *testing.T) {
	s := testkit.Scenario()
	s.PromptTokens = config.Distribution{Kind: config.DistLognormal, Mean: 500, Sigma: 0.5, Min: 100, Max: 2000}
	s.OutputTokens = config.Distribution{Kind: config.DistUniform, Min: 10, Max: 20}
	b := NewBuilder(s, Source{}, 3)
	var sum float64
	const n = 4000
	for range n {
		p, out := b.Next()
		if p.RequestedTokens < 100 || p.RequestedTokens > 2000 {
			t.Fatalf("prompt length %d outside the clamps", p.RequestedTokens)
		}
		if out < 10 || out > 20 {
			t.Fatalf("output length %d outside [10,20]", out)
		}
		sum += float64(p.RequestedTokens)
	}
	if mean := sum / n; math.Abs(mean-500) > 25 {
		t.Errorf("lognormal mean = %.1f, want ~500", mean)
	}
}

func TestLiteralPrompt(t *testing.T) {
	s := testkit.Scenario()
	s.Prompt = "Say OK."
	p, _ := NewBuilder(s, Source{}, 1).Next()
	if !strings.HasSuffix(p.Text, "\nSay OK.") || !strings.HasPrefix(p.Text, "ref:") {
		t.Errorf("literal prompt = %q", p.Text)
	}
}

// Weights 5:3:1 over 90,000 draws: each value's count must be within 2% of
// the draws (1,800) of its share. The binomial spread is about 150, so the
// margin is some 12 standard deviations, and the seed is fixed: the check
// cannot flake, yet a sampler that ignored the weights (30,000 each) or
// shifted one pair fails by far.
func TestEmpiricalFrequencies(t *testing.T) {
	s := testkit.Scenario()
	s.PromptTokens = config.Distribution{Kind: config.DistEmpirical, Values: [][]float64{{8, 5}, {16, 3}, {32, 1}}}
	s.OutputTokens = config.Distribution{Kind: config.DistEmpirical, Values: [][]float64{{10, 0.25}, {20, 0.5}, {30, 0.25}}}
	const n = 90_000
	for _, via := range []string{"Next", "At"} {
		b := NewBuilder(s, Source{}, 11)
		prompts, outputs := map[int]int{}, map[int]int{}
		for i := range n {
			var p Prompt
			var out int
			if via == "Next" {
				p, out = b.Next()
			} else {
				p, out = b.At(uint64(i))
			}
			prompts[p.RequestedTokens]++
			outputs[out]++
		}
		check := func(what string, got map[int]int, want map[int]float64) {
			for v, c := range got {
				if _, ok := want[v]; !ok {
					t.Errorf("%s %s: drew %d (%d times), which is no configured value", via, what, v, c)
				}
			}
			for v, share := range want {
				if d := math.Abs(float64(got[v]) - share*n); d > 0.02*n {
					t.Errorf("%s %s: value %d drawn %d times, want %.0f ± %.0f", via, what, v, got[v], share*n, 0.02*n)
				}
			}
		}
		check("prompt", prompts, map[int]float64{8: 5.0 / 9, 16: 3.0 / 9, 32: 1.0 / 9})
		check("output", outputs, map[int]float64{10: 0.25, 20: 0.5, 30: 0.25})
	}
}

// A weight too small to move the running sum is never drawn, and the draw
// never runs past the last pair.
func TestEmpiricalEdges(t *testing.T) {
	s := testkit.Scenario()
	s.OutputTokens = config.Distribution{Kind: config.DistEmpirical, Values: [][]float64{{7, 1e300}, {8, 1e-300}}}
	b := NewBuilder(s, Source{}, 5)
	for i := range 10_000 {
		if _, out := b.At(uint64(i)); out != 7 {
			t.Fatalf("draw %d = %d, want 7", i, out)
		}
	}
	s.OutputTokens = config.Distribution{Kind: config.DistEmpirical, Values: [][]float64{{9, 2}}}
	if _, out := NewBuilder(s, Source{}, 5).Next(); out != 9 {
		t.Errorf("one pair drew %d, want 9", out)
	}
}

// The same seed gives the same lengths, by Next and by At in any order; another seed does not.
func TestEmpiricalSeeded(t *testing.T) {
	s := testkit.Scenario()
	var values [][]float64
	for v := 1; v <= 100; v++ {
		values = append(values, []float64{float64(10 * v), float64(v)})
	}
	s.PromptTokens = config.Distribution{Kind: config.DistEmpirical, Values: values}
	s.OutputTokens = s.PromptTokens
	seq := func(seed uint64) []int {
		b := NewBuilder(s, Source{}, seed)
		var out []int
		for range 50 {
			p, m := b.Next()
			out = append(out, p.RequestedTokens, m)
		}
		return out
	}
	a, again, other := seq(1), seq(1), seq(2)
	if !slices.Equal(a, again) {
		t.Error("one seed gave two sequences")
	}
	if slices.Equal(a, other) {
		t.Error("two seeds gave one sequence")
	}
	b1, b2 := NewBuilder(s, Source{}, 3), NewBuilder(s, Source{}, 3)
	var up, down [50]Prompt
	for i := range 50 {
		up[i], _ = b1.At(uint64(i))
		down[49-i], _ = b2.At(uint64(49 - i))
	}
	if !reflect.DeepEqual(up, down) {
		t.Error("At(n) depends on the order it is asked in")
	}
}

// A trace's prompt has the trace's length; prompts whose leading hash ids
// agree share exactly those blocks (512 words each), and no more.
func TestSizedSharesBlocks(t *testing.T) {
	b := NewBuilder(testkit.Scenario(), Source{}, 3)
	words := func(p Prompt) []string { return strings.Fields(p.Text + p.Tail) }
	common := func(x, y []string) int {
		n := 0
		for n < min(len(x), len(y)) && x[n] == y[n] {
			n++
		}
		return n
	}
	// Mooncake's ids chain: [0 1 2] and [0 1 8] share two blocks, [0 3] one.
	a, twoBlocks, oneBlock, other := b.Sized(1, 2000, []uint64{0, 1, 2}, 1536), b.Sized(2, 1800, []uint64{0, 1, 8}, 1536), b.Sized(3, 1100, []uint64{0, 3}, 1024), b.Sized(4, 2000, []uint64{4, 5, 6}, 1536)
	for _, p := range []Prompt{a, twoBlocks, oneBlock, other} {
		if n := len(words(p)); n != p.RequestedTokens {
			t.Errorf("%d words, %d requested", n, p.RequestedTokens)
		}
	}
	if a.RequestedTokens != 2000 || twoBlocks.RequestedTokens != 1800 {
		t.Errorf("lengths %d and %d, want 2000 and 1800", a.RequestedTokens, twoBlocks.RequestedTokens)
	}
	// Past the shared blocks the words differ; a chance match of a word or two is allowed.
	for _, tc := range []struct {
		name string
		p    Prompt
		want int
	}{{"two shared ids", twoBlocks, 1024}, {"one shared id", oneBlock, 512}, {"no shared id", other, 0}} {
		if n := common(words(a), words(tc.p)); n < tc.want || n > tc.want+2 {
			t.Errorf("%s: %d shared leading words, want %d", tc.name, n, tc.want)
		}
	}
	// A short prompt shares part of its first block.
	if p := b.Sized(5, 300, []uint64{0, 1}, 295); common(words(p), words(a)) < 295 || p.RequestedTokens != 300 {
		t.Errorf("a 300-token prompt shares %d words of its first block, want 295", common(words(p), words(a)))
	}
	if p := b.Sized(1, 900, nil, 0); common(words(p), words(a)) > 2 || p.RequestedTokens != 900 {
		t.Errorf("no ids: %d words shared with a keyed prompt, %d tokens", common(words(p), words(a)), p.RequestedTokens)
	}
}

// A session's first turn is the scenario's prompt; later turns are new user
// messages of followup length after the whole history, with the answers as
// given. The same n gives the same session.
func TestSessionTurns(t *testing.T) {
	s := testkit.Scenario()
	s.Conversation = &config.Conversation{Turns: 3, FollowupTokens: config.Distribution{Kind: config.DistFixed, Value: 7}}
	b := NewBuilder(s, Source{}, 5)
	run := func(n uint64) []Prompt {
		sess := b.Session(n)
		var out []Prompt
		for i := range 3 {
			p, _ := sess.Next()
			out = append(out, p)
			sess.Answered("answer "+strings.Repeat("x", i+1), 2)
		}
		return out
	}
	turns := run(9)
	first, _ := b.At(9)
	if turns[0].Text != first.Text || turns[0].Turn != 1 || len(turns[0].History) != 0 {
		t.Errorf("turn 1 = %+v, want the scenario's prompt %q with no history", turns[0], first.Text)
	}
	for i, p := range turns[1:] {
		if p.Turn != i+2 || len(strings.Fields(p.Text)) != 7 || len(p.History) != 2*(i+1) {
			t.Errorf("turn %d: turn field %d, %d words, %d history messages", i+2, p.Turn, len(strings.Fields(p.Text)), len(p.History))
		}
	}
	h := turns[2].History
	if h[0].Role != "user" || h[0].Content != turns[0].Text+turns[0].Tail || h[1].Role != "assistant" || h[1].Content != "answer x" || h[2].Content != turns[1].Text || h[3].Content != "answer xx" {
		t.Errorf("turn 3's history = %+v", h)
	}
	// Requested tokens: the history's (prompts as requested, answers as counted) plus the new message.
	if want := turns[0].RequestedTokens + 2 + 7 + 2 + 7; turns[2].RequestedTokens != want {
		t.Errorf("turn 3 requests %d tokens, want %d", turns[2].RequestedTokens, want)
	}
	if again := run(9); !reflect.DeepEqual(again, turns) {
		t.Error("one session number gave two sessions")
	}
	if other := run(10); other[1].Text == turns[1].Text {
		t.Error("two session numbers gave one follow-up")
	}
	// An earlier turn's history is not changed by later answers.
	if len(turns[1].History) != 2 {
		t.Errorf("turn 2's history grew to %d messages after it was sent", len(turns[1].History))
	}
}

// Every long prompt of a builder ends with a slice of one body, not a copy:
// its Tail points into the same memory whatever the request, the prompt is
// nonce first, and Text is small.
func TestLongPromptsShareTheBody(t *testing.T) {
	s := testkit.Scenario()
	s.PromptTokens = config.Distribution{Kind: config.DistUniform, Min: 16 << 10, Max: 128 << 10}
	b := NewBuilder(s, Source{}, 9)
	var mu sync.Mutex
	var wg sync.WaitGroup
	prompts := make([]Prompt, 16)
	for i := range prompts {
		wg.Go(func() {
			p, _ := b.At(uint64(i))
			mu.Lock()
			prompts[i] = p
			mu.Unlock()
		})
	}
	wg.Wait()
	base := unsafe.StringData(prompts[0].Tail)
	nonces := map[string]bool{}
	for i, p := range prompts {
		if unsafe.StringData(p.Tail) != base {
			t.Errorf("prompt %d: its tail is not the builder's body", i)
		}
		if len(p.Text) > 64 || len(strings.Fields(p.Text)) != nonceWords {
			t.Errorf("prompt %d: text %q, want the %d-word nonce alone", i, p.Text, nonceWords)
		}
		if n := len(strings.Fields(p.Text + p.Tail)); n != p.RequestedTokens || n < 16<<10 {
			t.Errorf("prompt %d: %d words, %d requested", i, n, p.RequestedTokens)
		}
		nonces[p.Text] = true
		if again, _ := b.At(uint64(i)); !reflect.DeepEqual(again, p) {
			t.Errorf("prompt %d: At is not the same prompt twice", i)
		}
	}
	if len(nonces) != len(prompts) {
		t.Errorf("%d distinct nonces in %d prompts", len(nonces), len(prompts))
	}
}

// A body made longer starts with the same words, so a prompt does not
// depend on the lengths asked for before it; every word ends where a slice
// of that many words ends.
func TestBodyGrowsDeterministically(t *testing.T) {
	fresh := NewBuilder(testkit.Scenario(), Source{}, 4)
	used := NewBuilder(testkit.Scenario(), Source{}, 4)
	used.At(0)                 // a body of the scenario's 16 words
	used.Sized(1, 300, nil, 0) // past it: made longer
	want := fresh.Sized(2, 5000, nil, 0)
	if got := used.Sized(2, 5000, nil, 0); !reflect.DeepEqual(got, want) {
		t.Error("the prompt depends on the lengths asked for before it")
	}
	all := strings.Fields(want.Tail)
	for _, n := range []int{1, 63, 64, 65, 127, 128, 129, 4000, len(all)} {
		if got := strings.Fields(fresh.body.words(n)); !slices.Equal(got, all[:n]) {
			t.Errorf("words(%d) is %d words, not the body's first %d", n, len(got), n)
		}
	}
}

// The body is written into a JSON request as it is: its words must need no
// escaping, and each costs at most the 11 bytes the memory check charges.
func TestVocabularyNeedsNoEscaping(t *testing.T) {
	for _, w := range vocabulary {
		q, _ := json.Marshal(w)
		if string(q) != `"`+w+`"` || strings.ContainsFunc(w, func(r rune) bool { return r < 'a' || r > 'z' }) {
			t.Errorf("word %q is not plain lowercase ASCII", w)
		}
		if len(w)+1 > 11 {
			t.Errorf("word %q costs %d bytes with its space, past 11", w, len(w)+1)
		}
	}
}

// Adapters share a scenario's requests by weight, the same for a seed; a
// conversation stays with its first turn's adapter.
func TestAdaptersByWeight(t *testing.T) {
	s := config.DefaultScenario
	s.Name, s.Adapters = "lora", []config.Adapter{{Name: "sql-lora", Weight: 3}, {Name: "base"}}
	count := map[string]int{}
	b := NewBuilder(s, Source{}, 7)
	for n := range uint64(4000) {
		p, _ := b.At(n)
		count[p.Model]++
		if q, _ := b.At(n); q.Model != p.Model {
			t.Fatalf("request %d drew %q then %q", n, p.Model, q.Model)
		}
	}
	if share := float64(count["sql-lora"]) / 4000; share < 0.72 || share > 0.78 || count["sql-lora"]+count["base"] != 4000 {
		t.Errorf("drew %v: want sql-lora about 3 in 4", count)
	}
	s.Conversation = &config.Conversation{Turns: 3, FollowupTokens: config.Distribution{Kind: config.DistFixed, Value: 8}}
	sess := NewBuilder(s, Source{}, 7).Session(1)
	first, _ := sess.Next()
	sess.Answered("ok", 1)
	if second, _ := sess.Next(); first.Model == "" || second.Model != first.Model {
		t.Errorf("turns went to %q then %q", first.Model, second.Model)
	}
	// Without adapters nothing is drawn: the prompts stay as they were.
	plain := config.DefaultScenario
	plain.Name = "lora"
	a, _ := NewBuilder(plain, Source{}, 7).At(3)
	s.Conversation = nil
	c, _ := NewBuilder(s, Source{}, 7).At(3)
	if a.Model != "" || a.Text != c.Text {
		t.Errorf("adapters changed the prompt: %q vs %q", a.Text, c.Text)
	}
}
