// Command tracerss measures what replaying a large trace costs in memory: it
// writes a synthetic trace of the given size (Mooncake JSONL or the Azure
// CSV), runs the configuration load's scan of it and then a burst's plan
// to its end, as a trace burst does, and prints the records, the time of
// each pass and the process's peak RSS (VmHWM, Linux only). The file is
// removed afterwards unless -keep is given.
//
//	go run ./bench/tracerss -format mooncake -size 1073741824
//	go run ./bench/tracerss -format azure -size 1073741824
//
// It calls the scan and the plan directly, as the daemon does, but without
// the configuration's limits: a 1 GiB Azure CSV holds more records than
// limits.max_planned_requests allows one burst.
package main

import (
	"bufio"
	"errors"
	"flag"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"time"

	"github.com/llmprobe/llmprobe/config"
	"github.com/llmprobe/llmprobe/plan"
	"github.com/llmprobe/llmprobe/replay"
)

func main() {
	format := flag.String("format", replay.Mooncake, "trace format: mooncake or azure")
	size := flag.Int64("size", 1<<30, "bytes of trace to write")
	dir := flag.String("dir", os.TempDir(), "where to write the trace")
	keep := flag.Bool("keep", false, "keep the trace file")
	flag.Parse()
	if err := run(*format, *size, *dir, *keep); err != nil {
		fmt.Fprintln(os.Stderr, "tracerss:", err)
		os.Exit(1)
	}
}

func run(format string, size int64, dir string, keep bool) error {
	ext := map[string]string{replay.Mooncake: ".jsonl", replay.Azure: ".csv"}[format]
	if ext == "" {
		return fmt.Errorf("format %q must be %s or %s", format, replay.Mooncake, replay.Azure)
	}
	path := filepath.Join(dir, "tracerss-"+format+ext)
	start := time.Now()
	lines, err := write(path, format, size)
	if !keep {
		defer os.Remove(path)
	}
	if err != nil {
		return err
	}
	st, err := os.Stat(path)
	if err != nil {
		return err
	}
	fmt.Printf("wrote %s: %d bytes, %d records, in %s\n", path, st.Size(), lines, time.Since(start).Round(time.Millisecond))

	// Long enough that every record is in the measured part.
	yml := fmt.Sprintf(`targets: [{name: t, url: "http://127.0.0.1:1", model: m}]
scenarios: [{name: s, prompt_tokens: 64, output_tokens: 16}]
limits: {max_planned_requests: %d, max_burst_memory: 1TiB}
bursts:
  - {name: b, target: t, seed: 1, scenarios: [{scenario: s}], arrival: {process: trace, file: %q, format: %s}, duration: 24000h}
`, config.MaxPlannedCeiling, path, format)
	start = time.Now()
	p, err := plan.Parse([]byte(yml), "tracerss.yml")
	if err != nil {
		return err
	}
	b := p.Bursts[0]
	scan := b.Trace
	fmt.Printf("load scan: %d records in %s (%.2f µs a record)\n", scan.Measured, time.Since(start).Round(time.Millisecond),
		float64(time.Since(start).Microseconds())/float64(max(scan.Measured, 1)))

	start = time.Now()
	n := 0
	for range b.Arrivals(0) {
		n++
	}
	fmt.Printf("plan: %d arrivals in %s (%.2f µs an arrival)\n", n, time.Since(start).Round(time.Millisecond),
		float64(time.Since(start).Microseconds())/float64(max(n, 1)))
	if n != scan.Measured {
		return fmt.Errorf("the plan replayed %d records, the scan counted %d", n, scan.Measured)
	}
	hwm, err := status("VmHWM")
	if err != nil {
		return err
	}
	fmt.Printf("peak RSS (VmHWM): %s\n", hwm)
	return nil
}

// write fills path with about size bytes of trace: increasing timestamps,
// lengths that vary, Mooncake hash ids that repeat a few first blocks.
func write(path, format string, size int64) (int, error) {
	f, err := os.Create(path)
	if err != nil {
		return 0, err
	}
	w := bufio.NewWriterSize(f, 1<<20)
	written, lines := int64(0), 0
	base := time.Date(2023, 11, 16, 18, 0, 0, 0, time.UTC)
	if format == replay.Azure {
		n, _ := fmt.Fprintln(w, "TIMESTAMP,ContextTokens,GeneratedTokens")
		written += int64(n)
	}
	var ids strings.Builder
	for ; written < size; lines++ {
		var n int
		input, output := 100+lines*7919%8000, 1+lines*104729%600
		switch format {
		case replay.Azure:
			at := base.Add(time.Duration(lines) * 731 * time.Microsecond)
			n, err = fmt.Fprintf(w, "%s,%d,%d\n", at.Format("2006-01-02 15:04:05.0000000"), input, output)
		default:
			ids.Reset()
			for i := range (input + 511) / 512 {
				if i > 0 {
					ids.WriteString(", ")
				}
				if i == 0 {
					fmt.Fprintf(&ids, "%d", lines%97) // shared first blocks
				} else {
					fmt.Fprintf(&ids, "%d", lines*16+i)
				}
			}
			n, err = fmt.Fprintf(w, `{"timestamp": %d, "input_length": %d, "output_length": %d, "hash_ids": [%s]}`+"\n",
				lines*3, input, output, ids.String())
		}
		if err != nil {
			break
		}
		written += int64(n)
	}
	return lines, errors.Join(err, w.Flush(), f.Close())
}

// status reads one field of /proc/self/status.
func status(field string) (string, error) {
	data, err := os.ReadFile("/proc/self/status")
	if err != nil {
		return "", fmt.Errorf("%s needs Linux's /proc: %w", field, err)
	}
	for _, line := range strings.Split(string(data), "\n") {
		if v, ok := strings.CutPrefix(line, field+":"); ok {
			return strings.TrimSpace(v), nil
		}
	}
	return "", fmt.Errorf("no %s in /proc/self/status", field)
}
