package main

import (
	"bufio"
	"encoding/hex"
	"fmt"
	"io"
	"net/url"
	"strings"
)

// Package is one Debian package of the image's base, pinned by version and
// by the SHA-256 of its .deb.
type Package struct {
	Name    string
	Version string
	SHA256  string
	URL     string
}

// ReadLock reads a lock file: one package a line as "name version sha256
// url", '#' comments and blank lines ignored. Every bad line is reported
// with file and line, not only the first.
func ReadLock(r io.Reader, file string) ([]Package, error) {
	var pkgs []Package
	var errs []string
	seen := map[string]int{}
	sc := bufio.NewScanner(r)
	for n := 1; sc.Scan(); n++ {
		line := strings.TrimSpace(sc.Text())
		if line == "" || strings.HasPrefix(line, "#") {
			continue
		}
		p, err := parseLockLine(line)
		if err == nil {
			if first, dup := seen[p.Name]; dup {
				err = fmt.Errorf("package %s is pinned twice (first on line %d)", p.Name, first)
			}
		}
		if err != nil {
			errs = append(errs, fmt.Sprintf("%s:%d: %v", file, n, err))
			continue
		}
		seen[p.Name] = n
		pkgs = append(pkgs, p)
	}
	if err := sc.Err(); err != nil {
		return nil, fmt.Errorf("%s: %w", file, err)
	}
	if len(errs) > 0 {
		return nil, fmt.Errorf("%s", strings.Join(errs, "\n"))
	}
	if len(pkgs) == 0 {
		return nil, fmt.Errorf("%s: no package pinned", file)
	}
	return pkgs, nil
}

func parseLockLine(line string) (Package, error) {
	f := strings.Fields(line)
	if len(f) != 4 {
		return Package{}, fmt.Errorf("want 4 fields (name version sha256 url), got %d", len(f))
	}
	p := Package{Name: f[0], Version: f[1], SHA256: strings.ToLower(f[2]), URL: f[3]}
	if b, err := hex.DecodeString(p.SHA256); err != nil || len(b) != 32 {
		return Package{}, fmt.Errorf("sha256 %q: want 64 hex digits", f[2])
	}
	u, err := url.Parse(p.URL)
	if err != nil || (u.Scheme != "https" && u.Scheme != "http") || u.Host == "" {
		return Package{}, fmt.Errorf("url %q: want an http or https URL of the .deb", p.URL)
	}
	if !strings.HasSuffix(u.Path, ".deb") {
		return Package{}, fmt.Errorf("url %q: want a .deb file", p.URL)
	}
	return p, nil
}
