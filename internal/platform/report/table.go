package report

import (
	"bytes"
	"io"
	"strings"

	"github.com/olekukonko/tablewriter"
	"github.com/olekukonko/tablewriter/renderer"
	"github.com/olekukonko/tablewriter/tw"
)

// Table is an aligned, borderless table: the shape every dupctl view uses,
// like gh's or kubectl's. Cells may carry ANSI styling; widths ignore it.
type Table struct {
	header []string
	rows   [][]string
	right  map[int]bool
	// shorten and fixed say how a column narrows (fit.go)
	shorten, fixed map[int]bool
}

// NewTable starts a table with these column headings.
func NewTable(header ...string) *Table {
	return &Table{header: header, right: map[int]bool{}, shorten: map[int]bool{}, fixed: map[int]bool{}}
}

// AlignRight right-aligns the given columns (numbers).
func (t *Table) AlignRight(cols ...int) *Table {
	for _, c := range cols {
		t.right[c] = true
	}
	return t
}

// Row appends a row.
func (t *Table) Row(cells ...string) { t.rows = append(t.rows, cells) }

// Render writes the table, trimming trailing blanks from every line; on a
// terminal (or with $COLUMNS) fitted to its width (fit.go).
func (t *Table) Render(w io.Writer) error {
	switch v := w.(type) {
	case *htmlView:
		v.table(t)
		return nil
	case *mdView:
		v.table(t)
		return nil
	}
	var buf bytes.Buffer
	header, rows, space := t.fit(Width(w))
	align := make([]tw.Align, len(t.header))
	for i := range align {
		align[i] = tw.AlignLeft
		if t.right[i] {
			align[i] = tw.AlignRight
		}
	}
	tbl := tablewriter.NewTable(&buf,
		tablewriter.WithRenderer(renderer.NewBlueprint(tw.Rendition{
			Borders: tw.BorderNone,
			Symbols: tw.NewSymbols(tw.StyleNone),
			Settings: tw.Settings{
				Separators: tw.Separators{BetweenColumns: tw.Off, BetweenRows: tw.Off},
				Lines:      tw.Lines{ShowHeaderLine: tw.Off},
			},
		})),
		tablewriter.WithHeaderAutoFormat(tw.Off),
		tablewriter.WithHeaderAlignment(tw.AlignLeft),
		tablewriter.WithRowAlignmentConfig(tw.CellAlignment{PerColumn: align}),
		tablewriter.WithPadding(tw.Padding{Left: "", Right: strings.Repeat(" ", space), Overwrite: true}),
		tablewriter.WithTrimSpace(tw.Off),
		tablewriter.WithRowAutoWrap(tw.WrapNone),
		tablewriter.WithHeaderAutoWrap(tw.WrapNone),
	)
	tbl.Header(header)
	for _, r := range rows {
		cells := make([]string, len(r))
		for i, c := range r {
			cells[i] = escapeInvalid(c)
		}
		if err := tbl.Append(cells); err != nil {
			return err
		}
	}
	if err := tbl.Render(); err != nil {
		return err
	}
	for _, line := range strings.SplitAfter(buf.String(), "\n") {
		if line == "" {
			continue
		}
		// tablewriter pads a styled cell and then resets its style: the
		// blanks before a line's closing escapes go too.
		trimmed := trimBlankEnd(strings.TrimRight(line, "\n"))
		if s, ok := w.(*sized); ok && s.width > 0 && !s.plain {
			trimmed = tableLine + trimmed
		}
		if _, err := io.WriteString(w, trimmed+"\n"); err != nil {
			return err
		}
	}
	return nil
}
