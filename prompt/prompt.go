// Package prompt makes the synthetic prompts llmprobe sends: token-length
// targets, a nonce against prefix caching, and an optional shared prefix.
package prompt

import (
	"hash/fnv"
	"math"
	"math/rand/v2"
	"strings"

	"github.com/llmprobe/llmprobe/config"
)

// Words that common BPE tokenizers (Llama, GPT, Qwen) encode as one token each
// when preceded by a space, so a prompt of n words is close to n tokens.
var vocabulary = strings.Fields(`the of and to in is was for on that with as by at from his it an were are which this be
has or had first one their its new after but who not they have her she two been other
when there all during into school time may years more most only over city some world
would where later up such used many can state about national out known university united
then made because between him part being early number under three while family so these
high before well found called each music film several both game team season work no any
also series people life best including area year second back against group since history
show late won four title through played government album same large public band top
around local day end what them said until water house small great name long might very
last still good law place light line power point order case field road market land level
sound story town war word report body river play song color money week mind model party
car plan form data paper price board class code space rate note list test design fact
month event church south north east west left right lower upper inside outside center
middle open close start stop run walk read write speak hear listen watch learn teach
build grow move`)

// Prompt is one synthetic prompt.
type Prompt struct {
	Text            string
	RequestedTokens int
}

// Builder makes synthetic prompts for one scenario. Next is not safe for
// concurrent use (give each schedule its own); At is.
type Builder struct {
	scenario config.Scenario
	seed     uint64
	rng      *rand.Rand
	prefix   string
}

// NewBuilder seeds the builder. The shared prefix depends on the scenario
// name alone, so every request of the scenario shares it (warm prefix cache).
func NewBuilder(s config.Scenario, seed uint64) *Builder {
	b := &Builder{scenario: s, seed: seed, rng: rand.New(rand.NewPCG(seed, hashString(s.Name)))}
	if s.SharedPrefixTokens > 0 {
		prefixRng := rand.New(rand.NewPCG(hashString(s.Name), 0x5eed))
		b.prefix = words(prefixRng, s.SharedPrefixTokens)
	}
	return b
}

// nonceWords is how many leading words make a prompt unique; 4 words from the
// vocabulary give more than 10^9 combinations, and the nonce sits before any
// non-shared text, so no two requests share a cacheable prefix beyond the shared one.
const nonceWords = 4

// Next returns the next prompt and the max_tokens to request.
func (b *Builder) Next() (Prompt, int) { return b.build(b.rng) }

// At returns the n-th prompt of a seeded sequence: the same n gives the same
// prompt, whichever goroutine asks and when, so a burst builds each prompt
// only when its request is sent and still repeats with its seed.
func (b *Builder) At(n uint64) (Prompt, int) {
	return b.build(rand.New(rand.NewPCG(b.seed^hashString(b.scenario.Name), n)))
}

func (b *Builder) build(rng *rand.Rand) (Prompt, int) {
	maxTokens := sample(rng, b.scenario.OutputTokens)
	nonce := words(rng, nonceWords)
	if b.scenario.Prompt != "" {
		text := "ref:" + nonce + "\n" + b.scenario.Prompt
		return Prompt{Text: text, RequestedTokens: len(strings.Fields(text))}, maxTokens
	}
	total := sample(rng, b.scenario.PromptTokens)
	return b.compose(rng, nonce, total, b.prefix, b.scenario.SharedPrefixTokens), maxTokens
}

// Sized returns the n-th prompt at a length a trace gives, the same for the
// same n. With prefixKey not 0, it starts with prefixTokens words drawn
// from the key alone, so prompts with the same key share that prefix;
// otherwise with the scenario's shared prefix where it fits.
func (b *Builder) Sized(n uint64, tokens int, prefixKey uint64, prefixTokens int) Prompt {
	rng := rand.New(rand.NewPCG(b.seed^hashString(b.scenario.Name), n))
	nonce := words(rng, nonceWords)
	prefix, pn := "", 0
	switch {
	case prefixKey != 0 && prefixTokens > 0:
		prefix, pn = words(rand.New(rand.NewPCG(prefixKey, 0xb10c)), prefixTokens), prefixTokens
	case b.prefix != "" && b.scenario.SharedPrefixTokens < tokens:
		prefix, pn = b.prefix, b.scenario.SharedPrefixTokens
	}
	return b.compose(rng, nonce, tokens, prefix, pn)
}

// compose writes prefix (n words), the nonce, and words up to total.
func (*Builder) compose(rng *rand.Rand, nonce string, total int, prefix string, n int) Prompt {
	var sb strings.Builder
	if prefix == "" {
		n = 0
	}
	sb.WriteString(prefix)
	rest := max(total-n, 1)
	if rest <= nonceWords {
		sb.WriteString(words(rng, rest))
	} else {
		sb.WriteString(nonce)
		sb.WriteString(words(rng, rest-nonceWords))
	}
	return Prompt{Text: strings.TrimPrefix(sb.String(), " "), RequestedTokens: n + rest}
}

func sample(rng *rand.Rand, d config.Distribution) int {
	switch d.Kind {
	case config.DistUniform:
		return d.Min + rng.IntN(d.Max-d.Min+1)
	case config.DistLognormal:
		// mean is the distribution's mean, so mu = ln(mean) - sigma^2/2.
		mu := math.Log(d.Mean) - d.Sigma*d.Sigma/2
		x := math.Exp(mu + d.Sigma*rng.NormFloat64())
		// Clamped before the conversion: the tail may overflow an int.
		return int(math.Round(max(min(x, float64(d.LognormalMax())), float64(max(d.Min, 1)))))
	default:
		return d.Value
	}
}

func words(rng *rand.Rand, n int) string {
	var sb strings.Builder
	sb.Grow(n * 7)
	for range n {
		sb.WriteByte(' ')
		sb.WriteString(vocabulary[rng.IntN(len(vocabulary))])
	}
	return sb.String()
}

func hashString(s string) uint64 {
	h := fnv.New64a()
	_, _ = h.Write([]byte(s))
	return h.Sum64()
}
