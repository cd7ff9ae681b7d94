package daemon

import (
	"context"
	"fmt"
	"math/rand/v2"
	"net"
	"net/http"
	"os"
	"os/signal"
	"slices"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"

	toolkit "github.com/prometheus/exporter-toolkit/web"
	"go.uber.org/goleak"

	"github.com/llmprobe/llmprobe/config"
	"github.com/llmprobe/llmprobe/internal/testkit"
	"github.com/llmprobe/llmprobe/plan"
	"github.com/llmprobe/llmprobe/sim"
)

func TestMain(m *testing.M) {
	goleak.VerifyTestMain(m)
}

// running is a daemon serving HTTP in this process.
type running struct {
	*Daemon
	base     string
	shutdown func() error
}

func startDaemon(t *testing.T, opts Options) *running {
	t.Helper()
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	addr := ln.Addr().String()
	ln.Close()
	addrs, systemd, webConfig := []string{addr}, false, ""
	opts.Web = &toolkit.FlagConfig{WebListenAddresses: &addrs, WebSystemdSocket: &systemd, WebConfigFile: &webConfig}
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan error, 1)
	r := &running{Daemon: New(opts), base: "http://" + addr}
	go func() { done <- r.Run(ctx) }()
	r.shutdown = sync.OnceValue(func() error { cancel(); return <-done })
	t.Cleanup(func() {
		if err := r.shutdown(); err != nil {
			t.Errorf("Run: %v", err)
		}
	})
	testkit.WaitUntil(t, "the daemon to be ready", 10*time.Second, func() bool {
		code, _ := r.get("/-/ready")
		return code == http.StatusOK
	})
	return r
}

func (r *running) get(path string) (int, string)  { return testkit.Get(r.base + path) }
func (r *running) post(path string) (int, string) { return testkit.Post(r.base + path) }

// writeFile replaces path whole, as a config management tool does, so a
// reload reads the old file or the new one and never half of one.
func writeFile(t *testing.T, path, data string) {
	t.Helper()
	tmp := path + ".tmp"
	if err := os.WriteFile(tmp, []byte(data), 0o600); err != nil {
		t.Error(err)
		return
	}
	if err := os.Rename(tmp, path); err != nil {
		t.Error(err)
	}
}

// generation is a good configuration whose every part says which one it is:
// the target's name, the scenario's TTFT objective and the canary interval.
func generation(url string, n int) string {
	return fmt.Sprintf(`targets: [{name: gen%d, url: %q, model: m, timeout: 2s}]
scenarios: [{name: s, prompt_tokens: 8, output_tokens: 2, slo: {ttft: %dms}}]
canary: {interval: %dms}
`, n, url, 100+n, 300+n)
}

const badConfig = "targets: [{name: broken, url: 'ftp://nope'}]\nscenarios: [{name: s}]\n"

// runsShown fails the test unless the daemon runs exactly the configuration
// /config shows: its targets' clients, its canary schedules, its objective
// gauges and its landing page.
func (r *running) runsShown(t *testing.T) *config.Config {
	t.Helper()
	cfg := r.safe.Get().Config
	_, shown := r.get("/config")
	var targets []string
	for _, tc := range cfg.Targets {
		targets = append(targets, tc.Name)
		if !strings.Contains(shown, "name: "+tc.Name+"\n") {
			t.Errorf("/config lacks target %s", tc.Name)
		}
	}
	var clients []string
	for _, c := range r.targets.Clients() {
		clients = append(clients, c.Target().Name)
	}
	if !slices.Equal(clients, targets) {
		t.Errorf("clients of targets %v run; /config shows %v", clients, targets)
	}
	if got, want := r.canary.Running(), cfg.CanaryPairs(); !slices.Equal(got, want) {
		t.Errorf("canary schedules %v run; /config asks for %v", got, want)
	}
	_, metrics := r.get("/metrics")
	objectives := grepLines(metrics, "llmprobe_slo_objective_seconds{")
	want := fmt.Sprintf(`llmprobe_slo_objective_seconds{objective="ttft",scenario="s"} %g`, cfg.Scenarios[0].SLO.TTFT.Std().Seconds())
	if objectives != want {
		t.Errorf("/metrics has objectives\n%s\n/config asks for\n%s", objectives, want)
	}
	_, landing := r.get("/")
	if got, want := grepLines(landing, "<h3 id=\"probes-"), fmt.Sprintf("<h3 id=\"probes-%[1]s-s\">%[1]s · s</h3>", targets[0]); got != want {
		t.Errorf("the landing page shows schedules\n%s\n/config asks for\n%s", got, want)
	}
	return cfg
}

// POST /-/reload and SIGHUP race while the file flips between good and bad
// configurations. After every round, whatever the interleaving, the daemon
// runs exactly the configuration /config shows; at the end, that is the
// file's.
func TestConcurrentReloadsRunWhatConfigShows(t *testing.T) {
	srv, _ := testkit.StartSim(t, func(c *sim.Config) { c.PrefillBase, c.DecodeBase = time.Millisecond, time.Millisecond })
	// Hold SIGHUP for the whole test, so a signal still in flight when the
	// daemon stops listening cannot end the test binary.
	held := make(chan os.Signal, 1)
	signal.Notify(held, syscall.SIGHUP)
	defer signal.Stop(held)

	path := testkit.ConfigFile(t, generation(srv.URL, 0))
	d := startDaemon(t, Options{ConfigFile: path, StoragePath: t.TempDir(), HistoryRecent: 5, HistoryFailures: 5})
	rng := rand.New(rand.NewPCG(1, 2))
	n := 0
	next := func() string {
		n++
		if rng.IntN(3) == 0 {
			return badConfig
		}
		return generation(srv.URL, n)
	}
	post := func() {
		code, body := d.post("/-/reload")
		if code != http.StatusOK && !(code == http.StatusInternalServerError && strings.Contains(body, "targets[0].url")) {
			t.Errorf("POST /-/reload: %d %s", code, body)
		}
	}

	// Rounds of concurrent POSTs, the file changing under them. When every
	// POST has been answered no reload runs, so the state must be whole.
	for range 60 {
		var wg sync.WaitGroup
		for range 6 {
			wg.Add(1)
			go func() {
				defer wg.Done()
				for range 5 {
					post()
				}
			}()
		}
		for range 10 {
			writeFile(t, path, next())
			time.Sleep(time.Duration(rng.IntN(500)) * time.Microsecond)
		}
		wg.Wait()
		d.runsShown(t)
		if t.Failed() {
			return
		}
	}

	// 100 reloads at once, the file flipping under them; then one file, one
	// reload: the metric says how that one went, and a good file runs.
	for _, good := range []bool{false, true} {
		var wg sync.WaitGroup
		for range 100 {
			wg.Add(1)
			go func() {
				defer wg.Done()
				post()
			}()
		}
		for range 20 {
			writeFile(t, path, next())
		}
		wg.Wait()
		last := badConfig
		if good {
			last = generation(srv.URL, n+1000)
		}
		writeFile(t, path, last)
		code, _ := d.post("/-/reload")
		if ok := code == http.StatusOK; ok != good {
			t.Fatalf("reloading a good=%v file answered %d", good, code)
		}
		_, metrics := d.get("/metrics")
		want := map[bool]string{true: "llmprobe_config_last_reload_successful 1", false: "llmprobe_config_last_reload_successful 0"}[good]
		if !strings.Contains(metrics, "\n"+want+"\n") {
			t.Errorf("after a good=%v reload the metric does not read %q", good, want)
		}
		d.runsShown(t)
	}

	// Signals join in; they are answered asynchronously, so the check waits
	// for a last reload that began after the last write.
	var wg sync.WaitGroup
	stop := make(chan struct{})
	repeat := func(do func()) {
		defer wg.Done()
		for {
			select {
			case <-stop:
				return
			default:
				do()
			}
		}
	}
	wg.Add(2)
	go repeat(post)
	go repeat(func() {
		if err := syscall.Kill(os.Getpid(), syscall.SIGHUP); err != nil {
			t.Error(err)
		}
		time.Sleep(time.Millisecond)
	})
	for range 40 {
		writeFile(t, path, next())
		time.Sleep(time.Duration(rng.IntN(3)) * time.Millisecond)
	}
	close(stop)
	wg.Wait()
	writeFile(t, path, generation(srv.URL, n+1))
	if code, body := d.post("/-/reload"); code != http.StatusOK {
		t.Fatalf("final reload: %d %s", code, body)
	}
	want, err := plan.File(path)
	if err != nil {
		t.Fatal(err)
	}
	// A signal still queued reloads the same file: nothing changes.
	if got := d.runsShown(t); !config.Equal(got, want.Config) {
		t.Errorf("/config shows target %s; the file says %s", got.Targets[0].Name, want.Config.Targets[0].Name)
	}
}

// An on_start burst runs when it first appears and again only when its
// definition changes: reloads of the same file, or of a change elsewhere,
// leave it be.
func TestOnStartBurstRunsOncePerDefinition(t *testing.T) {
	srv, _ := testkit.StartSim(t, func(c *sim.Config) { c.PrefillBase, c.DecodeBase = time.Millisecond, time.Millisecond })
	file := func(requests int, interval string) string {
		return fmt.Sprintf(`targets: [{name: t, url: %q, model: m, timeout: 2s}]
scenarios: [{name: s, prompt_tokens: 8, output_tokens: 2, slo: {ttft: 1s}}]
canary: {interval: %s}
bursts:
  - {name: b, target: t, scenarios: [{scenario: s}], arrival: {rate: 50}, requests: %d, schedule: {on_start: true}}
`, srv.URL, interval, requests)
	}
	path := testkit.ConfigFile(t, file(2, "1s"))
	storage := t.TempDir()
	d := startDaemon(t, Options{ConfigFile: path, StoragePath: storage, HistoryRecent: 5, HistoryFailures: 5})
	runs := func() int {
		list, err := d.store.List()
		if err != nil {
			t.Fatal(err)
		}
		return len(list["b"])
	}
	testkit.WaitUntil(t, "the on_start burst's report", 10*time.Second, func() bool { return runs() == 1 })
	for _, content := range []string{file(2, "1s"), file(2, "1s"), file(2, "2s")} {
		writeFile(t, path, content)
		if code, body := d.post("/-/reload"); code != http.StatusOK {
			t.Fatalf("reload: %d %s", code, body)
		}
	}
	writeFile(t, path, file(3, "2s"))
	if code, body := d.post("/-/reload"); code != http.StatusOK {
		t.Fatalf("reload: %d %s", code, body)
	}
	// The changed burst plans 3 requests: its report is the second only if
	// no reload before it ran the old one again.
	testkit.WaitUntil(t, "the changed burst's report", 10*time.Second, func() bool {
		latest, err := d.store.Latest("b")
		return err == nil && latest != nil && latest.PlannedRequests == 3
	})
	if n := runs(); n != 2 {
		t.Errorf("%d runs: an unchanged on_start burst ran again", n)
	}
}

func grepLines(text, substr string) string {
	var out []string
	for _, l := range strings.Split(text, "\n") {
		if strings.Contains(l, substr) {
			out = append(out, l)
		}
	}
	return strings.Join(out, "\n")
}
