package config

import (
	"os"
	"reflect"
	"strings"
	"testing"
)

func loadGood(t *testing.T, edit func(string) string) *Config {
	t.Helper()
	data, err := os.ReadFile("testdata/good.yml")
	if err != nil {
		t.Fatal(err)
	}
	cfg, err := Parse([]byte(edit(string(data))), "good.yml")
	if err != nil {
		t.Fatal(err)
	}
	return cfg
}

func same(s string) string { return s }

// Equal is the one "did it change?": what the file says, secrets included,
// and never the state derived from it.
func TestEqual(t *testing.T) {
	base := loadGood(t, same)
	if !Equal(base, loadGood(t, same)) {
		t.Error("two loads of one file differ")
	}
	if !Equal(base, loadGood(t, func(s string) string {
		return "# comment\n" + strings.ReplaceAll(s, "  jitter: 2s", "  jitter: 2000ms")
	})) {
		t.Error("a comment and another spelling of the same duration count as a change")
	}
	proxied := func(s string) string {
		return strings.Replace(s, "      authorization:\n        credentials: sk-bearer-secret", "      proxy_url: http://user:pw1@proxy:3128\n      authorization:\n        credentials: sk-bearer-secret", 1)
	}
	changes := map[string]func(string) string{
		"rotated bearer token":  func(s string) string { return strings.Replace(s, "sk-bearer-secret", "sk-rotated", 1) },
		"rotated header secret": func(s string) string { return strings.Replace(s, "sk-header-secret", "sk-rotated", 1) },
		"threshold":             func(s string) string { return strings.Replace(s, "ttft: 500ms", "ttft: 400ms", 1) },
		"extra_body":            func(s string) string { return strings.Replace(s, "ignore_eos: true", "ignore_eos: false", 1) },
		"prompt length":         func(s string) string { return strings.Replace(s, "prompt_tokens: 128", "prompt_tokens: 129", 1) },
		"lognormal clamp":       func(s string) string { return strings.Replace(s, "      max: 4096", "      max: 4095", 1) },
		"sampling seed":         func(s string) string { return strings.Replace(s, "seed: 42", "seed: 43", 1) },
		"quality check":         func(s string) string { return strings.Replace(s, "      json: true", "      contains: ok", 1) },
		"proxy password": func(s string) string {
			return strings.Replace(s, "      authorization:\n        credentials: sk-bearer-secret", "      proxy_url: http://user:pw2@proxy:3128\n      authorization:\n        credentials: sk-bearer-secret", 1)
		},
	}
	for name, edit := range changes {
		want := base
		if name == "proxy password" {
			want = loadGood(t, proxied)
		}
		if Equal(want, loadGood(t, edit)) {
			t.Errorf("%s: not seen as a change", name)
		}
	}

	// Derived state: prometheus/common caches a proxy function on first use,
	// and a compiled regexp carries its own machinery. reflect.DeepEqual
	// calls these configurations different; Equal does not.
	a, b := loadGood(t, proxied), loadGood(t, proxied)
	a.Targets[0].HTTPClientConfig.Proxy()
	b.Targets[0].HTTPClientConfig.Proxy()
	if reflect.DeepEqual(a.Targets[0], b.Targets[0]) {
		t.Error("reflect.DeepEqual agrees now: the cached proxy function no longer exercises Equal's rule")
	}
	if !Equal(a.Targets[0], b.Targets[0]) {
		t.Error("a cached proxy function counts as a change")
	}
	// A scenario's quality regexp, compiled by the load inside workload's
	// own type, is derived state too.
	compiled := loadGood(t, func(s string) string {
		return strings.Replace(s, "      json: true", "      regex: ok", 1)
	}).Scenarios[2]
	if compiled.Quality.Regexp() == nil {
		t.Fatal("the load compiled no regexp: nothing to compare")
	}
	written := compiled
	written.Quality = &Quality{Regex: "ok"}
	if reflect.DeepEqual(compiled, written) {
		t.Error("reflect.DeepEqual agrees now: the compiled regexp no longer exercises Equal's rule")
	}
	if !Equal(compiled, written) {
		t.Error("a compiled regexp counts as a change")
	}
	written.Quality = &Quality{Regex: "ok!"}
	if Equal(compiled, written) {
		t.Error("a changed regex is not a change")
	}
	// So are a tool's compiled parameters and a response format's schema.
	structured := func(v string) func(string) string {
		return func(s string) string {
			return strings.Replace(s, "    quality:\n      json: true", "    tools: [{function: {name: f, parameters: {enum: ["+v+"]}}}]\n"+
				"    tool_choice: required\n    response_format: {type: json_schema, json_schema: {name: n, schema: {enum: ["+v+"]}}}", 1)
		}
	}
	one := loadGood(t, structured("1"))
	if one.Scenarios[2].Tools[0].Function.Schema() == nil || one.Scenarios[2].ResponseFormat.Schema() == nil {
		t.Fatal("the load compiled no schema: nothing to compare")
	}
	if !Equal(one, loadGood(t, structured("1"))) || Equal(one, loadGood(t, structured("2"))) {
		t.Error("compiled schemas count as a change, or changed ones do not")
	}
	if Equal(base.Bursts, base.Bursts[:1]) || !Equal(base.Bursts, loadGood(t, same).Bursts) {
		t.Error("slices of bursts compare wrong")
	}
}
