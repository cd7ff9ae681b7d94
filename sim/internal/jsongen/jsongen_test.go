package jsongen

import (
	"encoding/json"
	"math/rand/v2"
	"testing"

	"github.com/llmprobe/llmprobe/lib/jsonschema"
)

// Instances of schemas of the keywords the package knows are valid, and
// violations are not, checked by the JSON Schema library the prober uses.
func TestInstanceAndViolation(t *testing.T) {
	for _, doc := range []string{
		`{"type":"object","required":["city","unit"],"additionalProperties":false,"properties":{"city":{"type":"string","minLength":2,"maxLength":5},"unit":{"enum":["celsius","fahrenheit"]},"days":{"type":"integer","minimum":1,"maximum":3}}}`,
		`{"type":"object","properties":{"tags":{"type":"array","items":{"type":"string"},"minItems":3},"score":{"type":"number","exclusiveMinimum":0,"maximum":1},"ok":{"type":"boolean"},"kind":{"const":"x"},"n":{"type":["null","integer"]}}}`,
		`{"type":"object","required":["a"],"properties":{"a":{}}}`,
		`{"type":"array","items":{"anyOf":[{"type":"integer"},{"type":"string"}]},"maxItems":1}`,
		`{"enum":[1,2,3]}`,
		`{"type":"string"}`,
	} {
		var schema any
		if err := json.Unmarshal([]byte(doc), &schema); err != nil {
			t.Fatal(err)
		}
		compiled, err := jsonschema.Compile(schema)
		if err != nil {
			t.Fatal(err)
		}
		for seed := range uint64(20) {
			rng := rand.New(rand.NewPCG(seed, 1))
			good, _ := json.Marshal(Instance(schema, rng))
			if err := compiled.Validate(string(good)); err != nil {
				t.Errorf("%s: instance %s: %v", doc, good, err)
			}
			bad, _ := json.Marshal(Violation(schema, rng))
			if compiled.Validate(string(bad)) == nil {
				t.Errorf("%s: violation %s is valid", doc, bad)
			}
		}
	}
}

// A violation breaks the first required property, so a reason names its path.
func TestViolationPath(t *testing.T) {
	var schema any
	_ = json.Unmarshal([]byte(`{"type":"object","required":["unit"],"properties":{"city":{"type":"string"},"unit":{"enum":["celsius"]}}}`), &schema)
	compiled, _ := jsonschema.Compile(schema)
	bad, _ := json.Marshal(Violation(schema, rand.New(rand.NewPCG(1, 1))))
	if err := compiled.Validate(string(bad)); err == nil || err.Error() != "at /unit: value must be 'celsius'" {
		t.Errorf("%s: %v", bad, err)
	}
}
