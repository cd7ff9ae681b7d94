package target

import (
	"crypto/tls"
	"crypto/x509"
	"fmt"
	"os"
	"strings"

	"github.com/llmprobe/llmprobe/config"
)

// fileRef is one file a target's configuration names.
type fileRef struct {
	path, file string
	check      func([]byte) error
}

// CheckFiles is a config.Check: every file the targets' (and the probe:
// and tracing: blocks') http_client_config names can be read and says what the client
// needs: a CA file holds a PEM certificate, a cert and key pair load
// together, and a credential is not empty.
func CheckFiles(c *config.Config, _ []*config.FieldError) []*config.FieldError {
	var errs config.FieldErrors
	nonEmpty := func(b []byte) error {
		if strings.TrimSpace(string(b)) == "" {
			return fmt.Errorf("is empty")
		}
		return nil
	}
	type placed struct {
		path string
		t    config.Target
	}
	var targets []placed
	for i, t := range c.Targets {
		targets = append(targets, placed{fmt.Sprintf("targets[%d]", i), t})
	}
	if c.Probe != nil {
		targets = append(targets, placed{"probe", *c.Probe})
	}
	if c.Tracing != nil {
		targets = append(targets, placed{"tracing", config.Target{HTTPClientConfig: c.Tracing.HTTPClientConfig}})
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
				errs.Add(p+".tls_config.cert_file", "%s and key_file %s do not load as a certificate and key: %v", tc.CertFile, tc.KeyFile, err)
			}
		} else {
			refs = append(refs, fileRef{p + ".tls_config.cert_file", tc.CertFile, nonEmpty}, fileRef{p + ".tls_config.key_file", tc.KeyFile, nonEmpty})
		}
		for _, f := range config.CredentialFiles(t) {
			refs = append(refs, fileRef{pt.path + "." + f.Field, f.Path, nonEmpty})
		}
		for _, r := range refs {
			if r.file == "" {
				continue
			}
			b, err := os.ReadFile(r.file)
			if err != nil {
				errs.Add(r.path, "cannot be read: %v", config.FileError(err))
				continue
			}
			if err := r.check(b); err != nil {
				errs.Add(r.path, "%s %v", r.file, err)
			}
		}
	}
	return errs
}
