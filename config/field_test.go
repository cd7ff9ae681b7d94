package config

import (
	"math"
	"testing"
	"time"
)

func TestFieldChecks(t *testing.T) {
	var errs FieldErrors
	errs.Within("a", math.NaN(), 0, 1, "")
	errs.Above("b", 0, 0, 1, "tokens")
	errs.IntWithin("c", 5, 1, 4, "")
	if !errs.DurationWithin("d", 0, time.Second, time.Minute, true) {
		t.Error("an unset optional duration is refused")
	}
	errs.DurationWithin("e", Duration(1500*time.Millisecond), 2*time.Second, time.Minute, false)
	seen := map[string]string{}
	errs.Name("x[0]", "s", "scenario", seen)
	errs.Name("x[1]", "s", "scenario", seen)
	errs.Name("x[2]", "-s", "scenario", seen)
	want := []FieldError{
		{Path: "a", Msg: "NaN must be within [0, 1]"},
		{Path: "b", Msg: "0 must be within (0, 1] tokens"},
		{Path: "c", Msg: "5 must be within [1, 4]"},
		{Path: "e", Msg: "1s500ms must be within [2s, 1m]"},
		{Path: "x[1].name", Msg: `duplicate scenario name "s"`, First: "x[0].name"},
		{Path: "x[2].name", Msg: `"-s" must be 1-63 letters, digits, '_', '.', ':' or '-', starting with a letter or digit`},
	}
	if len(errs) != len(want) {
		t.Fatalf("errors %v, want %v", errs, want)
	}
	for i, e := range errs {
		if *e != want[i] {
			t.Errorf("error %d = %+v, want %+v", i, *e, want[i])
		}
	}
}
