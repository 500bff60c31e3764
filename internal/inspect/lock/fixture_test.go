package lock_test

import (
	"bufio"
	"os/exec"
	"strings"
	"testing"
)

// holdFixture starts a fixture program - keys written by libraries' own
// code, locks held until its stdin closes - and returns once it printed
// "ready". It is stopped when the test ends.
func holdFixture(t *testing.T, cmd *exec.Cmd) {
	t.Helper()
	stderr := &strings.Builder{}
	cmd.Stderr = stderr
	stdin, err := cmd.StdinPipe()
	if err != nil {
		t.Fatal(err)
	}
	stdout, err := cmd.StdoutPipe()
	if err != nil {
		t.Fatal(err)
	}
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { stdin.Close(); _ = cmd.Wait() })
	if line, err := bufio.NewReader(stdout).ReadString('\n'); err != nil || line != "ready\n" {
		t.Fatalf("%s: %q %v\n%s", strings.Join(cmd.Args, " "), line, err, stderr)
	}
}
