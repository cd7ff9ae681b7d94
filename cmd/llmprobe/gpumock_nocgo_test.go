//go:build !(linux && cgo)

package main

import "testing"

// mockGPUExporter needs the NVML collector, which only a cgo build on Linux has.
func mockGPUExporter(t *testing.T) string {
	t.Skip("the GPU dashboard's data comes from go-nvml's mock through the NVML collector: run with cgo on Linux")
	return ""
}
