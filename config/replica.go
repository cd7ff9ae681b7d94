package config

import (
	"slices"
)

// Replicas says which replica behind a gateway answered each request: the
// response header that names it, and the replicas llmprobe keeps figures
// of. Any other value counts as ReplicaOther, so the label's values are
// the configuration's, never the network's.
type Replicas struct {
	Header string   `yaml:"header"`
	Values []string `yaml:"values"`
}

// ReplicaOther is the replica of an answer whose header named none of the
// configured values.
const ReplicaOther = "other"

// MaxReplicas bounds the configured values: each is a label value of the
// replica series.
const MaxReplicas = 64

// Of is the replica a header value names: itself when configured, else
// ReplicaOther; "" for no header.
func (r *Replicas) Of(value string) string {
	switch {
	case r == nil || value == "":
		return ""
	case slices.Contains(r.Values, value):
		return value
	}
	return ReplicaOther
}

func (r *Replicas) validate(path string, errs *FieldErrors) {
	if r.Header == "" {
		errs.Add(path+".header", "is required: the response header that names the replica (for example x-served-by)")
	} else if !validHeaderName(r.Header) {
		errs.Add(path+".header", "%q is no HTTP header name", r.Header)
	}
	if n := len(r.Values); n == 0 || n > MaxReplicas {
		errs.Add(path+".values", "%d replicas must be 1 to %d: each is a label value", n, MaxReplicas)
	}
	seen := map[string]bool{}
	for i, v := range r.Values {
		switch {
		case v == "" || len(v) > 128:
			errs.Add(path+".values", "value %d must be 1 to 128 characters", i+1)
		case v == ReplicaOther:
			errs.Add(path+".values", "%q is what llmprobe calls every replica not listed; name yours otherwise", v)
		case seen[v]:
			errs.Add(path+".values", "%q is listed twice", v)
		}
		seen[v] = true
	}
}

// validHeaderName reports whether s is an HTTP token (RFC 9110 §5.1).
func validHeaderName(s string) bool {
	for _, c := range s {
		if c > 0x7e || c <= ' ' || c == '"' || c == '(' || c == ')' || c == ',' || c == '/' || c == ':' || c == ';' || c == '<' || c == '=' || c == '>' || c == '?' || c == '@' || c == '[' || c == '\\' || c == ']' || c == '{' || c == '}' {
			return false
		}
	}
	return true
}
