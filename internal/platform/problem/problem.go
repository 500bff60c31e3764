// Package problem types the errors capabilities return for bad input and
// for systems that refuse or fail, so that the command layer alone decides
// how they read on a command line (which flag, which exit code). A
// capability names the option a user got wrong by its Options field
// ("KeyColumn"); internal/cli/cmdutil shows it as the flag it is bound to
// ("--key-column"), and a program using the capability directly sees the
// field name.
package problem

import (
	"errors"
	"fmt"
	"strconv"
	"strings"
)

// Input is bad input: an option, argument or file a user gave that cannot
// be used. It maps to exit code 2.
type Input struct {
	// Field is the option that is wrong, as its Options field name
	// ("Table", "KeyColumn"); empty when the problem is not one option's.
	Field string
	// Value is what was given for Field; shown quoted when Quote is set,
	// as is otherwise, and left out when empty.
	Value string
	Quote bool
	// Why says what is wrong. It and Hint may name options as {Field}.
	// When Why starts with {Field} (this Input's own), Render shows Why
	// as it is, without the "{Field} value: " in front.
	Why string
	// Hint says what to do instead; may be empty.
	Hint string
	// Err is the underlying error, if any (kept for errors.Is/As).
	Err error
}

// Inputf is an Input about field whose Why is formatted; a %w verb in
// format becomes the Input's Err.
func Inputf(field, format string, args ...any) *Input {
	err := fmt.Errorf(format, args...)
	return &Input{Field: field, Why: err.Error(), Err: errors.Unwrap(err)}
}

// WithValue sets the value given (shown quoted).
func (e *Input) WithValue(v string) *Input { e.Value, e.Quote = v, true; return e }

// WithRawValue sets the value given (shown as is).
func (e *Input) WithRawValue(v string) *Input { e.Value, e.Quote = v, false; return e }

// WithHint sets what to do.
func (e *Input) WithHint(h string) *Input { e.Hint = h; return e }

func (e *Input) Error() string { return e.Render(nil) }

func (e *Input) Unwrap() error { return e.Err }

// Error keeps options as {Field} placeholders, so that the layer that
// prints it can name them however its reader knows them (Expand), through
// any wrapping on the way.

// Render words the error with name turning an option's field name into
// what the reader knows it as (a flag); nil keeps the placeholders.
func (e *Input) Render(name func(field string) string) string {
	var b strings.Builder
	// A Why that opens with its own option ("{Runs} must be positive")
	// already names it: the field is not put in front a second time.
	if e.Field != "" && !strings.HasPrefix(e.Why, "{"+e.Field+"}") {
		b.WriteString("{" + e.Field + "}")
		if e.Value != "" || e.Quote {
			b.WriteByte(' ')
			if e.Quote {
				b.WriteString(strconv.Quote(e.Value))
			} else {
				b.WriteString(e.Value)
			}
		}
		if e.Why != "" {
			b.WriteString(": ")
		}
	}
	b.WriteString(e.Why)
	if e.Hint != "" {
		b.WriteString(" (" + e.Hint + ")")
	}
	return Expand(b.String(), name)
}

// Unavailable is a system that could not be reached, refused an operation
// or failed while running, with what to do about it. It maps to exit
// code 3.
type Unavailable struct {
	Err  error
	Hint string // may name options as {Field}
}

// System marks err as a system's failure with a hint.
func System(err error, hint string) error { return &Unavailable{Err: err, Hint: hint} }

func (e *Unavailable) Error() string { return e.Render(nil) }

func (e *Unavailable) Unwrap() error { return e.Err }

// Render words the error, naming options as name says.
func (e *Unavailable) Render(name func(field string) string) string {
	msg := e.Err.Error()
	if e.Hint != "" {
		msg += " (" + e.Hint + ")"
	}
	return Expand(msg, name)
}

// Expand replaces each {Field} in s (an exported Go identifier in braces)
// with name(Field); with a nil name, s is returned as is. Braces around
// anything else are left alone.
func Expand(s string, name func(field string) string) string {
	if name == nil || !strings.Contains(s, "{") {
		return s
	}
	var b strings.Builder
	for {
		i := strings.IndexByte(s, '{')
		if i < 0 {
			break
		}
		j := strings.IndexByte(s[i:], '}')
		if j < 0 {
			break
		}
		field := s[i+1 : i+j]
		b.WriteString(s[:i])
		if isField(field) {
			b.WriteString(name(field))
		} else {
			b.WriteString(s[i : i+j+1])
		}
		s = s[i+j+1:]
	}
	b.WriteString(s)
	return b.String()
}

// isField reports whether s is an exported Go identifier: only those are
// option placeholders, so {key} in a pattern or {uuid} in a key family
// stay as they are.
func isField(s string) bool {
	if s == "" || s[0] < 'A' || s[0] > 'Z' {
		return false
	}
	for _, r := range s {
		if !(r >= 'a' && r <= 'z' || r >= 'A' && r <= 'Z' || r >= '0' && r <= '9') {
			return false
		}
	}
	return true
}

// Renderer is an error that can word itself for a reader who knows options
// by other names.
type Renderer interface {
	error
	Render(name func(field string) string) string
}
