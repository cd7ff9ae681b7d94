package main

import (
	"bytes"
	"context"
	"crypto/sha256"
	"encoding/hex"
	"fmt"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"strings"
	"sync/atomic"
	"testing"

	"github.com/google/go-containerregistry/pkg/v1/empty"
	"github.com/google/go-containerregistry/pkg/v1/layout"
)

func TestReadLockNamesEveryBadLine(t *testing.T) {
	sum := strings.Repeat("ab", 32)
	in := strings.Join([]string{
		"# comment",
		"libc6 1.0 " + sum + " https://deb.example/libc6.deb",
		"tzdata 1.0 " + sum,
		"",
		"zlib 1.0 xyz https://deb.example/zlib.deb",
		"libc6 2.0 " + sum + " https://deb.example/libc6-2.deb",
		"curl 1.0 " + sum + " ftp://deb.example/curl.deb",
		"tar 1.0 " + sum + " https://deb.example/tar.tar.gz",
	}, "\n")
	_, err := ReadLock(strings.NewReader(in), "packages.lock")
	if err == nil {
		t.Fatal("no error for a lock with five bad lines")
	}
	for _, want := range []string{
		"packages.lock:3: want 4 fields (name version sha256 url), got 3",
		`packages.lock:5: sha256 "xyz": want 64 hex digits`,
		"packages.lock:6: package libc6 is pinned twice (first on line 2)",
		`packages.lock:7: url "ftp://deb.example/curl.deb": want an http or https URL`,
		`packages.lock:8: url "https://deb.example/tar.tar.gz": want a .deb file`,
	} {
		if !strings.Contains(err.Error(), want) {
			t.Errorf("error lacks %q:\n%v", want, err)
		}
	}
	if _, err := ReadLock(strings.NewReader("# nothing\n"), "empty.lock"); err == nil || !strings.Contains(err.Error(), "empty.lock: no package pinned") {
		t.Errorf("empty lock: %v", err)
	}
}

// The committed lock pins the packages the image needs.
func TestLockPinsTheBase(t *testing.T) {
	var names []string
	for _, p := range lockedPackages(t) {
		names = append(names, p.Name)
	}
	for _, want := range []string{"libc6", "ca-certificates", "tzdata"} {
		if !strings.Contains(" "+strings.Join(names, " ")+" ", " "+want+" ") {
			t.Errorf("%s does not pin %s (it pins %v)", lockFile, want, names)
		}
	}
}

func TestFetchChecksTheHashAndCaches(t *testing.T) {
	deb := []byte("!<arch>\nnot really a package")
	sum := sha256.Sum256(deb)
	var gets atomic.Int32
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		gets.Add(1)
		if r.URL.Path != "/pool/p.deb" {
			http.NotFound(w, r)
			return
		}
		w.Write(deb)
	}))
	defer srv.Close()
	dir := t.TempDir()
	p := Package{Name: "p", Version: "1", SHA256: hex.EncodeToString(sum[:]), URL: srv.URL + "/pool/p.deb"}
	for range 2 {
		path, err := Fetch(context.Background(), srv.Client(), p, dir)
		if err != nil {
			t.Fatal(err)
		}
		if b, _ := os.ReadFile(path); !bytes.Equal(b, deb) {
			t.Fatalf("cached file %s is not the download", path)
		}
	}
	if n := gets.Load(); n != 1 {
		t.Errorf("%d downloads for two fetches, want 1 (the second from the cache)", n)
	}

	bad := p
	bad.SHA256 = strings.Repeat("0", 64)
	_, err := Fetch(context.Background(), srv.Client(), bad, dir)
	if err == nil || !strings.Contains(err.Error(), "has SHA-256 "+p.SHA256+", the lock pins "+bad.SHA256) {
		t.Errorf("wrong hash: %v", err)
	}
	gone := p
	gone.SHA256, gone.URL = strings.Repeat("1", 64), srv.URL+"/pool/old.deb"
	if _, err := Fetch(context.Background(), srv.Client(), gone, dir); err == nil || !strings.Contains(err.Error(), "404 Not Found (a version the mirror no longer has: refresh") {
		t.Errorf("missing version: %v", err)
	}
	entries, _ := os.ReadDir(dir)
	if len(entries) != 1 {
		t.Errorf("cache holds %d files, want only the good one: a bad download is not kept", len(entries))
	}
}

func TestDataTarReadsTheDataMember(t *testing.T) {
	dir := t.TempDir()
	good := filepath.Join(dir, "good.deb")
	os.WriteFile(good, arArchive(map[string]string{"debian-binary": "2.0\n", "control.tar": "odd-sized", "data.tar": "the files"}), 0o644)
	if b, err := DataTar(good); err != nil || string(b) != "the files" {
		t.Errorf("DataTar = %q, %v; want the data.tar member", b, err)
	}
	for name, want := range map[string]string{
		"zst.deb":  "data.tar.zst: unsupported compression (xz, gzip or none)",
		"none.deb": "no data.tar member",
		"text.deb": "not an ar archive",
	} {
		path := filepath.Join(dir, name)
		switch name {
		case "zst.deb":
			os.WriteFile(path, arArchive(map[string]string{"debian-binary": "2.0\n", "data.tar.zst": "x"}), 0o644)
		case "none.deb":
			os.WriteFile(path, arArchive(map[string]string{"debian-binary": "2.0\n"}), 0o644)
		default:
			os.WriteFile(path, []byte("hello"), 0o644)
		}
		if _, err := DataTar(path); err == nil || !strings.Contains(err.Error(), want) {
			t.Errorf("%s: %v, want %q", name, err, want)
		}
	}
}

// arArchive writes members in the order debian-binary, control, data, as
// dpkg-deb does, each padded to an even size.
func arArchive(members map[string]string) []byte {
	var b bytes.Buffer
	b.WriteString("!<arch>\n")
	for _, prefix := range []string{"debian-binary", "control", "data"} {
		for name, body := range members {
			if !strings.HasPrefix(name, prefix) {
				continue
			}
			fmt.Fprintf(&b, "%-16s%-12s%-6s%-6s%-8s%-10d`\n", name, "0", "0", "0", "100644", len(body))
			b.WriteString(body)
			if len(body)%2 == 1 {
				b.WriteByte('\n')
			}
		}
	}
	return b.Bytes()
}

// A layout is replaced by the next build, and anything else is left alone.
func TestWriteLayoutReplacesOnlyALayout(t *testing.T) {
	dir := filepath.Join(t.TempDir(), "image")
	for range 2 {
		if err := WriteLayout(dir, empty.Image, "v1"); err != nil {
			t.Fatal(err)
		}
	}
	idx, err := layout.ImageIndexFromPath(dir)
	if err != nil {
		t.Fatal(err)
	}
	if im, err := idx.IndexManifest(); err != nil || len(im.Manifests) != 1 {
		t.Errorf("after two builds index.json has %v manifests (%v), want 1", len(im.Manifests), err)
	}

	other := t.TempDir()
	write(t, filepath.Join(other, "notes.txt"), "mine")
	if err := WriteLayout(other, empty.Image, "v1"); err == nil || !strings.Contains(err.Error(), "is not an OCI image layout: not replacing it") {
		t.Errorf("writing over a directory that is no layout: %v", err)
	}
	if _, err := os.Stat(filepath.Join(other, "notes.txt")); err != nil {
		t.Errorf("the directory's file is gone: %v", err)
	}
}
