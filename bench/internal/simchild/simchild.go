// Package simchild runs the simulated engine in a child process for the
// bench commands, so its CPU and memory do not count against the prober's.
package simchild

import (
	"bufio"
	"fmt"
	"net"
	"net/http"
	"os"
	"os/exec"
	"strings"

	"github.com/llmprobe/llmprobe/sim"
)

const childArg = "serve-sim"

// ServeIfChild serves the engine and never returns when this process is the
// child; call it first thing in main.
func ServeIfChild(cfg sim.Config) {
	if len(os.Args) < 2 || os.Args[1] != childArg {
		return
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
	_ = http.Serve(ln, e.Handler())
	os.Exit(0)
}

// Start runs this program again as the child and returns the engine's URL
// and a function that stops it.
func Start() (string, func(), error) {
	child := exec.Command(os.Args[0], childArg)
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
