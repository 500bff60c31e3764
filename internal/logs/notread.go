package logs

import (
	"errors"
	"fmt"
	"strings"

	"github.com/dupctl/dupctl/internal/platform/english"
	"github.com/dupctl/dupctl/internal/platform/problem"
)

// ErrNotRead is the reason of the input error a scan gives when it read
// nothing it could use: no line, no line in the format of its file, or
// most lines unreadable. A command that reads logs never passes on such
// an input: it says what was not read, as what, and what would read it.
var ErrNotRead = errors.New("the logs were not read")

// NotRead returns the input error for a scan that read too little to
// judge anything (nil when it read enough): no line at all, no line that
// became an event, or more unreadable lines than read ones.
func NotRead(st Stats) error {
	read := formatsRead(st)
	switch {
	case st.Lines == 0:
		return &problem.Input{Why: fmt.Sprintf("the input holds no line (%s): nothing was read", english.Count(st.Sources, "source", "sources")),
			Hint: "point the command at the logs (a file, a directory, a glob or - for stdin); check the path and the time window of the export",
			Err:  ErrNotRead}
	case st.Events == 0:
		return &problem.Input{Why: fmt.Sprintf("none of %s lines could be read as %s%s", english.Number(st.Lines), read, sampleText(st)),
			Hint: formatHint(st), Err: ErrNotRead}
	case st.Malformed*2 > st.Lines:
		return &problem.Input{Why: fmt.Sprintf("%s of %s lines could not be read as %s%s: the results would rest on the other %s",
			english.Number(st.Malformed), english.Number(st.Lines), read, sampleText(st), english.Number(st.Events)),
			Hint: formatHint(st), Err: ErrNotRead}
	}
	return nil
}

// ReadAs names what the sources were read as: "text (spring-boot)", or
// "json (2 files), logfmt (1 file)".
func (st Stats) ReadAs() string { return formatsRead(st) }

func formatsRead(st Stats) string {
	if len(st.Formats) == 0 {
		return "json"
	}
	count := map[string]int{}
	var order []string
	for _, f := range st.Formats {
		s := f.String()
		if count[s] == 0 {
			order = append(order, s)
		}
		count[s]++
	}
	if len(order) == 1 {
		return order[0]
	}
	parts := make([]string, len(order))
	for i, s := range order {
		parts[i] = fmt.Sprintf("%s (%s)", s, english.Count(count[s], "file", "files"))
	}
	return strings.Join(parts, ", ")
}

// sampleText cites the first unread line: " (e.g. app.log:3: <why>: <text>)".
func sampleText(st Stats) string {
	if len(st.Samples) == 0 {
		return ""
	}
	s := st.Samples[0]
	return fmt.Sprintf(" (e.g. %s: %s: %q)", s.Where(), s.Reason, s.Text)
}

// formatHint says what would read the unread lines: the format most of
// them show, when it is not the one they were read as, else the flags.
func formatHint(st Stats) string {
	var votes [numFormats]int
	for _, s := range st.Samples {
		votes[lineFormat([]byte(s.Text))]++
	}
	best := FormatAuto
	for f := FormatJSON; f < numFormats; f++ {
		if votes[f] > votes[best] {
			best = f
		}
	}
	readAs := map[string]bool{}
	for _, f := range st.Formats {
		readAs[f.Format] = true
	}
	if best != FormatAuto && !readAs[best.String()] {
		return fmt.Sprintf("those lines look like %s: read them with {Format} %s", best, best)
	}
	return "dupctl reads JSON lines, CLEF, GELF, OTLP/JSON, logfmt, Docker, CRI and journald files and the common console layouts; " +
		"{Format} forces one (" + strings.Join(formatNames[1:], ", ") + "), and dupctl audit logs --explain-mapping FILE " +
		"shows how a file is read"
}
