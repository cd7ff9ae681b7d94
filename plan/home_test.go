package plan

import (
	"go/ast"
	"go/parser"
	"go/token"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/llmprobe/llmprobe/internal/testkit"
)

// runners are the folders whose code runs what was planned: they take the
// compiled plan, never a burst's configuration.
var runners = []string{"burst", "canary", "compare", "app", "cmd"}

// planning are the burst fields that make its rates and its planned
// requests: only the compiler (this package) and the configuration's own
// validation read them.
var planning = []string{"Arrival.Rate", "Sweep.Rates", "Auto.Start", "Auto.Step", "Auto.Max", "Warmup.Requests", "Warmup.Duration"}

// compileEntries are this package's exported functions that take a burst's
// configuration: they compile it.
var compileEntries = []string{"CompileBurst", "BurstOf"}

// Only the compiler computes a burst's rates and planned requests, and the
// runners take what it compiled: no exported function here but the
// compile's entries takes a config.Burst, no runner's function takes one,
// and no code outside this package and config reads the fields that make
// rates and counts.
func TestOnlyTheCompilerPlans(t *testing.T) {
	testkit.GoFiles(t, "..", []string{"deploy", "bench"}, false, func(rel string, fset *token.FileSet, f *ast.File) {
		dir := filepath.ToSlash(filepath.Dir(rel))
		top := strings.Split(dir, "/")[0]
		here := dir == "plan"
		ast.Inspect(f, func(n ast.Node) bool {
			switch n := n.(type) {
			case *ast.FuncDecl:
				takes := takesBurstConfig(n.Type)
				switch {
				case here && takes && n.Name.IsExported() && !slices.Contains(compileEntries, n.Name.Name):
					t.Errorf("%s: plan.%s takes a config.Burst: the compiled Burst is the runners' input", fset.Position(n.Pos()), n.Name.Name)
				case slices.Contains(runners, top) && takes:
					t.Errorf("%s: %s takes a config.Burst: a runner takes the compiled plan", fset.Position(n.Pos()), n.Name.Name)
				}
			case *ast.SelectorExpr:
				if !here && dir != "config" && slices.Contains(planning, selectorTail(n)) {
					t.Errorf("%s: reads %s, which only the compiler plans with", fset.Position(n.Pos()), selectorTail(n))
				}
			}
			return true
		})
	})
}

// takesBurstConfig reports whether a function's parameters include a
// config.Burst (or a pointer or slice of them).
func takesBurstConfig(ft *ast.FuncType) bool {
	for _, p := range ft.Params.List {
		t := p.Type
		for {
			switch x := t.(type) {
			case *ast.StarExpr:
				t = x.X
				continue
			case *ast.ArrayType:
				t = x.Elt
				continue
			}
			break
		}
		if s, ok := t.(*ast.SelectorExpr); ok {
			if id, ok := s.X.(*ast.Ident); ok && id.Name == "config" && s.Sel.Name == "Burst" {
				return true
			}
		}
	}
	return false
}

// selectorTail is a selector's last two names, like "Arrival.Rate".
func selectorTail(s *ast.SelectorExpr) string {
	switch x := s.X.(type) {
	case *ast.SelectorExpr:
		return x.Sel.Name + "." + s.Sel.Name
	case *ast.Ident:
		return x.Name + "." + s.Sel.Name
	}
	return ""
}

// The check tells a burst's configuration from its compiled form.
func TestTakesBurstConfig(t *testing.T) {
	for src, want := range map[string]bool{
		"package p; func f(b config.Burst)":           true,
		"package p; func f(a int, bs []config.Burst)": true,
		"package p; func f(b *config.Burst)":          true,
		"package p; func f(b *plan.Burst)":            false,
		"package p; func f(s config.Scenario, r int)": false,
	} {
		f, err := parser.ParseFile(token.NewFileSet(), "x.go", src, 0)
		if err != nil {
			t.Fatal(err)
		}
		if got := takesBurstConfig(f.Decls[0].(*ast.FuncDecl).Type); got != want {
			t.Errorf("%s: %v, want %v", src, got, want)
		}
	}
	e, _ := parser.ParseExpr("b.Arrival.Rate")
	if got := selectorTail(e.(*ast.SelectorExpr)); got != "Arrival.Rate" {
		t.Errorf("selectorTail(b.Arrival.Rate) = %q", got)
	}
}
