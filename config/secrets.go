package config

import (
	"crypto/tls"
	"crypto/x509"
	"encoding/base64"
	"fmt"
	"net/url"
	"os"
	"regexp"
	"strings"
)

// keyLikeRe matches parameter names whose values are credentials.
var keyLikeRe = regexp.MustCompile(`(?i)(key|token|secret|password|passwd|auth|sig|credential)`)

// Secrets lists every secret value a target's requests may carry: header
// secrets and files, bearer and authorization credentials, basic-auth
// passwords and their encoded header form, OAuth2 client secrets, proxy
// passwords, and parameters named like keys; files are read now, so the
// list holds what they say at this moment. Values shorter than 4 bytes are
// left out: replacing them would mangle ordinary text.
func (t Target) Secrets() []string {
	var out []string
	add := func(s string) {
		s = strings.TrimSpace(s)
		if len(s) >= 4 {
			out = append(out, s)
		}
	}
	addFile := func(path string) string {
		if path == "" {
			return ""
		}
		b, err := os.ReadFile(path)
		if err != nil {
			return ""
		}
		add(string(b))
		return strings.TrimSpace(string(b))
	}
	h := t.HTTPClientConfig
	if h.HTTPHeaders != nil {
		for _, hd := range h.HTTPHeaders.Headers {
			for _, s := range hd.Secrets {
				add(string(s))
			}
			for _, f := range hd.Files {
				addFile(f)
			}
		}
	}
	add(string(h.BearerToken))
	addFile(h.BearerTokenFile)
	if a := h.Authorization; a != nil {
		add(string(a.Credentials))
		addFile(a.CredentialsFile)
	}
	if b := h.BasicAuth; b != nil {
		user := b.Username
		if u := readTrimmed(b.UsernameFile); u != "" {
			user = u
		}
		pass := string(b.Password)
		if p := addFile(b.PasswordFile); p != "" {
			pass = p
		}
		add(pass)
		if pass != "" {
			add(base64.StdEncoding.EncodeToString([]byte(user + ":" + pass)))
		}
	}
	if o := h.OAuth2; o != nil {
		add(string(o.ClientSecret))
		addFile(o.ClientSecretFile)
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

func readTrimmed(path string) string {
	if path == "" {
		return ""
	}
	b, err := os.ReadFile(path)
	if err != nil {
		return ""
	}
	return strings.TrimSpace(string(b))
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

// Secrets lists the secrets of every target, for the one redactor.
func (c *Config) Secrets() []string {
	var out []string
	for _, t := range c.Targets {
		out = append(out, t.Secrets()...)
	}
	return out
}

// fileRef is one file a target's configuration names.
type fileRef struct {
	path, file string
	check      func([]byte) error
}

// checkFiles makes sure every file the targets name can be read and says
// what it must: a CA file holds a PEM certificate, a cert and key pair
// load together, and a credential is not empty.
func (c *Config) checkFiles(errs *errList) {
	nonEmpty := func(b []byte) error {
		if strings.TrimSpace(string(b)) == "" {
			return fmt.Errorf("is empty")
		}
		return nil
	}
	for i, t := range c.Targets {
		p := fmt.Sprintf("targets[%d].http_client_config", i)
		h := t.HTTPClientConfig
		var refs []fileRef
		tc := h.TLSConfig
		refs = append(refs, fileRef{p + ".tls_config.ca_file", tc.CAFile, func(b []byte) error {
			if !x509.NewCertPool().AppendCertsFromPEM(b) {
				return fmt.Errorf("holds no PEM certificate")
			}
			return nil
		}})
		if tc.CertFile != "" && tc.KeyFile != "" {
			if _, err := tls.LoadX509KeyPair(tc.CertFile, tc.KeyFile); err != nil {
				errs.add(p+".tls_config.cert_file", "%s and key_file %s do not load as a certificate and key: %v", tc.CertFile, tc.KeyFile, err)
			}
		} else {
			refs = append(refs, fileRef{p + ".tls_config.cert_file", tc.CertFile, nonEmpty}, fileRef{p + ".tls_config.key_file", tc.KeyFile, nonEmpty})
		}
		refs = append(refs, fileRef{p + ".bearer_token_file", h.BearerTokenFile, nonEmpty})
		if a := h.Authorization; a != nil {
			refs = append(refs, fileRef{p + ".authorization.credentials_file", a.CredentialsFile, nonEmpty})
		}
		if b := h.BasicAuth; b != nil {
			refs = append(refs, fileRef{p + ".basic_auth.username_file", b.UsernameFile, nonEmpty}, fileRef{p + ".basic_auth.password_file", b.PasswordFile, nonEmpty})
		}
		if o := h.OAuth2; o != nil {
			refs = append(refs, fileRef{p + ".oauth2.client_secret_file", o.ClientSecretFile, nonEmpty})
		}
		if hh := h.HTTPHeaders; hh != nil {
			for name, hd := range hh.Headers {
				for j, f := range hd.Files {
					refs = append(refs, fileRef{fmt.Sprintf("%s.http_headers.%s.files[%d]", p, name, j), f, nonEmpty})
				}
			}
		}
		for _, r := range refs {
			if r.file == "" {
				continue
			}
			b, err := os.ReadFile(r.file)
			if err != nil {
				errs.add(r.path, "cannot be read: %v", fileError(err))
				continue
			}
			if err := r.check(b); err != nil {
				errs.add(r.path, "%s %v", r.file, err)
			}
		}
	}
}

// fileError drops Go's "open" prefix: "open x: no such file" reads as code.
func fileError(err error) error {
	if pe, ok := err.(*os.PathError); ok {
		return fmt.Errorf("%s: %w", pe.Path, pe.Err)
	}
	return err
}
