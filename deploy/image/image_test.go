package main

import (
	"archive/tar"
	"bytes"
	"context"
	"crypto/x509"
	"errors"
	"io"
	"net/http"
	"net/url"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"

	v1 "github.com/google/go-containerregistry/pkg/v1"
	"github.com/google/go-containerregistry/pkg/v1/layout"
	"github.com/google/go-containerregistry/pkg/v1/mutate"
	"github.com/google/go-containerregistry/pkg/v1/types"

	"github.com/llmprobe/llmprobe/internal/testkit"
)

const lockFile = "packages.lock"

// The same cache as make image's, so a build there spares the test the
// download and the other way round.
var cacheDir = filepath.Join("..", "..", "bin", "image-cache")

// The image written to a layout and read back with go-containerregistry:
// index, manifest, configuration, and the files a cgo binary, TLS and time
// zones need, with the binary run by the image's own loader and libc.
func TestImageReadsBack(t *testing.T) {
	pkgs := lockedPackages(t)
	fetch(t, pkgs)
	bin := cgoBinary(t)
	created := time.Date(2026, 11, 1, 12, 0, 0, 0, time.UTC)
	opts := Options{Packages: pkgs, CacheDir: cacheDir, Binary: bin, Version: "v1.2.3", Revision: "abc123", Created: created}
	img, err := Build(context.Background(), opts)
	if err != nil {
		t.Fatal(err)
	}
	dir := filepath.Join(t.TempDir(), "image")
	if err := WriteLayout(dir, img, "v1.2.3"); err != nil {
		t.Fatal(err)
	}
	read := readLayout(t, dir, "v1.2.3")
	checkManifest(t, read, len(pkgs)+2)
	checkConfig(t, read, created)
	files := flatten(t, read)
	checkFiles(t, files, bin)
	runWithImageLibc(t, files)

	again, err := Build(context.Background(), opts)
	if err != nil {
		t.Fatal(err)
	}
	if a, b := digest(t, img), digest(t, again); a != b {
		t.Errorf("the same inputs built twice give %s and %s: want one digest", a, b)
	}
}

func lockedPackages(t *testing.T) []Package {
	t.Helper()
	f, err := os.Open(lockFile)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	pkgs, err := ReadLock(f, lockFile)
	if err != nil {
		t.Fatal(err)
	}
	return pkgs
}

// fetch downloads what the cache lacks. The image is built from Debian's
// packages, so without the mirror the test fails: it never skips.
func fetch(t *testing.T, pkgs []Package) {
	t.Helper()
	for _, p := range pkgs {
		_, err := Fetch(context.Background(), httpClient(), p, cacheDir)
		var ue *url.Error
		switch {
		case errors.As(err, &ue):
			t.Fatalf("Debian's mirror cannot be reached, so the image cannot be built (make image needs it too): %v", err)
		case err != nil:
			t.Fatal(err)
		}
	}
}

// cgoBinary builds a small cgo program that links libc as llmprobe does.
func cgoBinary(t *testing.T) string {
	t.Helper()
	testkit.Tool(t, "gcc", "apt-get install gcc libc6-dev")
	dir := t.TempDir()
	src := "package main\n\n// #include <stdlib.h>\nimport \"C\"\n\nimport \"fmt\"\n\nfunc main() { fmt.Println(\"cgo abs:\", C.abs(-7)) }\n"
	write(t, filepath.Join(dir, "main.go"), src)
	write(t, filepath.Join(dir, "go.mod"), "module cgohello\n\ngo 1.26\n")
	out := filepath.Join(dir, "cgohello")
	cmd := exec.Command("go", "build", "-o", out, ".")
	cmd.Dir, cmd.Env = dir, append(os.Environ(), "CGO_ENABLED=1", "GOOS=linux", "GOARCH=amd64")
	if b, err := cmd.CombinedOutput(); err != nil {
		t.Fatalf("go build: %v\n%s", err, b)
	}
	return out
}

func readLayout(t *testing.T, dir, ref string) v1.Image {
	t.Helper()
	idx, err := layout.ImageIndexFromPath(dir)
	if err != nil {
		t.Fatal(err)
	}
	im, err := idx.IndexManifest()
	if err != nil {
		t.Fatal(err)
	}
	if len(im.Manifests) != 1 {
		t.Fatalf("index.json has %d manifests, want 1", len(im.Manifests))
	}
	d := im.Manifests[0]
	if d.MediaType != types.OCIManifestSchema1 || d.Annotations["org.opencontainers.image.ref.name"] != ref {
		t.Errorf("index.json's manifest: media type %s, ref.name %q; want %s, %q", d.MediaType, d.Annotations["org.opencontainers.image.ref.name"], types.OCIManifestSchema1, ref)
	}
	img, err := idx.Image(d.Digest)
	if err != nil {
		t.Fatal(err)
	}
	return img
}

func checkManifest(t *testing.T, img v1.Image, layers int) {
	t.Helper()
	m, err := img.Manifest()
	if err != nil {
		t.Fatal(err)
	}
	if m.Config.MediaType != types.OCIConfigJSON {
		t.Errorf("config media type %s, want %s", m.Config.MediaType, types.OCIConfigJSON)
	}
	if len(m.Layers) != layers {
		t.Errorf("%d layers, want %d (one per package, the base files, the binary)", len(m.Layers), layers)
	}
	for i, l := range m.Layers {
		if l.MediaType != types.OCILayer {
			t.Errorf("layer %d media type %s, want %s", i, l.MediaType, types.OCILayer)
		}
	}
}

func checkConfig(t *testing.T, img v1.Image, created time.Time) {
	t.Helper()
	cf, err := img.ConfigFile()
	if err != nil {
		t.Fatal(err)
	}
	c := cf.Config
	if cf.OS != "linux" || cf.Architecture != "amd64" || !cf.Created.Equal(created) {
		t.Errorf("platform %s/%s created %s, want linux/amd64 %s", cf.OS, cf.Architecture, cf.Created, created)
	}
	if c.User != "65532:65532" || c.WorkingDir != WorkingDir {
		t.Errorf("user %q, working dir %q; want 65532:65532, %s", c.User, c.WorkingDir, WorkingDir)
	}
	if !slices.Equal(c.Entrypoint, []string{BinaryPath}) || !slices.Equal(c.Cmd, Cmd) {
		t.Errorf("entrypoint %q cmd %q, want %q %q", c.Entrypoint, c.Cmd, BinaryPath, Cmd)
	}
	if _, ok := c.ExposedPorts["9479/tcp"]; !ok || len(c.ExposedPorts) != 1 {
		t.Errorf("exposed ports %v, want 9479/tcp", c.ExposedPorts)
	}
	if !slices.Contains(c.Env, "SSL_CERT_FILE=/etc/ssl/certs/ca-certificates.crt") || !slices.ContainsFunc(c.Env, func(e string) bool { return strings.HasPrefix(e, "PATH=") }) {
		t.Errorf("env %q, want PATH and SSL_CERT_FILE", c.Env)
	}
	want := map[string]string{
		"org.opencontainers.image.version":  "v1.2.3",
		"org.opencontainers.image.revision": "abc123",
		"org.opencontainers.image.created":  "2026-11-01T12:00:00Z",
		"org.opencontainers.image.title":    "llmprobe",
	}
	for k, v := range want {
		if c.Labels[k] != v {
			t.Errorf("label %s = %q, want %q", k, c.Labels[k], v)
		}
	}
}

// file is one entry of the flattened image.
type file struct {
	hdr  *tar.Header
	body []byte
}

func flatten(t *testing.T, img v1.Image) map[string]file {
	t.Helper()
	rc := mutate.Extract(img)
	defer rc.Close()
	files := map[string]file{}
	tr := tar.NewReader(rc)
	for {
		h, err := tr.Next()
		if err == io.EOF {
			return files
		}
		if err != nil {
			t.Fatal(err)
		}
		body, err := io.ReadAll(tr)
		if err != nil {
			t.Fatal(err)
		}
		files[strings.TrimSuffix(h.Name, "/")] = file{h, body}
	}
}

func checkFiles(t *testing.T, files map[string]file, bin string) {
	t.Helper()
	want, err := os.ReadFile(bin)
	if err != nil {
		t.Fatal(err)
	}
	if f := files[BinaryPath[1:]]; !bytes.Equal(f.body, want) || f.hdr.Mode&0o111 == 0 {
		t.Errorf("%s is not the binary, executable (%d bytes, want %d)", BinaryPath, len(f.body), len(want))
	}
	pool := x509.NewCertPool()
	if !pool.AppendCertsFromPEM(files["etc/ssl/certs/ca-certificates.crt"].body) ||
		bytes.Count(files["etc/ssl/certs/ca-certificates.crt"].body, []byte("BEGIN CERTIFICATE")) < 100 {
		t.Error("/etc/ssl/certs/ca-certificates.crt does not hold Mozilla's CA certificates")
	}
	if _, err := time.LoadLocationFromTZData("Europe/Berlin", files["usr/share/zoneinfo/Europe/Berlin"].body); err != nil {
		t.Errorf("/usr/share/zoneinfo/Europe/Berlin: %v", err)
	}
	if !strings.Contains(string(files["etc/passwd"].body), "nonroot:x:65532:65532:") {
		t.Errorf("/etc/passwd has no nonroot user 65532:\n%s", files["etc/passwd"].body)
	}
	if h := files[WorkingDir[1:]].hdr; h == nil || h.Typeflag != tar.TypeDir || h.Uid != UID || h.Gid != GID {
		t.Errorf("%s is not a directory owned by %d:%d", WorkingDir, UID, GID)
	}
	if l := files["lib64/ld-linux-x86-64.so.2"].hdr; l == nil || files[strings.TrimPrefix(l.Linkname, "/")].hdr == nil {
		t.Error("/lib64/ld-linux-x86-64.so.2, the binary's loader, is missing or points outside the image")
	}
	for name := range files {
		if strings.HasPrefix(name, "usr/share/man/") || (strings.HasPrefix(name, "usr/share/doc/") && files[name].hdr.Typeflag == tar.TypeReg && !strings.HasSuffix(name, "/copyright")) {
			t.Errorf("%s is in the image: manuals and documents but copyrights are left out", name)
		}
	}
}

// runWithImageLibc runs the binary with the image's loader and libc instead
// of this machine's: what the container will do, without one.
func runWithImageLibc(t *testing.T, files map[string]file) {
	t.Helper()
	dir := t.TempDir()
	for _, name := range []string{"lib/x86_64-linux-gnu/ld-linux-x86-64.so.2", "lib/x86_64-linux-gnu/libc.so.6", BinaryPath[1:]} {
		f, ok := files[name]
		if !ok {
			t.Fatalf("/%s is not in the image", name)
		}
		p := filepath.Join(dir, filepath.Base(name))
		if err := os.WriteFile(p, f.body, 0o755); err != nil {
			t.Fatal(err)
		}
	}
	out, err := exec.Command(filepath.Join(dir, "ld-linux-x86-64.so.2"), "--library-path", dir, filepath.Join(dir, "llmprobe")).CombinedOutput()
	if err != nil || strings.TrimSpace(string(out)) != "cgo abs: 7" {
		t.Errorf("the binary under the image's libc: %v, %q; want \"cgo abs: 7\"", err, out)
	}
}

func digest(t *testing.T, img v1.Image) v1.Hash {
	t.Helper()
	d, err := img.Digest()
	if err != nil {
		t.Fatal(err)
	}
	return d
}

func httpClient() *http.Client { return &http.Client{Timeout: 2 * time.Minute} }

func write(t *testing.T, path, s string) {
	t.Helper()
	if err := os.WriteFile(path, []byte(s), 0o644); err != nil {
		t.Fatal(err)
	}
}
