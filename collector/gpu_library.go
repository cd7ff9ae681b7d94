//go:build linux && cgo

package collector

import (
	"time"

	"github.com/NVIDIA/go-nvml/pkg/nvml"
	"github.com/go-kit/log"
)

// NewGPUWithLibrary reads GPUs through lib instead of the system's NVML: for
// go-nvml's mock in tests that scrape a whole exporter.
func NewGPUWithLibrary(lib nvml.Interface, logger log.Logger, timeout time.Duration) *GPU {
	return newGPU(lib, logger, timeout)
}
