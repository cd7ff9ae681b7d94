package config

import (
	"fmt"
	"strings"
	"testing"
)

func TestEmpiricalGood(t *testing.T) {
	cfg, err := LoadFile("testdata/good_empirical.yml")
	if err != nil {
		t.Fatal(err)
	}
	s, _ := cfg.Scenario("chat-mix")
	p, o := s.PromptTokens, s.OutputTokens
	if p.Kind != DistEmpirical || len(p.Values) != 4 || p.Minimum() != 128 || p.Maximum() != 8192 {
		t.Errorf("prompt_tokens = %+v (min %d, max %d)", p, p.Minimum(), p.Maximum())
	}
	if o.Kind != DistEmpirical || len(o.Values) != 4 || o.Values[2][0] != 1024 || o.Values[2][1] != 0.5 || o.Maximum() != 1024 {
		t.Errorf("output_tokens = %+v", o)
	}
	// What /config shows loads back to the same configuration.
	out, err := cfg.Redacted()
	if err != nil {
		t.Fatal(err)
	}
	again, err := Parse(out, "redacted.yml")
	if err != nil {
		t.Fatalf("the rendered configuration does not load: %v\n%s", err, out)
	}
	if !Equal(cfg.Scenarios, again.Scenarios) {
		t.Errorf("scenarios changed through Redacted:\n%s", out)
	}
	if !strings.Contains(string(out), "values: [[128, 50], [512, 30], [2048, 15], [8192, 5]]") {
		t.Errorf("pairs are not rendered as pairs:\n%s", out)
	}
}

// Bounds a testdata file would be too long or too fiddly to show.
func TestEmpiricalBounds(t *testing.T) {
	pairs := func(n int, weight string) string {
		var sb strings.Builder
		for i := range n {
			if i > 0 {
				sb.WriteString(", ")
			}
			fmt.Fprintf(&sb, "[%d, %s]", i+1, weight)
		}
		return sb.String()
	}
	for _, tc := range []struct {
		name, dist, want string
	}{
		{"10,000 pairs load", "{distribution: empirical, values: [" + pairs(10_000, "1") + "]}", ""},
		{"10,001 pairs do not", "{distribution: empirical, values: [" + pairs(10_001, "1") + "]}",
			"cfg.yml:7: scenarios[0].output_tokens.values: has 10001 pairs; at most 10000 are allowed"},
		{"weights that sum to infinity", "{distribution: empirical, values: [" + pairs(3, "1e308") + "]}",
			"cfg.yml:7: scenarios[0].output_tokens.values: the weights sum past the largest number"},
		{"many bad pairs are counted", "{distribution: empirical, values: [" + pairs(20, "-1") + "]}",
			"cfg.yml:7: scenarios[0].output_tokens.values[4]: weight -1 must be a finite number above 0\n" +
				"cfg.yml:7: scenarios[0].output_tokens.values: and 15 more bad pairs"},
		{"infinite weight", "{distribution: empirical, values: [[5, .inf]]}",
			"scenarios[0].output_tokens.values[0]: weight +Inf must be a finite number above 0"},
		{"tokens past the hard bound", "{distribution: empirical, values: [[1048577, 1]]}",
			"values[0]: tokens 1048577 must be a whole number within [1, 1048576]"},
		{"values beside a fixed length", "{distribution: fixed, value: 3, values: [[4, 1]]}",
			"scenarios[0].output_tokens: a fixed length takes only value"},
		{"values beside a lognormal", "{distribution: lognormal, mean: 30, sigma: 1, values: [[4, 1]]}",
			"scenarios[0].output_tokens: a lognormal length takes mean, sigma, min and max, not value or values"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			// A blank line keeps output_tokens on line 7.
			yml := "targets: [{name: a, url: 'http://x:1'}]\n\n" +
				"scenarios:\n" +
				"  - name: s\n" +
				"    prompt_tokens: {distribution: empirical, values: [[100, 1], [2000, 1]]}\n" +
				"    shared_prefix_tokens: 10\n" +
				"    output_tokens: " + tc.dist + "\n"
			_, err := Parse([]byte(yml), "cfg.yml")
			switch {
			case tc.want == "" && err != nil:
				t.Fatalf("want it loaded, got %v", err)
			case tc.want != "" && err == nil:
				t.Fatalf("loaded, want %q", tc.want)
			case tc.want != "" && !strings.Contains(err.Error(), tc.want):
				t.Fatalf("error:\n  %v\nwant it to contain:\n  %s", err, tc.want)
			}
		})
	}
}
