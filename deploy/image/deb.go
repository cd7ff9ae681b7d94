package main

import (
	"bufio"
	"bytes"
	"compress/gzip"
	"context"
	"crypto/sha256"
	"encoding/hex"
	"errors"
	"fmt"
	"io"
	"net/http"
	"os"
	"path/filepath"
	"strconv"
	"strings"

	"github.com/ulikunitz/xz"
)

// Fetch returns the path of p's .deb in cacheDir, downloading it only when
// the cache lacks it. The file is kept only when its SHA-256 is the pinned
// one, so a cached file is trusted by its name.
func Fetch(ctx context.Context, client *http.Client, p Package, cacheDir string) (string, error) {
	path := filepath.Join(cacheDir, p.SHA256+".deb")
	if _, err := os.Stat(path); err == nil {
		return path, nil
	}
	if err := os.MkdirAll(cacheDir, 0o755); err != nil {
		return "", err
	}
	req, err := http.NewRequestWithContext(ctx, http.MethodGet, p.URL, nil)
	if err != nil {
		return "", err
	}
	resp, err := client.Do(req)
	if err != nil {
		return "", fmt.Errorf("%s %s: %w", p.Name, p.Version, err)
	}
	defer resp.Body.Close()
	if resp.StatusCode != http.StatusOK {
		return "", fmt.Errorf("%s %s: GET %s: %s (a version the mirror no longer has: refresh deploy/image/packages.lock)", p.Name, p.Version, p.URL, resp.Status)
	}
	tmp, err := os.CreateTemp(cacheDir, p.Name+"-*.part")
	if err != nil {
		return "", err
	}
	defer os.Remove(tmp.Name())
	h := sha256.New()
	_, err = io.Copy(io.MultiWriter(tmp, h), resp.Body)
	if cerr := tmp.Close(); err == nil {
		err = cerr
	}
	if err != nil {
		return "", fmt.Errorf("%s %s: GET %s: %w", p.Name, p.Version, p.URL, err)
	}
	if got := hex.EncodeToString(h.Sum(nil)); got != p.SHA256 {
		return "", fmt.Errorf("%s %s: %s has SHA-256 %s, the lock pins %s", p.Name, p.Version, p.URL, got, p.SHA256)
	}
	return path, os.Rename(tmp.Name(), path)
}

// DataTar returns the uncompressed data.tar of a .deb: the files the
// package installs. A .deb is an ar archive whose members are
// debian-binary, control.tar.* and data.tar.*.
func DataTar(debPath string) ([]byte, error) {
	f, err := os.Open(debPath)
	if err != nil {
		return nil, err
	}
	defer f.Close()
	r := bufio.NewReader(f)
	magic := make([]byte, 8)
	if _, err := io.ReadFull(r, magic); err != nil || string(magic) != "!<arch>\n" {
		return nil, fmt.Errorf("%s: not an ar archive", debPath)
	}
	for {
		name, size, err := arHeader(r)
		if err == io.EOF {
			return nil, fmt.Errorf("%s: no data.tar member", debPath)
		}
		if err != nil {
			return nil, fmt.Errorf("%s: %w", debPath, err)
		}
		if strings.HasPrefix(name, "data.tar") {
			data, err := decompress(name, io.LimitReader(r, size))
			if err != nil {
				return nil, fmt.Errorf("%s: %s: %w", debPath, name, err)
			}
			return data, nil
		}
		// Members are padded to an even offset.
		if _, err := r.Discard(int(size + size%2)); err != nil {
			return nil, fmt.Errorf("%s: %s: %w", debPath, name, err)
		}
	}
}

// arHeader reads one 60-byte ar member header: name (16), dates and ids
// (32), size (10), magic (2).
func arHeader(r io.Reader) (string, int64, error) {
	hdr := make([]byte, 60)
	if _, err := io.ReadFull(r, hdr); err != nil {
		if errors.Is(err, io.ErrUnexpectedEOF) {
			return "", 0, errors.New("truncated ar header")
		}
		return "", 0, err
	}
	if string(hdr[58:60]) != "`\n" {
		return "", 0, errors.New("bad ar header")
	}
	size, err := strconv.ParseInt(strings.TrimSpace(string(hdr[48:58])), 10, 64)
	if err != nil || size < 0 {
		return "", 0, fmt.Errorf("bad ar member size %q", hdr[48:58])
	}
	return strings.TrimRight(strings.TrimSpace(string(hdr[0:16])), "/"), size, nil
}

// decompress reads a data.tar member by its suffix. Debian's packages use xz
// (dpkg-deb's default); gzip and none are allowed by dpkg too.
func decompress(name string, r io.Reader) ([]byte, error) {
	var dr io.Reader
	switch {
	case name == "data.tar":
		dr = r
	case strings.HasSuffix(name, ".xz"):
		x, err := xz.NewReader(r)
		if err != nil {
			return nil, err
		}
		dr = x
	case strings.HasSuffix(name, ".gz"):
		z, err := gzip.NewReader(r)
		if err != nil {
			return nil, err
		}
		dr = z
	default:
		return nil, errors.New("unsupported compression (xz, gzip or none)")
	}
	var buf bytes.Buffer
	_, err := io.Copy(&buf, dr)
	return buf.Bytes(), err
}
