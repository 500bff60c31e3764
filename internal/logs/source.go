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
	return os.Open(f.path)
}

type readerSource struct {
	name   string
	r      io.Reader
	opened bool
}

func (s *readerSource) Name() string     { return s.name }
func (s *readerSource) Size() int64      { return -1 }
func (s *readerSource) Rewindable() bool { return false }
func (s *readerSource) Open(context.Context) (io.ReadCloser, error) {
	if s.opened {
		return nil, fmt.Errorf("%s can be read only once", s.name)
	}
	s.opened = true
	return io.NopCloser(s.r), nil
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
// numbers stay those of the rows (the header is a blank line).
func decode(r io.Reader, name string) (io.Reader, func() error, error) {
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
	if strings.HasSuffix(strings.ToLower(name), ".csv") {
		return pipe(func(w io.Writer) error { return csvLines(bin, w) }), closeFn, nil
	}
	for {
		c, err := bin.Peek(1)
		if err != nil || (c[0] != ' ' && c[0] != '\t' && c[0] != '\r' && c[0] != '\n' && c[0] != 0xef && c[0] != 0xbb && c[0] != 0xbf) {
			if err == nil && c[0] == '[' {
				return pipe(func(w io.Writer) error { return arrayLines(bin, w) }), closeFn, nil
			}
			return bin, closeFn, nil
		}
		// Leading blanks (and a UTF-8 BOM) before a possible '['.
		if _, err := bin.Discard(1); err != nil {
			return bin, closeFn, nil
		}
	}
}

// pipe runs fill in a goroutine and reads what it writes.
func pipe(fill func(io.Writer) error) io.Reader {
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

// arrayLines writes each element of a JSON array as one line.
func arrayLines(r io.Reader, w io.Writer) error {
	dec := json.NewDecoder(r)
	if _, err := dec.Token(); err != nil {
		return err
	}
	var buf bytes.Buffer
	for dec.More() {
		var raw json.RawMessage
		if err := dec.Decode(&raw); err != nil {
			return fmt.Errorf("JSON array element: %w", err)
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

// csvLines writes each CSV row as a JSON object keyed by the header.
func csvLines(r io.Reader, w io.Writer) error {
	cr := csv.NewReader(r)
	cr.FieldsPerRecord = -1
	header, err := cr.Read()
	if err == io.EOF {
		return nil
	}
	if err != nil {
		return fmt.Errorf("CSV header: %w", err)
	}
	if _, err := io.WriteString(w, "\n"); err != nil {
		return err
	}
	for {
		rec, err := cr.Read()
		if err == io.EOF {
			return nil
		}
		if err != nil {
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

// Spool copies a stream that can be read only once (stdin) into a
// temporary file in dir ("" for the system's), so that it can be read
// twice; remove deletes the file. Memory stays flat; disk use is the
// stream's size (a gzip stream stays compressed).
func Spool(ctx context.Context, s Source, dir string) (spooled Source, remove func(), err error) {
	if s.Rewindable() {
		return s, func() {}, nil
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
	n, err := io.Copy(f, ctxReader{ctx, rc})
	if err != nil {
		remove()
		return nil, nil, fmt.Errorf("spool %s: %w", s.Name(), err)
	}
	return namedFile{fileSource{path: f.Name(), size: n}, s.Name()}, remove, nil
}

// namedFile is a spooled file cited under its original name ("-").
type namedFile struct {
	fileSource
	name string
}

func (n namedFile) Name() string { return n.name }

type ctxReader struct {
	ctx context.Context
	r   io.Reader
}

func (c ctxReader) Read(p []byte) (int, error) {
	if err := c.ctx.Err(); err != nil {
		return 0, err
	}
	return c.r.Read(p)
}
