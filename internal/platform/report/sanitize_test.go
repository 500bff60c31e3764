package report

import (
	"bytes"
	"io"
	"strings"
	"testing"
	"unicode/utf8"

	"github.com/dupctl/dupctl/internal/platform/findings"
)

func TestTerminalEscapesControls(t *testing.T) {
	for in, want := range map[string]string{
		"plain key:42":                 "plain key:42",
		"a\x1b[2Jb":                    `a\x1b[2Jb`,
		"title\x1b]0;pwned\x07":        `title\x1b]0;pwned\x07`,
		"clip\x1b]52;c;ZXZpbA==\x1b\\": `clip\x1b]52;c;ZXZpbA==\x1b\`,
		"over\rwrite":                  `over\x0dwrite`,
		"nul\x00\x00":                  `nul\x00\x00`,
		"del\x7f":                      `del\x7f`,
		"c1 \u009b31m":                 `c1 \u009b31m`,
		"bidi \u202eevil":              `bidi \u202eevil`,
		"bad \xff\xfe utf8":            `bad \xff\xfe utf8`,
		"tab\tand\nnewline stay":       "tab\tand\nnewline stay",
		"ünïcödé 日本 stays":             "ünïcödé 日本 stays",
	} {
		if got := Terminal(in, nil); got != want {
			t.Errorf("Terminal(%q) = %q, want %q", in, got, want)
		}
	}
}

func TestCellCutsByDisplayWidth(t *testing.T) {
	if got := Cell("日本語のキー", 7); got != "日本語…" {
		t.Errorf("Cell = %q", got)
	}
	if got := Cell("a\nb\x00", 0); got != `a\nb\x00` {
		t.Errorf("Cell = %q", got)
	}
}

// TestTableKeepsOnlyItsOwnColours: a finding carrying terminal commands is
// printed with them escaped, in colour and without.
func TestTableKeepsOnlyItsOwnColours(t *testing.T) {
	for _, color := range []bool{false, true} {
		r := &findings.Report{Command: "inspect lock"}
		r.Add(testRules[0].New("lock:\x1b]0;owned\x07", "value \x1b[2J\x1b[1;1Hfake OK\r", "GET = \x1b]52;c;ZXZpbA==\x07", "\x9b1A up"))
		Prepare(r)
		o := options(findings.FailError)
		o.Color = color
		p, _ := NewPrinter(FormatTable, o)
		var buf bytes.Buffer
		if err := p.Print(&buf, Document{Report: r, Text: func(w io.Writer, th *Theme) error {
			_, err := io.WriteString(w, th.Strong("view")+" key \x1b[8mhidden\x07\n")
			return err
		}}); err != nil {
			t.Fatal(err)
		}
		out := buf.String()
		for _, bad := range []string{"\x07", "\r", "\x1b]", "\x1b[2J", "\x1b[1;1H", "\x1b[8m", "\u009b"} {
			if strings.Contains(out, bad) {
				t.Errorf("color %v: %q reached the terminal:\n%q", color, bad, out)
			}
		}
		if !strings.Contains(out, `\x1b[2J`) || !strings.Contains(out, `\x07`) {
			t.Errorf("color %v: the escapes are not shown visibly:\n%s", color, out)
		}
		if color != strings.Contains(out, "\x1b[") {
			t.Errorf("color %v: theme colours present = %v", color, !color)
		}
	}
}

// FuzzTerminal: whatever comes in, what goes out is valid UTF-8 with no
// control character but newline and tab, and escaping is idempotent.
func FuzzTerminal(f *testing.F) {
	for _, s := range []string{"\x1b[2J", "\x00\x07\r", "\u009b", "\xff", "ok", "\u202e"} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, s string) {
		out := Terminal(s, nil)
		if !utf8.ValidString(out) {
			t.Fatalf("invalid UTF-8 out of %q: %q", s, out)
		}
		for _, r := range out {
			if r < 0x20 && r != '\n' && r != '\t' || r == 0x7f || r >= 0x80 && r <= 0x9f || isBidiControl(r) {
				t.Fatalf("control %U out of %q: %q", r, s, out)
			}
		}
		if again := Terminal(out, nil); again != out {
			t.Fatalf("not idempotent: %q -> %q -> %q", s, out, again)
		}
	})
}

func TestWrap(t *testing.T) {
	got := Wrap("inspect lock lock:payment:order:*; inspect store payments; a-very-long-word-that-is-longer-than-the-width", 20)
	for _, line := range strings.Split(got, "\n") {
		if runewidthOf(line) > 20 {
			t.Errorf("line %q is wider than 20", line)
		}
	}
	if strings.ReplaceAll(got, "\n", "") == "" || !strings.HasPrefix(got, "inspect lock") {
		t.Errorf("Wrap = %q", got)
	}
	if Wrap("short", 20) != "short" {
		t.Error("short text changed")
	}
}

func runewidthOf(s string) int { return utf8.RuneCountInString(s) }

// TestEvidenceStaysOnItsLine: a key or log line holding a newline cannot
// forge lines of its own under a finding (a Redis key "a\nerror X").
func TestEvidenceStaysOnItsLine(t *testing.T) {
	out := tableOfOne(t, "line\nbreak:lock", "lock line\nbreak:lock", "line\nerror FORGED_CODE everything failed")
	for _, l := range strings.Split(out, "\n") {
		if strings.HasPrefix(strings.TrimSpace(l), "error FORGED_CODE") || strings.HasPrefix(l, "break:lock") {
			t.Errorf("outside data made a line of its own: %q in\n%s", l, out)
		}
	}
	if !strings.Contains(out, `evidence: line\nerror FORGED_CODE everything failed`) {
		t.Errorf("the evidence is not shown on one line:\n%s", out)
	}
}

// tableOfOne is the table output of a report holding one finding.
func tableOfOne(t *testing.T, subject, message string, evidence ...string) string {
	t.Helper()
	r := &findings.Report{Command: "inspect lock"}
	r.Add(testRules[0].New(subject, message, evidence...))
	Prepare(r)
	p, _ := NewPrinter(FormatTable, options(findings.FailError))
	var buf bytes.Buffer
	if err := p.Print(&buf, Document{Report: r}); err != nil {
		t.Fatal(err)
	}
	return buf.String()
}

// TestTableEscapesBytesThatAreNotUTF8: a binary Redis key name as a
// findings table's subject reads as it does in the evidence under it
// (\xff), not as U+FFFD, which tablewriter would make of it.
func TestTableEscapesBytesThatAreNotUTF8(t *testing.T) {
	out := tableOfOne(t, "bin\xff\xfe:lock", "bin\xff\xfe:lock", "bin\xff\xfe:lock = tok")
	if strings.ContainsRune(out, utf8.RuneError) || !utf8.ValidString(out) {
		t.Fatalf("a byte that is not UTF-8 was lost or passed raw:\n%s", out)
	}
	table := strings.SplitN(out, "\n\n", 2)[0]
	if !strings.Contains(table, `bin\xff\xfe:lock`) {
		t.Fatalf("the table does not show the key as the evidence does:\n%s", out)
	}
}
