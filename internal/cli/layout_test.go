package cli_test

import (
	"os/exec"
	"path/filepath"
	"reflect"
	"runtime"
	"slices"
	"strings"
	"testing"

	"github.com/dupctl/dupctl/internal/cli"
	"github.com/dupctl/dupctl/internal/cli/cmdutil"
	"github.com/dupctl/dupctl/internal/platform/iostreams"
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

// TestCapabilitiesKnowNothingOfTheCLI runs go list -deps on every package
// outside internal/cli and internal/platform and fails when one depends,
// even indirectly, on cobra, pflag, a terminal renderer, iostreams or the
// exit codes.
func TestCapabilitiesKnowNothingOfTheCLI(t *testing.T) {
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
			t.Errorf("%s depends on %s: capabilities return data and typed errors (platform/problem); rendering and exit codes belong to internal/cli", pkg, strings.Join(bad, ", "))
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

// TestVerbsLiveWhereTheirNameSays checks that `dupctl NOUN VERB` is built
// in internal/cli/NOUN/VERB.go and a command without subcommands
// (`dupctl doctor`) in internal/cli/NAME.go or internal/cli/NAME/NAME.go:
// a newcomer finds a command's code in one hop.
func TestVerbsLiveWhereTheirNameSays(t *testing.T) {
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
			if sub.Name() == "help" || sub.Name() == "completion" || !sub.IsAvailableCommand() && !sub.IsAdditionalHelpTopicCommand() && sub.RunE == nil {
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
				t.Errorf("dupctl %s is built in internal/cli/%s, want internal/cli/%s", strings.Join(p, " "), file, strings.Join(want, " or internal/cli/"))
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
