package config

import "encoding/base64"

// Secrets lists the secret values a target's requests carry (header
// secrets, bearer and authorization credentials, basic-auth passwords and
// their encoded header form, OAuth2 client secrets), so that text a target
// echoes back can be scrubbed of them. Values shorter than 4 bytes are left
// out: replacing them would mangle ordinary text.
func (t Target) Secrets() []string {
	var out []string
	add := func(s string) {
		if len(s) >= 4 {
			out = append(out, s)
		}
	}
	for _, v := range t.Headers {
		add(string(v))
	}
	h := t.HTTPClientConfig
	add(string(h.BearerToken))
	if a := h.Authorization; a != nil {
		add(string(a.Credentials))
	}
	if b := h.BasicAuth; b != nil && b.Password != "" {
		add(string(b.Password))
		add(base64.StdEncoding.EncodeToString([]byte(b.Username + ":" + string(b.Password))))
	}
	if o := h.OAuth2; o != nil {
		add(string(o.ClientSecret))
	}
	return out
}
