package sim

import (
	"encoding/json"
	"errors"
	"fmt"
	"slices"
	"time"

	"github.com/llmprobe/llmprobe/sim/internal/shaped"
)

// Usage placements seen in real engines.
const (
	UsageSeparate = "separate" // a final chunk with "choices": [] (vLLM, SGLang, Ollama)
	UsageFinish   = "finish"   // on the chunk with finish_reason (llama.cpp completions)
	UsageNone     = "none"     // never, even when asked
)

// Faults are injected on demand. Rates are per request, drawn from the
// request's seeded generator, so the same seed and arrival order give the
// same faults.
type Faults struct {
	ErrorRate             float64       `json:"error_rate"`
	ErrorStatus           int           `json:"error_status"`
	StallRate             float64       `json:"stall_rate"`
	StallAfterTokens      int           `json:"stall_after_tokens"`
	StallDuration         time.Duration `json:"-"`
	DisconnectRate        float64       `json:"disconnect_rate"`
	DisconnectAfterTokens int           `json:"disconnect_after_tokens"`
	MalformedRate         float64       `json:"malformed_rate"`
	MalformedAfterTokens  int           `json:"malformed_after_tokens"`
	TokensPerChunk        int           `json:"tokens_per_chunk"`
	RoleOnlyFirstChunk    bool          `json:"role_only_first_chunk"`
	ReasoningTokens       int           `json:"reasoning_tokens"`
	UsagePlacement        string        `json:"usage_placement"`
	ZeroedUsage           bool          `json:"zeroed_usage"`
	OmitDone              bool          `json:"omit_done"`
	// CloseAfterStream closes each connection after a streamed answer
	// while its headers still advertise keep-alive, as llama.cpp's server
	// does: a client that reuses the connection may send into a closed one.
	CloseAfterStream bool `json:"close_after_stream"`
	// Shaped breaks every answer of tools or a JSON format: one of shaped.Faults.
	Shaped string `json:"shaped"`
	// Hang takes every generation request and answers none, not even its
	// headers, while /health still answers 200: an engine that is hung.
	Hang bool `json:"hang"`
}

// MarshalJSON writes durations as Go duration strings.
func (f Faults) MarshalJSON() ([]byte, error) {
	type plain Faults
	return json.Marshal(struct {
		plain
		StallDuration string `json:"stall_duration"`
	}{plain(f), f.StallDuration.String()})
}

// UnmarshalJSON reads durations as Go duration strings ("2s").
func (f *Faults) UnmarshalJSON(b []byte) error {
	type plain Faults
	aux := struct {
		*plain
		StallDuration string `json:"stall_duration"`
	}{plain: (*plain)(f)}
	if err := json.Unmarshal(b, &aux); err != nil {
		return err
	}
	f.StallDuration = 0
	if aux.StallDuration != "" {
		d, err := time.ParseDuration(aux.StallDuration)
		if err != nil {
			return fmt.Errorf("stall_duration: %w", err)
		}
		f.StallDuration = d
	}
	return nil
}

func (f Faults) validate() error {
	var errs []error
	for _, r := range []struct {
		name string
		v    float64
	}{{"error_rate", f.ErrorRate}, {"stall_rate", f.StallRate}, {"disconnect_rate", f.DisconnectRate}, {"malformed_rate", f.MalformedRate}} {
		if r.v < 0 || r.v > 1 {
			errs = append(errs, fmt.Errorf("%s %g must be within [0, 1]", r.name, r.v))
		}
	}
	if f.ErrorStatus != 0 && (f.ErrorStatus < 400 || f.ErrorStatus > 599) {
		errs = append(errs, fmt.Errorf("error_status %d must be a 4xx or 5xx status", f.ErrorStatus))
	}
	for _, n := range []struct {
		name string
		v    int
	}{{"stall_after_tokens", f.StallAfterTokens}, {"disconnect_after_tokens", f.DisconnectAfterTokens}, {"malformed_after_tokens", f.MalformedAfterTokens}, {"tokens_per_chunk", f.TokensPerChunk}, {"reasoning_tokens", f.ReasoningTokens}} {
		if n.v < 0 {
			errs = append(errs, fmt.Errorf("%s %d must not be negative", n.name, n.v))
		}
	}
	if f.StallDuration < 0 {
		errs = append(errs, fmt.Errorf("stall_duration %s must not be negative", f.StallDuration))
	}
	if f.Shaped != "" && !slices.Contains(shaped.Faults, f.Shaped) {
		errs = append(errs, fmt.Errorf("shaped %q must be one of %v", f.Shaped, shaped.Faults))
	}
	switch f.UsagePlacement {
	case "", UsageSeparate, UsageFinish, UsageNone:
	default:
		errs = append(errs, fmt.Errorf("usage_placement %q must be %q, %q or %q", f.UsagePlacement, UsageSeparate, UsageFinish, UsageNone))
	}
	return errors.Join(errs...)
}

func (f Faults) withDefaults() Faults {
	if f.ErrorStatus == 0 {
		f.ErrorStatus = 500
	}
	if f.TokensPerChunk == 0 {
		f.TokensPerChunk = 1
	}
	if f.UsagePlacement == "" {
		f.UsagePlacement = UsageSeparate
	}
	return f
}
