package target

import (
	"context"
	"strings"
	"testing"
	"time"

	"github.com/go-kit/log"
	"go.uber.org/goleak"

	"github.com/llmprobe/llmprobe/internal/testkit"
	"github.com/llmprobe/llmprobe/prober"
)

func TestMain(m *testing.M) {
	goleak.VerifyTestMain(m)
}

// A target's state follows its requests, and the log says each change
// once: down with the reason, a new kind of failure, up again; a target that
// keeps flapping gets one line per 30 s, with the changes in between counted.
func TestStateAndLogLines(t *testing.T) {
	logs := &testkit.Buffer{}
	set := NewSet(log.NewLogfmtLogger(logs))
	defer set.Stop()
	clock := time.Date(2026, 11, 23, 12, 0, 0, 0, time.UTC)
	set.now = func() time.Time { return clock }
	cfg := testkit.Config(t, "targets: [{name: a, url: 'http://127.0.0.1:1', model: m, info_interval: 1h}]\nscenarios: [{name: s}]\n")
	set.Apply(context.Background(), cfg)
	// The client's first info refresh runs on its own and says once that
	// the (unreachable) target gave no info: let it, so its line does not
	// land in a step's.
	testkit.WaitUntil(t, "the first info refresh's line", 10*time.Second, func() bool {
		return strings.Contains(logs.String(), "target info unavailable")
	})
	logs.Take()

	ok := &prober.Result{Target: "a", Scenario: "s", Outcome: prober.OutcomeSuccess}
	refused := &prober.Result{Target: "a", Scenario: "s", Outcome: prober.OutcomeConnectionError, Phase: "connect", Reason: "connection_refused", Error: "dial tcp: connection refused"}
	slow := &prober.Result{Target: "a", Scenario: "s", Outcome: prober.OutcomeTimeout, Phase: "headers", Reason: "deadline", Error: "deadline after 1s"}
	step := func(d time.Duration, r *prober.Result) string {
		clock = clock.Add(d)
		set.Observe(r)
		return logs.Take()
	}
	steps := []struct {
		after  time.Duration
		result *prober.Result
		up     bool
		logged string // "" for nothing
	}{
		{0, ok, true, `level=info msg="target up"`},
		{time.Minute, ok, true, ""},
		{time.Minute, refused, false, `level=warn msg="target down" outcome=connection_error phase=connect reason=connection_refused`},
		{time.Minute, refused, false, ""},
		{time.Minute, slow, false, `msg="target failing in a new way" outcome=timeout phase=headers reason=deadline`},
		{time.Minute, ok, true, `msg="target up again" down_for=3m0s`},
		{time.Second, refused, false, `msg="target down"`}, // a few changes in a row are all told
		{time.Second, ok, true, `msg="target up again"`},
		{time.Second, refused, false, ""}, // then it flaps: one line per 30 s
		{time.Second, ok, true, ""},
		{time.Second, refused, false, ""},
		{time.Minute, ok, true, `msg="target up again" down_for=1m0s target=a scenario=s traffic= changes_not_logged=3`},
		{time.Minute, refused, false, `msg="target down" outcome=connection_error phase=connect reason=connection_refused status=0 err="dial tcp: connection refused" target=a scenario=s traffic=`},
		{time.Minute, &prober.Result{Target: "a", Outcome: prober.OutcomeCancelled}, false, ""},          // llmprobe's own cancel says nothing
		{time.Minute, &prober.Result{Target: "gone", Outcome: prober.OutcomeConnectionError}, false, ""}, // not configured
	}
	for i, s := range steps {
		got := step(s.after, s.result)
		if (s.logged == "") != (got == "") || !strings.Contains(got, s.logged) {
			t.Errorf("step %d: logged %q, want %q", i, got, s.logged)
		}
		if st := set.State("a"); st.Up != s.up {
			t.Errorf("step %d: up = %v, want %v", i, st.Up, s.up)
		}
	}
	if st := set.State("a"); st.Last != refused || !st.Since.Equal(clock.Add(-2*time.Minute)) {
		t.Errorf("state %+v: want the last refused request, down since two minutes", st)
	}

	// A reload that rebuilds the client keeps the state; removing the target drops it.
	cfg2 := testkit.Config(t, "targets: [{name: a, url: 'http://127.0.0.1:2', model: m, info_interval: 1h}]\nscenarios: [{name: s}]\n")
	set.Apply(context.Background(), cfg2)
	if st := set.State("a"); st.Last != refused {
		t.Error("a reload that rebuilt the client lost the target's state")
	}
	cfg3 := testkit.Config(t, "targets: [{name: b, url: 'http://127.0.0.1:2', model: m, info_interval: 1h}]\nscenarios: [{name: s}]\n")
	set.Apply(context.Background(), cfg3)
	if st := set.State("a"); st.Last != nil {
		t.Error("a removed target's state stays")
	}
}
