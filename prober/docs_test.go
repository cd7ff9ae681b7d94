package prober

import (
	"os"
	"strings"
	"testing"
)

// docs/measurement.md explains every failure reason.
func TestReasonsDocumented(t *testing.T) {
	doc, err := os.ReadFile("../docs/measurement.md")
	if err != nil {
		t.Fatal(err)
	}
	for _, r := range reasons {
		if !strings.Contains(string(doc), "| `"+r+"` |") {
			t.Errorf("reason %s is not in the table of docs/measurement.md", r)
		}
	}
}
