package render_test

import (
	"bytes"
	"regexp"
	"strings"
	"testing"

	"github.com/llmprobe/llmprobe/config"
	"github.com/llmprobe/llmprobe/internal/reporttest"
	"github.com/llmprobe/llmprobe/report"
	"github.com/llmprobe/llmprobe/report/render"
)

// Text bugs that read as noise: a latency under a second in seconds, a
// raw float, a doubled word, a dangling
// separator, a signed zero.
var noise = map[string]*regexp.Regexp{
	"a sub-second figure in seconds": regexp.MustCompile(`\b0\.\d+ ?s\b`),
	"a raw float":                    regexp.MustCompile(`\d\.\d{6,}`),
	"a dangling separator":           regexp.MustCompile(`( ·|,|;)\s*($|\n|\))`),
	"a signed zero":                  regexp.MustCompile(`[-−+]0\.0+(ms|%)`),
	"an ASCII arrow or times":        regexp.MustCompile(` -> | x\d`),
}

var word = regexp.MustCompile(`[A-Za-z]+`)

// doubled is the first word said twice in a row ("skipped: skipped"), or "".
func doubled(text string) string {
	for _, line := range strings.Split(text, "\n") {
		at := word.FindAllStringIndex(line, -1)
		for i := 1; i < len(at); i++ {
			a, b := line[at[i-1][0]:at[i-1][1]], line[at[i][0]:at[i][1]]
			if strings.EqualFold(a, b) && strings.Trim(line[at[i-1][1]:at[i][0]], ": ") == "" {
				return line[at[i-1][0]:at[i][1]]
			}
		}
	}
	return ""
}

// Every rendering of a report with a regression verdict, one without a
// baseline and one whose baseline measured other requests reads clean.
func TestRenderingsReadClean(t *testing.T) {
	before, after := reporttest.GoldenPair(t)
	b, s := reporttest.GoldenBurst()
	fa := reporttest.Fixture(t, "run-after.json")
	alone := report.Build(b, fa.Run, report.Meta{Model: "m", Scenarios: []config.Scenario{s}})
	report.Judge(alone, nil, b.MaxRegression)
	longer := s
	longer.PromptTokens.Value *= 2
	other := report.Build(b, fa.Run, report.Meta{Model: "m", Scenarios: []config.Scenario{longer}})
	report.Judge(other, before, b.MaxRegression)

	for name, r := range map[string]*report.Report{"regression": after, "no baseline": alone, "other requests": other} {
		var brief, text, md, xml bytes.Buffer
		render.Brief(&brief, r)
		render.Text(&text, r)
		if err := render.Markdown(&md, r); err != nil {
			t.Fatal(err)
		}
		if err := render.JUnit(&xml, r); err != nil {
			t.Fatal(err)
		}
		for out, got := range map[string]string{"brief": brief.String(), "text": text.String(), "markdown": md.String(), "junit": xml.String()} {
			if d := doubled(got); d != "" {
				t.Errorf("%s, %s: a doubled word %q", name, out, d)
			}
			for what, re := range noise {
				if m := re.FindString(got); m != "" {
					line := got[strings.LastIndex(got[:re.FindStringIndex(got)[0]], "\n")+1:]
					line, _, _ = strings.Cut(line, "\n")
					t.Errorf("%s, %s: %s %q in: %s", name, out, what, m, line)
				}
			}
		}
	}
	var text bytes.Buffer
	render.Text(&text, after)
	if !regexp.MustCompile(`regression vs \S+:  ttft p99 ×\d\.\d\d \(too few; p=\S+, (not )?significant\)`).MatchString(text.String()) {
		t.Errorf("the regression line:\n%s", text.String())
	}
}
