package prober

import (
	"os"
	"path/filepath"
	"regexp"
	"slices"
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

// Every reason the docs name beside stream_error is a reason the metrics
// carry, word for word.
func TestDocsNameOnlyRealReasons(t *testing.T) {
	files, err := filepath.Glob("../docs/*.md")
	if err != nil || len(files) == 0 {
		t.Fatalf("docs: %v", err)
	}
	named := regexp.MustCompile("`stream_error`,? (?:reason )?`([a-z_]+)`")
	for _, f := range files {
		doc, err := os.ReadFile(f)
		if err != nil {
			t.Fatal(err)
		}
		for _, m := range named.FindAllStringSubmatch(string(doc), -1) {
			if !slices.Contains(reasons, m[1]) {
				t.Errorf("%s names reason %q, which no metric carries", f, m[1])
			}
		}
	}
}
