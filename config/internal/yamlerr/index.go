// Package yamlerr turns YAML syntax and decoding errors into messages a
// person can act on: file, line (and column), the field's path, and no Go
// type names.
package yamlerr

import (
	"fmt"
	"reflect"
	"regexp"
	"strconv"
	"strings"

	"go.yaml.in/yaml/v3"
)

// Index maps a field path (targets[1].url) to the line where it is written, and back.
type Index struct {
	lines map[string]int
	paths map[int][]string // the paths of keys written on a line
	// values are the paths of the values written at a line and column, and
	// scalars the scalar values on a line: in flow style one line holds
	// many fields, and only a value's place or text tells which is meant.
	values  map[[2]int]string
	scalars map[int][]scalarAt
	// keys holds, by path, the mapping a key is written in and the key.
	keys map[string]keyIn
	root *yaml.Node
}

// keyIn is a key of a mapping.
type keyIn struct{ mapping, key *yaml.Node }

// scalarAt is a scalar value and the path it is written at.
type scalarAt struct{ path, value string }

// NewIndex indexes the document root.
func NewIndex(root *yaml.Node) *Index {
	idx := &Index{lines: map[string]int{}, paths: map[int][]string{}, values: map[[2]int]string{}, scalars: map[int][]scalarAt{}, keys: map[string]keyIn{}, root: root}
	var walk func(n *yaml.Node, path string)
	walk = func(n *yaml.Node, path string) {
		if n == nil {
			return
		}
		idx.lines[path] = n.Line
		if path != "" {
			idx.values[[2]int{n.Line, n.Column}] = path
			if n.Kind == yaml.ScalarNode {
				idx.scalars[n.Line] = append(idx.scalars[n.Line], scalarAt{path, n.Value})
			}
		}
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
				idx.keys[p] = keyIn{n, k}
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

// AtValue is a type error at n that the Index places at n's own field,
// however many fields share its line: what a custom unmarshaler returns.
func AtValue(n *yaml.Node, format string, args ...any) *yaml.TypeError {
	return &yaml.TypeError{Errors: []string{fmt.Sprintf("line %d: column %d: ", n.Line, n.Column) + fmt.Sprintf(format, args...)}}
}

// pathOn is the path of key on line or, without one, the deepest path there.
func (idx *Index) pathOn(line int, key string) string {
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

// without removes from the indexed document the keys whose values have a
// problem (not unknown keys, which a lenient decoder skips; for an element
// of a list, the list's key) and returns
// it: decoded, each such field is left zero, and the list item it is in
// is kept, where a value of the wrong kind would make the decoder drop
// the whole item. The document is changed in place.
func (idx *Index) without(problems []Problem) *yaml.Node {
	drop := map[*yaml.Node]bool{}
	for i, p := range problems {
		// A list element is no key: its list's key goes, the nearest above.
		for path := p.Path; path != "" && !p.Unknown; path = parentPath(path) {
			if k, ok := idx.keys[path]; ok {
				drop[k.key], problems[i].Dropped = true, path
				break
			}
		}
	}
	var prune func(n *yaml.Node)
	prune = func(n *yaml.Node) {
		if n.Kind == yaml.MappingNode {
			kept := n.Content[:0]
			for i := 0; i+1 < len(n.Content); i += 2 {
				if !drop[n.Content[i]] {
					kept = append(kept, n.Content[i], n.Content[i+1])
				}
			}
			n.Content = kept
		}
		for _, c := range n.Content {
			prune(c)
		}
	}
	prune(idx.root)
	return idx.root
}

// pathOfValue is the path of the one scalar on line written as value, ""
// when none or several are.
func (idx *Index) pathOfValue(line int, value string) string {
	found := ""
	for _, s := range idx.scalars[line] {
		if s.value == value {
			if found != "" {
				return ""
			}
			found = s.path
		}
	}
	return found
}

// Has reports whether the file writes path.
func (idx *Index) Has(path string) bool {
	_, ok := idx.lines[path]
	return ok
}

// Line finds the line of path, or of its closest written parent.
func (idx *Index) Line(path string) int {
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
	yamlLineRe    = regexp.MustCompile(`(?s)^line (\d+): (.*)$`) // a value may span lines
	columnRe      = regexp.MustCompile(`(?s)^column (\d+): (.*)$`)
	unknownFieldR = regexp.MustCompile(`^field (.+) not found in type \S+$`)
	cannotUnmarsh = regexp.MustCompile("(?s)^cannot unmarshal (!\\S*)(?: `?(.*?)`?)? into (.+)$")
)

// TypeErrors rewrites a decoder's errors into problems located by line and
// path, with no Go type in the message: an unknown key gets the known key it
// is a typo of in schema (the type the document decodes into), or where it
// moved to (moved maps "targets.headers", the key's path without indices, to
// its new place); a value of the wrong kind says what was expected.
func (idx *Index) TypeErrors(te *yaml.TypeError, schema reflect.Type, moved map[string]string) []Problem {
	ps := make([]Problem, 0, len(te.Errors))
	for _, e := range te.Errors {
		m := yamlLineRe.FindStringSubmatch(e)
		if m == nil {
			ps = append(ps, Problem{Msg: e})
			continue
		}
		line, _ := strconv.Atoi(m[1])
		p := Problem{Line: line, Path: idx.pathOn(line, ""), Msg: m[2]}
		if c := columnRe.FindStringSubmatch(p.Msg); c != nil { // ours: AtValue
			col, _ := strconv.Atoi(c[1])
			p.Msg = c[2]
			if path, ok := idx.values[[2]int{line, col}]; ok {
				p.Path = path
			}
		}
		if u := unknownFieldR.FindStringSubmatch(p.Msg); u != nil {
			p.Path = idx.pathOn(line, u[1])
			p.Unknown = true
			p.Msg, p.Meant = unknownFieldMessage(u[1], parentPath(p.Path), schema, moved)
		} else if c := cannotUnmarsh.FindStringSubmatch(p.Msg); c != nil {
			if c[2] == "" {
				p.Msg = fmt.Sprintf("cannot use %s as %s", yamlKind(c[1]), goTypeName(c[3]))
			} else {
				p.Msg = fmt.Sprintf("cannot use %s %q as %s", yamlKind(c[1]), c[2], goTypeName(c[3]))
				if path := idx.pathOfValue(line, c[2]); path != "" {
					p.Path = path
				}
			}
		}
		ps = append(ps, p)
	}
	return ps
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

// unknownFieldMessage says what is wrong with key under parent and, where
// it is a typo, the path of the field it meant.
func unknownFieldMessage(key, parent string, schema reflect.Type, moved map[string]string) (msg, meant string) {
	msg = fmt.Sprintf("unknown field %q", key)
	where := indexRe.ReplaceAllString(parent, "")
	if where != "" {
		where += "."
	}
	if to, ok := moved[where+key]; ok {
		return msg + "; it moved to " + to, ""
	}
	if s := Suggest(key, knownFields(schema, parent)); s != "" {
		if parent != "" {
			meant = parent + "." + s
		} else {
			meant = s
		}
		return msg + fmt.Sprintf("; did you mean %q?", s), meant
	}
	return msg, ""
}

// ItemError locates an error that a library's validator returned without a
// line: at the first item of the top-level list key whose own decoding
// fails, and at its sub key where the item has one ("file:line:
// targets[1].http_client_config: message"); nil when no item fails alone.
func (idx *Index) ItemError(filename string, root *yaml.Node, key, sub string, decode func(*yaml.Node) error) error {
	if root.Kind != yaml.DocumentNode || len(root.Content) != 1 {
		return nil
	}
	list := mapValue(root.Content[0], key)
	if list == nil || list.Kind != yaml.SequenceNode {
		return nil
	}
	for i, item := range list.Content {
		if err := decode(item); err != nil {
			path := fmt.Sprintf("%s[%d]", key, i)
			if mapValue(item, sub) != nil {
				path += "." + sub
			}
			return fmt.Errorf("%s:%d: %s: %v", filename, idx.Line(path), path, err)
		}
	}
	return nil
}

// mapValue is the value of key in mapping m, or nil.
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
