package config

import (
	"crypto/tls"
	"crypto/x509"
	"fmt"
	"os"
	"strings"
)

// CredentialFile is a file whose contents a target sends as a credential.
type CredentialFile struct {
	Field string // its place below the target, like http_client_config.bearer_token_file
	Path  string
}

// CredentialFiles lists the files whose contents t sends: bearer token,
// authorization credentials, basic-auth username and password, OAuth2
// client secret, and http_headers files.
func (t Target) CredentialFiles() []CredentialFile {
	const p = "http_client_config"
	h := t.HTTPClientConfig
	var out []CredentialFile
	add := func(field, path string) {
		if path != "" {
			out = append(out, CredentialFile{p + "." + field, path})
		}
	}
	add("bearer_token_file", h.BearerTokenFile)
	if a := h.Authorization; a != nil {
		add("authorization.credentials_file", a.CredentialsFile)
	}
	if b := h.BasicAuth; b != nil {
		add("basic_auth.username_file", b.UsernameFile)
		add("basic_auth.password_file", b.PasswordFile)
	}
	if o := h.OAuth2; o != nil {
		add("oauth2.client_secret_file", o.ClientSecretFile)
	}
	if hh := h.HTTPHeaders; hh != nil {
		for name, hd := range hh.Headers {
			for j, f := range hd.Files {
				add(fmt.Sprintf("http_headers.%s.files[%d]", name, j), f)
			}
		}
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
	type placed struct {
		path string
		t    Target
	}
	var targets []placed
	for i, t := range c.Targets {
		targets = append(targets, placed{fmt.Sprintf("targets[%d]", i), t})
	}
	if c.Probe != nil {
		targets = append(targets, placed{"probe", *c.Probe})
	}
	for _, pt := range targets {
		t := pt.t
		p := pt.path + ".http_client_config"
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
		for _, f := range t.CredentialFiles() {
			refs = append(refs, fileRef{pt.path + "." + f.Field, f.Path, nonEmpty})
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
