package store

import (
	"bytes"
	"encoding/json"
	"io"
	"os"
	"path/filepath"

	"github.com/llmprobe/llmprobe/lib/redact"
	"github.com/llmprobe/llmprobe/report"
)

// WriteFile writes what render makes to path atomically, with secrets
// masked in the whole text (nil secrets masks nothing).
func WriteFile(path string, secrets *redact.Redactor, render func(io.Writer) error) error {
	var buf bytes.Buffer
	if err := render(&buf); err != nil {
		return err
	}
	abs, err := filepath.Abs(path)
	if err != nil {
		return err
	}
	return writeAtomic(filepath.Dir(abs), filepath.Base(abs), func(w io.Writer) error {
		_, err := w.Write(secrets.Bytes(buf.Bytes()))
		return err
	})
}

// WriteJSON writes the report to path as indented JSON, atomically.
// Secrets are masked as in the store.
func WriteJSON(path string, r *report.Report, secrets *redact.Redactor) error {
	abs, err := filepath.Abs(path)
	if err != nil {
		return err
	}
	return writeAtomic(filepath.Dir(abs), filepath.Base(abs), encoder(r, secrets))
}

// encoder writes r as indented JSON, masked whole: the encoder makes one Write.
// A shard's report, an input to `llmprobe report merge` with a row per
// request, is written compact: indented, its rows would take three times
// the room.
func encoder(r *report.Report, secrets *redact.Redactor) func(io.Writer) error {
	return func(w io.Writer) error {
		marshal := func(v any) ([]byte, error) { return json.MarshalIndent(v, "", "  ") }
		if r.Shard != nil {
			marshal = json.Marshal
		}
		b, err := marshal(r)
		if err != nil {
			return err
		}
		_, err = w.Write(append(secrets.Bytes(b), '\n'))
		return err
	}
}

// writeAtomic writes dir/name, mode 0644, through a temporary file in the
// same folder.
func writeAtomic(dir, name string, write func(io.Writer) error) (err error) {
	tmp, err := os.CreateTemp(dir, "."+name+".tmp-*")
	if err != nil {
		return err
	}
	defer func() {
		if err != nil {
			tmp.Close()
			os.Remove(tmp.Name())
		}
	}()
	// CreateTemp makes it 0600; a report is read by CI uploads and other
	// users (its secrets are masked), as any file written with os.WriteFile.
	if err = tmp.Chmod(0o644); err != nil {
		return err
	}
	if err = write(tmp); err != nil {
		return err
	}
	if err = tmp.Sync(); err != nil {
		return err
	}
	if err = tmp.Close(); err != nil {
		return err
	}
	if err = os.Rename(tmp.Name(), filepath.Join(dir, name)); err != nil {
		return err
	}
	d, err := os.Open(dir)
	if err != nil {
		return err
	}
	defer d.Close()
	return d.Sync()
}
