package report

import (
	"bytes"
	"io"
	"strings"
	"testing"

	"github.com/mattn/go-runewidth"
)

// fitTable is a table with a long name column, a styled short column and
// a long prose column, drawn to width (0: whole rows), with or without colour.
func fitTable(t *testing.T, width int, color bool) string {
	t.Helper()
	th := NewTheme(&bytes.Buffer{}, color)
	tb := NewTable("KEY", "STATE", "MESSAGE").Shorten(0)
	tb.Row("lock:payment:tenant-0042:order:000000000000000042", th.Severity(1, "expired"),
		th.Faint("the lease ended while its holder went on working for another 600 ms, so a second worker took the lock"))
	tb.Row("lock:x", "ok", "fine")
	var buf bytes.Buffer
	if err := tb.Render(&sized{Writer: &buf, width: width}); err != nil {
		t.Fatal(err)
	}
	return strings.ReplaceAll(buf.String(), tableLine, "")
}

func TestTableFitsWidth(t *testing.T) {
	whole := fitTable(t, 0, false)
	if !strings.Contains(whole, "lock:payment:tenant-0042:order:000000000000000042") || strings.Count(whole, "\n") != 3 {
		t.Fatalf("without a width a table keeps whole rows:\n%s", whole)
	}
	for _, width := range []int{40, 60, 80} {
		for _, color := range []bool{false, true} {
			out := fitTable(t, width, color)
			plain := stripEscapes(out)
			for _, line := range strings.Split(strings.TrimSuffix(plain, "\n"), "\n") {
				if w := runewidth.StringWidth(line); w > width {
					t.Errorf("width %d color %v: line of %d columns: %q", width, color, w, line)
				}
			}
			// words stay whole, the key keeps its start and end
			for _, word := range strings.Fields("the lease ended while its holder went on working for another 600 ms") {
				if !strings.Contains(plain, word) {
					t.Errorf("width %d: word %q cut:\n%s", width, word, plain)
				}
			}
			if !strings.Contains(plain, "lock:pa") || !strings.Contains(plain, "…") || !strings.Contains(plain, "0042") {
				t.Errorf("width %d: key not cut in the middle:\n%s", width, plain)
			}
			if color && strings.Count(out, "\x1b[2m") < 2 {
				t.Errorf("width %d: a wrapped styled cell reopens its style on each line:\n%q", width, out)
			}
		}
	}
}

func TestWrapStyledClosesEachLine(t *testing.T) {
	got := wrapStyled("\x1b[1mone two three\x1b[0m", 7)
	want := "\x1b[1mone two\x1b[0m\n\x1b[1mthree\x1b[0m"
	if got != want {
		t.Errorf("wrapStyled = %q, want %q", got, want)
	}
	if got := middle("lock:payment:order:42", 11); got != "lock:…er:42" {
		t.Errorf("middle = %q", got)
	}
	if got := trimBlankEnd("a \x1b[0m   \x1b[0m"); got != "a\x1b[0m\x1b[0m" {
		t.Errorf("trimBlankEnd = %q", got)
	}
}

// TestRoomCutsToTheTerminal: a value shown cut takes the rest of a
// terminal's line, no more than asked, some columns however narrow the
// line; piped, and when no cut was asked for, it keeps its own limit.
func TestRoomCutsToTheTerminal(t *testing.T) {
	var buf bytes.Buffer
	for _, c := range []struct {
		w                 io.Writer
		used, limit, want int
	}{
		{Fitted(&buf, 80), 20, 160, 60},
		{Fitted(&buf, 200), 20, 160, 160},
		{Fitted(&buf, 30), 20, 160, 20},
		{Fitted(&buf, 80), 20, 0, 0},
		{&buf, 20, 160, 160},
	} {
		if got := Room(c.w, c.used, c.limit); got != c.want {
			t.Errorf("Room(width %d, used %d, limit %d) = %d, want %d", Width(c.w), c.used, c.limit, got, c.want)
		}
	}
}
