package main

import (
	"bufio"
	"go/parser"
	"go/token"
	"io/fs"
	"os"
	"path"
	"path/filepath"
	"regexp"
	"slices"
	"strings"
	"testing"
)

const module = "github.com/llmprobe/llmprobe"

// Packages outside the README's layout: they sit beside the daemon, not in
// its layers, and only the tools under them import them.
var besideLayout = []string{"alerts", "dashboards", "bench", "deploy", "examples"}

// The README's layout table lists every package of the daemon, each above
// the packages it imports: the diagram is the import graph.
func TestReadmeLayoutIsTheImportGraph(t *testing.T) {
	root := filepath.Join("..", "..")
	order := readmeLayout(t, filepath.Join(root, "README.md"))
	rank := map[string]int{}
	for i, p := range order {
		if _, dup := rank[p]; dup {
			t.Errorf("README layout lists %s twice", p)
		}
		rank[p] = i
	}
	imports := importGraph(t, root)
	for pkg := range imports {
		if _, ok := rank[pkg]; !ok {
			t.Errorf("package %s is not in the README's layout table", pkg)
		}
	}
	for _, p := range order {
		if _, ok := imports[p]; !ok {
			t.Errorf("README layout lists %s, which is no package of the module", p)
		}
	}
	for pkg, deps := range imports {
		for _, dep := range deps {
			if a, b := rank[pkg], rank[dep]; a >= b {
				t.Errorf("%s imports %s, which the README lists above it: imports point down the list", pkg, dep)
			}
		}
	}
}

// readmeLayout is the first column of the table under the README's
// "Layout" paragraph, in order.
func readmeLayout(t *testing.T, file string) []string {
	t.Helper()
	f, err := os.Open(file)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	row := regexp.MustCompile("^\\| `([a-z0-9/]+)` \\|")
	var out []string
	in := false
	for sc := bufio.NewScanner(f); sc.Scan(); {
		line := sc.Text()
		switch {
		case strings.HasPrefix(line, "Layout ("):
			in = true
		case in && strings.HasPrefix(line, "|"):
			if m := row.FindStringSubmatch(line); m != nil {
				out = append(out, m[1])
			}
		case in && len(out) > 0 && strings.TrimSpace(line) == "":
			return out
		}
	}
	if len(out) == 0 {
		t.Fatal("README.md has no layout table after a line starting \"Layout (\"")
	}
	return out
}

// importGraph maps each package directory of the daemon (not its tests,
// not the tools beside it) to the packages of the module it imports.
func importGraph(t *testing.T, root string) map[string][]string {
	t.Helper()
	graph := map[string][]string{}
	err := filepath.WalkDir(root, func(p string, d fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		rel, _ := filepath.Rel(root, p)
		rel = filepath.ToSlash(rel)
		if d.IsDir() {
			if name := d.Name(); name == "testdata" || (strings.HasPrefix(name, ".") && rel != ".") || slices.Contains(besideLayout, rel) {
				return filepath.SkipDir
			}
			return nil
		}
		if !strings.HasSuffix(p, ".go") || strings.HasSuffix(p, "_test.go") {
			return nil
		}
		f, err := parser.ParseFile(token.NewFileSet(), p, nil, parser.ImportsOnly)
		if err != nil {
			return err
		}
		pkg := path.Dir(rel)
		deps := graph[pkg]
		for _, imp := range f.Imports {
			dep := strings.Trim(imp.Path.Value, `"`)
			if dep, ok := strings.CutPrefix(dep, module+"/"); ok && !slices.Contains(deps, dep) {
				deps = append(deps, dep)
			}
		}
		graph[pkg] = deps
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	return graph
}
