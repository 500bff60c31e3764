package chaos

import (
	"errors"
	"fmt"
	"os/exec"
	"regexp"
	"strings"
	"unicode/utf8"
)

// A worker copy that ends without dupctl killing it is said as it ended:
// crashed (its exit code or the signal that ended it) or exited cleanly,
// with the line of its output that says why. A runtime's dying words are
// rarely its last line - Node.js ends with its version, the JVM and Go
// with stack frames, `go run` with "exit status 2" - so the line is
// chosen by what it says, for any runtime: an error or exception header
// ("Error: ...", "KeyError: ...", "panic: ...", "Caused by: ..."), else a
// line that names a failure, else the last line with any words.

// outputLines is how many of a process's last output lines are kept to
// choose from: enough for a JVM's or Node's stack trace under its header.
const outputLines = 100

// processEnd says how a worker process ended, from its Wait error: its
// exit code, or the signal that ended it; crashed unless it exited with 0.
func processEnd(err error) (how string, crashed bool) {
	var ee *exec.ExitError
	switch {
	case err == nil:
		return "exit code 0", false
	case errors.As(err, &ee) && ee.ExitCode() >= 0:
		return fmt.Sprintf("exit code %d", ee.ExitCode()), ee.ExitCode() != 0
	case errors.As(err, &ee):
		return ee.Error(), true // "signal: segmentation fault"
	}
	return err.Error(), true
}

// exitNote is the event text of a worker process that ended on its own
// (how and crashed from processEnd), quoting the most telling line of
// its output; stopping: dupctl was ending the run and asked it to stop.
func exitNote(how string, crashed, stopping bool, output []string) string {
	note := "exits (" + how + ")"
	switch {
	case stopping:
		note = "exits as dupctl ends the run (" + how + ")"
	case crashed:
		note = "the worker process crashed (" + how + ")"
	}
	line, telling := tellingLine(output)
	switch {
	case line == "":
		return note + ", with no output"
	case telling:
		return note + "; its error: " + line
	}
	return note + "; its last output: " + line
}

var (
	// errorHeader is the line a runtime heads an uncaught error with.
	errorHeader = regexp.MustCompile(`^(Uncaught\s+)?([\w$]+\.)*[\w$]*(Error|Exception|Fault)(\s*\[[^\]]*\])?:\s*\S` +
		`|^(panic|fatal error|Caused by|Exception in thread)\b|\bpanicked at\b`)
	// failureWords mark a line that says something went wrong.
	failureWords = regexp.MustCompile(`(?i)\b(error|exception|panic|fatal|fail(ed|ure)?|refused|denied|cannot|can't|unable|` +
		`not found|no such|terminated|timed out|timeout|uncaught|unhandled|abort(ed)?|killed)\b`)
	// frameLine is a stack frame, or the punctuation around one: it says
	// where, not what.
	frameLine = regexp.MustCompile(`^\s+at\s|^\s*File ".*", line \d+|^\s+\S+\.go:\d+|^goroutine \d+ \[|^\s*\.\.\. \d+ more|` +
		`^\s*\[\.\.\. lines matching|^Traceback \(most recent call last\)|^[\s^~{}\[\]();,]*$`)
)

// tellingLine picks the line of a process's last output that says why it
// ended: the last error header, else the last line naming a failure,
// else the last line that is not a stack frame (telling false then).
func tellingLine(output []string) (line string, telling bool) {
	best, score := "", 0
	for _, l := range output {
		if frameLine.MatchString(l) {
			continue
		}
		l = strings.TrimSpace(l)
		s := 1
		switch {
		case errorHeader.MatchString(l):
			s = 3
		case failureWords.MatchString(l):
			s = 2
		}
		if s >= score {
			best, score = l, s
		}
	}
	return clip(best, 240), score > 1
}

// clip shortens a line to n bytes at a rune boundary.
func clip(s string, n int) string {
	if len(s) <= n {
		return s
	}
	for n > 0 && !utf8.RuneStart(s[n]) {
		n--
	}
	return s[:n] + "…"
}
