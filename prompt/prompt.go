// Package prompt makes the prompts llmprobe sends: synthetic ones of drawn
// lengths or ones from a dataset it reads when the configuration loads,
// each with a nonce against prefix caching, the seeded images of vision
// requests and the audio of transcriptions.
package prompt

import (
	"hash/fnv"
	"math"
	"math/rand/v2"
	"sort"
	"strings"
	"sync"
	"sync/atomic"

	"github.com/llmprobe/llmprobe/config"
	"github.com/llmprobe/llmprobe/replay"
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

// Prompt is one prompt to send: Text followed by Tail, with nothing
// between them, is the text the server sees.
type Prompt struct {
	// Text is the request's own part: the shared prefix and the nonce of a
	// synthetic prompt, all of a literal or dataset one.
	Text string
	// Tail is the rest of a synthetic prompt: a slice of its builder's
	// body, the same memory for every request, so a long prompt costs a
	// request a few bytes, not a copy. Plain ASCII words, each after a space,
	// that need no escaping in JSON; empty for literal and dataset prompts.
	Tail            string
	RequestedTokens int
	// Estimated says RequestedTokens was estimated from a given text (a
	// literal or dataset prompt) rather than built to length; either way the
	// server's usage is what counts.
	Estimated bool
	// History holds a conversation's earlier messages, sent before Text
	// (the new user message); Turn is the conversation's turn, from 1, and
	// 0 for a prompt that is no conversation.
	History []Message
	Turn    int
	// Golden is the golden line the prompt was drawn from, whose checks
	// its answer must pass; nil for other prompts.
	Golden *GoldenLine
	// Clip is the audio dataset's clip a transcription uploads, whose
	// reference its transcript is held to; nil for synthetic audio and
	// text prompts.
	Clip *Clip
	// Model is the LoRA adapter the request goes to, drawn by the
	// scenario's weights; "" for the target's own model.
	Model string
}

// Message is one earlier message of a conversation.
type Message struct {
	Role    string // "user" or "assistant"
	Content string
}

// Builder makes synthetic prompts for one scenario. Next is not safe for
// concurrent use (give each schedule its own); At is.
type Builder struct {
	// Salt, when not 0, changes every nonce and nothing else: the same
	// seed with another salt sends the same lengths and text, yet shares
	// no cached prefix beyond the shared one with the unsalted prompts
	// (a comparison's rounds).
	Salt           uint64
	scenario       config.Scenario
	source         Source
	seed           uint64
	rng            *rand.Rand
	prefix         string
	prompt, output lengths
	body           body
}

// NewBuilder seeds the builder of scenario s, whose prompts src holds
// where they come from a dataset or a golden set. The shared prefix depends
// on the scenario name alone, so every request of the scenario shares it
// (warm prefix cache).
func NewBuilder(s config.Scenario, src Source, seed uint64) *Builder {
	b := &Builder{scenario: s, source: src, seed: seed, rng: rand.New(rand.NewPCG(seed, hashString(s.Name))),
		prompt: newLengths(s.PromptTokens), output: newLengths(s.OutputTokens),
		body: body{seed: seed ^ hashString(s.Name), size: s.PromptTokens.Maximum()}}
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
	p, maxTokens := b.text(rng)
	p.Model = b.adapter(rng)
	return p, maxTokens
}

// adapter draws the request's LoRA adapter by the scenario's weights, ""
// without adapters (no draw: the other draws stay as they were).
func (b *Builder) adapter(rng *rand.Rand) string {
	as := b.scenario.Adapters
	if len(as) == 0 {
		return ""
	}
	total := 0.0
	for _, a := range as {
		total += a.AdapterWeight()
	}
	x := rng.Float64() * total
	for _, a := range as {
		if x -= a.AdapterWeight(); x < 0 {
			return a.Name
		}
	}
	return as[len(as)-1].Name
}

func (b *Builder) text(rng *rand.Rand) (Prompt, int) {
	maxTokens := b.output.draw(rng)
	nonce := b.nonce(rng)
	if g := b.source.Golden; len(g) > 0 {
		return goldenPrompt(&g[rng.IntN(len(g))], nonce), maxTokens
	}
	if c := b.source.Audio; len(c) > 0 {
		// A transcript is as long as its audio: no max_tokens (0).
		return Prompt{Text: nonce, Clip: &c[rng.IntN(len(c))], Estimated: true}, 0
	}
	if b.scenario.Audio != nil {
		// The nonce seeds the request's synthetic audio (AudioOf).
		return Prompt{Text: nonce, Estimated: true}, 0
	}
	if d := b.source.Dataset; len(d) > 0 {
		// The real text, whole, after the nonce line: the engine's tokenizer
		// and the quality check see what a user wrote.
		p := d[rng.IntN(len(d))]
		head := "ref:" + nonce + "\n"
		return Prompt{Text: head + p.Text, RequestedTokens: EstimateTokens(head) + p.Tokens, Estimated: true}, maxTokens
	}
	if b.scenario.Prompt != "" {
		text := "ref:" + nonce + "\n" + b.scenario.Prompt
		return Prompt{Text: text, RequestedTokens: len(strings.Fields(text)), Estimated: true}, maxTokens
	}
	total := b.prompt.draw(rng)
	return b.compose(rng, nonce, total, b.prefix, b.scenario.SharedPrefixTokens), maxTokens
}

// Session starts the n-th conversation of a seeded sequence: the same n
// gives the same user messages, as At gives the same prompt.
func (b *Builder) Session(n uint64) *Session {
	s := &Session{b: b, rng: rand.New(rand.NewPCG(b.seed^hashString(b.scenario.Name), n))}
	if c := b.scenario.Conversation; c != nil {
		s.followup = newLengths(c.FollowupTokens)
	}
	return s
}

// Session builds one conversation's turns: the first is the scenario's
// prompt (shared prefix and nonce as ever, so sessions share no more than
// the shared prefix), each later one a new user message after the whole
// history. Not safe for concurrent use; a session is sequential anyway.
type Session struct {
	b        *Builder
	rng      *rand.Rand
	followup lengths
	history  []Message
	tokens   int    // the history's tokens: requested, then the server's count of each answer
	pending  string // the user message of the turn in flight
	turn     int
	model    string // the session's adapter: every turn goes to the first's
}

// Next returns the next turn's prompt and max_tokens. The prompt's History
// is the session's, capped so a later Answered never writes into it.
func (s *Session) Next() (Prompt, int) {
	s.turn++
	if s.turn == 1 {
		p, maxTokens := s.b.build(s.rng)
		p.Turn, s.pending = 1, p.Text+p.Tail // the history holds the whole message
		s.tokens, s.model = p.RequestedTokens, p.Model
		return p, maxTokens
	}
	maxTokens := s.b.output.draw(s.rng)
	n := s.followup.draw(s.rng)
	text := strings.TrimPrefix(words(s.rng, n), " ")
	s.pending = text
	p := Prompt{Text: text, RequestedTokens: s.tokens + n, History: s.history[:len(s.history):len(s.history)], Turn: s.turn, Model: s.model}
	s.tokens += n
	return p, maxTokens
}

// Answered records the answer to the turn in flight, as the next turn
// sends it back; tokens is its length as the server counted it.
func (s *Session) Answered(answer string, tokens int) {
	s.history = append(s.history, Message{Role: "user", Content: s.pending}, Message{Role: "assistant", Content: answer})
	s.tokens += tokens
	s.pending = ""
}

// Turn is the turn last returned by Next (0 before the first).
func (s *Session) Turn() int { return s.turn }

// Sized returns the n-th prompt at a length a trace gives, the same for the
// same n. With blocks (a Mooncake record's hash ids) it starts with
// prefixTokens words made block by block, each block's words from its id
// alone, so prompts whose leading ids agree share exactly those blocks, as
// the trace's requests did; otherwise with the scenario's shared prefix
// where it fits.
func (b *Builder) Sized(n uint64, tokens int, blocks []uint64, prefixTokens int) Prompt {
	rng := rand.New(rand.NewPCG(b.seed^hashString(b.scenario.Name), n))
	nonce := b.nonce(rng)
	prefix, pn := "", 0
	switch {
	case len(blocks) > 0 && prefixTokens > 0:
		pn = min(prefixTokens, len(blocks)*replay.BlockTokens)
		prefix = blockWords(blocks, pn)
	case b.prefix != "" && b.scenario.SharedPrefixTokens < tokens:
		prefix, pn = b.prefix, b.scenario.SharedPrefixTokens
	}
	p := b.compose(rng, nonce, tokens, prefix, pn)
	p.Model = b.adapter(rng)
	return p
}

// nonce draws a prompt's nonce from rng; a salt replaces its words by
// others drawn from them and the salt, so rng is left where it would be.
func (b *Builder) nonce(rng *rand.Rand) string {
	n := words(rng, nonceWords)
	if b.Salt == 0 {
		return n
	}
	return words(rand.New(rand.NewPCG(hashString(n), b.Salt)), nonceWords)
}

// blockWords makes n words from hash ids, replay.BlockTokens words an id.
func blockWords(ids []uint64, n int) string {
	var sb strings.Builder
	sb.Grow(n * 7)
	for _, id := range ids {
		if n <= 0 {
			break
		}
		k := min(n, replay.BlockTokens)
		sb.WriteString(words(rand.New(rand.NewPCG(id, 0xb10c)), k))
		n -= k
	}
	return sb.String()
}

// compose makes prefix (n words) and the nonce the prompt's Text, and the
// builder's body its Tail, up to total words. The nonce comes before the
// body, so no two prompts share a cacheable prefix beyond the shared one.
func (b *Builder) compose(rng *rand.Rand, nonce string, total int, prefix string, n int) Prompt {
	if prefix == "" {
		n = 0
	}
	rest := max(total-n, 1)
	if rest <= nonceWords {
		return Prompt{Text: strings.TrimPrefix(prefix+words(rng, rest), " "), RequestedTokens: n + rest}
	}
	return Prompt{Text: strings.TrimPrefix(prefix+nonce, " "), Tail: b.body.words(rest - nonceWords), RequestedTokens: n + rest}
}

// body is the words every synthetic prompt of a builder ends with, made
// once and sliced per request.
type body struct {
	seed uint64
	size int // words to make at first: the scenario's longest prompt
	mu   sync.Mutex
	made atomic.Pointer[bodyText]
}

// bodyText is a body as made: immutable, so readers need no lock.
type bodyText struct {
	text string // " w1 w2 ...": each word after a space
	n    int    // words in text
	// marks[i] is where word (i+1)*markEvery ends: a slice's end is found
	// by scanning fewer than markEvery words, with an index 16 times
	// smaller than one offset per word.
	marks []int32
}

const markEvery = 64

// words is the body's first n words. The words come from one seeded
// sequence, so a body made longer starts with the same words: a prompt
// does not depend on which lengths were asked for before it.
func (b *body) words(n int) string {
	t := b.made.Load()
	if t == nil || t.n < n {
		b.mu.Lock()
		if t = b.made.Load(); t == nil {
			t = makeBody(b.seed, max(n, b.size))
			b.made.Store(t)
		} else if t.n < n {
			// Past the scenario's longest: doubling keeps growth rare.
			t = makeBody(b.seed, max(n, 2*t.n))
			b.made.Store(t)
		}
		b.mu.Unlock()
	}
	end := 0
	if k := n / markEvery; k > 0 {
		end = int(t.marks[k-1])
	}
	for range n % markEvery {
		j := strings.IndexByte(t.text[end+1:], ' ')
		if j < 0 {
			return t.text
		}
		end += 1 + j
	}
	return t.text[:end]
}

func makeBody(seed uint64, n int) *bodyText {
	rng := rand.New(rand.NewPCG(seed, 0xb0d7))
	var sb strings.Builder
	sb.Grow(n * 7)
	marks := make([]int32, 0, n/markEvery)
	for i := 1; i <= n; i++ {
		sb.WriteByte(' ')
		sb.WriteString(vocabulary[rng.IntN(len(vocabulary))])
		if i%markEvery == 0 {
			marks = append(marks, int32(sb.Len()))
		}
	}
	return &bodyText{text: sb.String(), n: n, marks: marks}
}

// lengths draws token lengths from one distribution.
type lengths struct {
	d config.Distribution
	// cum holds an empirical distribution's running sum of weights, built
	// once per builder so a draw is one binary search.
	cum []float64
}

func newLengths(d config.Distribution) lengths {
	l := lengths{d: d}
	if d.Kind == config.DistEmpirical {
		l.cum = make([]float64, len(d.Values))
		total := 0.0
		for i, p := range d.Values {
			total += p[1]
			l.cum[i] = total
		}
	}
	return l
}

func (l *lengths) draw(rng *rand.Rand) int {
	d := l.d
	switch d.Kind {
	case config.DistEmpirical:
		n := len(l.cum)
		if n == 0 {
			return 1 // validation allows no empty list; never an index panic
		}
		// The first pair whose running sum passes u: pair i is drawn with
		// probability weight_i / total, one uniform number per draw.
		u := rng.Float64() * l.cum[n-1]
		i := min(sort.Search(n, func(i int) bool { return l.cum[i] > u }), n-1)
		return int(d.Values[i][0])
	case config.DistUniform:
		return d.Min + rng.IntN(d.Max-d.Min+1)
	case config.DistLognormal:
		// mean is the distribution's mean, so mu = ln(mean) - sigma^2/2.
		mu := math.Log(d.Mean) - d.Sigma*d.Sigma/2
		x := math.Exp(mu + d.Sigma*rng.NormFloat64())
		// Clamped before the conversion: the tail may overflow an int.
		return int(math.Round(max(min(x, float64(d.Maximum())), float64(max(d.Min, 1)))))
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
