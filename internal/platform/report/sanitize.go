package report

import (
	"fmt"
	"strings"
	"unicode/utf8"

	"github.com/mattn/go-runewidth"
)

// Terminal output carries outside data: Redis keys and values, message ids,
// headers and bodies, log lines, CSV cells. A terminal obeys the control
// bytes in them (ESC sequences that move the cursor, clear the screen,
// retitle the window, write the clipboard; BEL; CR that overwrites a line),
// so a table must never pass them raw. Terminal escapes every control
// character visibly (\x1b, \r, \u009b) except newlines, tabs and the exact
// colour sequences dupctl's own theme writes. JSON and JUnit keep control
// characters (their encoders escape them), but not bytes that are not
// UTF-8: encoding/json writes each as U+FFFD, so a binary Redis key name
// cannot be told exactly from a JSON string (the table shows it as \xff;
// inspect lock adds key_base64 for such a key).

// Terminal returns s safe to print on a terminal: C0 and C1 control
// characters, DEL, bidirectional overrides and invalid UTF-8 written as
// visible escapes; keep lists the escape sequences to pass as they are
// (the theme's own colours).
func Terminal(s string, keep []string) string {
	if isPlain(s) {
		return s
	}
	var b strings.Builder
	b.Grow(len(s) + 16)
	for i := 0; i < len(s); {
		c := s[i]
		if c == 0x1b {
			if k := kept(s[i:], keep); k != "" {
				b.WriteString(k)
				i += len(k)
				continue
			}
		}
		r, size := utf8.DecodeRuneInString(s[i:])
		switch {
		case r == utf8.RuneError && size == 1:
			fmt.Fprintf(&b, `\x%02x`, c)
		case r == '\n' || r == '\t':
			b.WriteRune(r)
		case r < 0x20 || r == 0x7f:
			fmt.Fprintf(&b, `\x%02x`, r)
		case r >= 0x80 && r <= 0x9f, isBidiControl(r):
			fmt.Fprintf(&b, `\u%04x`, r)
		default:
			b.WriteString(s[i : i+size])
		}
		i += size
	}
	return b.String()
}

// Cell is outside data as one table cell or line: Terminal without
// keeping anything, newlines escaped too, and cut to width display
// columns (0: no limit) with an ellipsis.
func Cell(s string, width int) string {
	s = strings.ReplaceAll(strings.ReplaceAll(Terminal(s, nil), "\n", `\n`), "\t", `\t`)
	if width > 0 && runewidth.StringWidth(s) > width {
		s = runewidth.Truncate(s, width, "…")
	}
	return s
}

// escapeInvalid writes each byte of s that is not UTF-8 as \xNN, as
// Terminal does, and leaves the rest: for text that passes through
// tablewriter, which would turn such a byte into U+FFFD before Terminal
// sees it (a binary key name would then read one way in a table and
// another in the lines under it).
func escapeInvalid(s string) string {
	if utf8.ValidString(s) {
		return s
	}
	var b strings.Builder
	for i := 0; i < len(s); {
		r, size := utf8.DecodeRuneInString(s[i:])
		if r == utf8.RuneError && size == 1 {
			fmt.Fprintf(&b, `\x%02x`, s[i])
		} else {
			b.WriteString(s[i : i+size])
		}
		i += size
	}
	return b.String()
}

func isPlain(s string) bool {
	for i := 0; i < len(s); i++ {
		c := s[i]
		if c < 0x20 && c != '\n' && c != '\t' || c == 0x7f || c >= 0x80 {
			return false
		}
	}
	return true
}

func kept(s string, keep []string) string {
	for _, k := range keep {
		if strings.HasPrefix(s, k) {
			return k
		}
	}
	return ""
}

// isBidiControl reports the Unicode bidirectional formatting characters
// that reorder what a terminal shows ("Trojan Source").
func isBidiControl(r rune) bool {
	return r >= 0x202a && r <= 0x202e || r >= 0x2066 && r <= 0x2069 || r == 0x200e || r == 0x200f || r == 0x061c
}

// Wrap breaks text into lines of at most width display columns, at spaces
// (a word longer than width is cut), for a table cell that would otherwise
// run past the terminal's edge.
func Wrap(s string, width int) string {
	if width <= 0 || runewidth.StringWidth(s) <= width {
		return s
	}
	var lines []string
	var line strings.Builder
	lw := 0
	for _, word := range strings.Fields(s) {
		ww := runewidth.StringWidth(word)
		for ww > width {
			if lw > 0 {
				lines = append(lines, line.String())
				line.Reset()
				lw = 0
			}
			head := runewidth.Truncate(word, width, "")
			lines = append(lines, head)
			word = word[len(head):]
			ww = runewidth.StringWidth(word)
		}
		switch {
		case lw == 0:
		case lw+1+ww > width:
			lines = append(lines, line.String())
			line.Reset()
			lw = 0
		default:
			line.WriteByte(' ')
			lw++
		}
		line.WriteString(word)
		lw += ww
	}
	if lw > 0 {
		lines = append(lines, line.String())
	}
	return strings.Join(lines, "\n")
}
