package logs

import (
	"bufio"
	"bytes"
	"compress/gzip"
	"context"
	"encoding/csv"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"
	"path/filepath"
	"slices"
	"strings"

	"github.com/dupctl/dupctl/internal/platform/problem"
)

// Source is one input: a file, or a stream such as stdin.
type Source interface {
	// Name is what evidence lines cite ("app.log", "-").
	Name() string
	// Open starts reading from the beginning. A gzip stream is
	// decompressed by the scanner, not by Open.
	Open(ctx context.Context) (io.ReadCloser, error)
	// Size in bytes on disk, or -1 when unknown.
	Size() int64
	// Rewindable reports whether Open may be called again (files: yes;
	// stdin: no), which a second, selective pass needs.
	Rewindable() bool
}

type fileSource struct {
	path string
	size int64
}

func (f fileSource) Name() string     { return f.path }
func (f fileSource) Size() int64      { return f.size }
func (f fileSource) Rewindable() bool { return true }
func (f fileSource) Open(ctx context.Context) (io.ReadCloser, error) {
	if err := ctx.Err(); err != nil {
		return nil, err
	}
	fh, err := OpenFile(ctx, f.path)
	if err != nil {
		return nil, err
	}
	return readCloser{FileReader(ctx, fh), fh}, nil
}

// readCloser reads through one reader and closes another.
type readCloser struct {
	io.Reader
	io.Closer
}

type readerSource struct {
	name   string
	r      io.Reader
	opened bool
}

func (s *readerSource) Name() string     { return s.name }
func (s *readerSource) Size() int64      { return -1 }
func (s *readerSource) Rewindable() bool { return false }
func (s *readerSource) Open(ctx context.Context) (io.ReadCloser, error) {
	if s.opened {
		return nil, fmt.Errorf("%s can be read only once", s.name)
	}
	s.opened = true
	return io.NopCloser(Interruptible(ctx, s.r)), nil
}

// ReaderSource wraps a stream (stdin) as a source that reads once.
func ReaderSource(name string, r io.Reader) Source { return &readerSource{name: name, r: r} }

// File returns a source for one file path.
func File(path string) (Source, error) {
	st, err := os.Stat(path)
	if err != nil {
		return nil, err
	}
	return fileSource{path: path, size: st.Size()}, nil
}

// Expand turns command-line arguments into sources: "-" is stdin, a
// directory is every regular, non-hidden file under it (sorted), a pattern
// with * ? [ is a glob, anything else a file.
func Expand(args []string, stdin io.Reader) ([]Source, error) {
	var out []Source
	seen := map[string]bool{}
	stdinUsed := false
	for _, a := range args {
		if a == "-" {
			if stdinUsed {
				return nil, errors.New(`"-" (stdin) given twice`)
			}
			stdinUsed = true
			out = append(out, ReaderSource("-", stdin))
			continue
		}
		paths, err := expandArg(a)
		if err != nil {
			return nil, err
		}
		for _, p := range paths {
			if seen[p] {
				continue
			}
			seen[p] = true
			s, err := File(p)
			if err != nil {
				return nil, err
			}
			out = append(out, s)
		}
	}
	return out, nil
}

// Rescannable are the arguments a follow lists again for files that
// appear later: globs and directories (a file named alone, or stdin, is
// what it is).
func Rescannable(args []string) []string {
	var out []string
	for _, a := range args {
		if a == "-" {
			continue
		}
		if st, err := os.Stat(a); strings.ContainsAny(a, "*?[") || err == nil && st.IsDir() {
			out = append(out, a)
		}
	}
	return out
}

// expandArg lists the files one argument names: a glob's regular files, a
// file, or a directory's files below it (hidden ones left out), sorted.
func expandArg(a string) ([]string, error) {
	if strings.ContainsAny(a, "*?[") {
		ms, err := filepath.Glob(a)
		if err != nil {
			return nil, fmt.Errorf("pattern %q: %w", a, err)
		}
		if len(ms) == 0 {
			return nil, fmt.Errorf("no file matches %q", a)
		}
		return slices.DeleteFunc(ms, func(m string) bool {
			st, err := os.Stat(m)
			return err != nil || !st.Mode().IsRegular()
		}), nil
	}
	st, err := os.Stat(a)
	if err != nil {
		return nil, fmt.Errorf("read %s: %w", a, unwrapPathErr(err))
	}
	if !st.IsDir() {
		return []string{a}, nil
	}
	var files []string
	err = filepath.WalkDir(a, func(p string, d fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		if p != a && strings.HasPrefix(d.Name(), ".") {
			if d.IsDir() {
				return filepath.SkipDir
			}
			return nil
		}
		if d.Type().IsRegular() {
			files = append(files, p)
		}
		return nil
	})
	if err != nil {
		return nil, fmt.Errorf("read directory %s: %w", a, err)
	}
	if len(files) == 0 {
		return nil, fmt.Errorf("directory %s holds no files", a)
	}
	slices.Sort(files)
	return files, nil
}

func unwrapPathErr(err error) error {
	var pe *fs.PathError
	if errors.As(err, &pe) {
		return pe.Err
	}
	return err
}

// decode returns a reader of r's content as JSON lines: decompressed when
// it starts with the gzip magic number (whatever the file is called), a
// JSON array (an export) turned into one line per element, a CSV file
// (by its name) into one JSON object per row keyed by the header. Line
// numbers stay those of the rows (the header is a blank line). An element
// or a row longer than maxLine is an input error. The returned func
// releases what decoding holds (a decompressor, a converting goroutine).
func decode(r io.Reader, name string, maxLine int) (io.Reader, func() error, error) {
	br := bufio.NewReaderSize(r, 256<<10)
	head, err := br.Peek(2)
	if err != nil && err != io.EOF && !errors.Is(err, bufio.ErrBufferFull) {
		return nil, nil, err
	}
	var in io.Reader = br
	closeFn := func() error { return nil }
	if len(head) == 2 && head[0] == 0x1f && head[1] == 0x8b {
		zr, err := gzip.NewReader(br)
		if err != nil {
			return nil, nil, fmt.Errorf("gzip: %w", err)
		}
		in, closeFn = bufio.NewReaderSize(zr, 256<<10), zr.Close
		name = strings.TrimSuffix(name, ".gz")
	}
	bin := in.(*bufio.Reader)
	piped := func(fill func(io.Writer) error) (io.Reader, func() error, error) {
		pr := pipe(fill)
		return pr, func() error { pr.Close(); return closeFn() }, nil
	}
	if strings.HasSuffix(strings.ToLower(name), ".csv") {
		return piped(func(w io.Writer) error { return csvLines(bin, w, name, maxLine) })
	}
	// A JSON array starts with '[' after blanks (and a UTF-8 BOM), looked
	// for in what the reader holds: lines are left unread, so that their
	// numbers stay the file's.
	head, _ = bin.Peek(bin.Size())
	if i := bytes.IndexFunc(head, func(r rune) bool { return !strings.ContainsRune(" \t\r\n\ufeff", r) }); i >= 0 && head[i] == '[' &&
		jsonArrayStart(head[i:]) {
		bin.Discard(i) //nolint:errcheck // peeked
		return piped(func(w io.Writer) error { return arrayLines(bin, w, name, maxLine) })
	}
	return bin, closeFn, nil
}

// pipe runs fill in a goroutine and reads what it writes; closing the
// reader ends the goroutine at its next write.
func pipe(fill func(io.Writer) error) *io.PipeReader {
	pr, pw := io.Pipe()
	go func() {
		bw := bufio.NewWriterSize(pw, 256<<10)
		err := fill(bw)
		if err == nil {
			err = bw.Flush()
		}
		pw.CloseWithError(err)
	}()
	return pr
}

// recordLimit fails a read once one record (a CSV row, a JSON array
// element) has taken more than max bytes: the decoders would hold all of
// it. The decoder calls next at each record's start.
type recordLimit struct {
	r    io.Reader
	n    int64
	max  int64
	fail func() error
}

func (l *recordLimit) next() { l.n = 0 }

func (l *recordLimit) Read(p []byte) (int, error) {
	if l.n > l.max {
		return 0, l.fail()
	}
	n, err := l.r.Read(p)
	l.n += int64(n)
	return n, err
}

// arrayLines writes each element of a JSON array as one line.
func arrayLines(r io.Reader, w io.Writer, name string, maxLine int) error {
	var dec *json.Decoder
	var n int64
	lim := &recordLimit{r: r, max: int64(maxLine), fail: func() error {
		return lineTooLong(name, n+1, dec.InputOffset(), maxLine)
	}}
	dec = json.NewDecoder(lim)
	if _, err := dec.Token(); err != nil {
		return err
	}
	var buf bytes.Buffer
	for ; dec.More(); n++ {
		lim.next()
		var raw json.RawMessage
		if err := dec.Decode(&raw); err != nil {
			return limitError(err, "JSON array element: %w")
		}
		buf.Reset()
		if err := json.Compact(&buf, raw); err != nil {
			return err
		}
		buf.WriteByte('\n')
		if _, err := w.Write(buf.Bytes()); err != nil {
			return err
		}
	}
	return nil
}

// limitError keeps an input error (a record too long) as it is, and
// words any other.
func limitError(err error, format string) error {
	var in *problem.Input
	if errors.As(err, &in) || errors.Is(err, context.Canceled) || errors.Is(err, context.DeadlineExceeded) {
		return err
	}
	return fmt.Errorf(format, err)
}

// csvLines writes each CSV row as a JSON object keyed by the header.
func csvLines(r io.Reader, w io.Writer, name string, maxLine int) error {
	var cr *csv.Reader
	var row int64
	lim := &recordLimit{r: r, max: int64(maxLine), fail: func() error {
		return lineTooLong(name, row, cr.InputOffset(), maxLine)
	}}
	cr = csv.NewReader(lim)
	cr.FieldsPerRecord = -1
	cr.ReuseRecord = true
	header, err := cr.Read()
	if err == io.EOF {
		return nil
	}
	if err != nil {
		return limitError(err, "CSV header: %w")
	}
	header = slices.Clone(header)
	if _, err := io.WriteString(w, "\n"); err != nil {
		return err
	}
	for row = 2; ; row++ { // the line of the row, when no field holds a line end
		lim.next()
		rec, err := cr.Read()
		if err == io.EOF {
			return nil
		}
		if err != nil {
			if lerr := limitError(err, "%w"); lerr != err || !isCSVParseError(err) {
				return lerr
			}
			// A broken row becomes a malformed line, not the end.
			if _, err := io.WriteString(w, "CSV: "+strings.ReplaceAll(err.Error(), "\n", " ")+"\n"); err != nil {
				return err
			}
			continue
		}
		obj := make(map[string]string, len(header))
		for i, h := range header {
			if i < len(rec) && rec[i] != "" {
				obj[h] = rec[i]
			}
		}
		b, _ := json.Marshal(obj)
		b = append(b, '\n')
		if _, err := w.Write(b); err != nil {
			return err
		}
	}
}

func isCSVParseError(err error) bool {
	var pe *csv.ParseError
	return errors.As(err, &pe)
}

// SpoolLimit bounds a spool: at most Bytes of disk, and lines of at most
// MaxLine (0: DefaultMaxLine).
type SpoolLimit struct {
	Bytes   int64
	MaxLine int
}

// SpoolFullError is a stream larger than the disk a spool may take.
type SpoolFullError struct {
	Name  string
	Limit int64
	// Read says what had been read ("8 GiB, 40,000,000 lines of -").
	Read string
}

func (e *SpoolFullError) Error() string {
	return fmt.Sprintf("%s is larger than the %s it may take on disk to be read twice: stopped after reading %s",
		e.Name, Size(e.Limit), e.Read)
}

// Spool copies a stream that can be read only once (stdin) into a
// temporary file in dir ("" for the system's), so that it can be read
// twice; remove deletes the file. Memory stays flat; disk use is the
// stream's size (a gzip stream stays compressed), up to lim.Bytes
// (*SpoolFullError past it). A line longer than lim.MaxLine is the same
// input error as a scan's, found while copying; ctx ends the copy at
// once, even while stdin waits for data (a *StoppedError).
func Spool(ctx context.Context, s Source, dir string, lim SpoolLimit) (spooled Source, remove func(), err error) {
	if s.Rewindable() {
		return s, func() {}, nil
	}
	if lim.MaxLine <= 0 {
		lim.MaxLine = DefaultMaxLine
	}
	f, err := os.CreateTemp(dir, "dupctl-spool-*")
	if err != nil {
		return nil, nil, fmt.Errorf("spool %s: %w", s.Name(), err)
	}
	remove = func() { f.Close(); os.Remove(f.Name()) }
	rc, err := s.Open(ctx)
	if err != nil {
		remove()
		return nil, nil, err
	}
	defer rc.Close()
	c := spoolCopy{name: s.Name(), lim: lim}
	if err := c.copy(ctx, f, rc); err != nil {
		remove()
		return nil, nil, err
	}
	return namedFile{fileSource{path: f.Name(), size: c.n}, s.Name()}, remove, nil
}

// spoolCopy copies a stream to its spool file, checking its lines' length
// (unless it is gzip: its lines are inside) and its size on the way.
type spoolCopy struct {
	name       string
	lim        SpoolLimit
	n          int64 // bytes copied
	lines      int64 // line ends seen
	lineStart  int64 // offset of the line being read
	compressed bool
}

func (c *spoolCopy) copy(ctx context.Context, w io.Writer, r io.Reader) error {
	buf := make([]byte, 256<<10)
	for {
		n, rerr := r.Read(buf)
		if err := c.check(buf[:n]); err != nil {
			return err
		}
		if _, err := w.Write(buf[:n]); err != nil {
			return fmt.Errorf("spool %s: %w", c.name, err)
		}
		c.n += int64(n)
		switch {
		case rerr == io.EOF:
			return nil
		case rerr != nil:
			read := func() string { return readText(c.n, c.lines, c.name) }
			if err := stopped(ctx, rerr, read); err != rerr {
				return err
			}
			return fmt.Errorf("spool %s: %w", c.name, rerr)
		}
	}
}

// check looks at the next bytes of the stream before they are written.
func (c *spoolCopy) check(b []byte) error {
	if c.n == 0 && len(b) >= 2 && b[0] == 0x1f && b[1] == 0x8b {
		c.compressed = true
	}
	if c.n+int64(len(b)) > c.lim.Bytes && c.lim.Bytes > 0 {
		return &SpoolFullError{Name: c.name, Limit: c.lim.Bytes,
			Read: readText(c.n, c.lines, c.name)}
	}
	if c.compressed {
		return nil
	}
	for off := 0; ; {
		i := bytes.IndexByte(b[off:], '\n')
		if i < 0 {
			break
		}
		c.lines++
		off += i + 1
		c.lineStart = c.n + int64(off)
	}
	if c.n+int64(len(b))-c.lineStart > int64(c.lim.MaxLine) {
		return lineTooLong(c.name, c.lines+1, c.lineStart, c.lim.MaxLine)
	}
	return nil
}

// namedFile is a spooled file cited under its original name ("-").
type namedFile struct {
	fileSource
	name string
}

func (n namedFile) Name() string { return n.name }

// jsonArrayStart reports whether b, which starts with '[', starts a JSON
// array - '[' then a value or ']' - rather than a line that starts with a
// bracket: kubectl's "[pod/NAME/CONTAINER]" prefix, a console line's
// "[main]".
func jsonArrayStart(b []byte) bool {
	b = bytes.TrimLeft(b[1:], " \t\r\n")
	if len(b) == 0 {
		return true
	}
	switch c := b[0]; {
	case c == '{' || c == '[' || c == '"' || c == ']' || c == '-' || c >= '0' && c <= '9':
		return true
	}
	for _, lit := range []string{"true", "false", "null"} {
		if rest, ok := bytes.CutPrefix(b, []byte(lit)); ok {
			rest = bytes.TrimLeft(rest, " \t\r\n")
			return len(rest) == 0 || rest[0] == ',' || rest[0] == ']'
		}
	}
	return false
}
