package burst

import (
	"context"
	"testing"
	"time"

	"github.com/go-kit/log"

	"github.com/llmprobe/llmprobe/config"
	"github.com/llmprobe/llmprobe/internal/testkit"
	"github.com/llmprobe/llmprobe/plan"
	"github.com/llmprobe/llmprobe/prober"
	"github.com/llmprobe/llmprobe/report"
	"github.com/llmprobe/llmprobe/report/store"
	"github.com/llmprobe/llmprobe/target"
)

func facts(v string) report.Facts { return report.Facts{Engine: "vllm", Version: v, Model: "m"} }

// queued is the "from" of the settled change waiting for the loop, if any.
func queued(w *engineWatch) *report.Facts {
	select {
	case <-w.signal:
		return w.take()
	default:
		return nil
	}
}

// The rules of the upgrade trigger, with the settle timer fired by hand
// (settled) so that "nothing fired" is checked, not waited for.
func TestEngineWatchRules(t *testing.T) {
	for _, c := range []struct {
		name     string
		observed []string // versions seen, in order; "" is an unreadable version
		from, to string   // the change that runs ("" none), and what is known after
	}{
		{"the first facts are no change", []string{"0.11"}, "", "0.11"},
		{"unchanged", []string{"0.11", "0.11", "0.11"}, "", "0.11"},
		{"an upgrade", []string{"0.11", "0.12"}, "0.11", "0.12"},
		{"a flap back within settle fires nothing", []string{"0.11", "0.12", "0.11"}, "", "0.11"},
		{"a→b→c runs once, from a", []string{"0.11", "0.12", "0.13"}, "0.11", "0.13"},
		{"an unreadable version is no downgrade", []string{"0.11", ""}, "", "0.11"},
	} {
		t.Run(c.name, func(t *testing.T) {
			w := newEngineWatch("t", time.Hour)
			for _, v := range c.observed {
				w.observe(facts(v))
			}
			w.settled()
			got := queued(w)
			switch {
			case c.from == "" && got != nil:
				t.Errorf("a run from %s fired", got)
			case c.from != "" && (got == nil || *got != facts(c.from)):
				t.Errorf("run from %v, want from %s", got, c.from)
			}
			if *w.known != facts(c.to) {
				t.Errorf("known %s, want %s", w.known, c.to)
			}
			w.stop()
		})
	}
}

// Two changes settled before the loop takes the first: one run, from the
// facts before both.
func TestEngineWatchCoalesces(t *testing.T) {
	w := newEngineWatch("t", time.Hour)
	w.observe(facts("a"))
	w.observe(facts("b"))
	w.settled()
	w.observe(facts("c"))
	w.settled()
	if got := queued(w); got == nil || *got != facts("a") {
		t.Errorf("run from %v, want from a", got)
	}
	if got := queued(w); got != nil {
		t.Errorf("a second run from %v", got)
	}
}

func upgradeConfig(t *testing.T, url, settle string) *config.Config {
	return testkit.Config(t, `targets: [{name: t, url: "`+url+`", model: m, info_interval: 1s}]
scenarios: [{name: s, prompt_tokens: 8, output_tokens: 4}]
bursts:
  - {name: up, target: t, scenarios: [{scenario: s}], arrival: {process: constant, rate: 50}, requests: 20,
     schedule: {on_start: true, on_engine_change: {settle: `+settle+`}}}
`)
}

// A reload keeps the facts known before it; a burst moved to another
// target starts over; a target that does not answer changes nothing.
func TestEngineWatchAcrossReloads(t *testing.T) {
	s := NewScheduler(context.Background(), log.NewNopLogger(), Runner{}, nil)
	defer s.Stop()
	client, err := prober.NewClient(testkit.Target("http://127.0.0.1:1", config.APIChat))
	if err != nil {
		t.Fatal(err)
	}
	defer client.Close()
	cfg := upgradeConfig(t, "http://127.0.0.1:1", "1h")
	cfg.Bursts[0].Schedule.OnStart = false
	s.Apply(plan.Of(cfg), map[string]*prober.Client{"t": client})
	w := s.watches["up"]
	s.TargetInfo(client, prober.Info{Engine: "vllm", EngineVersion: "0.11", Models: []string{"m"}, Confirmed: time.Now()})
	// Down: the last facts stay, with the reason; nothing changes.
	s.TargetInfo(client, prober.Info{Engine: "vllm", EngineVersion: "0.12", Confirmed: time.Now(), ModelsError: "connection refused"})
	if w.known == nil || *w.known != facts("0.11") || w.pending != nil {
		t.Fatalf("known %v pending %v, want 0.11 and nothing pending", w.known, w.pending)
	}
	changed := upgradeConfig(t, "http://127.0.0.1:1", "2h")
	changed.Bursts[0].Schedule.OnStart = false
	s.Apply(plan.Of(changed), map[string]*prober.Client{"t": client})
	if s.watches["up"] != w || *w.known != facts("0.11") || w.settle != 2*time.Hour {
		t.Errorf("a reload lost the known facts: watch %p (was %p), known %v, settle %s", s.watches["up"], w, w.known, w.settle)
	}
	// Back up with the new version: that is the change.
	s.TargetInfo(client, prober.Info{Engine: "vllm", EngineVersion: "0.12", Models: []string{"m"}, Confirmed: time.Now()})
	if w.pending == nil || *w.pending != facts("0.12") {
		t.Errorf("pending %v after the target came back on 0.12", w.pending)
	}
	s.Apply(plan.Of(testkit.Config(t, `targets: [{name: t, url: "http://127.0.0.1:1"}]
scenarios: [{name: s}]
`)), map[string]*prober.Client{"t": client})
	if len(s.watches) != 0 || w.timer != nil {
		t.Errorf("a removed burst's watch stays: %v", s.watches)
	}
}

type reports chan *report.Report

func (r reports) Due(string, time.Time)                {}
func (r reports) Finished(rep *report.Report, _ error) { r <- rep }
func (r reports) Skipped(string, int)                  {}

// Against the sim: the on_start run measures 0.1.0; the sim then reports
// 0.2.0, and after the settle time the upgrade run compares with it.
func TestUpgradeBurstAgainstSim(t *testing.T) {
	srv, engine := testkit.StartSim(t, nil)
	targets := target.NewSet(log.NewNopLogger())
	defer targets.Stop()
	done := make(reports, 4)
	s := NewScheduler(context.Background(), log.NewNopLogger(), Runner{Store: store.New(t.TempDir(), nil)}, done)
	defer s.Stop()
	targets.OnInfo(s.TargetInfo)
	cfg := upgradeConfig(t, srv.URL, "1s")
	s.Apply(plan.Of(cfg), targets.Apply(context.Background(), cfg))
	wait := func(what string) *report.Report {
		t.Helper()
		select {
		case r := <-done:
			return r
		case <-time.After(30 * time.Second):
			t.Fatalf("no %s within 30s", what)
			return nil
		}
	}
	first := wait("on_start run")
	if first.Upgrade != nil || first.EngineVersion != "0.1.0" {
		t.Fatalf("the on_start run: upgrade %v, version %q", first.Upgrade, first.EngineVersion)
	}
	engine.SetVersion("0.2.0")
	up := wait("upgrade run")
	u := up.Upgrade
	if u == nil || u.From.Version != "0.1.0" || u.To.Version != "0.2.0" || u.BaselineID != first.ID {
		t.Fatalf("upgrade run: %+v", u)
	}
	if u.Regressed {
		t.Errorf("the same engine under a new version regressed: %s", u.Summary)
	}
	t.Log(u.Summary)
}

// A loop stopped by a reload after it took the signal hands the change on.
func TestEngineWatchPokeHandsOn(t *testing.T) {
	w := newEngineWatch("t", time.Hour)
	w.observe(facts("a"))
	w.observe(facts("b"))
	w.settled()
	<-w.signal // the stopped loop took the signal, not the change
	w.poke()
	if got := queued(w); got == nil || *got != facts("a") {
		t.Errorf("the next loop got %v, want the change from a", got)
	}
	w.poke()
	if got := queued(w); got != nil {
		t.Errorf("a poke with nothing queued signalled %v", got)
	}
}
