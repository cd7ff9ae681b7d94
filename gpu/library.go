//go:build linux && cgo

package gpu

import (
	"time"

	"github.com/NVIDIA/go-nvml/pkg/nvml"
	"github.com/go-kit/log"
)

// NewWithLibrary reads GPUs through lib instead of the system's NVML: for
// go-nvml's mock in tests that scrape a whole exporter.
func NewWithLibrary(lib nvml.Interface, logger log.Logger, timeout time.Duration) *Collector {
	return newCollector(lib, logger, timeout)
}
