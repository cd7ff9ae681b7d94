package report

import (
	"strings"
	"testing"
	"time"
)

func TestIDs(t *testing.T) {
	at := time.Date(2026, 11, 23, 2, 30, 5, 123456789, time.FixedZone("CET", 3600))
	id := ID("release-check", at)
	if id != "release-check-20261123T013005.123Z" {
		t.Fatalf("ID = %q", id)
	}
	a, b := NewID("release-check", at), NewID("release-check", at)
	if a == b || !strings.HasPrefix(a, id+"-") {
		t.Errorf("NewID gave %q and %q for one start: they must differ and extend %q", a, b, id)
	}
	for _, good := range []string{id, a, "release-check-20261123T013005Z"} { // the last: written before milliseconds
		burst, start, err := ParseID(good)
		if err != nil || burst != "release-check" || !start.Equal(at.Truncate(time.Second)) && !start.Equal(at.Truncate(time.Millisecond)) {
			t.Errorf("ParseID(%q) = %q, %s, %v", good, burst, start, err)
		}
	}
	for _, bad := range []string{"", "nightly", "-20261123T013005Z", "nightly-2026", "nightly-20261123T013005", "a/b-20261123T013005Z/", "b-20261123T013005Z-XYZ"} {
		if _, _, err := ParseID(bad); err == nil {
			t.Errorf("ParseID(%q) succeeded", bad)
		}
	}
}
