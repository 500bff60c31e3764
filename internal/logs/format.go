package logs

import (
	"bytes"
	"fmt"
	"strings"

	"github.com/dupctl/dupctl/internal/logs/internal/infer"
)

// Format is how a source's lines are written. Each source is read in the
// format its first lines show (Options.Format forces one for every
// source), and the report names what each source was read as: a file
// read as nothing is never a silent pass.
type Format uint8

// The formats. The JSON family is one object per line; the wrappers
// (Docker, CRI, journald) carry another format's line inside; the text
// formats are logfmt and the console layouts of the common logging
// libraries (console.go).
const (
	FormatAuto     Format = iota
	FormatJSON            // JSON lines: slog, zap, logstash, ECS, pino, bunyan, python-json-logger ...
	FormatCLEF            // Serilog's compact JSON: @t, @m or @mt, @l, @x
	FormatGELF            // Graylog's GELF: short_message, _additional fields
	FormatOTLP            // OTLP/JSON as the collector's file exporter writes it
	FormatJournald        // journalctl -o json
	FormatDocker          // Docker's json-file driver
	FormatCRI             // Kubernetes' CRI log files: <time> <stream> <P|F> <line>
	FormatLogfmt          // logrus text formatter, go-kit, Heroku: key=value ...
	FormatText            // console layouts: Spring Boot, logback, log4j2, Python logging, Ruby, Sidekiq, Go log
	numFormats
)

var formatNames = [numFormats]string{"auto", "json", "clef", "gelf", "otlp", "journald", "docker", "cri", "logfmt", "text"}

func (f Format) String() string {
	if f < numFormats {
		return formatNames[f]
	}
	return "unknown"
}

// FormatNames lists the formats --format accepts.
func FormatNames() []string { return append([]string(nil), formatNames[:]...) }

// ParseFormat reads a --format value.
func ParseFormat(s string) (Format, error) {
	for i, n := range formatNames {
		if strings.EqualFold(s, n) {
			return Format(i), nil
		}
	}
	return 0, fmt.Errorf("unknown log format %q: want one of %s", s, strings.Join(formatNames[:], ", "))
}

// wraps reports whether f carries another format's line inside.
func (f Format) wraps() bool { return f == FormatDocker || f == FormatCRI || f == FormatJournald }

// formatSpec is what a source is read as: its format and, for a wrapper,
// the format of the lines inside.
type formatSpec struct {
	format Format
	inner  Format
	layout string // the console layout seen (text), for the report
	// prefix is a shipper's prefix before every line (kubectl --prefix,
	// docker compose, syslog): taken off, its instance kept, and the rest
	// read line by line as whatever it is (JSON, logfmt, a console layout,
	// a bare message).
	prefix infer.PrefixKind
	// twoLine: a record is a header line (time, logger, method) and a
	// "LEVEL: message" line (java.util.logging's SimpleFormatter).
	twoLine bool
}

func (s formatSpec) String() string {
	out := s.format.String()
	if s.format.wraps() && s.inner != FormatAuto {
		out += "+" + s.inner.String()
	}
	if s.layout != "" {
		out += " (" + s.layout + ")"
	}
	return out
}

// SourceFormat is what one source was read as.
type SourceFormat struct {
	Source string `json:"source"`
	Format string `json:"format"`
	// Inner is the format inside a wrapper (docker, cri, journald).
	Inner string `json:"inner,omitempty"`
	// Layout is the console layout of a text source (spring-boot, ...).
	Layout string `json:"layout,omitempty"`
	// Forced is set when --format chose it.
	Forced bool `json:"forced,omitempty"`
}

func (s SourceFormat) String() string {
	out := s.Format
	if s.Inner != "" {
		out += "+" + s.Inner
	}
	if s.Layout != "" {
		out += " (" + s.Layout + ")"
	}
	return out
}

// sampleLines is how many lines of a source decide its format.
const sampleLines = 64

// detect chooses a source's format from its first lines: the format most
// of them read as (ties to the order of the constants).
func detect(head []byte) formatSpec {
	lines := firstLines(head, sampleLines)
	if len(lines) == 0 {
		return formatSpec{format: FormatJSON}
	}
	if k, _ := infer.DetectPrefix(lines); k != infer.PrefixNone {
		return prefixSpec(k, lines)
	}
	if isTwoLine(lines) {
		return formatSpec{format: FormatText, twoLine: true, layout: layoutTwoLine}
	}
	var votes [numFormats]int
	for _, l := range lines {
		votes[lineFormat(l)]++
	}
	best := FormatJSON
	for f := FormatJSON; f < numFormats; f++ {
		if votes[f] > votes[best] {
			best = f
		}
	}
	if votes[best] == 0 {
		// Nothing recognised: JSON, whose errors say what the lines are not.
		return formatSpec{format: FormatJSON}
	}
	spec := formatSpec{format: best}
	switch {
	case best.wraps():
		var payloads [][]byte
		for _, l := range lines {
			if p := wrappedPayload(best, l); p != nil {
				payloads = append(payloads, p)
			}
		}
		inner := detectPayloads(payloads)
		spec.inner, spec.layout = inner.format, inner.layout
	case best == FormatText:
		spec.layout = consoleLayout(lines)
	}
	return spec
}

// detectPayloads chooses the format of a wrapper's payloads: JSON, logfmt
// or text (a payload is never wrapped again).
func detectPayloads(payloads [][]byte) formatSpec {
	var votes [numFormats]int
	for _, p := range payloads {
		f := lineFormat(p)
		switch f {
		case FormatJSON, FormatCLEF, FormatGELF, FormatOTLP, FormatLogfmt, FormatText:
			votes[f]++
		}
	}
	best := FormatJSON
	for f := FormatJSON; f < numFormats; f++ {
		if votes[f] > votes[best] {
			best = f
		}
	}
	if len(payloads) > 0 && (votes[best] == 0 || best == FormatText && votes[best]*2 <= len(payloads)) {
		// Sentences with no layout of their own: the wrapper gives the
		// time, the line is the message. A few that start with a level
		// word ("Error processing message ...") are sentences too.
		return formatSpec{format: FormatText, layout: layoutMessage}
	}
	spec := formatSpec{format: best}
	if best == FormatText {
		spec.layout = consoleLayout(payloads)
	}
	return spec
}

// layoutMessage: a wrapper's payloads are bare messages.
const layoutMessage = "message"

// layoutTwoLine names java.util.logging's SimpleFormatter records.
const layoutTwoLine = "java.util.logging (two lines a record)"

// prefixSpec is a source whose lines carry a shipper's prefix: read by the
// decoder, each line's rest in the format it has (the report names the
// commonest).
func prefixSpec(k infer.PrefixKind, lines [][]byte) formatSpec {
	var rest [][]byte
	for _, l := range lines {
		if _, r, ok := infer.SplitPrefix(k, l); ok {
			rest = append(rest, r)
		}
	}
	inner := detectPayloads(rest)
	layout := k.String() + " prefix + " + inner.format.String()
	if inner.layout != "" {
		layout += " (" + inner.layout + ")"
	}
	return formatSpec{format: FormatText, inner: inner.format, layout: layout, prefix: k}
}

// isTwoLine reports whether most of the lines pair up as a header with a
// time but no level, then "LEVEL: message" (java.util.logging).
func isTwoLine(lines [][]byte) bool {
	pairs := 0
	for i := 0; i+1 < len(lines); i++ {
		if julHeader(lines[i]) && levelLine(lines[i+1]) {
			pairs++
			i++
		}
	}
	return pairs*2 >= len(lines)/2 && pairs >= 2
}

// julHeader: a time (java.util.logging's "Mar 14, 2026 9:00:43 AM", or any
// layout's) then words, no level.
func julHeader(l []byte) bool {
	n := infer.ClockLen(l)
	if n == 0 {
		n = timestampLen(l)
	}
	if n == 0 {
		return false
	}
	for _, w := range bytes.Fields(l[n:]) {
		if _, ok := isLevel(w); ok {
			return false
		}
	}
	return true
}

// levelLine: "LEVEL: message".
func levelLine(l []byte) bool {
	w, _, ok := bytes.Cut(l, []byte(": "))
	if !ok {
		return false
	}
	_, isLv := isLevel(w)
	return isLv && bytes.Equal(bytes.ToUpper(w), w)
}

// firstLines splits the head of a source into up to n non-blank lines
// (a last line without its newline is left out unless it is all there is).
func firstLines(head []byte, n int) [][]byte {
	var out [][]byte
	for len(head) > 0 && len(out) < n {
		i := bytes.IndexByte(head, '\n')
		var l []byte
		if i < 0 {
			if len(out) > 0 {
				break
			}
			l, head = head, nil
		} else {
			l, head = head[:i], head[i+1:]
		}
		l = bytes.TrimRight(l, "\r")
		l = bytes.TrimPrefix(l, []byte("\xef\xbb\xbf"))
		if len(bytes.TrimSpace(l)) > 0 {
			out = append(out, l)
		}
	}
	return out
}

// lineFormat is the format one line looks like (FormatAuto: none).
func lineFormat(l []byte) Format {
	t := bytes.TrimLeft(l, " \t")
	if len(t) == 0 {
		return FormatAuto
	}
	if t[0] == '{' {
		return jsonFamily(t)
	}
	if isCRILine(t) {
		return FormatCRI
	}
	if isLogfmtLine(t) {
		return FormatLogfmt
	}
	if _, ok := parseConsole(t); ok {
		return FormatText
	}
	return FormatAuto
}

// jsonFamily tells the JSON-shaped formats apart by their telltale keys.
func jsonFamily(l []byte) Format {
	has := func(k string) bool { return bytes.Contains(l, []byte(`"`+k+`"`)) }
	switch {
	case has("resourceLogs") || has("logRecords") ||
		(has("timeUnixNano") || has("observedTimeUnixNano")) && bytes.Contains(l, []byte(`Value"`)) && (has("body") || has("attributes")):
		// An OTLP record: its body and attributes are typed values
		// ({"stringValue": ...}), not the plain fields of a JSON log
		// that borrows OpenTelemetry's names.
		return FormatOTLP
	case has("@t") && (has("@m") || has("@mt")):
		return FormatCLEF
	case has("short_message") && has("version"):
		return FormatGELF
	case has("MESSAGE") && has("__REALTIME_TIMESTAMP"):
		return FormatJournald
	case bytes.HasPrefix(l, []byte(`{"log":"`)) && (has("stream") || has("time")):
		return FormatDocker
	}
	return FormatJSON
}

// LooksLikeLogs reports whether the head of a file is logs in a format
// this package reads, rather than a table: a CSV header line (commas, no
// time or level) is a table even when its rows start with timestamps.
func LooksLikeLogs(head []byte) bool {
	lines := firstLines(head, sampleLines)
	if len(lines) == 0 {
		return false
	}
	if bytes.IndexByte(lines[0], ',') >= 0 && lineFormat(lines[0]) == FormatAuto {
		return false
	}
	n := 0
	for _, l := range lines {
		if lineFormat(l) != FormatAuto {
			n++
		}
	}
	return n*2 > len(lines)
}
