package config

import (
	"fmt"
)

// CredentialFile is a file whose contents a target sends as a credential.
type CredentialFile struct {
	Field string // its place below the target, like http_client_config.bearer_token_file
	Path  string
}

// CredentialFiles lists the files whose contents t sends: bearer token,
// authorization credentials, basic-auth username and password, OAuth2
// client secret, and http_headers files.
func CredentialFiles(t Target) []CredentialFile {
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
