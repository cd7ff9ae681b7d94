package config

import (
	"bytes"
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"regexp"
	"strconv"
	"strings"

	"go.yaml.in/yaml/v3"
)

// FieldError is a problem with one field, located by its path (targets[1].url).
type FieldError struct {
	Path string
	Msg  string
}

func (e *FieldError) Error() string { return e.Path + ": " + e.Msg }

// LoadFile reads, decodes and validates a configuration file.
func LoadFile(path string) (*Config, error) {
	data, err := os.ReadFile(path)
	if err != nil {
		return nil, err
	}
	return parse(data, path, filepath.Dir(path))
}

// Redacted renders the configuration as YAML with every secret shown as <secret>.
func (c *Config) Redacted() ([]byte, error) {
	var buf bytes.Buffer
	enc := yaml.NewEncoder(&buf)
	enc.SetIndent(2)
	if err := enc.Encode(c); err != nil {
		return nil, err
	}
	return buf.Bytes(), enc.Close()
}

// Parse decodes and validates YAML. Every error names file, line and field:
// "file:12: targets[1].url: must be an http or https URL".
// Files the configuration names are read relative to the working directory.
func Parse(data []byte, filename string) (*Config, error) {
	return parse(data, filename, "")
}

// parse reads files the configuration names relative to dir.
func parse(data []byte, filename, dir string) (*Config, error) {
	if err := checkSyntax(data, filename); err != nil {
		return nil, err
	}
	var root yaml.Node
	if err := yaml.Unmarshal(data, &root); err != nil {
		return nil, fmt.Errorf("%s: %w", filename, err)
	}
	idx := indexNode(&root)

	cfg := &Config{Limits: DefaultLimits}
	dec := yaml.NewDecoder(bytes.NewReader(data))
	dec.KnownFields(true)
	if err := dec.Decode(cfg); err != nil && !errors.Is(err, io.EOF) {
		return nil, idx.decodeError(filename, &root, err)
	}
	if cfg.Canary.Interval == 0 {
		cfg.Canary.Interval = DefaultCanary.Interval
	}
	if dir != "" {
		cfg.setDirectory(dir)
	}
	if errs := cfg.validate(); len(errs) > 0 {
		msgs := make([]error, len(errs))
		for i, fe := range errs {
			msgs[i] = fmt.Errorf("%s:%d: %s", filename, idx.line(fe.Path), fe.Error())
		}
		return nil, errors.Join(msgs...)
	}
	return cfg, nil
}

func (c *Config) setDirectory(dir string) {
	for i := range c.Targets {
		c.Targets[i].HTTPClientConfig.SetDirectory(dir)
	}
}

// nodeIndex maps a field path to the line where it is written, and back.
type nodeIndex struct {
	lines map[string]int
	paths map[int][]string // the paths of keys written on a line
}

func indexNode(root *yaml.Node) *nodeIndex {
	idx := &nodeIndex{lines: map[string]int{}, paths: map[int][]string{}}
	var walk func(n *yaml.Node, path string)
	walk = func(n *yaml.Node, path string) {
		if n == nil {
			return
		}
		idx.lines[path] = n.Line
		switch n.Kind {
		case yaml.DocumentNode:
			for _, c := range n.Content {
				walk(c, path)
			}
		case yaml.MappingNode:
			for i := 0; i+1 < len(n.Content); i += 2 {
				k, v := n.Content[i], n.Content[i+1]
				p := k.Value
				if path != "" {
					p = path + "." + k.Value
				}
				idx.lines[p] = k.Line
				idx.paths[k.Line] = append(idx.paths[k.Line], p)
				walk(v, p)
				idx.lines[p] = k.Line
			}
		case yaml.SequenceNode:
			for i, c := range n.Content {
				p := fmt.Sprintf("%s[%d]", path, i)
				walk(c, p)
			}
		}
	}
	walk(root, "")
	return idx
}

// pathOn is the path of key on line or, without one, the deepest path there.
func (idx *nodeIndex) pathOn(line int, key string) string {
	best := ""
	for _, p := range idx.paths[line] {
		if key != "" && (p == key || strings.HasSuffix(p, "."+key)) {
			return p
		}
		if len(p) > len(best) {
			best = p
		}
	}
	return best
}

// line finds the line of path, or of its closest written parent.
func (idx *nodeIndex) line(path string) int {
	for p := path; p != ""; p = parentPath(p) {
		if l, ok := idx.lines[p]; ok {
			return l
		}
	}
	return 1
}

func parentPath(p string) string {
	i := strings.LastIndexAny(p, ".[")
	if i < 0 {
		return ""
	}
	return p[:i]
}

var (
	yamlLineRe    = regexp.MustCompile(`^line (\d+): (.*)$`)
	unknownFieldR = regexp.MustCompile(`^field (.+) not found in type \S+$`)
	cannotUnmarsh = regexp.MustCompile("^cannot unmarshal (!\\S*)(?: `?(.*?)`?)? into (.+)$")
)

// decodeError rewrites decoder errors into "file:line: path: message".
func (idx *nodeIndex) decodeError(filename string, root *yaml.Node, err error) error {
	var te *yaml.TypeError
	if errors.As(err, &te) {
		msgs := make([]error, 0, len(te.Errors))
		for _, e := range te.Errors {
			m := yamlLineRe.FindStringSubmatch(e)
			if m == nil {
				msgs = append(msgs, fmt.Errorf("%s: %s", filename, e))
				continue
			}
			line, _ := strconv.Atoi(m[1])
			path, msg := idx.pathOn(line, ""), m[2]
			if u := unknownFieldR.FindStringSubmatch(msg); u != nil {
				path = idx.pathOn(line, u[1])
				msg = unknownFieldMessage(u[1], parentPath(path))
			} else if c := cannotUnmarsh.FindStringSubmatch(msg); c != nil {
				if c[2] == "" {
					msg = fmt.Sprintf("cannot use %s as %s", yamlKind(c[1]), goTypeName(c[3]))
				} else {
					msg = fmt.Sprintf("cannot use %s %q as %s", yamlKind(c[1]), c[2], goTypeName(c[3]))
				}
			}
			if path == "" {
				msgs = append(msgs, fmt.Errorf("%s:%d: %s", filename, line, msg))
			} else {
				msgs = append(msgs, fmt.Errorf("%s:%d: %s: %s", filename, line, path, msg))
			}
		}
		return errors.Join(msgs...)
	}
	// Errors from library validators (http_client_config) carry no line: find the
	// target whose block fails on its own.
	if doc := docMapping(root); doc != nil {
		if targets := mapValue(doc, "targets"); targets != nil && targets.Kind == yaml.SequenceNode {
			for i, tn := range targets.Content {
				var t Target
				if terr := tn.Decode(&t); terr != nil {
					path := fmt.Sprintf("targets[%d]", i)
					if hn := mapValue(tn, "http_client_config"); hn != nil {
						path += ".http_client_config"
					}
					return fmt.Errorf("%s:%d: %s: %v", filename, idx.line(path), path, terr)
				}
			}
		}
	}
	return fmt.Errorf("%s: %w", filename, err)
}

func docMapping(root *yaml.Node) *yaml.Node {
	if root.Kind == yaml.DocumentNode && len(root.Content) == 1 && root.Content[0].Kind == yaml.MappingNode {
		return root.Content[0]
	}
	return nil
}

func mapValue(m *yaml.Node, key string) *yaml.Node {
	if m.Kind != yaml.MappingNode {
		return nil
	}
	for i := 0; i+1 < len(m.Content); i += 2 {
		if m.Content[i].Value == key {
			return m.Content[i+1]
		}
	}
	return nil
}

func yamlKind(tag string) string {
	switch tag = strings.TrimPrefix(tag, "!!"); tag {
	case "str":
		return "string"
	case "seq":
		return "a list"
	case "map":
		return "a mapping"
	case "int", "float", "bool", "null", "timestamp", "binary":
		return tag
	default:
		return "a value tagged " + tag
	}
}

// goTypeName says in words what a Go type takes, so no message shows one.
func goTypeName(t string) string {
	switch {
	case strings.HasPrefix(t, "[]"):
		return "a list"
	case strings.HasPrefix(t, "map["):
		return "a mapping"
	case strings.HasPrefix(t, "int"), strings.HasPrefix(t, "uint"):
		return "an integer"
	case strings.HasPrefix(t, "float"):
		return "a number"
	case t == "bool":
		return "true or false"
	case t == "string", strings.HasSuffix(t, ".Secret"), strings.HasSuffix(t, ".API"), strings.HasSuffix(t, "Duration"):
		return "a string"
	}
	return "a mapping" // the configuration's own structs
}

// moved names keys that left for another place.
var moved = map[string]string{
	"headers": "http_client_config.http_headers (a name maps to values, secrets or files)",
}

func unknownFieldMessage(key, parent string) string {
	msg := fmt.Sprintf("unknown field %q", key)
	if to, ok := moved[key]; ok && strings.HasPrefix(parent, "targets[") {
		return msg + "; it moved to " + to
	}
	if s := suggest(key, knownFields(parent)); s != "" {
		return msg + fmt.Sprintf("; did you mean %q?", s)
	}
	return msg
}
