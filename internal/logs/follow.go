package logs

import (
	"bufio"
	"bytes"
	"context"
	"errors"
	"fmt"
	"io"
	"os"
	"time"
)

// FollowOptions shape a follow: the scan's options (mapping, format,
// zone, strictness, the longest line) and how sources are watched.
type FollowOptions struct {
	Options
	// Poll is how often a file at its end is looked at again for new
	// lines, a truncation or a replacement (0: 250ms).
	Poll time.Duration
	// Settle is how long a source's first lines wait for more before its
	// format is chosen from the ones in (0: 200ms): a stream that logs a
	// line a minute is read from its first line.
	Settle time.Duration
	// Rescan are the command line's globs and directories, listed again
	// every RescanEvery (0: 2s): a file that appears under one (a new
	// pod's log) is followed from its start. A file already followed
	// under another name (rotated away: app.log renamed app.log.1) is
	// not, so no line is read twice.
	Rescan      []string
	RescanEvery time.Duration
}

// Follow reads sources that may never end - stdin until it is closed,
// files as they grow, as `tail -F` does (a file truncated is read again
// from its start; one renamed away and created anew is read to its end,
// then the new one from its start; a file not there yet is waited for) -
// and calls fn with each line's events as soon as the line is read, the
// sources' lines interleaved as they arrive. fn runs on the caller's
// goroutine; its event borrows buffers (see Event).
//
// Memory stays flat whatever the stream: a line longer than MaxLine is
// skipped and counted as malformed (a follow runs for days: one bad line
// does not end it), and nothing is kept of a line once fn returns. Follow
// returns when every source has ended (nil), fn fails (its error), a
// strict follow meets a malformed line, or ctx is done (ctx's error).
func Follow(ctx context.Context, sources []Source, o FollowOptions, fn func(*Event) error) (Stats, error) {
	o.defaults()
	if o.Poll <= 0 {
		o.Poll = 250 * time.Millisecond
	}
	if o.Settle <= 0 {
		o.Settle = 200 * time.Millisecond
	}
	if o.RescanEvery <= 0 {
		o.RescanEvery = 2 * time.Second
	}
	// A mapping that learns learns from what the files hold when the
	// follow starts (stdin, a FIFO and empty files teach nothing): the
	// lines that come later are read with it, as a batch audit's are.
	learned, err := o.Mapping.learnFrom(ctx, withContent(sources), &o.Options)
	if err != nil {
		return Stats{}, err
	}
	if learned != nil {
		o.Mapping = learned.Mapping()
	}
	ctx, cancel := context.WithCancel(ctx)
	defer cancel()
	pieces := make(chan piece, 4*len(sources)+4)
	f := &follow{o: &o, fn: fn, x: &extractor{m: o.Mapping, only: o.Only, tz: o.TZ},
		pieces: pieces, qualify: len(sources) > 1 || len(o.Rescan) > 0, files: map[string]bool{}}
	for _, s := range sources {
		f.start(ctx, s)
	}
	f.st.Inferred = learned
	f.noteFiles()
	err = f.loop(ctx, pieces)
	for _, s := range f.srcs {
		if s.detected {
			f.st.Formats = append(f.st.Formats, SourceFormat{Source: s.name, Format: s.spec.format.String(), Inner: innerName(s.spec),
				Layout: s.spec.layout, Forced: o.Format != FormatAuto})
		}
	}
	return f.st, err
}

// withContent are the sources that are regular files holding lines now.
func withContent(sources []Source) []Source {
	var out []Source
	for _, s := range sources {
		if fs, ok := s.(fileSource); ok {
			if st, err := os.Stat(fs.path); err == nil && st.Mode().IsRegular() && st.Size() > 0 {
				out = append(out, fileSource{path: fs.path, size: st.Size()})
			}
		}
	}
	return out
}

// piece is what a source's watcher hands over: whole lines (a line at the
// end of a stream may lack its line end), or news about the source.
type piece struct {
	src  int
	data []byte
	// reset: the file was truncated or replaced, its lines start again.
	reset bool
	// long is a line over the limit, skipped: where it started.
	long *LineTooLongError
	end  bool  // the source ended (stdin closed, a FIFO's writer gone)
	err  error // it could not be read (ends it)
}

// followed is one source's state in the follow.
type followed struct {
	name     string
	spec     formatSpec
	detected bool
	head     [][]byte // lines waiting for the format to be chosen
	size     int
	since    time.Time // the first waiting line's arrival
	dec      decoder
	line     int64
	ended    bool
	// dropParts: the parts of a line too long are being dropped.
	dropParts bool
}

type follow struct {
	o      *FollowOptions
	fn     func(*Event) error
	st     Stats
	x      *extractor
	srcs   []*followed
	events []Event
	pieces chan piece
	// qualify: evidence names each line's source (several, or more to come).
	qualify bool
	live    int
	// files are the paths followed; seen the files (device and inode)
	// ever followed under any name, so a rotated file is not read again.
	files map[string]bool
	seen  []os.FileInfo
}

// start follows one more source, on its own watcher.
func (f *follow) start(ctx context.Context, s Source) {
	i := len(f.srcs)
	f.srcs = append(f.srcs, &followed{name: s.Name(), dec: decoder{source: s.Name(), qualify: f.qualify}})
	f.st.Sources++
	f.live++
	if fs, ok := s.(fileSource); ok {
		f.files[fs.path] = true
	}
	w := watcher{i: i, src: s, o: f.o, out: f.pieces}
	go w.run(ctx)
}

// noteFiles remembers which files the followed paths name now: a file
// renamed away since is then known under its new name.
func (f *follow) noteFiles() {
	for p := range f.files {
		if st, err := os.Stat(p); err == nil && !f.known(st) {
			f.seen = append(f.seen, st)
		}
	}
}

func (f *follow) known(st os.FileInfo) bool {
	for _, k := range f.seen {
		if os.SameFile(k, st) {
			return true
		}
	}
	return false
}

// rescan lists the globs and directories again and follows the files new
// under them. A pattern that matches nothing now is no error: its files
// may come back. (A file created and renamed within one RescanEvery,
// before a rescan saw it, would be read again under its new name.)
func (f *follow) rescan(ctx context.Context) {
	f.noteFiles()
	for _, a := range f.o.Rescan {
		paths, err := expandArg(a)
		if err != nil {
			continue
		}
		for _, p := range paths {
			if f.files[p] {
				continue
			}
			st, err := os.Stat(p)
			if err != nil {
				continue
			}
			if f.known(st) {
				f.files[p] = true // a followed file under its rotated name
				continue
			}
			f.seen = append(f.seen, st)
			f.start(ctx, fileSource{path: p, size: st.Size()})
		}
	}
}

func (f *follow) loop(ctx context.Context, pieces <-chan piece) error {
	timer := time.NewTimer(time.Hour)
	defer timer.Stop()
	var rescan <-chan time.Time
	if len(f.o.Rescan) > 0 {
		t := time.NewTicker(f.o.RescanEvery)
		defer t.Stop()
		rescan = t.C
	}
	for f.live > 0 {
		f.arm(timer)
		select {
		case p := <-pieces:
			s := f.srcs[p.src]
			if err := f.piece(s, p); err != nil {
				return err
			}
			if (p.end || p.err != nil) && !s.ended {
				s.ended = true
				f.live--
			}
		case <-timer.C:
			if err := f.settle(time.Now(), false); err != nil {
				return err
			}
		case <-rescan:
			f.rescan(ctx)
		case <-ctx.Done():
			return ctx.Err()
		}
	}
	return nil
}

// arm sets the timer to the first moment a waiting source's format is due.
func (f *follow) arm(t *time.Timer) {
	var due time.Time
	for _, s := range f.srcs {
		if !s.detected && len(s.head) > 0 && (due.IsZero() || s.since.Before(due)) {
			due = s.since
		}
	}
	if due.IsZero() {
		t.Reset(time.Hour)
		return
	}
	t.Reset(max(time.Until(due.Add(f.o.Settle)), 0))
}

// settle chooses the format of the sources whose first lines waited long
// enough (all of them with force) and reads those lines.
func (f *follow) settle(now time.Time, force bool) error {
	for _, s := range f.srcs {
		if !s.detected && len(s.head) > 0 && (force || now.Sub(s.since) >= f.o.Settle) {
			if err := f.detect(s); err != nil {
				return err
			}
		}
	}
	return nil
}

func (f *follow) piece(s *followed, p piece) error {
	switch {
	case p.err != nil:
		return &SourceError{Name: s.name, Op: "read", Err: p.err}
	case p.reset:
		s.line = 0
		s.dec.partial, s.dec.inPieces = nil, false
		return nil
	case p.long != nil:
		if err := f.flushHead(s); err != nil {
			return err
		}
		s.line++
		f.st.Lines++
		return f.bad(s, s.line, fmt.Sprintf("longer than %s, skipped", Size(int64(p.long.Max))), nil)
	}
	f.st.Bytes += int64(len(p.data))
	for data := p.data; len(data) > 0; {
		l := data
		if i := bytes.IndexByte(data, '\n'); i >= 0 {
			l, data = data[:i], data[i+1:]
		} else {
			data = nil
		}
		if err := f.lineIn(s, l); err != nil {
			return err
		}
	}
	if p.end {
		return f.flushHead(s)
	}
	return nil
}

// lineIn takes one line: read now, or held until the format is chosen.
func (f *follow) lineIn(s *followed, l []byte) error {
	if s.detected {
		s.line++
		f.st.Lines++
		return f.read(s, s.line, l)
	}
	if len(s.head) == 0 {
		s.since = time.Now()
	}
	s.head = append(s.head, bytes.Clone(l))
	s.size += len(l) + 1
	if len(s.head) >= sampleLines || s.size >= 64<<10 {
		return f.detect(s)
	}
	return nil
}

func (f *follow) flushHead(s *followed) error {
	if s.detected || len(s.head) == 0 {
		return nil
	}
	return f.detect(s)
}

// detect chooses a source's format from the lines in, as a scan does from
// a file's first lines, and reads them.
func (f *follow) detect(s *followed) error {
	var head []byte
	for _, l := range s.head {
		head = append(append(head, l...), '\n')
	}
	s.spec = f.formatOf(head)
	s.dec.spec = s.spec
	s.detected = true
	lines := s.head
	s.head, s.size = nil, 0
	for _, l := range lines {
		s.line++
		f.st.Lines++
		if err := f.read(s, s.line, l); err != nil {
			return err
		}
	}
	return nil
}

// formatOf is the format forced, or the one the head shows (a forced
// wrapper's inner format from its payloads, as a scan does).
func (f *follow) formatOf(head []byte) formatSpec {
	r := chunkReader{o: &f.o.Options}
	return r.formatOf(bufio.NewReaderSize(bytes.NewReader(head), len(head)+16))
}

// read decodes one line and hands its events to fn.
func (f *follow) read(s *followed, n int64, l []byte) error {
	l = bytes.TrimRight(l, "\r")
	if len(bytes.TrimSpace(l)) == 0 {
		return nil
	}
	if s.dec.continuation(l) {
		f.st.Continuations++
		return nil
	}
	f.events = f.events[:0]
	add := func() *Event {
		f.events = append(f.events, Event{})
		return &f.events[len(f.events)-1]
	}
	var err error
	if s.spec.format == FormatJSON {
		err = f.x.line(l, add())
	} else {
		err = s.dec.read(f.x, l, add)
	}
	if s.dropParts {
		// The rest of a line in parts dropped: its parts, then its end.
		s.dec.partial, s.dec.inPieces = nil, false
		s.dropParts = errors.Is(err, errPartial)
		return nil
	}
	switch {
	case errors.Is(err, errPartial) && len(s.dec.partial) > f.o.MaxLine:
		// A line written in parts (CRI's P) longer than the limit: a
		// scan's chunk bounds it, a follow's decoder lives on.
		s.dec.partial, s.dec.inPieces = nil, false
		s.dropParts = true
		return f.bad(s, n, fmt.Sprintf("a line written in parts runs past %s: its parts are dropped", Size(int64(f.o.MaxLine))), l)
	case errors.Is(err, errPartial):
		f.st.Partial++
		return nil
	case errors.Is(err, errContinuation):
		f.st.Continuations++
		return nil
	case err != nil:
		return f.bad(s, n, reason(err), l)
	}
	for i := range f.events {
		ev := &f.events[i]
		ev.Source, ev.Line = s.name, n
		f.st.Events++
		if err := f.fn(ev); err != nil {
			return err
		}
	}
	return nil
}

// bad counts and samples a line that could not be read (strict: ends the
// follow).
func (f *follow) bad(s *followed, n int64, why string, l []byte) error {
	f.st.Malformed++
	smp := Sample{Source: s.name, Line: n, Reason: why, Text: snippet(l)}
	if f.o.Strict {
		return &MalformedError{Sample: smp}
	}
	if len(f.st.Samples) < f.o.MaxSamples {
		f.st.Samples = append(f.st.Samples, smp)
	}
	return nil
}

// watcher reads one source for a follow and hands its lines over.
type watcher struct {
	i   int
	src Source
	o   *FollowOptions
	out chan<- piece
	// cut state: the unfinished line, where it starts, and whether an
	// over-long line is being skipped to its end.
	carry    []byte
	lineNo   int64 // lines handed over (and skipped)
	off      int64 // offset of the unfinished line's first byte
	skipping bool
}

func (w *watcher) send(ctx context.Context, p piece) bool {
	p.src = w.i
	select {
	case w.out <- p:
		return true
	case <-ctx.Done():
		return false
	}
}

func (w *watcher) run(ctx context.Context) {
	if fs, ok := w.src.(fileSource); ok {
		w.tail(ctx, fs.path)
		return
	}
	rc, err := w.src.Open(ctx)
	if err != nil {
		w.send(ctx, piece{err: err})
		return
	}
	defer rc.Close()
	w.stream(ctx, rc)
}

// stream reads r to its end: stdin, a pipe, a device.
func (w *watcher) stream(ctx context.Context, r io.Reader) {
	buf := make([]byte, 64<<10)
	for {
		n, err := r.Read(buf)
		if n > 0 && !w.cut(ctx, buf[:n]) {
			return
		}
		if err == io.EOF {
			w.flush(ctx, true)
			return
		}
		if err != nil {
			if ctx.Err() == nil {
				w.send(ctx, piece{err: err})
			}
			return
		}
	}
}

// cut hands over the whole lines of what was just read (in one piece),
// keeps the unfinished one, and skips a line once it is longer than the
// limit (the piece before it, then word of it).
func (w *watcher) cut(ctx context.Context, b []byte) bool {
	var out []byte
	for len(b) > 0 {
		if w.skipping {
			i := bytes.IndexByte(b, '\n')
			if i < 0 {
				w.off += int64(len(b))
				break
			}
			w.skipping = false
			w.off += int64(i + 1)
			b = b[i+1:]
			continue
		}
		i := bytes.IndexByte(b, '\n')
		n := len(w.carry) + i // the line's length, when it ends here
		if i < 0 {
			n = len(w.carry) + len(b)
		}
		if n > w.o.MaxLine {
			if !w.lines(ctx, &out) || !w.long(ctx) {
				return false
			}
			w.off += int64(len(w.carry))
			w.carry = w.carry[:0]
			w.skipping = true
			continue // the skip goes on from b
		}
		if i < 0 {
			w.carry = append(w.carry, b...)
			break
		}
		if out == nil {
			out = make([]byte, 0, len(w.carry)+len(b))
		}
		out = append(append(out, w.carry...), b[:i+1]...)
		w.carry = w.carry[:0]
		w.lineNo++
		w.off += int64(n + 1)
		b = b[i+1:]
	}
	return w.lines(ctx, &out)
}

// lines hands over the whole lines gathered in out.
func (w *watcher) lines(ctx context.Context, out *[]byte) bool {
	if len(*out) == 0 {
		return true
	}
	data := *out
	*out = nil
	return w.send(ctx, piece{data: data})
}

// long says the line starting at w.off is over the limit and skipped.
func (w *watcher) long(ctx context.Context) bool {
	w.lineNo++
	return w.send(ctx, piece{long: &LineTooLongError{Source: w.src.Name(), Line: w.lineNo, Offset: w.off, Max: w.o.MaxLine}})
}

// flush hands over an unfinished last line (at a stream's end, or before
// a file starts again) and says so when end.
func (w *watcher) flush(ctx context.Context, end bool) bool {
	var data []byte
	if len(w.carry) > 0 && !w.skipping {
		data = bytes.Clone(w.carry)
		w.lineNo++
	}
	w.carry, w.skipping = w.carry[:0], false
	if data == nil && !end {
		return true
	}
	return w.send(ctx, piece{data: data, end: end})
}

// tail follows a file by its path, as tail -F does.
func (w *watcher) tail(ctx context.Context, path string) {
	var fh *os.File
	defer func() {
		if fh != nil {
			fh.Close()
		}
	}()
	buf := make([]byte, 64<<10)
	var pos int64
	for {
		if fh == nil {
			f, err := OpenFile(ctx, path) // a FIFO's open waits for a writer
			switch {
			case err == nil:
				fh, pos = f, 0
				if st, err := f.Stat(); err == nil && !st.Mode().IsRegular() {
					// A FIFO or a device named on the command line: a stream.
					w.stream(ctx, FileReader(ctx, f))
					return
				}
			case ctx.Err() != nil:
				return
			case !errors.Is(err, os.ErrNotExist):
				w.send(ctx, piece{err: unwrapPathErr(err)})
				return
			}
		}
		if fh != nil {
			n, err := w.readAll(ctx, fh, buf)
			pos += n
			if err != nil {
				if ctx.Err() == nil {
					w.send(ctx, piece{err: err})
				}
				return
			}
			switch w.changed(fh, path, pos) {
			case fileTruncated:
				if _, err := fh.Seek(0, io.SeekStart); err != nil {
					w.send(ctx, piece{err: err})
					return
				}
				pos = 0
				if !w.restart(ctx) {
					return
				}
				continue
			case fileReplaced:
				// What was written to the old file up to the rename, then
				// the new one from its start.
				if _, err := w.readAll(ctx, fh, buf); err != nil {
					return
				}
				fh.Close()
				fh = nil
				if !w.restart(ctx) {
					return
				}
				continue
			}
		}
		select {
		case <-time.After(w.o.Poll):
		case <-ctx.Done():
			return
		}
	}
}

// readAll reads fh to its current end and hands the lines over.
func (w *watcher) readAll(ctx context.Context, fh *os.File, buf []byte) (int64, error) {
	var total int64
	for {
		if err := ctx.Err(); err != nil {
			return total, err
		}
		n, err := fh.Read(buf)
		total += int64(n)
		if n > 0 && !w.cut(ctx, buf[:n]) {
			return total, ctx.Err()
		}
		if err == io.EOF || n == 0 {
			return total, nil
		}
		if err != nil {
			return total, err
		}
	}
}

// restart hands over the unfinished line and starts the lines again.
func (w *watcher) restart(ctx context.Context) bool {
	if !w.flush(ctx, false) {
		return false
	}
	w.lineNo, w.off = 0, 0
	return w.send(ctx, piece{reset: true})
}

type fileChange int

const (
	fileSame fileChange = iota
	fileTruncated
	fileReplaced
)

// changed says whether the file open as fh (read up to pos) was
// truncated, or its path now names another file (or none: it was renamed
// and not yet created again, so the old one is kept).
func (w *watcher) changed(fh *os.File, path string, pos int64) fileChange {
	open, err := fh.Stat()
	if err != nil {
		return fileSame
	}
	now, err := os.Stat(path)
	switch {
	case err != nil:
		return fileSame
	case !os.SameFile(open, now):
		return fileReplaced
	case now.Size() < pos:
		return fileTruncated
	}
	return fileSame
}
