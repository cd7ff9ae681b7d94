package report

import (
	"fmt"
	"strings"
	"time"
)

// idTime is the time part of a report id: UTC, second resolution, sortable.
const idTime = "20060102T150405Z"

// ID names the report of burst b that started at start: <burst>-<time>.
func ID(burst string, start time.Time) string {
	return burst + "-" + start.UTC().Format(idTime)
}

// ParseID splits a report id into its burst and start time.
func ParseID(id string) (burst string, start time.Time, err error) {
	i := strings.LastIndexByte(id, '-')
	if i <= 0 {
		return "", time.Time{}, fmt.Errorf("report id %q is not <burst>-<time>", id)
	}
	start, err = time.Parse(idTime, id[i+1:])
	if err != nil {
		return "", time.Time{}, fmt.Errorf("report id %q: the time part must look like %s", id, idTime)
	}
	return id[:i], start, nil
}
