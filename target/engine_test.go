package target

import (
	"context"
	"fmt"
	"net/http"
	"net/http/httptest"
	"sync/atomic"
	"testing"
	"time"

	"github.com/go-kit/log"

	"github.com/llmprobe/llmprobe/config"
	"github.com/llmprobe/llmprobe/internal/testkit"
)

// A target's engine reads run while it is configured with engine_metrics
// and end with a reload that removes it (goleak checks the goroutine ends);
// a page that hangs is cut at the timeout and read again next interval.
func TestEngineLoopFollowsReloads(t *testing.T) {
	var reads atomic.Int32
	release := make(chan struct{})
	hang := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		reads.Add(1)
		select {
		case <-r.Context().Done():
		case <-release:
		}
	}))
	defer hang.Close()
	defer close(release)
	cfg := testkit.Config(t, fmt.Sprintf("targets: [{name: a, url: 'http://127.0.0.1:1', model: m, info_interval: 1h, engine_metrics: {url: %q, timeout: 100ms}}]\nscenarios: [{name: s}]\n", hang.URL+"/metrics"))
	cfg.Targets[0].EngineMetrics.Interval = config.Duration(150 * time.Millisecond)
	set := NewSet(log.NewNopLogger())
	defer set.Stop()
	set.Apply(context.Background(), cfg)
	testkit.WaitUntil(t, "two reads cut by the timeout", 5*time.Second, func() bool {
		st, _ := set.Engine("a")
		return reads.Load() >= 2 && st.Last != nil && st.Last.Error != ""
	})
	st, _ := set.Engine("a")
	if st.Last.Duration > 1 {
		t.Errorf("a hanging read took %gs", st.Last.Duration)
	}
	set.Apply(context.Background(), testkit.Config(t, "targets: [{name: b, url: 'http://127.0.0.1:1', model: m, info_interval: 1h}]\nscenarios: [{name: s}]\n"))
	if _, ok := set.Engine("a"); ok {
		t.Error("a removed target keeps its engine state")
	}
}
