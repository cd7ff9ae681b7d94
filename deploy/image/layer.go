package main

import (
	"archive/tar"
	"bytes"
	"fmt"
	"io"
	"path"
	"sort"
	"strings"
	"time"
)

// packageTree copies a package's data.tar into a layer's tar, its names
// without the leading "./", leaving out manuals and documents but the
// copyright files. The CA certificates it carries are returned for the
// bundle, which Debian builds at install time (update-ca-certificates).
func packageTree(data []byte, w *tar.Writer) (certs map[string][]byte, err error) {
	certs = map[string][]byte{}
	tr := tar.NewReader(bytes.NewReader(data))
	for {
		h, err := tr.Next()
		if err == io.EOF {
			return certs, nil
		}
		if err != nil {
			return nil, err
		}
		h.Name = cleanName(h.Name)
		if h.Typeflag == tar.TypeLink {
			h.Linkname = cleanName(h.Linkname)
		}
		if h.Name == "" || dropped(h) {
			continue
		}
		if err := w.WriteHeader(h); err != nil {
			return nil, err
		}
		if h.Typeflag != tar.TypeReg {
			continue
		}
		body, err := io.ReadAll(tr)
		if err != nil {
			return nil, err
		}
		if _, err := w.Write(body); err != nil {
			return nil, err
		}
		if strings.HasPrefix(h.Name, "usr/share/ca-certificates/") && strings.HasSuffix(h.Name, ".crt") {
			certs[h.Name] = body
		}
	}
}

func cleanName(name string) string {
	name = strings.TrimPrefix(path.Clean("/"+name), "/")
	if name == "." {
		return ""
	}
	return name
}

// dropped says whether an entry stays out of the image: nothing runs man
// or reads /usr/share/doc there, but the licences stay.
func dropped(h *tar.Header) bool {
	for _, p := range []string{"usr/share/man", "usr/share/info", "usr/share/lintian"} {
		if h.Name == p || strings.HasPrefix(h.Name, p+"/") {
			return true
		}
	}
	return strings.HasPrefix(h.Name, "usr/share/doc/") && h.Typeflag != tar.TypeDir &&
		path.Base(h.Name) != "copyright"
}

// caBundle is /etc/ssl/certs/ca-certificates.crt as update-ca-certificates
// writes it: every certificate in name order, each ending in a newline.
func caBundle(certs map[string][]byte) []byte {
	names := make([]string, 0, len(certs))
	for n := range certs {
		names = append(names, n)
	}
	sort.Strings(names)
	var b bytes.Buffer
	for _, n := range names {
		b.Write(certs[n])
		if !bytes.HasSuffix(certs[n], []byte("\n")) {
			b.WriteByte('\n')
		}
	}
	return b.Bytes()
}

// entry is one file or directory of a layer the builder writes itself.
type entry struct {
	name     string
	mode     int64
	uid, gid int
	body     []byte
	dir      bool
}

// writeTree writes entries, each preceded by its parent directories (root's,
// 0755) unless listed before, at one fixed time so that the same inputs give
// the same layer digest.
func writeTree(w *tar.Writer, mtime time.Time, entries []entry) error {
	made := map[string]bool{}
	for _, e := range entries {
		var parents []string
		for d := path.Dir(e.name); d != "." && !made[d]; d = path.Dir(d) {
			parents = append([]string{d}, parents...)
		}
		for _, d := range parents {
			made[d] = true
			if err := w.WriteHeader(&tar.Header{Typeflag: tar.TypeDir, Name: d + "/", Mode: 0o755, ModTime: mtime, Format: tar.FormatPAX}); err != nil {
				return err
			}
		}
		h := &tar.Header{Name: e.name, Mode: e.mode, Uid: e.uid, Gid: e.gid, ModTime: mtime, Format: tar.FormatPAX}
		if e.dir {
			made[e.name] = true
			h.Typeflag, h.Name = tar.TypeDir, e.name+"/"
		} else {
			h.Typeflag, h.Size = tar.TypeReg, int64(len(e.body))
		}
		if err := w.WriteHeader(h); err != nil {
			return fmt.Errorf("%s: %w", e.name, err)
		}
		if _, err := w.Write(e.body); err != nil {
			return fmt.Errorf("%s: %w", e.name, err)
		}
	}
	return nil
}
