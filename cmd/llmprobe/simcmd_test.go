package main

import (
	"fmt"
	"os/exec"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/llmprobe/llmprobe/internal/testkit"
)

// `llmprobe sim --sim.engine=tgi` answers as TGI does and serves TGI's
// metric names; an engine it cannot pose as is refused with the choices.
func TestSimCommandPosesAsAnEngine(t *testing.T) {
	addr := freeAddr(t)
	cmd := exec.Command(binPath, "sim", "--sim.engine=tgi", "--sim.listen-address="+addr)
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = cmd.Process.Signal(syscall.SIGTERM); _ = cmd.Wait() })
	var info string
	testkit.WaitUntil(t, "the sim answers /info", 20*time.Second, func() bool {
		code, body := testkit.Get("http://" + addr + "/info")
		info = body
		return code == 200
	})
	if !strings.Contains(info, `"router":"text-generation-router"`) {
		t.Errorf("/info = %s", info)
	}
	if _, body := testkit.Get("http://" + addr + "/metrics"); !strings.Contains(body, "tgi_queue_size") || strings.Contains(body, "vllm:") {
		t.Errorf("/metrics of the TGI sim:\n%s", body)
	}
	out, err := exec.Command(binPath, "sim", "--sim.engine=triton").CombinedOutput()
	if err == nil || !strings.Contains(string(out), "llamacpp") {
		t.Errorf("--sim.engine=triton: %v\n%s", err, out)
	}
}

// Posing as llama.cpp, the sim closes each connection after a streamed
// answer as llama.cpp's server does, unless told not to; posing as anything
// else it keeps connections open unless told to close them.
func TestSimClosesAfterStreamAsLlamaCpp(t *testing.T) {
	for _, c := range []struct {
		args []string
		want bool
	}{
		{[]string{"--sim.engine=llamacpp"}, true},
		{[]string{"--sim.engine=llamacpp", "--no-sim.close-after-stream"}, false},
		{[]string{"--sim.engine=vllm"}, false},
		{[]string{"--sim.close-after-stream"}, true},
	} {
		addr := freeAddr(t)
		cmd := exec.Command(binPath, append([]string{"sim", "--sim.listen-address=" + addr}, c.args...)...)
		if err := cmd.Start(); err != nil {
			t.Fatal(err)
		}
		var faults string
		testkit.WaitUntil(t, "the sim answers /sim/faults", 20*time.Second, func() bool {
			code, body := testkit.Get("http://" + addr + "/sim/faults")
			faults = body
			return code == 200
		})
		_ = cmd.Process.Signal(syscall.SIGTERM)
		_ = cmd.Wait()
		if want := fmt.Sprintf(`"close_after_stream":%v`, c.want); !strings.Contains(faults, want) {
			t.Errorf("%v: /sim/faults = %s, want %s", c.args, faults, want)
		}
	}
}
