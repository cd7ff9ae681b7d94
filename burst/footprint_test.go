package burst

import (
	"context"
	"reflect"
	"testing"
	"time"

	"github.com/llmprobe/llmprobe/config"
	"github.com/llmprobe/llmprobe/internal/testkit"
	"github.com/llmprobe/llmprobe/plan"
	"github.com/llmprobe/llmprobe/prober"
	"github.com/llmprobe/llmprobe/sim"
)

// The memory a compiled burst's Footprint charges is an upper bound of what its
// results hold: every measured result, walked to its last string and slice,
// fits the per-request share of the footprint, successes and failures alike.
func TestFootprintBounds(t *testing.T) {
	srv, e := testkit.StartSim(t, func(c *sim.Config) {
		c.PrefillBase, c.DecodeBase, c.MaxBatch = time.Millisecond, time.Millisecond, 64
	})
	target := testkit.Target(srv.URL, config.APIChat)
	c, err := prober.NewClient(target)
	if err != nil {
		t.Fatal(err)
	}
	defer c.Close()
	s := testkit.Scenario()
	s.Name = "s"
	s.PromptTokens = config.Distribution{Kind: config.DistFixed, Value: 512}
	s.OutputTokens = config.Distribution{Kind: config.DistFixed, Value: 64}
	s.SLO = config.SLO{TTFT: config.Duration(time.Second), TPOT: config.Duration(time.Second), E2E: config.Duration(time.Second), Stall: config.Duration(time.Second), TargetRatio: 0.9}
	b := burstOf(config.ArrivalConstant, 200, 0)
	b.Duration, b.Requests, b.MaxConcurrency = 0, 200, 8
	// What one more measured request adds to the footprint.
	more := b
	more.Requests *= 2
	perResult := (plan.BurstOf(more, s).Footprint.Bytes - plan.BurstOf(b, s).Footprint.Bytes) / int64(b.Requests)

	for name, faults := range map[string]sim.Faults{"successes": {}, "failures": {ErrorRate: 1, ErrorStatus: 500}} {
		if err := e.SetFaults(faults); err != nil {
			t.Fatal(err)
		}
		out := Runner{Client: c}.runRate(context.Background(), plan.BurstOf(b, s), 200)
		if len(out.Results) != 200 {
			t.Fatalf("%d results, want 200", len(out.Results))
		}
		var worst int64
		for _, r := range out.Results {
			worst = max(worst, deepSize(reflect.ValueOf(r)))
		}
		t.Logf("%s: the largest result holds %d bytes; the footprint charges %d per request", name, worst, perResult)
		if worst > perResult {
			t.Errorf("a result holds %d bytes, past the %d the footprint charges", worst, perResult)
		}
	}
}

// deepSize is the memory a value reaches: itself, and every string, slice,
// map and pointer target below it.
func deepSize(v reflect.Value) int64 {
	switch v.Kind() {
	case reflect.Pointer:
		if v.IsNil() {
			return 8
		}
		return 8 + int64(v.Elem().Type().Size()) + inner(v.Elem())
	default:
		return int64(v.Type().Size()) + inner(v)
	}
}

// inner is what v reaches beyond its own size.
func inner(v reflect.Value) int64 {
	switch v.Kind() {
	case reflect.String:
		return int64(v.Len())
	case reflect.Slice:
		n := int64(v.Cap()) * int64(v.Type().Elem().Size())
		for i := range v.Len() {
			n += inner(v.Index(i))
		}
		return n
	case reflect.Struct:
		var n int64
		for i := range v.NumField() {
			n += inner(v.Field(i))
		}
		return n
	case reflect.Pointer:
		if v.IsNil() {
			return 0
		}
		return int64(v.Elem().Type().Size()) + inner(v.Elem())
	case reflect.Map:
		n := int64(48)
		iter := v.MapRange()
		for iter.Next() {
			n += deepSize(iter.Key()) + deepSize(iter.Value())
		}
		return n
	}
	return 0
}
