package report

import (
	"testing"
	"time"
)

func TestIDRoundTrip(t *testing.T) {
	at := time.Date(2026, 11, 23, 2, 30, 5, 0, time.FixedZone("CET", 3600))
	id := ID("release-check", at)
	if id != "release-check-20261123T013005Z" {
		t.Fatalf("ID = %q", id)
	}
	burst, start, err := ParseID(id)
	if err != nil || burst != "release-check" || !start.Equal(at.Truncate(time.Second)) {
		t.Errorf("ParseID(%q) = %q, %s, %v", id, burst, start, err)
	}
	for _, bad := range []string{"", "nightly", "-20261123T013005Z", "nightly-2026", "nightly-20261123T013005", "a/b-20261123T013005Z/"} {
		if _, _, err := ParseID(bad); err == nil {
			t.Errorf("ParseID(%q) succeeded", bad)
		}
	}
}
