// Command prometheusrule writes alerts/llmprobe.rules.yml as a PrometheusRule manifest.
package main

import (
	"fmt"
	"os"

	"github.com/llmprobe/llmprobe/alerts"
)

func main() {
	if len(os.Args) != 2 {
		fmt.Fprintln(os.Stderr, "usage: prometheusrule OUTPUT")
		os.Exit(2)
	}
	out, err := alerts.PrometheusRule()
	if err == nil {
		err = os.WriteFile(os.Args[1], out, 0o644)
	}
	if err != nil {
		fmt.Fprintln(os.Stderr, err)
		os.Exit(1)
	}
}
