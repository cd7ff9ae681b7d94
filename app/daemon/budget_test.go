package daemon

import (
	"bufio"
	"cmp"
	"errors"
	"io"
	"maps"
	"math"
	"net/http"
	"net/http/httptest"
	"os"
	"slices"
	"strconv"
	"strings"
	"testing"

	dto "github.com/prometheus/client_model/go"
	"github.com/prometheus/common/expfmt"

	"github.com/llmprobe/llmprobe/internal/testkit"
)

// scrapeFamilies scrapes h's /metrics as a Prometheus that asks for native
// histograms does: in protobuf, where every family is whole.
func scrapeFamilies(tb testing.TB, h http.Handler) []*dto.MetricFamily {
	tb.Helper()
	req := httptest.NewRequest(http.MethodGet, "/metrics", nil)
	req.Header.Set("Accept", acceptProtobuf)
	rec := httptest.NewRecorder()
	h.ServeHTTP(rec, req)
	if ct := rec.Header().Get("Content-Type"); rec.Code != http.StatusOK || !strings.HasPrefix(ct, "application/vnd.google.protobuf") {
		tb.Fatalf("GET /metrics in protobuf: %d %s", rec.Code, ct)
	}
	dec := expfmt.NewDecoder(rec.Body, expfmt.NewFormat(expfmt.TypeProtoDelim))
	var out []*dto.MetricFamily
	for {
		f := &dto.MetricFamily{}
		err := dec.Decode(f)
		if errors.Is(err, io.EOF) {
			return out
		}
		if err != nil {
			tb.Fatal(err)
		}
		out = append(out, f)
	}
}

// isNative reports whether a histogram has a native part, as Prometheus
// tells (a no-op span marks an empty one).
func isNative(h *dto.Histogram) bool {
	return len(h.GetPositiveSpan()) > 0 || len(h.GetNegativeSpan()) > 0 || h.GetZeroThreshold() > 0 || h.GetZeroCount() > 0
}

// storedSeries is how many series Prometheus stores of one metric. A
// Prometheus that scrapes both kinds of histogram stores each classic
// bucket (+Inf included), _sum and _count, and one native histogram; one
// that ingests native histograms only (nativeOnly) stores just that one.
func storedSeries(m *dto.Metric, nativeOnly bool) int {
	h := m.GetHistogram()
	if h == nil {
		if s := m.GetSummary(); s != nil {
			return len(s.GetQuantile()) + 2
		}
		return 1
	}
	native := isNative(h)
	if native && nativeOnly {
		return 1
	}
	n := 3 // +Inf, _sum, _count
	for _, b := range h.GetBucket() {
		if !math.IsInf(b.GetUpperBound(), 1) {
			n++
		}
	}
	if native {
		n++
	}
	return n
}

// seriesCount is a page's stored series: per family, the mean per (target,
// scenario) pair of the series that carry both labels, and the rest.
type seriesCount struct {
	total   int
	pairs   int
	perPair map[string]float64 // family -> series per pair
	shared  map[string]int     // family -> series of no pair
}

func countSeries(fams []*dto.MetricFamily, nativeOnly bool) seriesCount {
	c := seriesCount{perPair: map[string]float64{}, shared: map[string]int{}}
	pairs := map[[2]string]bool{}
	byFamily := map[string]int{}
	for _, f := range fams {
		for _, m := range f.GetMetric() {
			n := storedSeries(m, nativeOnly)
			c.total += n
			labels := map[string]string{}
			for _, lp := range m.GetLabel() {
				labels[lp.GetName()] = lp.GetValue()
			}
			if labels["target"] == "" || labels["scenario"] == "" {
				c.shared[f.GetName()] += n
				continue
			}
			pairs[[2]string{labels["target"], labels["scenario"]}] = true
			byFamily[f.GetName()] += n
		}
	}
	c.pairs = len(pairs)
	for name, n := range byFamily {
		c.perPair[name] = float64(n) / float64(c.pairs)
	}
	return c
}

// onePlace is v rounded to one decimal, as the budget table writes it.
func onePlace(v float64) string { return strconv.FormatFloat(math.Round(v*10)/10, 'f', -1, 64) }

// The series budget: 10 targets × 5 scenarios of canaries, three
// objectives each, every histogram fed, store at most 6,000 series in a
// Prometheus that scrapes both kinds of histogram (120 per pair, all in),
// and about 30 per pair with --no-metrics.classic-buckets in one that
// ingests native histograms. docs/metrics.md's budget table says so per
// family.
func TestSeriesBudget(t *testing.T) {
	doc := readBudgetTable(t, "../../docs/metrics.md")
	for _, c := range []struct {
		name       string
		nativeOnly bool
		column     int // in the budget table
		perPair    float64
	}{
		{"classic and native", false, 2, 120},
		{"native only", true, 3, 38},
	} {
		t.Run(c.name, func(t *testing.T) {
			d, _ := renderDaemon(t, renderSetup{opts: Options{NativeHistogramsOnly: c.nativeOnly}})
			h := d.routes()
			got := countSeries(scrapeFamilies(t, h), c.nativeOnly)
			// The whole page, as a Prometheus without native histograms scrapes it, is lint-clean.
			rec := httptest.NewRecorder()
			h.ServeHTTP(rec, httptest.NewRequest(http.MethodGet, "/metrics", nil))
			testkit.PromtoolCheckMetrics(t, rec.Body.String())
			if got.pairs != renderTargets*renderScenarios {
				t.Fatalf("%d pairs on the page, want %d", got.pairs, renderTargets*renderScenarios)
			}
			all := float64(got.total) / float64(got.pairs)
			t.Logf("%d series, %.1f per pair all in", got.total, all)
			if all > c.perPair {
				t.Errorf("%d series: %.1f per pair, over the budget of %g", got.total, all, c.perPair)
			}
			// The table's rows, for the doc; logged sorted by size.
			names := slices.Sorted(maps.Keys(got.perPair))
			slices.SortStableFunc(names, func(a, b string) int { return cmp.Compare(got.perPair[b], got.perPair[a]) })
			for _, name := range names {
				t.Logf("| `%s` | %s |", name, onePlace(got.perPair[name]))
				row, ok := doc[name]
				switch {
				case !ok:
					t.Errorf("docs/metrics.md's budget table has no row for %s (%s per pair)", name, onePlace(got.perPair[name]))
				case row[c.column] != onePlace(got.perPair[name]):
					t.Errorf("docs/metrics.md's budget table says %s per pair for %s, the page has %s", row[c.column], name, onePlace(got.perPair[name]))
				}
			}
			for name, row := range doc {
				if _, ok := got.perPair[name]; !ok && strings.HasPrefix(name, "llmprobe_") && row[c.column] != "—" {
					t.Errorf("docs/metrics.md's budget table has %s per pair for %s, which the page does not have", row[c.column], name)
				}
			}
			var llmprobe, runtime int
			for name, n := range got.shared {
				if strings.HasPrefix(name, "llmprobe_") {
					llmprobe += n
				} else {
					runtime += n
				}
			}
			t.Logf("not per pair: llmprobe_ %d, go_ and process_ %d", llmprobe, runtime)
			if row := doc["llmprobe, not per pair"]; row == nil || row[c.column] != onePlace(float64(llmprobe)/float64(got.pairs)) {
				t.Errorf("docs/metrics.md's budget table row for llmprobe's families of no pair is %v, the page has %s per pair", row, onePlace(float64(llmprobe)/float64(got.pairs)))
			}
			// The Go runtime's and the process's families vary with Go's
			// version and the platform: the table's totals are held to 2%.
			for name, want := range map[string]float64{"total": float64(got.total), "all, per pair": all} {
				row := doc[name]
				if row == nil {
					t.Errorf("docs/metrics.md's budget table has no row %q", name)
					continue
				}
				if v, err := strconv.ParseFloat(strings.ReplaceAll(row[c.column], ",", ""), 64); err != nil || math.Abs(v-want) > 0.02*want {
					t.Errorf("docs/metrics.md's budget table says %s for %s, the page has %s", row[c.column], name, onePlace(want))
				}
			}
		})
	}
}

// readBudgetTable returns the rows of the table under "### Series budget"
// by name (a family's, or the first cell's text before a remark), each
// row's cells in order.
func readBudgetTable(t *testing.T, path string) map[string][]string {
	t.Helper()
	f, err := os.Open(path)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	rows := map[string][]string{}
	in := false
	sc := bufio.NewScanner(f)
	for sc.Scan() {
		line := sc.Text()
		switch {
		case strings.HasPrefix(line, "#"):
			in = line == "### Series budget"
			continue
		case !in || !strings.HasPrefix(line, "| "):
			continue
		}
		var cells []string
		for _, cell := range strings.Split(strings.Trim(line, "|"), "|") {
			cells = append(cells, strings.Trim(strings.TrimSpace(cell), "*"))
		}
		// A row is named by its first backquoted name, or its text before a remark.
		name, _, _ := strings.Cut(cells[0], " (")
		if strings.HasPrefix(cells[0], "`") {
			name, _, _ = strings.Cut(cells[0][1:], "`")
		}
		rows[name] = cells
	}
	if len(rows) == 0 {
		t.Fatalf("%s has no table under ### Series budget", path)
	}
	return rows
}
