// Command image writes llmprobe's container image as an OCI image layout
// (make image): no container engine, no registry, a base of the Debian
// packages pinned in packages.lock.
package main

import (
	"context"
	"flag"
	"fmt"
	"os"
	"os/signal"
	"strings"
	"time"
)

func main() {
	var (
		binary   = flag.String("binary", "bin/llmprobe", "the llmprobe binary (linux/amd64, cgo)")
		lock     = flag.String("lock", "deploy/image/packages.lock", "the pinned Debian packages")
		cache    = flag.String("cache", "bin/image-cache", "where downloaded .deb files are kept")
		out      = flag.String("out", "bin/image", "the OCI image layout to write")
		version  = flag.String("version", "dev", "org.opencontainers.image.version, and the layout's tag")
		revision = flag.String("revision", "unknown", "org.opencontainers.image.revision")
		created  = flag.String("created", "1970-01-01T00:00:00Z", "creation time, RFC 3339 (the commit's time makes builds repeatable)")
	)
	flag.Parse()
	if err := run(*binary, *lock, *cache, *out, *version, *revision, *created); err != nil {
		fmt.Fprintln(os.Stderr, "image:", err)
		os.Exit(1)
	}
}

func run(binary, lock, cache, out, version, revision, created string) error {
	when, err := time.Parse(time.RFC3339, created)
	if err != nil {
		return fmt.Errorf("--created: %w", err)
	}
	f, err := os.Open(lock)
	if err != nil {
		return err
	}
	pkgs, err := ReadLock(f, lock)
	f.Close()
	if err != nil {
		return err
	}
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt)
	defer stop()
	img, err := Build(ctx, Options{
		Packages: pkgs, CacheDir: cache, Binary: binary,
		Version: version, Revision: revision, Created: when,
	})
	if err != nil {
		return err
	}
	if err := WriteLayout(out, img, tag(version)); err != nil {
		return err
	}
	digest, err := img.Digest()
	if err != nil {
		return err
	}
	fmt.Printf("%s: %s (tag %s)\n", out, digest, tag(version))
	return nil
}

// tag is version as an image tag: letters, digits, '_', '.', '-'.
func tag(version string) string {
	return strings.Map(func(r rune) rune {
		switch {
		case r >= 'a' && r <= 'z', r >= 'A' && r <= 'Z', r >= '0' && r <= '9', r == '_', r == '.', r == '-':
			return r
		}
		return '-'
	}, version)
}
