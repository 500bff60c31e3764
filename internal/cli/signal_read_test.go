package cli_test

import (
	"bufio"
	"bytes"
	"errors"
	"io"
	"os/exec"
	"strings"
	"syscall"
	"testing"
	"time"
)

// readingDupctl starts dupctl (this test binary, as testscript.Main put it
// on PATH) on a stdin pipe the test holds, and returns once dupctl has
// read lines from it: a write of more than a pipe holds returns only once
// the reader took the rest. The pipe then stays open with nothing more
// written, as an idle `kubectl logs -f` does, so dupctl waits in a read.
func readingDupctl(t *testing.T, head, line string, args ...string) (*exec.Cmd, *bytes.Buffer, *bytes.Buffer, io.WriteCloser) {
	t.Helper()
	cmd := exec.Command("dupctl", args...)
	cmd.Env = append(cmd.Environ(), "NO_COLOR=1")
	var stdout, stderr bytes.Buffer
	cmd.Stdout, cmd.Stderr = &stdout, &stderr
	in, err := cmd.StdinPipe()
	if err != nil {
		t.Fatal(err)
	}
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { in.Close(); _ = cmd.Process.Kill(); _, _ = cmd.Process.Wait() })
	if _, err := io.WriteString(in, head+strings.Repeat(line, (1<<20)/len(line)+1)); err != nil {
		t.Fatalf("dupctl did not read its stdin: %v (stderr: %s)", err, &stderr)
	}
	return cmd, &stdout, &stderr, in
}

// ended waits for dupctl to exit and returns its exit code; a dupctl that
// does not end fails the test (the guard is generous: it is not a
// measure of speed).
func ended(t *testing.T, cmd *exec.Cmd, stderr *bytes.Buffer) int {
	t.Helper()
	done := make(chan error, 1)
	go func() { done <- cmd.Wait() }()
	select {
	case err := <-done:
		var ee *exec.ExitError
		if errors.As(err, &ee) {
			return ee.ExitCode()
		}
		if err != nil {
			t.Fatal(err)
		}
		return 0
	case <-time.After(2 * time.Minute):
		t.Fatalf("dupctl %s did not end (stderr: %s)", strings.Join(cmd.Args[1:], " "), stderr)
	}
	return -1
}

const logLine = `{"time":"2026-11-03T09:00:00Z","event":"side_effect","orderId":"ord-1","jobId":"j1","idempotencyKey":"k1"}` + "\n"

// TestSignalEndsAReadOfStdin: SIGINT and SIGTERM end a command that waits
// for stdin, as interrupted (130), whatever reads it: audit logs' spool,
// keys unstable's scan, inspect ttl's table.
func TestSignalEndsAReadOfStdin(t *testing.T) {
	for _, tc := range []struct {
		name       string
		sig        syscall.Signal
		head, line string
		args       []string
	}{
		{"audit logs SIGINT", syscall.SIGINT, "", logLine, []string{"audit", "logs", "-"}},
		{"audit logs SIGTERM", syscall.SIGTERM, "", logLine, []string{"audit", "logs", "-"}},
		{"keys unstable SIGINT", syscall.SIGINT, "", logLine, []string{"keys", "unstable", "-"}},
		{"keys unstable SIGTERM", syscall.SIGTERM, "", logLine, []string{"keys", "unstable", "-"}},
		{"inspect ttl SIGINT", syscall.SIGINT, "job_type,duration_ms\n", "pay,1200\n", []string{"inspect", "ttl", "-", "--ttl", "30s"}},
		{"inspect ttl logs SIGTERM", syscall.SIGTERM, "", logLine, []string{"inspect", "ttl", "-", "--ttl", "30s"}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			cmd, _, stderr, _ := readingDupctl(t, tc.head, tc.line, tc.args...)
			if err := cmd.Process.Signal(tc.sig); err != nil {
				t.Fatal(err)
			}
			if code := ended(t, cmd, stderr); code != 130 || !strings.Contains(stderr.String(), "dupctl: interrupted") {
				t.Fatalf("exit %d, want 130 and interrupted; stderr: %s", code, stderr)
			}
		})
	}
}

// TestTimeoutEndsAReadOfStdin: --timeout ends a read that waits for stdin
// with exit 3, saying what had been read.
func TestTimeoutEndsAReadOfStdin(t *testing.T) {
	cmd, _, stderr, _ := readingDupctl(t, "", logLine, "keys", "unstable", "-", "--timeout", "2s")
	code := ended(t, cmd, stderr)
	msg := stderr.String()
	if code != 3 || !strings.Contains(msg, "dupctl: stopped after reading ") ||
		!strings.Contains(msg, " lines of -: context deadline exceeded") ||
		!strings.Contains(msg, "(timed out after 2s: raise --timeout)") {
		t.Fatalf("exit %d, want 3 and what was read; stderr: %s", code, msg)
	}
}

// TestFollowEndsOnASignalWithTheSummary: audit logs --follow on a stdin that
// stays open writes a finding as soon as its second side effect is read,
// and a signal ends it with the summary, exit 1 when a duplicate was found
// and 0 when none was.
func TestFollowEndsOnASignalWithTheSummary(t *testing.T) {
	for _, tc := range []struct {
		name  string
		sig   syscall.Signal
		lines []string
		code  int
	}{
		{"a duplicate, SIGINT", syscall.SIGINT, []string{followLine("09:00:00", "m1"), followLine("09:00:30", "m2")}, 1},
		{"none, SIGTERM", syscall.SIGTERM, []string{followLine("09:00:00", "m1")}, 0},
	} {
		t.Run(tc.name, func(t *testing.T) {
			cmd := exec.Command("dupctl", "audit", "logs", "-", "--follow", "-o", "json")
			in, err := cmd.StdinPipe()
			if err != nil {
				t.Fatal(err)
			}
			out, err := cmd.StdoutPipe()
			if err != nil {
				t.Fatal(err)
			}
			var stderr bytes.Buffer
			cmd.Stderr = &stderr
			if err := cmd.Start(); err != nil {
				t.Fatal(err)
			}
			t.Cleanup(func() { in.Close(); _ = cmd.Process.Kill() })
			io.WriteString(in, strings.Join(tc.lines, "\n")+"\n")
			lines := bufio.NewScanner(out)
			lines.Buffer(nil, 1<<20)
			if tc.code == 1 {
				// The event: the finding's line, while stdin stays open.
				if !lines.Scan() || !strings.HasPrefix(lines.Text(), `{"type":"duplicate","key":"ord-1",`) {
					t.Fatalf("no finding line: %q (stderr: %s)", lines.Text(), &stderr)
				}
			} else {
				// The event: dupctl read what was written (a pipe's
				// worth more goes through only once it reads).
				if _, err := io.WriteString(in, strings.Repeat("\n", 1<<20)); err != nil {
					t.Fatal(err)
				}
			}
			if err := cmd.Process.Signal(tc.sig); err != nil {
				t.Fatal(err)
			}
			var rest strings.Builder
			for lines.Scan() {
				rest.WriteString(lines.Text() + "\n")
			}
			code := ended(t, cmd, &stderr)
			if code != tc.code || !strings.Contains(rest.String(), `"command": "audit logs"`) || stderr.Len() > 0 {
				t.Fatalf("exit %d, want %d with the summary; stdout: %.300s; stderr: %s", code, tc.code, rest.String(), &stderr)
			}
		})
	}
}

func followLine(at, msg string) string {
	return `{"time":"2026-11-03T` + at + `Z","event":"side_effect","orderId":"ord-1","messageId":"` + msg + `"}`
}
