package cli_test

import (
	"context"
	"fmt"
	"strings"
	"testing"

	"github.com/dupctl/dupctl/internal/cli"
	"github.com/dupctl/dupctl/internal/cli/cmdutil"
	"github.com/dupctl/dupctl/internal/platform/iostreams"
	"github.com/spf13/cobra"
)

// TestHelpExamplesWork takes every example line of every command's --help:
// each must name a real command with flags that exist and values that
// parse; those that need no server and no file (explain, version, the
// simulator without --live) are run whole and must exit 0 or 1.
func TestHelpExamplesWork(t *testing.T) {
	ios, _, _, _ := iostreams.Test()
	root := cli.NewCmdRoot(cmdutil.NewFactory(ios))
	type example struct {
		where, line string
		args        []string
	}
	var run []example
	n := 0
	var walk func(c *cobra.Command)
	walk = func(c *cobra.Command) {
		text := strings.ReplaceAll(c.Example, "\\\n", " ")
		text = strings.NewReplacer(" && ", "\n", "; dupctl ", "\ndupctl ").Replace(text) // one command per line
		for _, line := range strings.Split(text, "\n") {
			args, ok := exampleArgs(line)
			if !ok {
				continue
			}
			n++
			if err := parses(args); err != nil {
				t.Errorf("%s --help example %q: %v", c.CommandPath(), line, err)
				continue
			}
			if runnable(args) {
				run = append(run, example{c.CommandPath(), line, args})
			}
		}
		for _, sub := range c.Commands() {
			walk(sub)
		}
	}
	walk(root)
	if n < 40 {
		t.Fatalf("only %d examples found: the parser is broken", n)
	}
	// The runnable ones (the simulator, explain, version) in process and in
	// parallel: none depends on timing or a server.
	for _, ex := range run {
		t.Run(strings.Join(ex.args, " "), func(t *testing.T) {
			t.Parallel()
			tios, _, _, stderr := iostreams.Test()
			if code := cli.Run(context.Background(), ex.args, tios); code != 0 && code != 1 {
				t.Errorf("%s --help example %q exits %d: %s", ex.where, ex.line, code, stderr.String())
			}
		})
	}
}

// parses checks that an example names a real command with flags that
// exist and values that parse, in the command tree its line selects.
func parses(args []string) error {
	ios, _, _, _ := iostreams.Test()
	root := cli.NewCmdRootFor(cmdutil.NewFactory(ios), args)
	cmd, rest, err := root.Find(args)
	if err != nil || cmd == root && len(args) > 0 {
		return fmt.Errorf("no such command (%v)", err)
	}
	if err := cmd.ParseFlags(rest); err != nil {
		return err
	}
	return cmd.ValidateArgs(cmd.Flags().Args())
}

// runnable: examples that need neither a server nor a file of the user's.
func runnable(args []string) bool {
	switch args[0] {
	case "explain", "version":
		return true
	case "simulate":
		for _, a := range args {
			if a == "--live" || a == "--worker" || a == "replay" {
				return false
			}
		}
		return true
	}
	return false
}

// exampleArgs reads one example line as a shell would (quotes, a trailing
// pipe or redirection cut off); ok is false for comments and other lines.
func exampleArgs(line string) ([]string, bool) {
	line = strings.TrimSpace(line)
	if !strings.HasPrefix(line, "dupctl ") {
		return nil, false
	}
	var args []string
	var cur strings.Builder
	inWord := false
	quote := byte(0)
	for i := 0; i < len(line); i++ {
		ch := line[i]
		switch {
		case quote != 0:
			if ch == quote {
				quote = 0
			} else {
				cur.WriteByte(ch)
			}
		case ch == '\'' || ch == '"':
			quote, inWord = ch, true
		case ch == ' ' || ch == '\t':
			if inWord {
				args = append(args, cur.String())
				cur.Reset()
				inWord = false
			}
		case ch == '|' || ch == '>' || ch == '<' || ch == '#':
			i = len(line)
		default:
			cur.WriteByte(ch)
			inWord = true
		}
	}
	if inWord {
		args = append(args, cur.String())
	}
	return args[1:], len(args) > 1
}
