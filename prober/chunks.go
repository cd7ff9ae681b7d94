// What a stream's output chunks stand for in tokens: how many max_tokens
// allows, and each token's inter-token latency.

package prober

import (
	"math"
	"time"
)

// maxChunks is how many output chunks a request may stream before the
// server counts as ignoring max_tokens: a chunk carries at least one token,
// and the margin allows for engines that split a token's bytes.
func maxChunks(maxTokens int) int {
	if maxTokens <= 0 {
		return math.MaxInt
	}
	return 2*maxTokens + 16
}

// perTokenITL splits each gap between output chunks over the tokens the later
// chunk carried, so engines that send several tokens per chunk don't inflate
// ITL. Exact per-chunk counts come from running usage; otherwise the tokens
// after the first chunk are spread evenly over the later chunks, carrying the
// fractional remainder so the sample count adds up.
func perTokenITL(at []time.Duration, tokens []int, exact bool, total int) []time.Duration {
	if len(at) < 2 {
		return nil
	}
	gaps := len(at) - 1
	var out []time.Duration
	if exact && len(tokens) == len(at) {
		n := 0
		for _, k := range tokens[1:] {
			n += k
		}
		out = make([]time.Duration, 0, n)
		for i := 1; i < len(at); i++ {
			k := tokens[i]
			for range k {
				out = append(out, (at[i]-at[i-1])/time.Duration(k))
			}
		}
		return out
	}
	later := max(total-1, gaps) // at least one token per later chunk
	perChunk := float64(later) / float64(gaps)
	out = make([]time.Duration, 0, later)
	carry := 0.0
	for i := 1; i < len(at); i++ {
		carry += perChunk
		k := int(carry + 1e-9)
		carry -= float64(k)
		if k < 1 {
			continue
		}
		gap := at[i] - at[i-1]
		for range k {
			out = append(out, gap/time.Duration(k))
		}
	}
	return out
}
