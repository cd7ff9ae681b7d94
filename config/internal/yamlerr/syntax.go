package yamlerr

import (
	"bytes"
	"errors"
	"fmt"
	"io"
	"strings"

	yaml4 "go.yaml.in/yaml/v4"
)

// Syntax reports a YAML syntax error at the line and column where the
// parser gave up, with the construct it was reading, and refuses a second
// document, which would otherwise be ignored. yaml/v4 is used for this alone:
// v3, which decodes the configuration for prometheus/common's types, reports
// only the line where the enclosing construct began.
func Syntax(data []byte, filename string) error {
	dec := yaml4.NewDecoder(bytes.NewReader(data))
	for doc := 0; ; doc++ {
		var n yaml4.Node
		err := dec.Decode(&n)
		if errors.Is(err, io.EOF) {
			return nil
		}
		var le *yaml4.LoadError
		if errors.As(err, &le) {
			msg := le.Message
			if le.ContextMsg != "" && le.ContextMark.Line > 0 {
				msg = fmt.Sprintf("%s (%s that began at line %d, column %d)", msg, le.ContextMsg, le.ContextMark.Line, le.ContextMark.Column)
			}
			return fmt.Errorf("%s:%d:%d: yaml: %s", filename, le.Mark.Line, le.Mark.Column, msg)
		}
		if err != nil {
			return fmt.Errorf("%s: yaml: %w", filename, err)
		}
		if doc == 1 {
			return fmt.Errorf("%s:%d: a second YAML document begins here; a configuration file holds one", filename, secondDocumentLine(data))
		}
	}
}

// secondDocumentLine finds the "---" that ends the first document.
func secondDocumentLine(data []byte) int {
	content := false
	for i, l := range strings.Split(string(data), "\n") {
		t := strings.TrimSpace(l)
		switch {
		case strings.HasPrefix(l, "---") && content:
			return i + 1
		case t != "" && !strings.HasPrefix(t, "#") && !strings.HasPrefix(t, "%") && !strings.HasPrefix(l, "---"):
			content = true
		}
	}
	return 1
}
