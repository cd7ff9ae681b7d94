package report

import (
	"bytes"
	"io"
	"path/filepath"

	"github.com/llmprobe/llmprobe/internal/redact"
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
