// Package figure prints llmprobe's figures as every surface does (the gate,
// Markdown, JUnit, the pages, the log): latencies in milliseconds, a
// difference with its sign, an engine's bucket bound as the engine wrote
// it, ratios and changes in percent, never a signed zero.
package figure

import (
	"math"
	"strconv"
)

// Ms is a latency in seconds as every text surface prints it, the gate,
// Markdown, JUnit and the log: milliseconds with one decimal, "109.6ms".
func Ms(seconds float64) string {
	return strconv.FormatFloat(noNegativeZero(1000*seconds, 1), 'f', 1, 64) + "ms"
}

// PageMs is a latency in seconds as the pages print it: "118.0 ms", and
// in microseconds below one, "0.8 µs", so the prober's own delays do not
// read as 0.
func PageMs(seconds float64) string {
	if seconds > 0 && seconds < 1e-3 {
		return strconv.FormatFloat(1e6*seconds, 'f', 1, 64) + " µs"
	}
	return strconv.FormatFloat(noNegativeZero(1000*seconds, 1), 'f', 1, 64) + " ms"
}

// Delay is the client's own delay in seconds (the error bound and its
// parts): in microseconds below a millisecond, "633.4µs", else in
// milliseconds with two decimals, "3.32ms", so that a short one does not
// read as 0.
func Delay(seconds float64) string {
	if seconds < 1e-3 {
		return strconv.FormatFloat(noNegativeZero(1e6*seconds, 1), 'f', 1, 64) + "µs"
	}
	return strconv.FormatFloat(1e3*seconds, 'f', 2, 64) + "ms"
}

// SignedMs is a difference in seconds as milliseconds with its sign,
// "+2.2ms" or "−104.2ms" (a true minus sign); one that rounds to zero is
// "0.0ms".
func SignedMs(seconds float64) string {
	v := noNegativeZero(1000*seconds, 1)
	switch {
	case v > 0:
		return "+" + strconv.FormatFloat(v, 'f', 1, 64) + "ms"
	case v < 0:
		return "−" + strconv.FormatFloat(-v, 'f', 1, 64) + "ms"
	}
	return "0.0ms"
}

// Bound is an engine's histogram bucket bound in seconds, as the engine
// wrote it: milliseconds with at most four significant digits and no
// trailing zeros ("250ms", "1040ms"), whole from a second up.
func Bound(seconds float64) string {
	v := 1000 * seconds
	switch {
	case math.IsInf(v, 0) || math.IsNaN(v):
		return strconv.FormatFloat(v, 'g', -1, 64)
	case math.Abs(v) >= 1000:
		return strconv.FormatFloat(math.Round(v), 'f', -1, 64) + "ms"
	}
	return strconv.FormatFloat(v, 'g', 4, 64) + "ms"
}

// Percent is a ratio as a percentage with one decimal, "99.5%".
func Percent(ratio float64) string {
	return strconv.FormatFloat(noNegativeZero(100*ratio, 1), 'f', 1, 64) + "%"
}

// SignedPercent is a change as a signed percentage, "+0.9%", "-3.2%";
// one that rounds to zero is "0.0%".
func SignedPercent(change float64) string {
	p := Percent(change)
	if change > 0 && p != "0.0%" {
		return "+" + p
	}
	return p
}

// P is a test's p-value with its sign, as compare prints it: "p=0.94",
// "p=0.00025", and "p<0.0001" below that, never in e-notation.
func P(p float64) string {
	if p < 0.0001 {
		return "p<0.0001"
	}
	return "p=" + strconv.FormatFloat(p, 'g', 2, 64)
}

// noNegativeZero is v, or 0 where v rounds to zero at digits decimals:
// a tiny negative figure prints as 0.0, not -0.0.
func noNegativeZero(v float64, digits int) float64 {
	if math.Abs(v) < 0.5*math.Pow(10, -float64(digits)) {
		return 0
	}
	return v
}
