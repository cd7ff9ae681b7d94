package report

import (
	"crypto/rand"
	"encoding/hex"
	"fmt"
	"regexp"
	"time"
)

// idTime is the time part of a report id: UTC to the millisecond, sortable.
const idTime = "20060102T150405.000Z"

// ID names the report of burst that started at start:
// <burst>-<yyyymmddThhmmss.mmmZ>.
func ID(burst string, start time.Time) string {
	return burst + "-" + start.UTC().Format(idTime)
}

// NewID is ID with a random suffix, so two runs of a burst that start in
// the same millisecond (two replicas, a gate beside the daemon) never share
// a report.
func NewID(burst string, start time.Time) string {
	var b [3]byte
	_, _ = rand.Read(b[:])
	return ID(burst, start) + "-" + hex.EncodeToString(b[:])
}

// idRe matches <burst>-<time>[-<suffix>]; the time may lack milliseconds
// (reports written before they were added).
var idRe = regexp.MustCompile(`^(.+)-(\d{8}T\d{6}(?:\.\d{3})?Z)(?:-[0-9a-f]{1,16})?$`)

// ParseID splits a report id into its burst and start time.
func ParseID(id string) (burst string, start time.Time, err error) {
	m := idRe.FindStringSubmatch(id)
	if m == nil {
		return "", time.Time{}, fmt.Errorf("report id %q is not <burst>-<time like %s>[-<suffix>]", id, idTime)
	}
	layout := idTime
	if len(m[2]) == len("20060102T150405Z") {
		layout = "20060102T150405Z"
	}
	start, err = time.Parse(layout, m[2])
	if err != nil {
		return "", time.Time{}, fmt.Errorf("report id %q: %w", id, err)
	}
	return m[1], start, nil
}
