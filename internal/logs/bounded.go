package logs

import (
	"bufio"
	"bytes"
	"context"
	"errors"
	"fmt"
	"io"
	"os"
	"sync"

	"github.com/dupctl/dupctl/internal/platform/english"
	"github.com/dupctl/dupctl/internal/platform/problem"
)

// Every read of an input is bounded: in time, by the context (a deadline
// or a signal ends it within one read), and in memory, by the longest line
// (DefaultMaxLine) and the bytes parsed at once (inflightBytes), so that
// /dev/zero, a disk image or a 2 GB line end with an error instead of
// filling the machine.

// DefaultMaxLine is the longest line read (Options.MaxLine): a log line,
// a CSV row or a dlq export record (a 12 MiB message, base64'd, fits).
// Longer is not a line of a log but a file without line ends.
const DefaultMaxLine = 16 << 20

// inflightBytes bounds the bytes of the chunks read and not yet delivered,
// whatever their number: with lines near the limit, a few.
const inflightBytes = 64 << 20

// ErrLineTooLong is the reason of the input error of a line longer than
// the limit.
var ErrLineTooLong = errors.New("line too long")

// LineTooLongError is a line that runs past the limit without a line end:
// where it starts (Offset is the byte it starts at in the source, after
// decompression) and the limit.
type LineTooLongError struct {
	Source string
	Line   int64
	Offset int64
	Max    int
}

func (e *LineTooLongError) Error() string {
	return fmt.Sprintf("%s: line %s, from byte offset %s, runs past %s without a line end", e.Source,
		english.Number(e.Line), english.Number(e.Offset), Size(int64(e.Max)))
}

func (e *LineTooLongError) Unwrap() error { return ErrLineTooLong }

// LineTooLong is the input error of a line of source, starting at byte
// offset, longer than DefaultMaxLine.
func LineTooLong(source string, line, offset int64) error {
	return lineTooLong(source, line, offset, DefaultMaxLine)
}

// lineTooLong is the input error of an over-long line: bad input (exit
// 2), never a reason to read on.
func lineTooLong(source string, line, offset int64, limit int) error {
	e := &LineTooLongError{Source: source, Line: line, Offset: offset, Max: limit}
	return &problem.Input{Why: e.Error() + ": not a log line",
		Hint: "give the log files themselves: a binary file, a disk image or a device such as /dev/zero has no lines", Err: e}
}

// StoppedError is a read ended by its context (a deadline or a signal)
// before the input did, saying how far it got.
type StoppedError struct {
	// Read says what had been read ("1.2 GiB, 3,400,000 lines of app.log").
	Read string
	Err  error
}

func (e *StoppedError) Error() string {
	return "stopped after reading " + e.Read + ": " + e.Err.Error()
}
func (e *StoppedError) Unwrap() error { return e.Err }

// stopped wraps a context's error with what was read; any other error is
// returned as is.
func stopped(ctx context.Context, err error, read func() string) error {
	var se *StoppedError
	if err == nil || ctx.Err() == nil || errors.As(err, &se) ||
		!errors.Is(err, context.Canceled) && !errors.Is(err, context.DeadlineExceeded) {
		return err
	}
	return &StoppedError{Read: read(), Err: ctx.Err()}
}

// readText words what was read: "12 MiB, 40,000 lines of app.log".
func readText(bytes, lines int64, of string) string {
	return fmt.Sprintf("%s, %s of %s", Size(bytes), english.Count(lines, "line", "lines"), of)
}

// sourcesName names sources in a sentence: the one's name, or "3 sources".
func sourcesName(sources []Source) string {
	if len(sources) == 1 {
		return sources[0].Name()
	}
	return english.Count(len(sources), "source", "sources")
}

// Size words a byte count: "512 bytes", "64 MiB", "1.2 GiB".
func Size(n int64) string {
	const unit = 1 << 10
	if n < unit {
		return english.Count(n, "byte", "bytes")
	}
	v, i := float64(n), -1
	for v >= unit && i < 3 {
		v /= unit
		i++
	}
	if v == float64(int64(v)) {
		return fmt.Sprintf("%d %ciB", int64(v), "KMGT"[i])
	}
	return fmt.Sprintf("%.1f %ciB", v, "KMGT"[i])
}

// ContextReader returns a reader of r that fails every read once ctx is
// done: a regular file's reads never wait long, so one check a read bounds
// them (a read that can wait, as on a FIFO, wants Interruptible).
func ContextReader(ctx context.Context, r io.Reader) io.Reader { return ctxReader{ctx, r} }

// ctxReader is ContextReader's reader.
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

// Interruptible returns a reader of r that returns the context's error
// as soon as the context is done, even while a read of r is waiting for
// data (a pipe, a terminal, stdin with nothing written): the waiting read
// is left behind in a goroutine, which ends when r next returns. Reads
// after that all fail.
func Interruptible(ctx context.Context, r io.Reader) io.Reader {
	if ir, ok := r.(*asyncReader); ok && ir.ctx == ctx {
		return ir
	}
	return &asyncReader{ctx: ctx, r: r, done: make(chan readResult, 1)}
}

// OpenFile opens a file for reading, the wait bound to ctx: opening a FIFO
// blocks until a writer comes, in a system call no signal interrupts.
func OpenFile(ctx context.Context, path string) (*os.File, error) {
	if st, err := os.Stat(path); err != nil || st.Mode().IsRegular() {
		return os.Open(path)
	}
	type opened struct {
		fh  *os.File
		err error
	}
	done := make(chan opened, 1)
	go func() {
		fh, err := os.Open(path)
		done <- opened{fh, err}
	}()
	select {
	case o := <-done:
		return o.fh, o.err
	case <-ctx.Done():
		go func() { // the open may still finish: close what it gives
			if o := <-done; o.fh != nil {
				o.fh.Close()
			}
		}()
		return nil, ctx.Err()
	}
}

// FileReader reads f bound to ctx: a regular file checks ctx a read,
// anything else (a FIFO, a device, a terminal) is Interruptible.
func FileReader(ctx context.Context, f *os.File) io.Reader {
	if st, err := f.Stat(); err == nil && st.Mode().IsRegular() {
		return ctxReader{ctx, f}
	}
	return Interruptible(ctx, f)
}

type readResult struct {
	n   int
	err error
}

// asyncReader reads r in a goroutine, one read at a time, into a buffer
// of its own: a read abandoned at cancellation cannot write into the
// caller's slice afterwards.
type asyncReader struct {
	ctx     context.Context
	r       io.Reader
	mu      sync.Mutex // one Read at a time
	buf     []byte
	data    []byte // read and not yet returned
	pending bool
	done    chan readResult
	err     error
}

const asyncReadSize = 256 << 10

func (a *asyncReader) Read(p []byte) (int, error) {
	a.mu.Lock()
	defer a.mu.Unlock()
	if len(p) == 0 {
		return 0, nil
	}
	if len(a.data) > 0 {
		n := copy(p, a.data)
		a.data = a.data[n:]
		return n, nil
	}
	if a.err != nil {
		return 0, a.err
	}
	if err := a.ctx.Err(); err != nil {
		return 0, err
	}
	if !a.pending {
		if a.buf == nil {
			a.buf = make([]byte, asyncReadSize)
		}
		a.pending = true
		go func(buf []byte) {
			n, err := a.r.Read(buf)
			a.done <- readResult{n, err}
		}(a.buf)
	}
	select {
	case res := <-a.done:
		a.pending = false
		a.data, a.err = a.buf[:res.n], res.err
		n := copy(p, a.data)
		a.data = a.data[n:]
		if len(a.data) > 0 {
			return n, nil
		}
		return n, a.err
	case <-a.ctx.Done():
		return 0, a.ctx.Err()
	}
}

// budget bounds the bytes held by chunks in flight: Acquire waits until
// what is held leaves room, but a chunk larger than the whole budget still
// goes when nothing else is held.
type budget struct {
	mu    sync.Mutex
	limit int64
	used  int64
	freed chan struct{} // closed and replaced at every release
}

func newBudget(limit int64) *budget { return &budget{limit: limit, freed: make(chan struct{})} }

func (b *budget) acquire(ctx context.Context, n int64) error {
	for {
		b.mu.Lock()
		if b.used == 0 || b.used+n <= b.limit {
			b.used += n
			b.mu.Unlock()
			return nil
		}
		wait := b.freed
		b.mu.Unlock()
		select {
		case <-wait:
		case <-ctx.Done():
			return ctx.Err()
		}
	}
}

func (b *budget) release(n int64) {
	b.mu.Lock()
	b.used -= n
	close(b.freed)
	b.freed = make(chan struct{})
	b.mu.Unlock()
}

// LineReader reads a stream line by line, each line at most max bytes: a
// longer one is the input error a scan gives, naming its line and offset.
type LineReader struct {
	br   *bufio.Reader
	name string
	max  int
	line int64 // lines returned
	off  int64 // offset of the next line
	buf  []byte
}

// NewLineReader reads r's lines; name is the source's, for the error; max
// 0 is DefaultMaxLine.
func NewLineReader(r io.Reader, name string, max int) *LineReader {
	if max <= 0 {
		max = DefaultMaxLine
	}
	return &LineReader{br: bufio.NewReaderSize(r, 256<<10), name: name, max: max}
}

// Next returns the next line without its line end ("\n" or "\r\n"), valid
// until the next call; io.EOF once the stream is done.
func (l *LineReader) Next() ([]byte, error) {
	l.buf = l.buf[:0]
	start := l.off
	for {
		b, err := l.br.ReadSlice('\n')
		if errors.Is(err, bufio.ErrBufferFull) {
			if len(l.buf)+len(b) > l.max {
				return nil, lineTooLong(l.name, l.line+1, start, l.max)
			}
			l.buf = append(l.buf, b...)
			continue
		}
		line := b
		if len(l.buf) > 0 {
			l.buf = append(l.buf, b...)
			line = l.buf
		}
		if len(line) == 0 || err != nil && err != io.EOF {
			return nil, err
		}
		l.off += int64(len(line))
		l.line++
		line = bytes.TrimSuffix(line, []byte{'\n'})
		line = bytes.TrimSuffix(line, []byte{'\r'})
		if len(line) > l.max {
			return nil, lineTooLong(l.name, l.line, start, l.max)
		}
		return line, nil
	}
}
