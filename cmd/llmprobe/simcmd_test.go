package main

import (
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
