// Package reconcile keeps a set of long-running jobs in line with the set a
// configuration wants: at each Apply, a job no longer wanted, or wanted
// with a value that is not the same, stops; new and changed ones start;
// unchanged ones keep running undisturbed. Every scheduler of llmprobe
// (canaries, always-on comparisons, bursts) is one Set.
package reconcile

import (
	"context"
	"sync"
)

// Set runs one goroutine per key, each with the value it was started with.
// It is safe for concurrent use.
type Set[K comparable, V any] struct {
	ctx  context.Context
	same func(running, wanted V) bool
	run  func(ctx context.Context, key K, v V)

	mu   sync.Mutex
	jobs map[K]*job[V]
	wg   sync.WaitGroup
}

type job[V any] struct {
	v      V
	cancel context.CancelCauseFunc
}

// New is a Set whose jobs live until ctx ends: run(ctx, key, v) is a job,
// which returns once its ctx ends; same says whether a running job's value
// is the one wanted now, so that the job can keep running.
func New[K comparable, V any](ctx context.Context, same func(running, wanted V) bool, run func(ctx context.Context, key K, v V)) *Set[K, V] {
	return &Set[K, V]{ctx: ctx, same: same, run: run, jobs: map[K]*job[V]{}}
}

// Apply brings the jobs in line with want: those whose key is gone, or
// whose value is not the same as want's, stop with cause (their ctx's
// cause); then every key without a job starts one with want's value.
func (s *Set[K, V]) Apply(want map[K]V, cause error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	for k, j := range s.jobs {
		if v, ok := want[k]; ok && s.same(j.v, v) {
			continue
		}
		j.cancel(cause)
		delete(s.jobs, k)
	}
	for k, v := range want {
		if _, running := s.jobs[k]; running {
			continue
		}
		ctx, cancel := context.WithCancelCause(s.ctx)
		s.jobs[k] = &job[V]{v: v, cancel: cancel}
		s.wg.Add(1)
		go func() {
			defer s.wg.Done()
			s.run(ctx, k, v)
		}()
	}
}

// Stop ends every job with cause and waits until all have returned.
func (s *Set[K, V]) Stop(cause error) {
	s.mu.Lock()
	for k, j := range s.jobs {
		j.cancel(cause)
		delete(s.jobs, k)
	}
	s.mu.Unlock()
	s.wg.Wait()
}

// Running is the value of every running job, by key.
func (s *Set[K, V]) Running() map[K]V {
	s.mu.Lock()
	defer s.mu.Unlock()
	out := make(map[K]V, len(s.jobs))
	for k, j := range s.jobs {
		out[k] = j.v
	}
	return out
}
