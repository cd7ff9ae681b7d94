package collector

import (
	"time"

	"github.com/go-kit/log"

	"github.com/llmprobe/llmprobe/collector/gpu"
)

// NewGPU reads the node's GPUs through NVML: gpu.New, kept for callers of
// this package.
func NewGPU(logger log.Logger, timeout time.Duration) *gpu.Collector { return gpu.New(logger, timeout) }
