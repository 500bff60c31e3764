// Package exitcode is dupctl's exit status contract, shared by every command:
//
//	0   nothing at or above --fail-on
//	1   findings at or above --fail-on
//	2   usage or input error (bad flag, bad file, malformed argument)
//	3   a system could not be reached, or a runtime failure
//	130 interrupted (Ctrl-C)
//
// Errors carry their code; internal/cli maps them in one place.
package exitcode

import (
	"errors"
	"fmt"
)

// The public exit codes. They never change meaning.
const (
	OK          = 0
	Findings    = 1
	Usage       = 2
	Unavailable = 3
	Interrupted = 130
)

// Error is an error that knows which exit code it deserves and, optionally,
// what the user should do about it.
type Error struct {
	Code int
	Err  error
	Hint string // what to do; appended to the one-line message
	// Silent errors set the exit code without printing anything: the
	// output already said it (findings at or above --fail-on).
	Silent bool
	// KeepOutput says the report the command rendered stands even though
	// the run failed (doctor prints every line, with the unreachable ones
	// not checked, then exits 3).
	KeepOutput bool
}

// KeepsOutput reports whether err lets the rendered report stand.
func KeepsOutput(err error) bool {
	var e *Error
	var k *kept
	return errors.As(err, &e) && e.KeepOutput || errors.As(err, &k)
}

// kept is an error after which the rendered report stands, whatever the
// error's own exit code.
type kept struct{ error }

func (k *kept) Unwrap() error { return k.error }

// KeepOutput marks err (any error, its exit code unchanged) as one after
// which the report the command rendered stands: a replay that stopped on
// a lost connection or a missing destination still prints what it did.
func KeepOutput(err error) error {
	if err == nil {
		return nil
	}
	return &kept{err}
}

func (e *Error) Error() string {
	msg := e.Err.Error()
	if e.Hint != "" {
		msg += " (" + e.Hint + ")"
	}
	return msg
}

func (e *Error) Unwrap() error { return e.Err }

// UsageErrorf is a usage or input error (exit 2).
func UsageErrorf(format string, args ...any) error {
	return &Error{Code: Usage, Err: fmt.Errorf(format, args...)}
}

// InputError marks err as bad input (exit 2) with a hint.
func InputError(err error, hint string) error {
	return &Error{Code: Usage, Err: err, Hint: hint}
}

// UnavailableError marks err as a system that could not be reached or a
// runtime failure (exit 3) with a hint.
func UnavailableError(err error, hint string) error {
	return &Error{Code: Unavailable, Err: err, Hint: hint}
}

// FindingsFailed is the silent error a command returns when its findings
// reach --fail-on.
func FindingsFailed() error {
	return &Error{Code: Findings, Err: errors.New("findings at or above --fail-on"), Silent: true}
}

// IsSilent reports whether err should exit without a message.
func IsSilent(err error) bool {
	var e *Error
	return errors.As(err, &e) && e.Silent
}
