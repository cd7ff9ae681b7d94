// Command generate writes every dashboard of package dashboards as JSON into
// each folder it is given: dashboards/ and the Helm chart's copy.
package main

import (
	"fmt"
	"os"
	"path/filepath"

	"github.com/llmprobe/llmprobe/dashboards"
)

func main() {
	if len(os.Args) < 2 {
		fmt.Fprintln(os.Stderr, "usage: generate DIR...")
		os.Exit(2)
	}
	files, err := dashboards.Render()
	if err != nil {
		fmt.Fprintln(os.Stderr, err)
		os.Exit(1)
	}
	for _, dir := range os.Args[1:] {
		for name, data := range files {
			if err := os.WriteFile(filepath.Join(dir, name), data, 0o644); err != nil {
				fmt.Fprintln(os.Stderr, err)
				os.Exit(1)
			}
		}
	}
}
