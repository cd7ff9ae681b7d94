package main

import (
	"bufio"
	"go/ast"
	"go/token"
	"os"
	"path"
	"path/filepath"
	"regexp"
	"slices"
	"strconv"
	"strings"
	"testing"

	"github.com/llmprobe/llmprobe/internal/testkit"
)

const module = "github.com/llmprobe/llmprobe"

// Packages outside the README's layout: they sit beside the daemon, not in
// its tiers, and only the tools under them import them.
var besideLayout = []string{"alerts", "dashboards", "bench", "deploy", "examples", "tracing/otelcol"}

// The tiers, as the README's tables head them.
const (
	tierApplication = "Application"
	tierDomain      = "Domain"
	tierLibrary     = "Library"
	tierSupport     = "Test support"
)

// tierOf is the tier a package's folder puts it in.
func tierOf(pkg string) string {
	switch top := strings.Split(pkg, "/")[0]; top {
	case "cmd", "app":
		return tierApplication
	case "lib":
		return tierLibrary
	case "internal":
		return tierSupport
	}
	return tierDomain
}

// The README's layout tables list every package of the daemon, each table
// its tier's, each package above the packages it imports: the tables are
// the import graph. Test support, which only tests import, is listed
// beside the tiers.
func TestReadmeLayoutIsTheImportGraph(t *testing.T) {
	root := filepath.Join("..", "..")
	tables := readmeLayout(t, filepath.Join(root, "README.md"))
	rank, tierListed := map[string]int{}, map[string]string{}
	for _, tier := range []string{tierApplication, tierDomain, tierLibrary, tierSupport} {
		for _, p := range tables[tier] {
			if _, dup := rank[p]; dup {
				t.Errorf("README layout lists %s twice", p)
			}
			rank[p], tierListed[p] = len(rank), tier
		}
	}
	graph := importGraph(t, root, false)
	for pkg := range graph {
		switch tier, ok := tierListed[pkg]; {
		case !ok:
			t.Errorf("package %s is not in the README's layout tables", pkg)
		case tier != tierOf(pkg):
			t.Errorf("the README lists %s under %s; its folder puts it in %s", pkg, tier, tierOf(pkg))
		}
	}
	for p := range rank {
		if _, ok := graph[p]; !ok {
			t.Errorf("README layout lists %s, which is no package of the module", p)
		}
	}
	for pkg, deps := range graph {
		for _, dep := range deps {
			if tierOf(pkg) != tierSupport && rank[pkg] >= rank[dep] {
				t.Errorf("%s imports %s, which the README lists above it: imports point down the tables", pkg, dep)
			}
		}
	}
}

// readmeLayout is the first column of each table under the README's
// "Layout" paragraph, by the tier the paragraph before the table names.
func readmeLayout(t *testing.T, file string) map[string][]string {
	t.Helper()
	f, err := os.Open(file)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	row := regexp.MustCompile("^\\| `([a-z0-9/]+)` \\|")
	out := map[string][]string{}
	in, tier := false, ""
	for sc := bufio.NewScanner(f); sc.Scan(); {
		line := sc.Text()
		switch {
		case strings.HasPrefix(line, "Layout"):
			in = true
		case !in:
		case strings.HasPrefix(line, "## ") || strings.HasPrefix(line, "Also "):
			return out
		case strings.HasPrefix(line, "|"):
			if m := row.FindStringSubmatch(line); m != nil {
				out[tier] = append(out[tier], m[1])
			}
		case line != "":
			for _, name := range []string{tierApplication, tierDomain, tierLibrary, tierSupport} {
				if strings.HasPrefix(line, name+" (") {
					tier = name
				}
			}
		}
	}
	if len(out) == 0 {
		t.Fatal("README.md has no layout tables after a line starting \"Layout\"")
	}
	return out
}

// The rules the tiers keep, read from the code itself.
func TestLayoutRules(t *testing.T) {
	root := filepath.Join("..", "..")
	graph, tested := importGraph(t, root, false), importGraph(t, root, true)
	for pkg, deps := range graph {
		for _, dep := range deps {
			switch {
			case tierOf(pkg) == tierLibrary:
				t.Errorf("library %s imports %s: a library imports nothing of ours", pkg, dep)
			case tierOf(dep) == tierSupport && tierOf(pkg) != tierSupport:
				t.Errorf("%s imports test support %s outside its tests", pkg, dep)
			case tierOf(pkg) == tierDomain && tierOf(dep) == tierApplication:
				t.Errorf("%s imports %s: the domain imports no application package", pkg, dep)
			}
		}
	}
	for pkg := range tested {
		if _, ok := graph[pkg]; !ok && tierOf(pkg) != tierSupport {
			t.Errorf("%s holds only tests", pkg)
		}
	}
	checkNesting(t, graph)
	testkit.GoFiles(t, root, []string{"deploy/kubernetes/test", "tracing/otelcol"}, false, func(file string, fset *token.FileSet, f *ast.File) {
		if ast.IsGenerated(f) {
			return
		}
		checkSizes(t, file, fset, f)
		checkAliases(t, file, f)
	})
}

// checkNesting holds every tree to one meaning of nesting: a package's
// children are all its parts (it may import them, they never import it)
// or all its extensions (they import it, it imports none of them), as
// net/http/httptest extends net/http.
func checkNesting(t *testing.T, graph map[string][]string) {
	t.Helper()
	children := map[string][]string{}
	for pkg := range graph {
		for dir := path.Dir(pkg); dir != "."; dir = path.Dir(dir) {
			if _, ok := graph[dir]; ok {
				children[dir] = append(children[dir], pkg)
				break
			}
		}
	}
	imports := func(a, b string) bool { return slices.Contains(graph[a], b) }
	for parent, kids := range children {
		var parts, extensions []string
		for _, kid := range kids {
			if imports(kid, parent) {
				extensions = append(extensions, kid)
				if imports(parent, kid) {
					t.Errorf("%s and %s import each other", parent, kid)
				}
			} else {
				parts = append(parts, kid)
			}
		}
		if len(parts) > 0 && len(extensions) > 0 {
			slices.Sort(parts)
			slices.Sort(extensions)
			t.Errorf("%s nests parts %v beside extensions %v: nesting means one thing in a tree", parent, parts, extensions)
		}
	}
}

// Bounds on a file and a function: a file is a room of one idea, a
// function reads top to bottom.
const (
	maxFileLines = 600
	maxFuncLines = 80
)

// checkSizes holds a file outside bench/ to maxFileLines and each of its
// functions to maxFuncLines.
func checkSizes(t *testing.T, file string, fset *token.FileSet, f *ast.File) {
	t.Helper()
	if n := fset.File(f.Pos()).LineCount(); n > maxFileLines && !strings.HasPrefix(file, "bench/") {
		t.Errorf("%s has %d lines, past %d", file, n, maxFileLines)
	}
	for _, d := range f.Decls {
		if fd, ok := d.(*ast.FuncDecl); ok {
			if n := fset.Position(fd.End()).Line - fset.Position(fd.Pos()).Line + 1; n > maxFuncLines {
				t.Errorf("%s: %s has %d lines, past %d", file, fd.Name.Name, n, maxFuncLines)
			}
		}
	}
}

// checkAliases refuses a type alias of another package's type: a type has
// one home, and its users import it from there.
func checkAliases(t *testing.T, file string, f *ast.File) {
	t.Helper()
	ours := map[string]bool{}
	for _, im := range f.Imports {
		p, _ := strconv.Unquote(im.Path.Value)
		if strings.HasPrefix(p, module+"/") {
			name := path.Base(p)
			if im.Name != nil {
				name = im.Name.Name
			}
			ours[name] = true
		}
	}
	for _, d := range f.Decls {
		g, ok := d.(*ast.GenDecl)
		if !ok || g.Tok != token.TYPE {
			continue
		}
		for _, s := range g.Specs {
			ts := s.(*ast.TypeSpec)
			if sel, ok := ts.Type.(*ast.SelectorExpr); ok && ts.Assign.IsValid() {
				if id, ok := sel.X.(*ast.Ident); ok && ours[id.Name] {
					t.Errorf("%s: type %s = %s.%s re-exports another package's type", file, ts.Name.Name, id.Name, sel.Sel.Name)
				}
			}
		}
	}
}

// importGraph maps each package directory of the daemon (not the tools
// beside it) to the packages of the module it imports: from its code, or
// with tests from its test files alone.
func importGraph(t *testing.T, root string, tests bool) map[string][]string {
	t.Helper()
	graph := map[string][]string{}
	testkit.GoFiles(t, root, besideLayout, tests, func(rel string, _ *token.FileSet, f *ast.File) {
		pkg := path.Dir(rel)
		deps := graph[pkg]
		for _, imp := range f.Imports {
			dep := strings.Trim(imp.Path.Value, `"`)
			if dep, ok := strings.CutPrefix(dep, module+"/"); ok && !slices.Contains(deps, dep) && dep != pkg {
				deps = append(deps, dep)
			}
		}
		graph[pkg] = deps
	})
	return graph
}
