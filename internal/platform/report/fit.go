package report

import (
	"io"
	"slices"
	"strings"
	"unicode/utf8"

	"github.com/mattn/go-runewidth"
)

// gap is the blank between two columns of a table.
const gap = 2

// tableLine starts each line a table writes for a terminal, so that fold
// leaves it as the table drew it; fold drops it.
const tableLine = "\uE001"

// sized is the table printer's buffer, carrying how many columns a line may
// take, so that every view's tables fit without each view asking.
type sized struct {
	io.Writer
	width int
	plain bool // (Fitted: no one folds its prose, so no tableLine marks)
}

// Fitted is w for a table drawn outside a report (explain's list): its
// tables fit width display columns (0: whole rows).
func Fitted(w io.Writer, width int) io.Writer { return &sized{Writer: w, width: width, plain: true} }

// Width is how many display columns a line written to w may take: the
// terminal's width (or $COLUMNS) for table output, 0 (no limit) when the
// output goes to a file or a pipe, and for HTML and Markdown views.
func Width(w io.Writer) int {
	if s, ok := w.(*sized); ok {
		return s.width
	}
	return 0
}

// Room is how many display columns a value cut to limit (a header, a
// body, shown shortened anyway) may take on a line of w after used
// columns: on a terminal it is cut where the line ends rather than left
// for the terminal to wrap, keeping at least 20 columns; limit as it is
// when w is not a terminal or when limit is 0 (no cut asked for).
func Room(w io.Writer, used, limit int) int {
	if width := Width(w); width > 0 && limit > 0 {
		return min(limit, max(width-used, 20))
	}
	return limit
}

// Shorten marks columns whose cells are names (keys, subjects) cut in the
// middle with an ellipsis rather than wrapped when the table must narrow:
// their start and end tell them apart (the full name stays in JSON).
func (t *Table) Shorten(cols ...int) *Table {
	for _, c := range cols {
		t.shorten[c] = true
	}
	return t
}

// Fixed marks columns drawn to a width (a chart's axis) that are never
// wrapped nor cut; the other columns narrow around them.
func (t *Table) Fixed(cols ...int) *Table {
	for _, c := range cols {
		t.fixed[c] = true
	}
	return t
}

// fit returns the header and rows fitted to width display columns: the
// narrow columns keep their width, the widest give up columns evenly,
// cells wrap at spaces (a word is cut only when it is wider than its
// column), names are cut in the middle. Escapes count for nothing, and a
// style that spans a break is closed and reopened on the next line.
func (t *Table) fit(width int) ([]string, [][]string, int) {
	n := len(t.header)
	for _, r := range t.rows {
		n = max(n, len(r))
	}
	if width <= 0 || n == 0 {
		return t.header, t.rows, gap
	}
	nat, floor := make([]int, n), make([]int, n)
	words, heads := make([]int, n), make([]int, n)
	for i := 0; i < n; i++ {
		if i < len(t.header) {
			nat[i], heads[i] = measure(t.header[i])
		}
	}
	for _, r := range t.rows {
		for i, c := range r {
			w, word := measure(c)
			nat[i], words[i] = max(nat[i], w), max(words[i], word)
		}
	}
	budget := width - gap*(n-1)
	if sum(nat) <= budget {
		return t.header, t.rows, gap
	}
	wordCap := max(14, budget/n)
	for i := range floor {
		switch {
		case t.fixed[i]:
			floor[i] = nat[i]
		case t.shorten[i]:
			floor[i] = min(nat[i], max(heads[i], 16))
		default:
			floor[i] = min(nat[i], max(heads[i], min(words[i], wordCap)))
		}
	}
	space := gap
	if sum(floor) > budget {
		// many columns on a narrow terminal: one blank between them
		space, budget = 1, width-(n-1)
	}
	alloc := allocate(nat, floor, t.fixed, budget)
	header := make([]string, len(t.header))
	for i, h := range t.header {
		header[i] = wrapStyled(h, alloc[i])
	}
	rows := make([][]string, len(t.rows))
	for j, r := range t.rows {
		rows[j] = make([]string, len(r))
		for i, c := range r {
			switch {
			case t.fixed[i]:
				rows[j][i] = c
			case t.shorten[i]:
				rows[j][i] = shortenLines(c, alloc[i])
			default:
				rows[j][i] = wrapStyled(c, alloc[i])
			}
		}
	}
	return header, rows, space
}

func sum(a []int) int {
	s := 0
	for _, v := range a {
		s += v
	}
	return s
}

// allocate shares budget columns: every column at least its floor (floors
// too wide for the budget narrow first, widest first), then a
// level raised until the budget is spent, each column taking the level or
// its natural width, whichever is less.
func allocate(nat, floor []int, fixed map[int]bool, budget int) []int {
	// (down to 4 columns each, then, with many columns, to 2)
	for least := 4; sum(floor) > budget && least >= 2; least -= 2 {
		for sum(floor) > budget {
			widest := -1
			for i, f := range floor {
				if !fixed[i] && f > least && (widest < 0 || f > floor[widest]) {
					widest = i
				}
			}
			if widest < 0 {
				break
			}
			floor[widest]--
		}
	}
	alloc := make([]int, len(nat))
	at := func(level int) []int {
		out := make([]int, len(nat))
		for i := range out {
			out[i] = max(floor[i], min(nat[i], level))
		}
		return out
	}
	level := 0
	for level < slices.Max(nat) && sum(at(level+1)) <= budget {
		level++
	}
	copy(alloc, at(level))
	// The columns the level left short take what remains, one each.
	for left := budget - sum(alloc); left > 0; {
		given := false
		for i := range alloc {
			if left > 0 && alloc[i] < nat[i] {
				alloc[i]++
				left--
				given = true
			}
		}
		if !given {
			break
		}
	}
	return alloc
}

// measure is a cell's widest line and its widest word, escapes aside.
func measure(s string) (width, word int) {
	for _, line := range strings.Split(stripEscapes(s), "\n") {
		width = max(width, runewidth.StringWidth(line))
		for _, f := range strings.Fields(line) {
			word = max(word, runewidth.StringWidth(f))
		}
	}
	return width, word
}

// stripEscapes drops ANSI CSI sequences.
func stripEscapes(s string) string {
	if !strings.Contains(s, "\x1b[") {
		return s
	}
	var b strings.Builder
	for s != "" {
		if seq := escapeAt(s); seq != "" {
			s = s[len(seq):]
			continue
		}
		b.WriteByte(s[0])
		s = s[1:]
	}
	return b.String()
}

// escapeAt is the CSI sequence s starts with, or "".
func escapeAt(s string) string {
	if !strings.HasPrefix(s, "\x1b[") {
		return ""
	}
	j := strings.IndexFunc(s[2:], func(r rune) bool { return r >= 0x40 && r <= 0x7e })
	if j < 0 {
		return ""
	}
	return s[:2+j+1]
}

// shortenLines cuts each line of a name wider than width in the middle,
// "lock:payment:…:order:42"; a styled name loses its style when cut.
func shortenLines(s string, width int) string {
	lines := strings.Split(s, "\n")
	for i, line := range lines {
		plain := stripEscapes(line)
		if runewidth.StringWidth(plain) > width {
			lines[i] = middle(plain, width)
		}
	}
	return strings.Join(lines, "\n")
}

// middle keeps s's start and end around an ellipsis, width columns in all.
func middle(s string, width int) string {
	if width < 3 {
		return runewidth.Truncate(s, width, "")
	}
	tail := (width - 1) / 2
	head := width - 1 - tail
	rs := []rune(s)
	end, w := len(rs), 0
	for end > 0 && w+runewidth.RuneWidth(rs[end-1]) <= tail {
		end--
		w += runewidth.RuneWidth(rs[end])
	}
	return runewidth.Truncate(string(rs[:end]), head, "") + "…" + string(rs[end:])
}

// styledLine builds one wrapped line, remembering the style in force so a
// break can close it and the next line reopen it.
type styledLine struct {
	lines  []string
	cur    strings.Builder
	w      int
	active string
	keep   bool // words wider than the line stay whole (prose)
}

func (l *styledLine) escape(seq string) {
	l.cur.WriteString(seq)
	if seq == "\x1b[0m" || seq == "\x1b[m" {
		l.active = ""
	} else {
		l.active += seq
	}
}

func (l *styledLine) newline() {
	line := l.cur.String()
	if l.active != "" {
		line += "\x1b[0m"
	}
	l.lines = append(l.lines, line)
	l.cur.Reset()
	l.cur.WriteString(l.active)
	l.w = 0
}

// word writes a run of non-blank text (escapes inside), cutting it when
// it is wider than width.
func (l *styledLine) word(s string, width int) {
	for s != "" {
		if seq := escapeAt(s); seq != "" {
			l.escape(seq)
			s = s[len(seq):]
			continue
		}
		r, size := utf8.DecodeRuneInString(s)
		if rw := runewidth.RuneWidth(r); !l.keep && l.w > 0 && l.w+rw > width {
			l.newline()
		}
		l.cur.WriteString(s[:size])
		l.w += runewidth.RuneWidth(r)
		s = s[size:]
	}
}

// wrapStyled wraps each line of s at spaces to width display columns.
func wrapStyled(s string, width int) string {
	if width <= 0 {
		return s
	}
	var out []string
	for _, line := range strings.Split(s, "\n") {
		if w, _ := measure(line); w <= width {
			out = append(out, line)
			continue
		}
		out = append(out, wrapLine(line, width, false)...)
	}
	return strings.Join(out, "\n")
}

func wrapLine(line string, width int, keep bool) []string {
	l := &styledLine{keep: keep}
	for _, tok := range splitBlanks(line) {
		if strings.TrimLeft(tok, " ") == "" {
			// blanks: kept inside a line, dropped at a break
			if l.w > 0 && l.w+len(tok) < width {
				l.cur.WriteString(tok)
				l.w += len(tok)
			} else if l.w > 0 {
				l.newline()
			}
			continue
		}
		ww := runewidth.StringWidth(stripEscapes(tok))
		if l.w > 0 && ww > 0 && l.w+ww > width {
			l.newline()
		}
		l.word(tok, width)
	}
	l.lines = append(l.lines, l.cur.String())
	for i, s := range l.lines {
		l.lines[i] = trimBlankEnd(s)
	}
	return l.lines
}

// splitBlanks cuts a line into runs of blanks and runs of everything else.
func splitBlanks(s string) []string {
	var out []string
	for s != "" {
		blank := s[0] == ' '
		i := strings.IndexFunc(s, func(r rune) bool { return (r == ' ') != blank })
		if i < 0 {
			i = len(s)
		}
		out = append(out, s[:i])
		s = s[i:]
	}
	return out
}

// trimBlankEnd drops blanks at the end of a line, also those before its
// closing escapes (tablewriter pads a styled cell, then resets).
func trimBlankEnd(s string) string {
	var tail []string
	for {
		s = strings.TrimRight(s, " ")
		i := strings.LastIndex(s, "\x1b[")
		if i < 0 || escapeAt(s[i:]) != s[i:] {
			break
		}
		tail = append([]string{s[i:]}, tail...)
		s = s[:i]
	}
	return s + strings.Join(tail, "")
}

// fold wraps the lines of a view's prose (headlines, evidence, fixes)
// wider than width at spaces, each continuation indented two more than
// its line. A line holding a word wider than that (a replay command's
// token, a URL) is left whole for the terminal to wrap, so that the
// command still copies as one line. Tables already fit.
func fold(s string, width int) string {
	if width <= 0 {
		return s
	}
	lines := strings.Split(s, "\n")
	var out []string
	for _, line := range lines {
		if l, ok := strings.CutPrefix(line, tableLine); ok {
			out = append(out, l) // fitted already, or too many columns to fit
			continue
		}
		body := strings.TrimLeft(line, " ")
		indent := strings.Repeat(" ", len(line)-len(body))
		room := max(width-len(indent)-2, 20)
		if w, word := measure(line); w <= width || word > room {
			out = append(out, line)
			continue
		}
		for i, part := range wrapLine(body, room, true) {
			if i > 0 {
				part = "  " + part
			}
			out = append(out, indent+part)
		}
	}
	return strings.Join(out, "\n")
}
