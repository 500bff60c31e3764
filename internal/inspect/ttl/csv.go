package ttl

import (
	"bufio"
	"bytes"
	"context"
	"encoding/csv"
	"errors"
	"fmt"
	"io"

	"github.com/dupctl/dupctl/internal/logs"
	"github.com/dupctl/dupctl/internal/platform/english"
	"github.com/dupctl/dupctl/internal/platform/progress"
	"github.com/dupctl/dupctl/internal/platform/text"
)

// maxLine is the longest row read; a longer one is skipped and counted,
// up to the log reader's limit (logs.DefaultMaxLine), past which the
// input is not a table (an input error naming where the row starts).
const maxLine = 1 << 20

// ReadCSV reads runs from a table in text: comma-, tab- or
// semicolon-separated, with or without a header (see KnownColumns), or
// one duration per line. Rows that cannot be read are skipped and counted
// with their line number; a table that names no duration, or lacks what
// the options need, is an error. ctx ends the read (a *logs.StoppedError
// saying what was read).
func ReadCSV(ctx context.Context, r io.Reader, name string, o TableOptions, c *Collector, meter progress.Meter) error {
	meter = progress.Or(meter)
	c.Source(name)
	br := bufio.NewReaderSize(r, maxLine)
	t := csvTable{name: name, o: o, c: c}
	var line, read, offset int64
	for {
		raw, err := br.ReadSlice('\n')
		start := offset
		offset += int64(len(raw))
		if errors.Is(err, bufio.ErrBufferFull) {
			line++
			n, derr := discardLine(ctx, br, int64(len(raw)))
			read += int64(len(raw)) + n
			offset += n
			if derr == errTooLong {
				return logs.LineTooLong(name, line, start)
			}
			c.Skip(fmt.Sprintf("%s:%d: line longer than %d bytes", name, line, maxLine))
			err = derr
		} else if len(raw) > 0 {
			line++
			read += int64(len(raw))
			if perr := t.row(line, trimEOL(raw)); perr != nil {
				return perr
			}
		}
		if line&0xffff == 0 {
			meter.Add(read)
			read = 0
			if cerr := ctx.Err(); cerr != nil {
				err = cerr
			}
		}
		if err == io.EOF {
			break
		}
		if err != nil {
			return stoppedCSV(ctx, fmt.Errorf("read %s: %w", name, err), offset, line, name)
		}
	}
	meter.Add(read)
	return nil
}

// stoppedCSV says what was read when ctx ended the read.
func stoppedCSV(ctx context.Context, err error, offset, lines int64, name string) error {
	if ctx.Err() == nil {
		return err
	}
	return &logs.StoppedError{Read: fmt.Sprintf("%s, %s of %s", logs.Size(offset), english.Count(lines, "line", "lines"), name),
		Err: ctx.Err()}
}

var errTooLong = errors.New("row too long")

// discardLine skips the rest of an over-long line (of which had bytes
// are read), up to logs.DefaultMaxLine in all (errTooLong past it).
func discardLine(ctx context.Context, br *bufio.Reader, had int64) (int64, error) {
	var n int64
	for {
		if had+n > logs.DefaultMaxLine {
			return n, errTooLong
		}
		if err := ctx.Err(); err != nil {
			return n, err
		}
		b, err := br.ReadSlice('\n')
		n += int64(len(b))
		if !errors.Is(err, bufio.ErrBufferFull) {
			return n, err
		}
	}
}

func trimEOL(b []byte) []byte {
	b = bytes.TrimSuffix(b, []byte{'\n'})
	return bytes.TrimSuffix(b, []byte{'\r'})
}

// csvTable is the state of one table being read.
type csvTable struct {
	name   string
	o      TableOptions
	c      *Collector
	sep    byte
	cols   *columns
	header []string
	cells  [][]byte
}

// row reads one line. It returns an error only for a table it cannot
// read at all.
func (t *csvTable) row(line int64, b []byte) error {
	if len(bytes.TrimSpace(b)) == 0 || b[0] == '#' {
		return nil
	}
	if t.cols == nil {
		return t.first(line, b)
	}
	t.record(line, b)
	return nil
}

// first decides the separator and the layout from the first line: a
// header when its names map to a duration, else positional columns.
func (t *csvTable) first(line int64, b []byte) error {
	t.sep = detectSep(b)
	cells := t.split(b)
	names := make([]string, len(cells))
	for i, cell := range cells {
		names[i] = string(bytes.TrimSpace(cell))
	}
	if cols, ok := byName(names); ok {
		t.cols, t.header = &cols, names
		return t.cols.check(t.c.opts.IncludeWait)
	}
	cols := byPosition(len(cells))
	t.cols = &cols
	if err := t.cols.check(t.c.opts.IncludeWait); err != nil {
		return fmt.Errorf("%s: %w (columns: job type, duration, queue wait; or a header)", t.name, err)
	}
	if _, _, err := cols.decode(cells, t.o.unit()); err != nil && errors.Is(err, errNotDuration) {
		return fmt.Errorf("%s:%d: %q is neither a row nor a header naming a duration column: name the columns %s",
			t.name, line, text.Clip(string(b), 63, "..."), KnownColumns)
	}
	t.record(line, b)
	return nil
}

// detectSep picks the separator of the first line: tab, comma,
// semicolon, or none (one value per line).
func detectSep(b []byte) byte {
	for _, s := range []byte{'\t', ',', ';'} {
		if bytes.IndexByte(b, s) >= 0 {
			return s
		}
	}
	return 0
}

// split cuts a line into cells, reusing one slice; a line with quotes
// goes through encoding/csv.
func (t *csvTable) split(b []byte) [][]byte {
	t.cells = t.cells[:0]
	if t.sep == 0 {
		t.cells = append(t.cells, b)
		return t.cells
	}
	if bytes.IndexByte(b, '"') >= 0 {
		cr := csv.NewReader(bytes.NewReader(b))
		cr.Comma = rune(t.sep)
		cr.FieldsPerRecord = -1
		cr.LazyQuotes = true
		if rec, err := cr.Read(); err == nil {
			for _, f := range rec {
				t.cells = append(t.cells, []byte(f))
			}
			return t.cells
		}
	}
	for {
		i := bytes.IndexByte(b, t.sep)
		if i < 0 {
			t.cells = append(t.cells, b)
			return t.cells
		}
		t.cells = append(t.cells, b[:i])
		b = b[i+1:]
	}
}

func (t *csvTable) record(line int64, b []byte) {
	if bytes.Count(b, []byte{'"'})%2 == 1 {
		// A quote that never closes: a row cut short (a truncated
		// export) or one that spans lines; either way its cells cannot
		// be trusted.
		t.c.Skip(fmt.Sprintf("%s:%d: unterminated quote (a truncated row, or a cell that spans lines)", t.name, line))
		return
	}
	typ, run, err := t.cols.decode(t.split(b), t.o.unit())
	if err != nil {
		t.c.Skip(fmt.Sprintf("%s:%d: %v", t.name, line, err))
		return
	}
	var s *series
	if typ == nil {
		s = t.c.series(t.o.defaultType())
	} else {
		s = t.c.seriesBytes(typ)
	}
	if why := t.c.add(s, run); why != "" {
		t.c.Skip(fmt.Sprintf("%s:%d: %s", t.name, line, why))
	}
}
