package config

import (
	"encoding/base64"
	"net/url"
	"os"
	"regexp"
	"strings"
)

// keyLikeRe matches parameter names whose values are credentials.
var keyLikeRe = regexp.MustCompile(`(?i)(key|token|secret|password|passwd|auth|sig|credential)`)

// TargetSecrets lists every secret value a target's requests may carry: header
// secrets and files, bearer and authorization credentials, basic-auth
// passwords and their encoded header form, OAuth2 client secrets, proxy
// passwords, and parameters named like keys; files are read now, so the
// list holds what they say at this moment. Values shorter than 4 bytes are
// left out: replacing them would mangle ordinary text.
func TargetSecrets(t Target) []string {
	var out []string
	add := func(s string) {
		s = strings.TrimSpace(s)
		if len(s) >= 4 {
			out = append(out, s)
		}
	}
	// Every credential file's contents, read once.
	contents := map[string]string{}
	for _, f := range CredentialFiles(t) {
		if b, err := os.ReadFile(f.Path); err == nil {
			contents[f.Path] = strings.TrimSpace(string(b))
		}
	}
	h := t.HTTPClientConfig
	if b := h.BasicAuth; b != nil {
		user, pass := b.Username, string(b.Password)
		if u, ok := contents[b.UsernameFile]; ok && b.UsernameFile != "" {
			user = u
			delete(contents, b.UsernameFile) // a user name is no secret; user:password is, below
		}
		if p, ok := contents[b.PasswordFile]; ok && b.PasswordFile != "" {
			pass = p
		}
		add(pass)
		if pass != "" {
			add(base64.StdEncoding.EncodeToString([]byte(user + ":" + pass)))
		}
	}
	for _, c := range contents {
		add(c)
	}
	if h.HTTPHeaders != nil {
		for _, hd := range h.HTTPHeaders.Headers {
			for _, s := range hd.Secrets {
				add(string(s))
			}
		}
	}
	add(string(h.BearerToken))
	if a := h.Authorization; a != nil {
		add(string(a.Credentials))
	}
	if o := h.OAuth2; o != nil {
		add(string(o.ClientSecret))
		add(string(o.ClientCertificateKey))
		for k, v := range o.EndpointParams {
			if keyLikeRe.MatchString(k) {
				add(v)
			}
		}
		addURLSecrets(o.TokenURL, add)
	}
	add(string(h.TLSConfig.Key))
	if h.ProxyURL.URL != nil {
		addURLSecrets(h.ProxyURL.String(), add)
	}
	for _, vs := range h.ProxyConnectHeader {
		for _, v := range vs {
			add(string(v))
		}
	}
	return out
}

// addURLSecrets adds a URL's password and its parameters named like keys.
func addURLSecrets(raw string, add func(string)) {
	u, err := url.Parse(raw)
	if err != nil {
		return
	}
	if p, ok := u.User.Password(); ok {
		add(p)
	}
	for k, vs := range u.Query() {
		if keyLikeRe.MatchString(k) {
			for _, v := range vs {
				add(v)
			}
		}
	}
}

// Secrets lists the secrets of every target of cfg.
func Secrets(cfg *Config) []string {
	var out []string
	for _, t := range cfg.Targets {
		out = append(out, TargetSecrets(t)...)
	}
	if cfg.Probe != nil {
		out = append(out, TargetSecrets(*cfg.Probe)...)
	}
	if cfg.Tracing != nil {
		out = append(out, TargetSecrets(Target{HTTPClientConfig: cfg.Tracing.HTTPClientConfig})...)
	}
	return out
}
