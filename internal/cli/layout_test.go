package cli_test

import (
	"fmt"
	"go/ast"
	"go/parser"
	"go/token"
	"go/types"
	"os"
	"os/exec"
	"path/filepath"
	"reflect"
	"regexp"
	"runtime"
	"slices"
	"strconv"
	"strings"
	"testing"

	"github.com/dupctl/dupctl/internal/cli"
	"github.com/dupctl/dupctl/internal/cli/cmdutil"
	"github.com/dupctl/dupctl/internal/platform/iostreams"
	"github.com/dupctl/dupctl/internal/platform/text"
	"github.com/spf13/cobra"
)

const module = "github.com/dupctl/dupctl/"

// forbiddenInCapabilities are the command line's and the terminal's
// packages: a capability returns data, findings and typed errors, and
// internal/cli decides flags, exit codes and rendering.
var forbiddenInCapabilities = []string{
	"github.com/spf13/cobra",
	"github.com/spf13/pflag",
	"github.com/charmbracelet/lipgloss",
	"github.com/olekukonko/tablewriter",
	"github.com/muesli/termenv",
	module + "internal/platform/iostreams",
	module + "internal/platform/exitcode",
	module + "internal/platform/report",
}

// pendingCapabilities still import what they should not; each is named
// with what it imports, and leaves this list when it is moved over.
var pendingCapabilities = map[string]string{}

// TestLayoutCapabilitiesKnowNothingOfTheCLI runs go list -deps on every package
// outside internal/cli and internal/platform and fails when one depends,
// even indirectly, on cobra, pflag, a terminal renderer, iostreams or the
// exit codes.
func TestLayoutCapabilitiesKnowNothingOfTheCLI(t *testing.T) {
	if _, err := exec.LookPath("go"); err != nil {
		t.Skip("no go command")
	}
	out, err := exec.Command("go", "list", "-f", `{{.ImportPath}}{{range .Deps}} {{.}}{{end}}`, module+"internal/...").Output()
	if err != nil {
		t.Fatalf("go list: %v", err)
	}
	checked := 0
	for _, line := range strings.Split(strings.TrimSpace(string(out)), "\n") {
		fields := strings.Fields(line)
		pkg, deps := strings.TrimPrefix(fields[0], module), fields[1:]
		if !isCapability(pkg) {
			continue
		}
		checked++
		var bad []string
		for _, d := range deps {
			if slices.Contains(forbiddenInCapabilities, d) {
				bad = append(bad, strings.TrimPrefix(d, module))
			}
		}
		_, pending := pendingCapabilities[pkg]
		switch {
		case len(bad) > 0 && !pending:
			t.Errorf("%s depends on %s: capabilities return data and typed errors (platform/problem); "+
				"rendering and exit codes belong to internal/cli", pkg, strings.Join(bad, ", "))
		case len(bad) == 0 && pending:
			t.Errorf("%s no longer depends on the CLI: remove it from pendingCapabilities", pkg)
		}
	}
	if checked < 10 {
		t.Fatalf("only %d capability packages found: the listing is broken", checked)
	}
}

func isCapability(pkg string) bool {
	if !strings.HasPrefix(pkg, "internal/") || strings.HasPrefix(pkg, "internal/cli") || strings.HasPrefix(pkg, "internal/platform/") {
		return false
	}
	return pkg != "internal/testenv"
}

// TestLayoutVerbsLiveWhereTheirNameSays checks that `dupctl NOUN VERB` is built
// in internal/cli/NOUN/VERB.go and a command without subcommands
// (`dupctl doctor`) in internal/cli/NAME.go or internal/cli/NAME/NAME.go:
// a newcomer finds a command's code in one hop.
func TestLayoutVerbsLiveWhereTheirNameSays(t *testing.T) {
	ios, _, _, _ := iostreams.Test()
	root := cli.NewCmdRoot(cmdutil.NewFactory(ios))
	// generated holds commands made from data in one file: the simulator's
	// scenarios are one verb each, built by scenario.go.
	generated := map[string]string{}
	for _, c := range root.Commands() {
		if c.Name() == "simulate" {
			for _, s := range c.Commands() {
				generated["simulate "+s.Name()] = "simulate/scenario.go"
			}
		}
	}
	for _, name := range []string{"simulate matrix", "simulate replay", "simulate risk"} {
		delete(generated, name)
	}
	var walk func(c *cobra.Command, path []string)
	n := 0
	walk = func(c *cobra.Command, path []string) {
		for _, sub := range c.Commands() {
			if sub.Name() == "help" || sub.Name() == "completion" ||
				!sub.IsAvailableCommand() && !sub.IsAdditionalHelpTopicCommand() && sub.RunE == nil {
				continue
			}
			p := append(slices.Clone(path), sub.Name())
			walk(sub, p)
			if sub.RunE == nil || sub.HasSubCommands() {
				continue
			}
			n++
			file := definedIn(t, sub.RunE)
			var want []string
			switch {
			case generated[strings.Join(p, " ")] != "":
				want = []string{generated[strings.Join(p, " ")]}
			case len(p) == 1:
				want = []string{p[0] + ".go", p[0] + "/" + p[0] + ".go"}
			default:
				want = []string{strings.Join(p, "/") + ".go"}
			}
			if !slices.Contains(want, file) {
				t.Errorf("dupctl %s is built in internal/cli/%s, want internal/cli/%s",
					strings.Join(p, " "), file, strings.Join(want, " or internal/cli/"))
			}
		}
	}
	walk(root, nil)
	if n < 15 {
		t.Fatalf("only %d commands walked", n)
	}
}

// definedIn is the file, relative to internal/cli, of the function that
// built a command's RunE.
func definedIn(t *testing.T, fn any) string {
	pc := reflect.ValueOf(fn).Pointer()
	f := runtime.FuncForPC(pc)
	if f == nil {
		t.Fatal("no function for RunE")
	}
	file, _ := f.FileLine(pc)
	i := strings.LastIndex(file, "/internal/cli/")
	if i < 0 {
		t.Fatalf("RunE defined outside internal/cli: %s", file)
	}
	return filepath.ToSlash(file[i+len("/internal/cli/"):])
}

// flagLiteral is a flag's name in a string: --key-column.
var flagLiteral = regexp.MustCompile(`--[a-z]`)

// quotedCommands are the only flag names a capability may write: each is
// part of a whole command line shown to the user to run (another tool's,
// or another dupctl command's), not an option of the call that wrote it.
// An entry that matches no string fails the test, so the list only shrinks.
var quotedCommands = map[string][]string{
	"internal/audit/cache/rules.go":    {"redis-cli --scan --pattern"},
	"internal/doctor/checks.go":        {"dupctl simulate crash --worker"},
	"internal/logs/notread.go":         {"dupctl audit logs --explain-mapping"},
	"internal/logs/rules.go":           {"dupctl audit logs --explain-mapping"},
	"internal/replay/dlqread/stats.go": {"dupctl dlq replay --queue %s --group"},
	"internal/replay/rules.go":         {"dupctl dlq peek --queue", "dupctl dlq stats --queue"},
	"internal/sim/chaos/effectslog.go": {"dupctl audit logs --explain-mapping"},
	"internal/sim/report.go":           {"dupctl simulate %s --profile"},
	"internal/sim/rules.go":            {"dupctl simulate <scenario> --profile"},
}

// TestLayoutCapabilitiesNameNoFlags walks the string literals of every
// capability package (not its tests, not comments) and fails on a flag
// name: a capability names an option by its Options field ({KeyColumn}),
// and internal/cli words it as the flag (cmdutil.Describe, WordReport),
// doctor as the dupctl.yaml key the value came from.
func TestLayoutCapabilitiesNameNoFlags(t *testing.T) {
	used := map[string]int{}
	files := 0
	err := filepath.WalkDir("../../internal", func(path string, d os.DirEntry, err error) error {
		if err != nil {
			return err
		}
		rel := strings.TrimPrefix(filepath.ToSlash(path), "../../")
		if d.IsDir() {
			if d.Name() == "testdata" || rel != "internal" && !isCapability(rel) {
				return filepath.SkipDir
			}
			return nil
		}
		if !strings.HasSuffix(rel, ".go") || strings.HasSuffix(rel, "_test.go") || !isCapability(filepath.ToSlash(filepath.Dir(rel))) {
			return nil
		}
		files++
		fset := token.NewFileSet()
		f, err := parser.ParseFile(fset, path, nil, parser.SkipObjectResolution)
		if err != nil {
			return err
		}
		ast.Inspect(f, func(n ast.Node) bool {
			lit, ok := n.(*ast.BasicLit)
			if !ok || lit.Kind != token.STRING {
				return true
			}
			s := lit.Value
			for i, q := range quotedCommands[rel] {
				if strings.Contains(s, q) {
					used[rel+"\x00"+strconv.Itoa(i)]++
					s = strings.ReplaceAll(s, q, "")
				}
			}
			if flagLiteral.MatchString(s) {
				t.Errorf("%s: %s names a flag: write the Options field as {Field} (problem.Inputf) and let internal/cli name it",
					fset.Position(lit.Pos()), text.Clip(lit.Value, 100, "..."))
			}
			return true
		})
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	if files < 100 {
		t.Fatalf("only %d capability files walked", files)
	}
	for file, qs := range quotedCommands {
		for i, q := range qs {
			if used[file+"\x00"+strconv.Itoa(i)] == 0 {
				t.Errorf("quotedCommands: %s no longer quotes %q: remove it", file, q)
			}
		}
	}
}

// sharedPackages are what a capability may import besides its own
// packages: each is one concept several capabilities speak of, kept in one
// place (CONTRIBUTING.md, "Shared packages"). A shared package imports no
// capability.
var sharedPackages = []string{
	"internal/platform",   // findings, problem, connect, redact, config, english, text, ...
	"internal/cause",      // why a side effect ran twice: causes, precedence, evidence
	"internal/deadletter", // a dead letter and its export record (dupctl-dlq/1)
	"internal/worker",     // the safe consumer flow, its profiles and one Op interpreter
	"internal/logs",       // the streaming log reader and its mapping
	"internal/idemtable",  // an idempotency table: name, columns, status roles
	"internal/testenv",    // services and fixtures for tests
}

// composers run other capabilities whole, and are run by nothing but the
// command line.
var composers = map[string]string{
	"internal/doctor": "the production checklist runs every capability on dupctl.yaml's jobs",
}

// cliWiring is, for each package of internal/cli below the root, the
// capabilities it may compile: its own noun's, and those it wires together.
// cmdutil compiles none, so that a noun does not compile every capability;
// the root and internal/cli/catalog, which assembles the rule catalogue,
// compile them all.
var cliWiring = map[string][]string{
	"internal/cli/cmdutil":  {},
	"internal/cli/audit":    {"internal/audit/cache", "internal/audit/logs"},
	"internal/cli/inspect":  {"internal/inspect/lock", "internal/inspect/store", "internal/inspect/ttl", "internal/sim"}, // ttl --simulate
	"internal/cli/keys":     {"internal/keys"},
	"internal/cli/dlq":      {"internal/replay"},
	"internal/cli/simulate": {"internal/sim"},
	"internal/cli/doctor":   {"internal/doctor", "*"},
	"internal/cli/watch": {"internal/watch", "internal/inspect/lock", "internal/inspect/store", "internal/audit/cache",
		"internal/audit/logs", "internal/replay"}, // the checks and the follow watch runs
}

func isShared(pkg string) bool {
	for _, s := range sharedPackages {
		if pkg == s || strings.HasPrefix(pkg, s+"/") {
			return true
		}
	}
	return false
}

// capabilityOf is the capability a package belongs to: internal/<name>,
// or internal/<noun>/<verb> under the folders that only group verbs.
func capabilityOf(pkg string) string {
	parts := strings.Split(pkg, "/")
	n := 2
	if parts[1] == "inspect" || parts[1] == "audit" {
		n = 3
	}
	return strings.Join(parts[:min(n, len(parts))], "/")
}

// goListDeps maps every package under internal/ to its dependencies in
// this module, both relative to the module.
func goListDeps(t *testing.T) map[string][]string {
	t.Helper()
	if _, err := exec.LookPath("go"); err != nil {
		t.Skip("no go command")
	}
	out, err := exec.Command("go", "list", "-f", `{{.ImportPath}}{{range .Deps}} {{.}}{{end}}`, module+"internal/...").Output()
	if err != nil {
		t.Fatalf("go list: %v", err)
	}
	deps := map[string][]string{}
	for _, line := range strings.Split(strings.TrimSpace(string(out)), "\n") {
		fields := strings.Fields(line)
		pkg := strings.TrimPrefix(fields[0], module)
		deps[pkg] = []string{}
		for _, d := range fields[1:] {
			if strings.HasPrefix(d, module) {
				deps[pkg] = append(deps[pkg], strings.TrimPrefix(d, module))
			}
		}
	}
	return deps
}

// TestLayoutNoSidewaysImports fails when a capability depends (even
// indirectly) on another capability instead of a shared package, when a
// shared package depends on a capability, and when a package of
// internal/cli compiles capabilities it does not wire (cliWiring).
func TestLayoutNoSidewaysImports(t *testing.T) {
	all := goListDeps(t)
	checked := 0
	for pkg, deps := range all {
		switch {
		case strings.HasPrefix(pkg, "internal/cli"):
			continue
		case isShared(pkg):
			for _, d := range deps {
				if isCapability(d) && !isShared(d) {
					t.Errorf("shared package %s depends on capability %s: a shared concept knows no capability", pkg, d)
				}
			}
		case isCapability(pkg):
			checked++
			own := capabilityOf(pkg)
			if _, ok := composers[own]; ok {
				continue
			}
			for _, d := range deps {
				if isCapability(d) && !isShared(d) && capabilityOf(d) != own {
					t.Errorf("%s depends on %s: a capability imports no other capability; move what both need to a shared package "+
						"(sharedPackages) or let internal/cli wire them", pkg, d)
				}
			}
		}
	}
	if checked < 20 {
		t.Fatalf("only %d capability packages checked", checked)
	}
	for cli, allowed := range cliWiring {
		deps, ok := all[cli]
		if !ok {
			t.Errorf("cliWiring names %s, which does not exist", cli)
			continue
		}
		used := map[string]bool{}
		for _, d := range deps {
			if !isCapability(d) || isShared(d) {
				continue
			}
			c := capabilityOf(d)
			used[c] = true
			if !slices.Contains(allowed, c) && !slices.Contains(allowed, "*") {
				t.Errorf("%s compiles %s (through %s): a noun compiles its own capabilities and those it wires (cliWiring)", cli, c, d)
			}
		}
		for _, c := range allowed {
			if c != "*" && !used[c] {
				t.Errorf("cliWiring: %s no longer compiles %s: remove it", cli, c)
			}
		}
	}
	for pkg := range all {
		if strings.HasPrefix(pkg, "internal/cli/") && strings.Count(pkg, "/") == 2 && pkg != "internal/cli/catalog" {
			if _, ok := cliWiring[pkg]; !ok {
				t.Errorf("%s is not in cliWiring: say which capabilities it compiles", pkg)
			}
		}
	}
}

// capabilityVerbs are the entry points internal/cli calls, per capability
// package: Run, or the verbs a package with several names.
var capabilityVerbs = map[string][]string{
	"internal/audit/cache":    {"Run"},
	"internal/audit/logs":     {"Run", "Follow"},
	"internal/doctor":         {"Run"},
	"internal/inspect/lock":   {"Run"},
	"internal/inspect/store":  {"Run"},
	"internal/inspect/ttl":    {"Run"},
	"internal/keys":           {"Run"},
	"internal/replay":         {"Replay"},
	"internal/replay/dlqread": {"Stats", "Peek", "Export"},
	"internal/sim":            {"Run", "Matrix", "Replay", "Play", "Risk"},
	"internal/sim/chaos":      {"Run", "ProveJob"},
	"internal/sim/live":       {"Run", "Scenario"},
	"internal/watch":          {"Run"},
}

// pendingContracts are entry points that do not keep the contract yet,
// each with why; an entry that keeps it fails the test, so the list only
// shrinks.
var pendingContracts = map[string]string{}

// TestLayoutCapabilityContract checks each entry point's shape:
// Verb(ctx context.Context, [deps,] o XOptions) (*XResult, error), where
// the result has Report() *findings.Report.
func TestLayoutCapabilityContract(t *testing.T) {
	seen := map[string]bool{}
	for pkg, verbs := range capabilityVerbs {
		fset := token.NewFileSet()
		notTest := func(fi os.FileInfo) bool { return !strings.HasSuffix(fi.Name(), "_test.go") }
		pkgs, err := parser.ParseDir(fset, "../../"+pkg, notTest, parser.SkipObjectResolution)
		if err != nil {
			t.Fatal(err)
		}
		funcs, reports := map[string]*ast.FuncDecl{}, map[string]string{}
		for _, p := range pkgs {
			for _, f := range p.Files {
				for _, d := range f.Decls {
					fd, ok := d.(*ast.FuncDecl)
					switch {
					case !ok:
					case fd.Recv == nil:
						funcs[fd.Name.Name] = fd
					case fd.Name.Name == "Report" && len(fd.Type.Params.List) == 0 && fd.Type.Results != nil:
						recv := strings.TrimPrefix(types.ExprString(fd.Recv.List[0].Type), "*")
						reports[recv] = types.ExprString(fd.Type.Results.List[0].Type)
					}
				}
			}
		}
		for _, verb := range verbs {
			name := pkg + "." + verb
			seen[name] = true
			fd, ok := funcs[verb]
			if !ok {
				t.Errorf("%s: no such function", name)
				continue
			}
			why := contractProblem(fd, reports)
			_, pending := pendingContracts[name]
			switch {
			case why != "" && !pending:
				t.Errorf("%s: %s: a capability's entry point is Verb(ctx, [deps,] Options) (*Result, error) "+
					"with (*Result).Report() *findings.Report", name, why)
			case why == "" && pending:
				t.Errorf("%s keeps the contract now: remove it from pendingContracts", name)
			}
		}
	}
	for name := range pendingContracts {
		if !seen[name] {
			t.Errorf("pendingContracts names %s, which capabilityVerbs does not", name)
		}
	}
}

// contractProblem says how fd's signature breaks the contract, or "".
func contractProblem(fd *ast.FuncDecl, reports map[string]string) string {
	var params []string
	for _, f := range fd.Type.Params.List {
		for range max(len(f.Names), 1) {
			params = append(params, types.ExprString(f.Type))
		}
	}
	switch {
	case len(params) == 0 || params[0] != "context.Context":
		return "the context is not its first parameter"
	case len(params) < 2 || !strings.HasSuffix(params[len(params)-1], "Options"):
		return "its last parameter is not its Options"
	case len(params) > 3:
		return fmt.Sprintf("%d parameters: its dependencies are one Deps", len(params))
	}
	res := fd.Type.Results
	if res == nil || res.NumFields() != 2 || types.ExprString(res.List[len(res.List)-1].Type) != "error" {
		return "it does not return (*Result, error)"
	}
	star, ok := res.List[0].Type.(*ast.StarExpr)
	if !ok {
		return "its result is not a pointer"
	}
	result := types.ExprString(star.X)
	if reports[result] != "*findings.Report" {
		return result + " has no Report() *findings.Report"
	}
	return ""
}
