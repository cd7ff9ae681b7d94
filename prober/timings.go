package prober

import (
	"bytes"
	"encoding/json"
	"fmt"
	"math"
	"time"
)

// Sources of engine timings.
const (
	TimingsVLLM     = "vllm_metrics"     // vLLM --enable-per-request-metrics, the response's `metrics`
	TimingsLlamaCPP = "llamacpp_timings" // llama.cpp server, the response's `timings`
)

// EngineTimings is what the engine reported about one request in its
// response. A phase it did not report has its Has flag false.
type EngineTimings struct {
	Source string
	// Queue is the wait to be scheduled; Prefill is from scheduling to the
	// first token; Decode from the first token to the last.
	Queue, Prefill, Decode          time.Duration
	HasQueue, HasPrefill, HasDecode bool
	// CachedPromptTokens is the prompt tokens served from the prefix cache
	// (llama.cpp's cache_n); -1 when not reported.
	CachedPromptTokens int
}

// maxEngineMillis bounds a plausible engine figure (a day): beyond it, or
// negative, or not a number, the figure is garbage and ignored.
const maxEngineMillis = 24 * 3600 * 1000

// parseEngineMillis reads one millisecond figure of an engine's object:
// absent or null is not reported; anything but a plausible number is an
// error, so a garbage field is ignored with its reason, never fatal.
func parseEngineMillis(obj map[string]json.RawMessage, key string) (time.Duration, bool, error) {
	raw, ok := obj[key]
	if !ok || bytes.Equal(bytes.TrimSpace(raw), []byte("null")) {
		return 0, false, nil
	}
	var ms float64
	if err := json.Unmarshal(raw, &ms); err != nil {
		return 0, false, fmt.Errorf("%s is not a number: %s", key, truncate(string(raw), 32))
	}
	if math.IsNaN(ms) || ms < 0 || ms > maxEngineMillis {
		return 0, false, fmt.Errorf("%s %v ms is out of range [0, %d]", key, ms, maxEngineMillis)
	}
	return time.Duration(ms * float64(time.Millisecond)), true, nil
}

// parseVLLMMetrics reads vLLM's per-request `metrics` object.
func parseVLLMMetrics(raw json.RawMessage) (*EngineTimings, error) {
	var obj map[string]json.RawMessage
	if err := json.Unmarshal(raw, &obj); err != nil || obj == nil {
		return nil, fmt.Errorf("metrics is not an object: %s", truncate(string(raw), 64))
	}
	t := &EngineTimings{Source: TimingsVLLM, CachedPromptTokens: -1}
	var err error
	var errs []error
	if t.Queue, t.HasQueue, err = parseEngineMillis(obj, "queue_time_ms"); err != nil {
		errs = append(errs, err)
	}
	// vLLM counts its time_to_first_token_ms from scheduling: the prefill.
	if t.Prefill, t.HasPrefill, err = parseEngineMillis(obj, "time_to_first_token_ms"); err != nil {
		errs = append(errs, err)
	}
	if t.Decode, t.HasDecode, err = parseEngineMillis(obj, "generation_time_ms"); err != nil {
		errs = append(errs, err)
	}
	return t, joinErrs(errs)
}

// parseLlamaTimings reads llama.cpp server's `timings` object.
func parseLlamaTimings(raw json.RawMessage) (*EngineTimings, error) {
	var obj map[string]json.RawMessage
	if err := json.Unmarshal(raw, &obj); err != nil || obj == nil {
		return nil, fmt.Errorf("timings is not an object: %s", truncate(string(raw), 64))
	}
	t := &EngineTimings{Source: TimingsLlamaCPP, CachedPromptTokens: -1}
	var err error
	var errs []error
	if t.Prefill, t.HasPrefill, err = parseEngineMillis(obj, "prompt_ms"); err != nil {
		errs = append(errs, err)
	}
	if t.Decode, t.HasDecode, err = parseEngineMillis(obj, "predicted_ms"); err != nil {
		errs = append(errs, err)
	}
	var cached int
	if raw, ok := obj["cache_n"]; ok && json.Unmarshal(raw, &cached) == nil && cached >= 0 {
		t.CachedPromptTokens = cached
	}
	return t, joinErrs(errs)
}

func joinErrs(errs []error) error {
	switch len(errs) {
	case 0:
		return nil
	case 1:
		return errs[0]
	}
	return fmt.Errorf("%v; %v", errs[0], joinErrs(errs[1:]))
}
