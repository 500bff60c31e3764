package cli_test

import (
	"fmt"
	"go/ast"
	"go/parser"
	"go/token"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"unicode/utf8"
)

// The size limits: a function longer or more branched than this is split
// (a reader holds it in one screen), a line longer than this is wrapped.
const (
	maxFuncLines  = 80
	maxCyclomatic = 25
	maxLineChars  = 139
)

// TestLayoutSizeLimits walks every Go file of the module and fails on a
// function (outside tests) over maxFuncLines lines or of cyclomatic
// complexity over maxCyclomatic, and on a line over maxLineChars
// characters, outside the pending lists (size_pending_test.go), whose
// figures may only go down.
func TestLayoutSizeLimits(t *testing.T) {
	funcs := map[string]funcSize{}
	lines := map[string]int{}
	err := filepath.WalkDir("../..", func(path string, d os.DirEntry, err error) error {
		if err != nil {
			return err
		}
		rel := strings.TrimPrefix(filepath.ToSlash(path), "../../")
		if d.IsDir() {
			if strings.HasPrefix(d.Name(), ".") && rel != "../.." || d.Name() == "testdata" || d.Name() == "node_modules" {
				return filepath.SkipDir
			}
			return nil
		}
		if !strings.HasSuffix(rel, ".go") {
			return nil
		}
		src, err := os.ReadFile(path)
		if err != nil {
			return err
		}
		for _, l := range strings.Split(string(src), "\n") {
			if utf8.RuneCountInString(l) > maxLineChars {
				lines[rel]++
			}
		}
		if !strings.HasSuffix(rel, "_test.go") {
			return measureFuncs(rel, src, funcs)
		}
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	if len(funcs) < 1000 {
		t.Fatalf("only %d functions measured: the walk is broken", len(funcs))
	}
	for name, got := range funcs {
		over := got.lines > maxFuncLines || got.cyclo > maxCyclomatic
		was, pending := pendingFuncs[name]
		switch {
		case over && !pending:
			t.Errorf("%s: %d lines, cyclomatic %d: split it (at most %d lines, cyclomatic %d)",
				name, got.lines, got.cyclo, maxFuncLines, maxCyclomatic)
		case !over && pending:
			t.Errorf("%s is within the limits now (%d lines, cyclomatic %d): remove it from pendingFuncs", name, got.lines, got.cyclo)
		case pending && (got.lines > was.lines || got.cyclo > was.cyclo):
			t.Errorf("%s grew to %d lines, cyclomatic %d (pending at %d, %d): split it instead", name, got.lines, got.cyclo, was.lines, was.cyclo)
		}
	}
	for name := range pendingFuncs {
		if _, ok := funcs[name]; !ok {
			t.Errorf("pendingFuncs names %s, which no longer exists: remove it", name)
		}
	}
	for file, n := range lines {
		switch was, pending := pendingLongLines[file]; {
		case !pending:
			t.Errorf("%s: %d lines over %d characters: wrap them", file, n, maxLineChars)
		case n > was:
			t.Errorf("%s: %d lines over %d characters (pending at %d): wrap the new ones", file, n, maxLineChars, was)
		}
	}
	for file := range pendingLongLines {
		if lines[file] == 0 {
			t.Errorf("%s has no line over %d characters now: remove it from pendingLongLines", file, maxLineChars)
		}
	}
}

type funcSize struct{ lines, cyclo int }

// measureFuncs records each function declared in src as "file Func" or
// "file Type.Method"; function literals count toward the function they
// are written in.
func measureFuncs(rel string, src []byte, out map[string]funcSize) error {
	fset := token.NewFileSet()
	f, err := parser.ParseFile(fset, rel, src, parser.SkipObjectResolution)
	if err != nil {
		return err
	}
	for _, d := range f.Decls {
		fd, ok := d.(*ast.FuncDecl)
		if !ok || fd.Body == nil {
			continue
		}
		name := fd.Name.Name
		if fd.Recv != nil {
			name = recvName(fd.Recv.List[0].Type) + "." + name
		}
		key := fmt.Sprintf("%s %s", rel, name)
		if name == "init" {
			key += fmt.Sprintf("@%d", fset.Position(fd.Pos()).Line)
		}
		out[key] = funcSize{fset.Position(fd.End()).Line - fset.Position(fd.Pos()).Line + 1, cyclomatic(fd)}
	}
	return nil
}

func recvName(e ast.Expr) string {
	switch x := e.(type) {
	case *ast.StarExpr:
		return recvName(x.X)
	case *ast.IndexExpr:
		return recvName(x.X)
	case *ast.IndexListExpr:
		return recvName(x.X)
	case *ast.Ident:
		return x.Name
	}
	return "?"
}

// cyclomatic is gocyclo's count: 1, plus one per if, for, range, case
// (not default), select case (not default), && and ||.
func cyclomatic(fd *ast.FuncDecl) int {
	c := 1
	ast.Inspect(fd, func(n ast.Node) bool {
		switch x := n.(type) {
		case *ast.IfStmt, *ast.ForStmt, *ast.RangeStmt:
			c++
		case *ast.CaseClause:
			if x.List != nil {
				c++
			}
		case *ast.CommClause:
			if x.Comm != nil {
				c++
			}
		case *ast.BinaryExpr:
			if x.Op == token.LAND || x.Op == token.LOR {
				c++
			}
		}
		return true
	})
	return c
}
