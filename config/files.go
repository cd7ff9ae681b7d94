package config

import (
	"crypto/tls"
	"crypto/x509"
	"fmt"
	"os"
	"strings"
)

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
