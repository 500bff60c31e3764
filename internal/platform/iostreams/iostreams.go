// Package iostreams owns every terminal decision dupctl makes: where output
// goes, whether it is a terminal, whether colour is allowed, and whether
// progress may be drawn. Renderers and commands ask it; nothing else looks
// at os.Stdout.
package iostreams

import (
	"bytes"
	"io"
	"os"
	"strconv"

	"github.com/charmbracelet/x/term"
	"github.com/mattn/go-isatty"
)

// IOStreams are the three standard streams plus what is known about them.
type IOStreams struct {
	In     io.Reader
	Out    io.Writer
	ErrOut io.Writer

	outTTY bool
	errTTY bool
	width  int // stdout's columns when it is a terminal; 0 otherwise

	// Getenv reads the environment; tests replace it.
	Getenv func(string) string

	noColorFlag bool
	quietFlag   bool // set for machine output (-o json/junit): no progress
}

// System returns streams bound to the process's stdin, stdout and stderr.
func System() *IOStreams {
	return &IOStreams{
		In:     os.Stdin,
		Out:    os.Stdout,
		ErrOut: os.Stderr,
		outTTY: isTerminal(os.Stdout),
		errTTY: isTerminal(os.Stderr),
		width:  terminalWidth(os.Stdout),
		Getenv: os.Getenv,
	}
}

func terminalWidth(f *os.File) int {
	w, _, err := term.GetSize(f.Fd())
	if err != nil {
		return 0
	}
	return w
}

// Width is how many columns a line of table output may take: the
// terminal's width, else $COLUMNS, else 120 (a file or a CI log).
func (s *IOStreams) Width() int {
	if s.width > 0 {
		return s.width
	}
	if s.Getenv != nil {
		if n, err := strconv.Atoi(s.Getenv("COLUMNS")); err == nil && n >= 40 {
			return n
		}
	}
	return 120
}

// TableWidth is how many columns a table may take: the terminal's width,
// else $COLUMNS; 0 when neither is known, so that output piped to a file
// keeps whole rows (as gh does).
func (s *IOStreams) TableWidth() int {
	if s.outTTY && s.width > 0 {
		return s.width
	}
	if n, err := strconv.Atoi(s.getenv("COLUMNS")); err == nil && n > 0 {
		return n
	}
	return 0
}

// SetWidth sets the terminal's width (tests drawing for a terminal).
func (s *IOStreams) SetWidth(n int) { s.width = n }

func isTerminal(f *os.File) bool {
	return isatty.IsTerminal(f.Fd()) || isatty.IsCygwinTerminal(f.Fd())
}

// Test returns streams backed by buffers, none of them a terminal.
func Test() (ios *IOStreams, in, out, errOut *bytes.Buffer) {
	in, out, errOut = &bytes.Buffer{}, &bytes.Buffer{}, &bytes.Buffer{}
	return &IOStreams{In: in, Out: out, ErrOut: errOut, Getenv: func(string) string { return "" }}, in, out, errOut
}

// SetStdoutTTY and SetStderrTTY override terminal detection (tests).
func (s *IOStreams) SetStdoutTTY(v bool) { s.outTTY = v }
func (s *IOStreams) SetStderrTTY(v bool) { s.errTTY = v }

// IsStdoutTTY reports whether stdout is a terminal.
func (s *IOStreams) IsStdoutTTY() bool { return s.outTTY }

// IsStderrTTY reports whether stderr is a terminal.
func (s *IOStreams) IsStderrTTY() bool { return s.errTTY }

// SetNoColor records --no-color.
func (s *IOStreams) SetNoColor(v bool) { s.noColorFlag = v }

// SetMachineOutput records that stdout carries machine-readable output, so
// nothing decorative (progress) may be drawn.
func (s *IOStreams) SetMachineOutput(v bool) { s.quietFlag = v }

func (s *IOStreams) getenv(k string) string {
	if s.Getenv == nil {
		return ""
	}
	return s.Getenv(k)
}

// ColorEnabled reports whether stdout may carry ANSI colour. Any non-empty
// NO_COLOR disables it (no-color.org), as do --no-color and CLICOLOR=0;
// CLICOLOR_FORCE (non-empty, not "0") forces it on a non-terminal.
func (s *IOStreams) ColorEnabled() bool {
	if s.noColorFlag || s.getenv("NO_COLOR") != "" || s.getenv("CLICOLOR") == "0" {
		return false
	}
	if f := s.getenv("CLICOLOR_FORCE"); f != "" && f != "0" {
		return true
	}
	if s.getenv("TERM") == "dumb" {
		return false
	}
	return s.outTTY
}

// ProgressEnabled reports whether progress may be drawn on stderr: only on a
// terminal, never in CI and never with machine output.
func (s *IOStreams) ProgressEnabled() bool {
	if s.quietFlag || !s.errTTY {
		return false
	}
	if s.getenv("CI") != "" || s.getenv("TERM") == "dumb" {
		return false
	}
	return true
}
