// The image itself: a base of pinned Debian packages, the binary, a non-root
// user, and the configuration deploy/docker/Dockerfile also gives, written as
// an OCI image layout.

package main

import (
	"archive/tar"
	"bytes"
	"context"
	"fmt"
	"io"
	"net/http"
	"os"
	"path/filepath"
	"strconv"
	"time"

	v1 "github.com/google/go-containerregistry/pkg/v1"
	"github.com/google/go-containerregistry/pkg/v1/empty"
	"github.com/google/go-containerregistry/pkg/v1/layout"
	"github.com/google/go-containerregistry/pkg/v1/mutate"
	"github.com/google/go-containerregistry/pkg/v1/tarball"
	"github.com/google/go-containerregistry/pkg/v1/types"
)

// What the image and deploy/docker/Dockerfile agree on (a test holds the
// Dockerfile to these).
const (
	BinaryPath = "/usr/local/bin/llmprobe"
	WorkingDir = "/var/lib/llmprobe"
	Port       = "9479/tcp"
	// UID and GID of the user "nonroot", as in the distroless base the
	// Dockerfile uses.
	UID = 65532
	GID = 65532
)

// Cmd is the image's default arguments: reports kept in the working
// directory.
var Cmd = []string{"--storage.path=" + WorkingDir}

// Labels are the image's OCI annotations as labels.
func Labels(version, revision, created string) map[string]string {
	return map[string]string{
		"org.opencontainers.image.title":       "llmprobe",
		"org.opencontainers.image.description": "Prometheus exporter and synthetic prober for OpenAI-compatible inference servers",
		"org.opencontainers.image.source":      "https://github.com/llmprobe/llmprobe",
		"org.opencontainers.image.version":     version,
		"org.opencontainers.image.revision":    revision,
		"org.opencontainers.image.created":     created,
	}
}

// Options are one build's inputs.
type Options struct {
	Packages []Package
	CacheDir string // downloaded .deb files, by SHA-256
	Binary   string // the llmprobe binary, built for linux/amd64 with cgo
	Version  string
	Revision string
	// Created is the image's creation time and every file's time of the
	// layers the builder writes: the commit's time makes builds repeatable.
	Created time.Time
	Client  *http.Client
}

// Build makes the image: one layer per package, one of the files Debian's
// install scripts or the distroless base would add (users, CA bundle, the
// working directory), and one of the binary, so that a new build changes
// only the last.
func Build(ctx context.Context, o Options) (v1.Image, error) {
	client := o.Client
	if client == nil {
		client = &http.Client{Timeout: 5 * time.Minute}
	}
	var layers []mutate.Addendum
	certs := map[string][]byte{}
	for _, p := range o.Packages {
		deb, err := Fetch(ctx, client, p, o.CacheDir)
		if err != nil {
			return nil, err
		}
		data, err := DataTar(deb)
		if err != nil {
			return nil, err
		}
		l, err := tarLayer(func(w *tar.Writer) error {
			c, err := packageTree(data, w)
			for n, b := range c {
				certs[n] = b
			}
			return err
		})
		if err != nil {
			return nil, fmt.Errorf("%s %s: %w", p.Name, p.Version, err)
		}
		layers = append(layers, layerOf(l, o, "Debian package "+p.Name+" "+p.Version))
	}
	if len(certs) == 0 {
		return nil, fmt.Errorf("no CA certificates in the packages (is ca-certificates pinned?)")
	}
	base, err := tarLayer(func(w *tar.Writer) error { return writeTree(w, o.Created, baseFiles(caBundle(certs))) })
	if err != nil {
		return nil, err
	}
	bin, err := os.ReadFile(o.Binary)
	if err != nil {
		return nil, err
	}
	app, err := tarLayer(func(w *tar.Writer) error {
		return writeTree(w, o.Created, []entry{{name: BinaryPath[1:], mode: 0o755, body: bin}})
	})
	if err != nil {
		return nil, err
	}
	layers = append(layers, layerOf(base, o, "users, CA bundle, working directory"), layerOf(app, o, "llmprobe "+o.Version))
	return assemble(layers, o)
}

// layerOf is a layer with the history line that says what it holds.
func layerOf(l v1.Layer, o Options, what string) mutate.Addendum {
	return mutate.Addendum{Layer: l, History: v1.History{Created: v1.Time{Time: o.Created}, CreatedBy: "make image", Comment: what}}
}

func assemble(layers []mutate.Addendum, o Options) (v1.Image, error) {
	img := mutate.ConfigMediaType(mutate.MediaType(empty.Image, types.OCIManifestSchema1), types.OCIConfigJSON)
	img, err := mutate.Append(img, layers...)
	if err != nil {
		return nil, err
	}
	cf, err := img.ConfigFile()
	if err != nil {
		return nil, err
	}
	cf = cf.DeepCopy()
	cf.OS, cf.Architecture = "linux", "amd64"
	cf.Created = v1.Time{Time: o.Created}
	cf.Config = v1.Config{
		User:         strconv.Itoa(UID) + ":" + strconv.Itoa(GID),
		Entrypoint:   []string{BinaryPath},
		Cmd:          Cmd,
		WorkingDir:   WorkingDir,
		ExposedPorts: map[string]struct{}{Port: {}},
		Env:          []string{"PATH=/usr/local/sbin:/usr/local/bin:/usr/sbin:/usr/bin:/sbin:/bin", "SSL_CERT_FILE=/etc/ssl/certs/ca-certificates.crt"},
		Labels:       Labels(o.Version, o.Revision, o.Created.UTC().Format(time.RFC3339)),
	}
	return mutate.ConfigFile(img, cf)
}

// baseFiles are what a Debian install would have added beside the
// packages' files, and what the distroless base has: the user, a resolver
// order, the library search path the NVIDIA container runtime's ldconfig
// reads when it mounts libnvidia-ml.so.1, and the working directory.
func baseFiles(bundle []byte) []entry {
	return []entry{
		{name: "etc/passwd", mode: 0o644, body: []byte("root:x:0:0:root:/root:/sbin/nologin\nnonroot:x:65532:65532:nonroot:/home/nonroot:/sbin/nologin\n")},
		{name: "etc/group", mode: 0o644, body: []byte("root:x:0:\nnonroot:x:65532:\n")},
		{name: "etc/nsswitch.conf", mode: 0o644, body: []byte("hosts: files dns\n")},
		{name: "etc/ld.so.conf", mode: 0o644, body: []byte("include /etc/ld.so.conf.d/*.conf\n")},
		{name: "etc/ssl/certs/ca-certificates.crt", mode: 0o644, body: bundle},
		{name: "home/nonroot", mode: 0o700, uid: UID, gid: GID, dir: true},
		{name: "tmp", mode: 0o1777, dir: true},
		{name: WorkingDir[1:], mode: 0o755, uid: UID, gid: GID, dir: true},
	}
}

// tarLayer is a gzip-compressed OCI layer of the tar that fill writes.
func tarLayer(fill func(*tar.Writer) error) (v1.Layer, error) {
	var buf bytes.Buffer
	w := tar.NewWriter(&buf)
	if err := fill(w); err != nil {
		return nil, err
	}
	if err := w.Close(); err != nil {
		return nil, err
	}
	b := buf.Bytes()
	return tarball.LayerFromOpener(func() (io.ReadCloser, error) {
		return io.NopCloser(bytes.NewReader(b)), nil
	}, tarball.WithMediaType(types.OCILayer), tarball.WithCompressedCaching) // gzip once, not again when written
}

// WriteLayout writes img as the only image of an OCI image layout in dir,
// tagged ref (skopeo's oci:DIR:REF). A dir that exists must be a layout
// already: it is replaced, and nothing else is removed.
func WriteLayout(dir string, img v1.Image, ref string) error {
	if _, err := os.Stat(dir); err == nil {
		if _, err := os.Stat(filepath.Join(dir, "oci-layout")); err != nil {
			return fmt.Errorf("%s exists and is not an OCI image layout: not replacing it", dir)
		}
		if err := os.RemoveAll(dir); err != nil {
			return err
		}
	}
	p, err := layout.Write(dir, empty.Index)
	if err != nil {
		return err
	}
	return p.AppendImage(img, layout.WithAnnotations(map[string]string{"org.opencontainers.image.ref.name": ref}))
}
