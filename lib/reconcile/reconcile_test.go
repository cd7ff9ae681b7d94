package reconcile

import (
	"context"
	"errors"
	"slices"
	"sync"
	"testing"
)

// recorder is jobs that say when they start and with which cause they end.
type recorder struct {
	mu      sync.Mutex
	started map[string]int
	causes  map[string][]error
}

func (r *recorder) run(ctx context.Context, key string, v int) {
	r.mu.Lock()
	r.started[key]++
	r.mu.Unlock()
	<-ctx.Done()
	r.mu.Lock()
	r.causes[key] = append(r.causes[key], context.Cause(ctx))
	r.mu.Unlock()
}

func (r *recorder) counts() (map[string]int, map[string]int) {
	r.mu.Lock()
	defer r.mu.Unlock()
	started, stopped := map[string]int{}, map[string]int{}
	for k, n := range r.started {
		started[k] = n
	}
	for k, c := range r.causes {
		stopped[k] = len(c)
	}
	return started, stopped
}

// An unchanged job keeps running across applies; a changed one restarts
// with the apply's cause; a removed one stops; Stop ends the rest with its
// own cause and waits for them.
func TestApplyKeepsUnchangedRestartsChangedStopsRemoved(t *testing.T) {
	r := &recorder{started: map[string]int{}, causes: map[string][]error{}}
	s := New(context.Background(), func(a, b int) bool { return a == b }, r.run)
	reload, stopping := errors.New("reloaded"), errors.New("stopping")
	s.Apply(map[string]int{"a": 1, "b": 1, "c": 1}, reload)
	s.Apply(map[string]int{"a": 1, "b": 2}, reload)
	if got := s.Running(); len(got) != 2 || got["a"] != 1 || got["b"] != 2 {
		t.Errorf("running %v, want a=1 b=2", got)
	}
	s.Stop(stopping)
	started, stopped := r.counts()
	if started["a"] != 1 || started["b"] != 2 || started["c"] != 1 {
		t.Errorf("started %v, want a once, b twice, c once", started)
	}
	if stopped["a"] != 1 || stopped["b"] != 2 || stopped["c"] != 1 {
		t.Errorf("stopped %v: Stop must wait for every job", stopped)
	}
	// The jobs of one key end in either order: a stopped job may record
	// its cause after its successor's.
	want := map[string][]error{"a": {stopping}, "b": {reload, stopping}, "c": {reload}}
	for k, causes := range want {
		for _, c := range causes {
			if !slices.ContainsFunc(r.causes[k], func(e error) bool { return errors.Is(e, c) }) {
				t.Errorf("%s ended with %v, want %v", k, r.causes[k], causes)
			}
		}
	}
	if got := s.Running(); len(got) != 0 {
		t.Errorf("running %v after Stop", got)
	}
}

// Jobs end when the Set's context ends.
func TestJobsEndWithTheContext(t *testing.T) {
	ctx, cancel := context.WithCancel(context.Background())
	r := &recorder{started: map[string]int{}, causes: map[string][]error{}}
	s := New(ctx, func(a, b int) bool { return a == b }, r.run)
	s.Apply(map[string]int{"a": 1}, nil)
	cancel()
	s.Stop(nil)
	if _, stopped := r.counts(); stopped["a"] != 1 || !errors.Is(r.causes["a"][0], context.Canceled) {
		t.Errorf("a ended with %v, want the context's cancellation", r.causes["a"])
	}
}
