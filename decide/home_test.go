package decide

import (
	"go/ast"
	"go/parser"
	"go/token"
	"slices"
	"testing"

	"github.com/llmprobe/llmprobe/internal/testkit"
)

// verdictFields are the fields that hold a verdict: a gate's, a burst's, a
// sweep step's, a regression's, an upgrade's, a comparison's and its
// metrics', an always-on window's.
var verdictFields = []string{"Verdict", "Passed", "Significant", "Regression", "Regressed", "Skipped"}

// notVerdicts are the folders whose fields of those names hold no
// verdict: an answer's checks (quality, prober: did this answer pass?)
// are a measurement, which the quality gate judges here; internal/ holds
// test fixtures; the rest are tools and the simulated engine.
var notVerdicts = []string{"quality", "prober", "sim", "bench", "deploy", "dashboards", "alerts", "internal", "report/internal"}

// Every verdict comes from this package: outside it, a field that holds a
// verdict is set only from a call of a decide function or copied from
// another value, never from a rule written in place (a comparison, a
// negation, a literal, a verdict constant).
func TestEveryVerdictComesFromDecide(t *testing.T) {
	testkit.GoFiles(t, "..", append([]string{"decide"}, notVerdicts...), false, func(_ string, fset *token.FileSet, f *ast.File) {
		check := func(field string, rhs ast.Expr, at token.Pos) {
			if slices.Contains(verdictFields, field) && !fromDecide(rhs) {
				t.Errorf("%s: %s is set by a rule of its own, not by package decide", fset.Position(at), field)
			}
		}
		ast.Inspect(f, func(n ast.Node) bool {
			switch n := n.(type) {
			case *ast.AssignStmt:
				if len(n.Lhs) != len(n.Rhs) {
					return true
				}
				for i, l := range n.Lhs {
					if s, ok := l.(*ast.SelectorExpr); ok {
						check(s.Sel.Name, n.Rhs[i], n.Pos())
					}
				}
			case *ast.KeyValueExpr:
				if k, ok := n.Key.(*ast.Ident); ok {
					check(k.Name, n.Value, n.Pos())
				}
			}
			return true
		})
	})
}

// fromDecide reports whether e takes a verdict that was decided elsewhere:
// a call into package decide, or a copy of another value.
func fromDecide(e ast.Expr) bool {
	switch e := e.(type) {
	case *ast.CallExpr:
		if s, ok := e.Fun.(*ast.SelectorExpr); ok {
			if id, ok := s.X.(*ast.Ident); ok && id.Name == "decide" {
				return true
			}
		}
		return false
	case *ast.SelectorExpr:
		id, ok := e.X.(*ast.Ident)
		return !ok || id.Name != "decide" // a field, not a verdict constant
	case *ast.Ident:
		return e.Name != "true" && e.Name != "false"
	case *ast.IndexExpr, *ast.StarExpr:
		return true
	case *ast.ParenExpr:
		return fromDecide(e.X)
	case *ast.UnaryExpr: // a decided verdict turned round: passed is not regressed
		return e.Op == token.NOT && fromDecide(e.X) && isCall(e.X)
	}
	return false
}

func isCall(e ast.Expr) bool { _, ok := e.(*ast.CallExpr); return ok }

// The check tells a decided verdict from a rule written in place.
func TestFromDecide(t *testing.T) {
	for src, want := range map[string]bool{
		"decide.BurstPassed(a, n, s, h, g)": true,
		"!decide.Significant(p)":            true,
		"merged.Passed":                     true,
		"o.Word":                            true,
		"v >= target":                       false,
		"true":                              false,
		"decide.Worse":                      false,
		"!r.Aborted":                        false,
		"allPassed(gates)":                  false,
	} {
		e, err := parser.ParseExpr(src)
		if err != nil {
			t.Fatal(err)
		}
		if got := fromDecide(e); got != want {
			t.Errorf("fromDecide(%s) = %v, want %v", src, got, want)
		}
	}
}
