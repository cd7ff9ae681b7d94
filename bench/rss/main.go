// Command rss measures the resident memory of a built llmprobe: it starts
// the binary with no configuration (the embedded demo: its own simulated
// engine, canaries and a burst), waits until it is ready and has settled,
// and prints VmRSS and VmHWM from /proc (Linux only). It builds nothing.
//
//	make build && go run ./bench/rss -bin bin/llmprobe
//	GODEBUG=madvdontneed=1 go run ./bench/rss -bin bin/llmprobe   # the child inherits the environment
package main

import (
	"bufio"
	"flag"
	"fmt"
	"io"
	"net"
	"net/http"
	"os"
	"os/exec"
	"strconv"
	"strings"
	"time"
)

func main() {
	bin := flag.String("bin", "bin/llmprobe", "the llmprobe binary")
	settle := flag.Duration("settle", 60*time.Second, "how long to let it run after it is ready")
	scrape := flag.Duration("scrape", 0, "scrape /metrics this often while it settles, as Prometheus would (0: never)")
	flag.Parse()
	if err := run(*bin, *settle, *scrape, flag.Args()); err != nil {
		fmt.Fprintln(os.Stderr, "rss:", err)
		os.Exit(1)
	}
}

func run(bin string, settle, scrape time.Duration, extra []string) error {
	addr, err := freeAddr()
	if err != nil {
		return err
	}
	storage, err := os.MkdirTemp("", "llmprobe-rss-")
	if err != nil {
		return err
	}
	defer os.RemoveAll(storage)
	// Its log goes to a file: a pipe nobody reads would block it.
	logFile, err := os.Create(storage + ".log")
	if err != nil {
		return err
	}
	defer os.Remove(logFile.Name())
	defer logFile.Close()
	cmd := exec.Command(bin, append([]string{"--web.listen-address=" + addr, "--storage.path=" + storage}, extra...)...)
	cmd.Stdout, cmd.Stderr = logFile, logFile
	if err := cmd.Start(); err != nil {
		return err
	}
	defer func() {
		_ = cmd.Process.Signal(os.Interrupt)
		_ = cmd.Wait()
	}()
	if err := waitReady("http://"+addr+"/-/ready", 30*time.Second); err != nil {
		return fmt.Errorf("%w (log: %s)", err, logFile.Name())
	}
	// The measurement is of a daemon left alone this long, or scraped.
	end := time.After(settle)
	var tick <-chan time.Time
	if scrape > 0 {
		t := time.NewTicker(scrape)
		defer t.Stop()
		tick = t.C
	}
	for waiting := true; waiting; {
		select {
		case <-end:
			waiting = false
		case <-tick:
			if err := get("http://" + addr + "/metrics"); err != nil {
				return err
			}
		}
	}
	status, err := procStatus(cmd.Process.Pid)
	if err != nil {
		return err
	}
	scraped := "not scraped"
	if scrape > 0 {
		scraped = "scraped every " + scrape.String()
	}
	fmt.Printf("llmprobe (demo config, %s after ready, %s, GODEBUG=%q):", settle, scraped, os.Getenv("GODEBUG"))
	for _, k := range []string{"VmRSS", "VmHWM", "RssAnon", "RssFile"} {
		kb, err := strconv.ParseFloat(strings.TrimSuffix(status[k], " kB"), 64)
		if err != nil {
			return fmt.Errorf("/proc/%d/status %s: %q", cmd.Process.Pid, k, status[k])
		}
		fmt.Printf(" %s %.1f MiB", k, kb/1024)
	}
	fmt.Println()
	return nil
}

func freeAddr() (string, error) {
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		return "", err
	}
	defer ln.Close()
	return ln.Addr().String(), nil
}

// waitReady polls the readiness endpoint until it answers 200.
func waitReady(url string, timeout time.Duration) error {
	deadline := time.Now().Add(timeout)
	for {
		resp, err := http.Get(url)
		if err == nil {
			resp.Body.Close()
			if resp.StatusCode == http.StatusOK {
				return nil
			}
		}
		if time.Now().After(deadline) {
			return fmt.Errorf("%s not ready after %s", url, timeout)
		}
		time.Sleep(100 * time.Millisecond)
	}
}

// get fetches url as Prometheus does (gzip) and reads the body.
func get(url string) error {
	req, err := http.NewRequest(http.MethodGet, url, nil)
	if err != nil {
		return err
	}
	req.Header.Set("Accept-Encoding", "gzip")
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		return err
	}
	defer resp.Body.Close()
	if resp.StatusCode != http.StatusOK {
		return fmt.Errorf("GET %s: %s", url, resp.Status)
	}
	_, err = io.Copy(io.Discard, resp.Body)
	return err
}

// procStatus reads /proc/PID/status as name -> value ("25340 kB").
func procStatus(pid int) (map[string]string, error) {
	f, err := os.Open(fmt.Sprintf("/proc/%d/status", pid))
	if err != nil {
		return nil, err
	}
	defer f.Close()
	out := map[string]string{}
	sc := bufio.NewScanner(f)
	for sc.Scan() {
		if k, v, ok := strings.Cut(sc.Text(), ":"); ok {
			out[k] = strings.TrimSpace(v)
		}
	}
	return out, sc.Err()
}
