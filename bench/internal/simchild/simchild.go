// Package simchild runs the simulated engine in a child process for the
// bench commands, so it shares neither the prober's Go scheduler nor its
// heap.
package simchild

import (
	"bufio"
	"context"
	"encoding/json"
	"fmt"
	"net"
	"os"
	"os/exec"
	"strings"

	"github.com/llmprobe/llmprobe/sim"
)

// configEnv carries the child's engine configuration as JSON.
const configEnv = "LLMPROBE_SIMCHILD_CONFIG"

// ServeIfChild serves the engine and never returns when this process is the
// child; call it first thing in main (or TestMain).
func ServeIfChild() {
	raw, ok := os.LookupEnv(configEnv)
	if !ok {
		return
	}
	var cfg sim.Config
	if err := json.Unmarshal([]byte(raw), &cfg); err != nil {
		fmt.Fprintln(os.Stderr, "sim child:", err)
		os.Exit(1)
	}
	e, err := sim.New(cfg)
	if err != nil {
		fmt.Fprintln(os.Stderr, err)
		os.Exit(1)
	}
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		fmt.Fprintln(os.Stderr, err)
		os.Exit(1)
	}
	fmt.Println(ln.Addr().String())
	_ = e.Serve(context.Background(), ln) // stamps accepted connections for the truth
	os.Exit(0)
}

// Start runs this program again as a child serving an engine with cfg, and
// returns the engine's URL and a function that stops it.
func Start(cfg sim.Config) (string, func(), error) {
	raw, err := json.Marshal(cfg)
	if err != nil {
		return "", nil, err
	}
	child := exec.Command(os.Args[0])
	child.Env = append(os.Environ(), configEnv+"="+string(raw))
	out, err := child.StdoutPipe()
	if err != nil {
		return "", nil, err
	}
	child.Stderr = os.Stderr
	if err := child.Start(); err != nil {
		return "", nil, err
	}
	stop := func() { _ = child.Process.Kill(); _ = child.Wait() }
	addr, err := bufio.NewReader(out).ReadString('\n')
	if err != nil {
		stop()
		return "", nil, fmt.Errorf("sim child: %w", err)
	}
	return "http://" + strings.TrimSpace(addr), stop, nil
}
