package main

import (
	"strings"
	"testing"
)

func TestTagIsAValidImageTag(t *testing.T) {
	for in, want := range map[string]string{
		"v1.2.3":                   "v1.2.3",
		"v1.2.3-4-gabcdef-dirty":   "v1.2.3-4-gabcdef-dirty",
		"feature/x+y":              "feature-x-y",
		"b412530ca7ab02a48598f08e": "b412530ca7ab02a48598f08e",
	} {
		if got := tag(in); got != want {
			t.Errorf("tag(%q) = %q, want %q", in, got, want)
		}
	}
}

func TestRunNamesBadInputs(t *testing.T) {
	dir := t.TempDir()
	if err := run("bin", "packages.lock", dir, dir+"/out", "v1", "r", "yesterday"); err == nil || !strings.Contains(err.Error(), "--created") {
		t.Errorf("bad --created: %v", err)
	}
	if err := run("bin", dir+"/none.lock", dir, dir+"/out", "v1", "r", "2026-01-01T00:00:00Z"); err == nil || !strings.Contains(err.Error(), "none.lock") {
		t.Errorf("missing lock: %v", err)
	}
}
