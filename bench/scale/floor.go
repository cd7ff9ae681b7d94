package main

import (
	"bufio"
	"bytes"
	"context"
	"fmt"
	"io"
	"net/http"
	"strings"
	"sync"
	"time"
)

// floorPrompt is 32 words, the bench scenario's prompt length.
var floorPrompt = strings.TrimSpace(strings.Repeat("the quick brown fox jumps over the lazy dog ", 4)[:150])

// floorBurst is the CPU floor of streaming with Go's HTTP client: the
// smallest reader that still measures (one timestamp per event, no JSON),
// sent on its own Poisson schedule at rate for d. It gives the process's
// CPU time per request and how many requests got every token.
func floorBurst(ctx context.Context, url string, rate float64, d time.Duration, tokens int) (cpuPerRequest float64, complete, requests int, err error) {
	client := &http.Client{Transport: &http.Transport{MaxIdleConnsPerHost: 1 << 16, DisableCompression: true}}
	defer client.CloseIdleConnections()
	body := []byte(fmt.Sprintf(`{"model":"sim-model","prompt":%q,"max_tokens":%d,"stream":true}`, floorPrompt, tokens))
	get := func() (int, error) {
		req, err := http.NewRequestWithContext(ctx, http.MethodPost, url+"/v1/completions", bytes.NewReader(body))
		if err != nil {
			return 0, err
		}
		req.Header.Set("Content-Type", "application/json")
		resp, err := client.Do(req)
		if err != nil {
			return 0, err
		}
		defer resp.Body.Close()
		r := bufio.NewReaderSize(resp.Body, 512)
		var stamps [128]time.Time
		events := 0
		for {
			line, err := r.ReadSlice('\n')
			if len(line) > 5 && bytes.HasPrefix(line, []byte("data:")) {
				stamps[events%len(stamps)] = time.Now()
				events++
			}
			if err == io.EOF {
				return events, nil
			} else if err != nil {
				return events, err
			}
		}
	}
	if _, err := get(); err != nil { // a warm connection, as llmprobe's rows have
		return 0, 0, 0, err
	}
	var (
		wg   sync.WaitGroup
		mu   sync.Mutex
		errs []error
	)
	m := startMeter()
	poisson(rate, d, func(at time.Time) {
		time.Sleep(time.Until(at))
		requests++
		wg.Add(1)
		go func() {
			defer wg.Done()
			events, err := get()
			mu.Lock()
			defer mu.Unlock()
			// The stream's events are its tokens and its [DONE].
			if err == nil && events >= tokens+1 {
				complete++
			} else if err != nil {
				errs = append(errs, err)
			}
		}()
	})
	wg.Wait()
	row := m.stop("floor", rate, requests)
	if len(errs) > 0 {
		return 0, complete, requests, fmt.Errorf("floor reader: %d of %d requests failed, the first: %w", len(errs), requests, errs[0])
	}
	return *row.CPUPerRequestMs, complete, requests, nil
}
