package render

import (
	"strings"
	"testing"

	"github.com/llmprobe/llmprobe/prober"
	"github.com/llmprobe/llmprobe/report"
)

// The gate output says where the token counts came from once any did not
// come from usage, and how often usage contradicted the stream; with every
// count from usage it says nothing.
func TestTokensText(t *testing.T) {
	all := &report.Report{TokenSources: map[prober.TokenSource]int{prober.TokensFromUsage: 20}}
	if got := TokensText(all); got != "" {
		t.Errorf("all from usage: %q, want nothing", got)
	}
	mixed := &report.Report{
		TokenSources:    map[prober.TokenSource]int{prober.TokensFromUsage: 18, prober.TokensFromChunks: 2},
		TokenMismatches: map[string]int{prober.TokenMismatchBelowDeltas: 2, prober.TokenMismatchAboveMax: 1},
	}
	want := "output tokens: answers 18 from usage, 2 from the stream's deltas; usage below the stream's deltas 2× (the deltas counted); usage above max_tokens 1× (failed)"
	if got := TokensText(mixed); got != want {
		t.Errorf("got  %q\nwant %q", got, want)
	}
	var b strings.Builder
	Brief(&b, mixed)
	if !strings.Contains(b.String(), want) {
		t.Errorf("the gate's output does not say it:\n%s", b.String())
	}
}
