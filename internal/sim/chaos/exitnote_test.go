package chaos

import (
	"context"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
)

// A copy that dies is said to have crashed, quoting the line of its
// output that says why - for any runtime, not its last line: Node.js ends
// with its version, the JVM and Go with stack frames (testdata/exits
// holds what real processes printed).
func TestExitNoteQuotesTheError(t *testing.T) {
	cases := map[string]string{
		"node-pg-connection-lost.txt": "Error: Connection terminated unexpectedly",
		"node-typeerror.txt":          "TypeError: Cannot read properties of undefined (reading 'orderId')",
		"go-run-panic.txt":            "panic: assignment to entry in nil map",
		"python-keyerror.txt":         "KeyError: 'orderId'",
		"java-caused-by.txt":          "Caused by: java.net.ConnectException: Connection refused",
		"sh-not-found.txt":            "sh: 1: paymnts-worker: not found",
	}
	for file, want := range cases {
		b, err := os.ReadFile(filepath.Join("testdata", "exits", file))
		if err != nil {
			t.Fatal(err)
		}
		got := exitNote("exit code 1", true, false, strings.Split(strings.TrimSuffix(string(b), "\n"), "\n"))
		if got != "the worker process crashed (exit code 1); its error: "+want {
			t.Errorf("%s: %q, want its error %q", file, got, want)
		}
	}
	b, err := os.ReadFile(filepath.Join("testdata", "exits", "no-error.txt"))
	if err != nil {
		t.Fatal(err)
	}
	if got := exitNote("exit code 0", false, false, strings.Split(strings.TrimSpace(string(b)), "\n")); got !=
		"exits (exit code 0); its last output: charged order 1" {
		t.Errorf("a clean exit: %q", got)
	}
	if got := exitNote("signal: terminated", true, true, nil); got != "exits as dupctl ends the run (signal: terminated), with no output" {
		t.Errorf("stopped at the run's end: %q", got)
	}
}

// How a process ended is read from its wait status: an exit code, or the
// signal that ended it.
func TestProcessEnd(t *testing.T) {
	for _, c := range []struct {
		script, how string
		crashed     bool
	}{
		{"exit 0", "exit code 0", false},
		{"exit 3", "exit code 3", true},
		{"kill -SEGV $$", "signal: segmentation fault", true},
	} {
		err := exec.CommandContext(context.Background(), "/bin/sh", "-c", c.script).Run()
		if how, crashed := processEnd(err); how != c.how || crashed != c.crashed {
			t.Errorf("%s: %q crashed=%v, want %q crashed=%v", c.script, how, crashed, c.how, c.crashed)
		}
	}
}
