package logs

import (
	"bufio"
	"bytes"
	"context"
	"errors"
	"fmt"
	"io"
	"path/filepath"
	"runtime"
	"sync"
	"sync/atomic"
	"time"
	"unicode/utf8"

	"github.com/dupctl/dupctl/internal/logs/internal/infer"
	"github.com/dupctl/dupctl/internal/platform/problem"
	"github.com/dupctl/dupctl/internal/platform/progress"
)

// DefaultChunkSize is the unit of parallel parsing and of a selective
// second pass.
const DefaultChunkSize = 256 << 10

// Options shape one scan.
type Options struct {
	Mapping *Mapping // nil: Default()
	// Strict stops at the first malformed line.
	Strict bool
	// Workers parsing in parallel (0: every core).
	Workers int
	// ChunkSize in bytes (0: DefaultChunkSize). A second pass must use the
	// same size to see the same chunk numbers.
	ChunkSize int
	// Parse, when set, says which chunks to parse; the others are read
	// past (their lines still counted). Chunk numbers are global across
	// sources and the same on every scan of the same input.
	Parse func(chunk int) bool
	// Progress receives bytes read.
	Progress progress.Meter
	// MaxSamples malformed lines to keep (0: 10).
	MaxSamples int
	// Only extracts just these fields (0: all), for a pass that needs
	// few: the others stay empty and are not parsed.
	Only FieldSet
	// RecordPaths keeps the JSON path each field came from in
	// Event.Paths (for explaining a mapping; it costs an allocation per
	// line).
	RecordPaths bool
	// Keep, when set, first reads each line with only the KeepFields and
	// drops the lines it rejects before reading the rest: a selective pass
	// that wants few lines pays for the others only the JSON scan. It runs
	// in the parsing goroutines, in parallel.
	Keep       func(*Event) bool
	KeepFields FieldSet
	// Format forces every source to be read in one format (FormatAuto:
	// each source's own, detected from its first lines).
	Format Format
	// TZ is the zone of times written without one (nil: UTC).
	TZ *time.Location
	// Prepare, when set, runs on each event in the parsing goroutines,
	// in parallel and out of order, before the event reaches the
	// callback: per-event work that needs no shared state (hashing a
	// key into Event.Tag) belongs here.
	Prepare func(*Event)
	// PrepareLine, when set, runs like Prepare (before it) with the line
	// the event was read from when the line was read as one JSON object
	// (FormatJSON), else with nil: what its fields' strings borrow, for a
	// caller that checks where in the line a value stands.
	PrepareLine func(e *Event, line []byte)
	// Prefilter, when set, is asked of every line of a chunk read as JSON
	// lines (FormatJSON), before any parsing: a line it says false to is
	// passed over (counted, never read, never an event). It runs in the
	// parsing goroutines, in parallel: it may only read shared state. A
	// selective pass whose caller knows which bytes every wanted line
	// holds pays for the others a byte test instead of the JSON scan.
	Prefilter func(chunk int, line []byte) bool
	// MaxLine is the longest line read, in bytes (0: DefaultMaxLine): a
	// longer one is an input error naming where it starts.
	MaxLine int
}

// FieldSet is a set of fields.
type FieldSet uint32

// Fields makes a set.
func Fields(fs ...Field) FieldSet {
	var s FieldSet
	for _, f := range fs {
		s |= 1 << f
	}
	return s
}

// Sample is a malformed line, for the report.
type Sample struct {
	Source string `json:"source"`
	Line   int64  `json:"line"`
	Reason string `json:"reason"`
	Text   string `json:"text"`
}

// Where is "file:line".
func (s Sample) Where() string { return fmt.Sprintf("%s:%d", s.Source, s.Line) }

// Stats describe what a scan read.
type Stats struct {
	Sources   int      `json:"sources"`
	Bytes     int64    `json:"bytes"`
	Lines     int64    `json:"lines"`
	Events    int64    `json:"events"`
	Malformed int64    `json:"malformed"`
	Samples   []Sample `json:"malformed_samples"`
	Chunks    int      `json:"chunks"`
	Parsed    int      `json:"parsed_chunks"`
	// Formats says what each source was read as.
	Formats []SourceFormat `json:"formats"`
	// Continuations are lines that belong to the line above them (a
	// stack trace under a console line): read, not events.
	Continuations int64 `json:"continuation_lines"`
	// Partial are wrapper lines held for their next part (CRI's P).
	Partial int64 `json:"partial_lines"`
	// Inferred is what a sample of the input taught the reader (a mapping
	// that learns from its input, Mapping.LearnFromInput): each file's
	// layout, who the worker is, where the business key is, which message
	// template is which step - with evidence and confidence.
	Inferred *Learned `json:"inferred,omitempty"`
}

// SourceError is an input that could not be opened or read (a missing
// file, a corrupt gzip stream).
type SourceError struct {
	Name, Op string
	Err      error
}

func (e *SourceError) Error() string { return e.Op + " " + e.Name + ": " + e.Err.Error() }
func (e *SourceError) Unwrap() error { return e.Err }

// MalformedError is the error of a strict scan.
type MalformedError struct{ Sample Sample }

func (e *MalformedError) Error() string {
	return fmt.Sprintf("%s: malformed line: %s", e.Sample.Where(), e.Sample.Reason)
}

type chunk struct {
	held      int64 // bytes counted against the in-flight budget
	seq       int   // delivery order among parsed chunks
	index     int   // global chunk number
	source    string
	spec      formatSpec
	qualify   bool // several sources: a thread name is qualified by its file
	firstLine int64
	data      []byte
	buf       *[]byte // pooled backing store of data
}

type badLine struct {
	line   int64
	reason string
	text   string
}

type batch struct {
	seq     int
	events  []Event
	bad     []badLine
	c       *chunk
	cont    int64 // continuation lines
	partial int64
	// raw is each event's line, for Options.PrepareLine on JSON lines.
	raw [][]byte
}

// Scan reads every source in order and calls fn for each line that is a
// JSON object, in input order. fn's event borrows buffers (see Event).
// An error from fn stops the scan and is returned. A scan ended by ctx
// returns a *StoppedError (wrapping ctx's error) saying what it had read.
func Scan(ctx context.Context, sources []Source, o Options, fn func(*Event) error) (Stats, error) {
	o.defaults()
	learned, err := o.Mapping.learnFrom(ctx, sources, &o)
	if err != nil {
		return Stats{}, err
	}
	if learned != nil {
		o.Mapping = learned.Mapping()
	}
	meter := progress.Or(o.Progress)
	var total int64
	for _, s := range sources {
		total += max(s.Size(), 0)
	}
	meter.SetTotal(total)
	defer meter.Done()

	parent := ctx
	ctx, cancel := context.WithCancel(ctx)
	defer cancel()
	st := Stats{Sources: len(sources), Inferred: learned}

	pool := &sync.Pool{New: func() any { b := make([]byte, 0, o.ChunkSize); return &b }}
	work := make(chan *chunk, o.Workers*2)
	results := make(chan *batch, o.Workers*2)
	// inflight bounds the chunks read and not yet delivered: a worker
	// held up (the machine is busy) must not let the others run ahead
	// and pile parsed batches up in memory while they wait for it; held
	// bounds their bytes, whatever their number (long lines).
	inflight := make(chan struct{}, o.Workers*4)
	held := newBudget(inflightBytes)
	readErr := make(chan error, 1)
	r := &chunkReader{o: &o, pool: pool, work: work, inflight: inflight, held: held, meter: meter}
	go func() {
		defer close(work)
		readErr <- r.run(ctx, sources)
	}()
	var wg sync.WaitGroup
	for w := 0; w < o.Workers; w++ {
		wg.Add(1)
		go func() {
			defer wg.Done()
			parseChunks(ctx, &o, work, results)
		}()
	}
	go func() { wg.Wait(); close(results) }()

	d := deliverer{o: &o, st: &st, pool: pool, inflight: inflight, held: held}
	err = d.run(ctx, results, fn)
	if err != nil {
		cancel()
		for range results { // let the workers finish
		}
		<-readErr
	} else {
		err = <-readErr
	}
	// The reader has ended: its counts are final.
	st.Lines, st.Bytes, st.Chunks, st.Formats = r.lines, r.bytes.Load(), r.index, r.formats
	if err == nil {
		err = parent.Err()
	}
	return st, stopped(parent, err, func() string { return readText(st.Bytes, st.Lines, sourcesName(sources)) })
}

// defaults fills the options left zero.
func (o *Options) defaults() {
	if o.Mapping == nil {
		o.Mapping = Default()
	}
	if o.ChunkSize <= 0 {
		o.ChunkSize = DefaultChunkSize
	}
	if o.Workers <= 0 {
		o.Workers = runtime.GOMAXPROCS(0)
	}
	if o.MaxSamples <= 0 {
		o.MaxSamples = 10
	}
	if o.MaxLine <= 0 {
		o.MaxLine = DefaultMaxLine
	}
}

// parseChunks is one parsing worker: each chunk read becomes a batch of
// events, prepared (o.Prepare) on this core.
func parseChunks(ctx context.Context, o *Options, work <-chan *chunk, results chan<- *batch) {
	x := &extractor{m: o.Mapping, only: o.Only, tz: o.TZ}
	if o.RecordPaths {
		x.paths = new([NumFields]string)
	}
	if o.Keep != nil {
		x.keep, x.pre = o.Keep, &extractor{m: o.Mapping, only: o.KeepFields | 1<<NumFields}
	}
	x.prefilter, x.prepareLine = o.Prefilter, o.PrepareLine
	for c := range work {
		b := parseChunk(x, c)
		if o.Prepare != nil {
			for i := range b.events {
				o.Prepare(&b.events[i])
			}
		}
		select {
		case results <- b:
		case <-ctx.Done():
			return
		}
	}
}

// deliverer hands batches to fn in sequence order, and gives back what
// each held.
type deliverer struct {
	o        *Options
	st       *Stats
	pool     *sync.Pool
	inflight <-chan struct{}
	held     *budget
}

func (d *deliverer) run(ctx context.Context, results <-chan *batch, fn func(*Event) error) error {
	pending := map[int]*batch{}
	next := 0
	for {
		var b *batch
		select {
		case r, ok := <-results:
			if !ok {
				return nil
			}
			b = r
		case <-ctx.Done():
			return ctx.Err()
		}
		pending[b.seq] = b
		for {
			b, ok := pending[next]
			if !ok {
				break
			}
			delete(pending, next)
			next++
			d.st.Parsed++
			if err := deliverBatch(b, d.o, d.st, fn); err != nil {
				return err
			}
			d.done(b)
			if err := ctx.Err(); err != nil {
				return err
			}
		}
	}
}

// done returns a delivered batch's chunk buffer to the pool (unless a
// long line grew it: the pool keeps only the usual size) and its room to
// the budgets.
func (d *deliverer) done(b *batch) {
	if cap(*b.c.buf) <= 4*d.o.ChunkSize {
		d.pool.Put(b.c.buf)
	}
	d.held.release(b.c.held)
	<-d.inflight
	batchPool.Put(b)
}

func deliverBatch(b *batch, o *Options, st *Stats, fn func(*Event) error) error {
	st.Continuations += b.cont
	st.Partial += b.partial
	bad := b.bad
	for i := range b.events {
		ev := &b.events[i]
		if len(bad) > 0 && bad[0].line < ev.Line {
			if err := noteBad(b, bad[0], o, st); err != nil {
				return err
			}
			bad = bad[1:]
		}
		st.Events++
		if err := fn(ev); err != nil {
			return err
		}
	}
	for _, bl := range bad {
		if err := noteBad(b, bl, o, st); err != nil {
			return err
		}
	}
	return nil
}

func noteBad(b *batch, bl badLine, o *Options, st *Stats) error {
	st.Malformed++
	s := Sample{Source: b.c.source, Line: bl.line, Reason: bl.reason, Text: bl.text}
	if o.Strict {
		return &MalformedError{Sample: s}
	}
	if len(st.Samples) < o.MaxSamples {
		st.Samples = append(st.Samples, s)
	}
	return nil
}

var batchPool = sync.Pool{New: func() any { return &batch{} }}

// parseChunk parses every line of a chunk.
func parseChunk(x *extractor, c *chunk) *batch {
	b := batchPool.Get().(*batch)
	b.seq, b.c = c.seq, c
	b.events = b.events[:0]
	b.bad = b.bad[:0]
	b.cont, b.partial = 0, 0
	b.raw = b.raw[:0]
	dec := decoder{spec: c.spec, source: c.source, qualify: c.qualify}
	if x.m.learned != nil {
		x.file = []byte(filepath.Base(c.source)) // "@file", for a learned mapping that names the worker by its file
	}
	fast := c.spec.format == FormatJSON // one object a line: the pre-read of Keep applies
	data := c.data
	line := c.firstLine
	for len(data) > 0 {
		var l []byte
		if i := bytes.IndexByte(data, '\n'); i >= 0 {
			l, data = data[:i], data[i+1:]
		} else {
			l, data = data, nil
		}
		n := line
		line++
		l = bytes.TrimRight(l, "\r")
		if len(bytes.TrimSpace(l)) == 0 {
			continue
		}
		if dec.continuation(l) {
			b.cont++
			continue
		}
		if fast && x.prefilter != nil && !x.prefilter(c.index, l) {
			continue
		}
		b.line(x, &dec, l, n, fast)
	}
	b.prepareLines(x, fast)
	return b
}

// add makes room for one more event and returns it.
func (b *batch) add() *Event {
	if len(b.events) == cap(b.events) {
		b.events = append(b.events, Event{})[:len(b.events)]
	}
	b.events = b.events[:len(b.events)+1]
	return &b.events[len(b.events)-1]
}

// line reads line n (l) of the batch's chunk into its events (none, one,
// or more for a wrapper), or notes it as bad.
func (b *batch) line(x *extractor, dec *decoder, l []byte, n int64, fast bool) {
	c := b.c
	from := len(b.events)
	if fast && x.keep != nil {
		ev := b.add()
		err := x.pre.line(l, ev)
		b.events = b.events[:from]
		if err == nil && !x.keep(ev) {
			return // a malformed line goes on to be reported
		}
	}
	var err error
	if fast {
		err = x.line(l, b.add())
	} else {
		err = dec.read(x, l, b.add)
	}
	if errors.Is(err, errPartial) {
		b.partial++
		return
	}
	if errors.Is(err, errContinuation) {
		b.cont++
		return
	}
	if err != nil {
		b.events = b.events[:from]
		b.bad = append(b.bad, badLine{line: n, reason: reason(err), text: snippet(l)})
		return
	}
	kept := b.events[:from]
	for i := from; i < len(b.events); i++ {
		ev := &b.events[i]
		// Tag is zeroed: the batch's events are reused, and Prepare sets
		// a Tag only on the events it tags (a keyless line kept the
		// last chunk's tag, and was counted as another key's).
		ev.Source, ev.Line, ev.Chunk, ev.Tag = c.source, n, c.index, 0
		if !fast && x.keep != nil && !x.keep(ev) {
			continue
		}
		kept = append(kept, *ev)
	}
	b.events = kept
	if fast && x.prepareLine != nil {
		for range len(b.events) - len(b.raw) {
			b.raw = append(b.raw, l)
		}
	}
}

// prepareLines runs Options.PrepareLine on the batch's events once the
// chunk is read: a line may still complete the event above it (a
// two-line record, a continuation).
func (b *batch) prepareLines(x *extractor, fast bool) {
	if x.prepareLine == nil {
		return
	}
	for i := range b.events {
		var l []byte
		if fast {
			l = b.raw[i]
		}
		x.prepareLine(&b.events[i], l)
	}
	clear(b.raw)
	b.raw = b.raw[:0]
}

func reason(err error) string {
	s := err.Error()
	if len(s) > 120 {
		s = s[:120] + "..."
	}
	return s
}

// snippet is the start of a bad line, valid UTF-8, for the report.
func snippet(l []byte) string {
	const max = 80
	if len(l) > max {
		l = l[:max]
		for len(l) > 0 && !utf8.Valid(l) {
			l = l[:len(l)-1]
		}
		return string(l) + "..."
	}
	return string(bytes.ToValidUTF8(l, []byte("?")))
}

// chunkReader cuts sources into chunks that end at a line boundary.
type chunkReader struct {
	inflight chan<- struct{}
	held     *budget
	o        *Options
	pool     *sync.Pool
	work     chan<- *chunk
	meter    progress.Meter
	seq      int
	index    int
	lines    int64
	bytes    atomic.Int64
	sources  int
	formats  []SourceFormat
}

func (r *chunkReader) run(ctx context.Context, sources []Source) error {
	r.sources = len(sources)
	for _, s := range sources {
		if err := r.source(ctx, s); err != nil {
			return err
		}
	}
	return nil
}

// source reads one source: open, decompress, detect its format, then cut
// it into chunks.
func (r *chunkReader) source(ctx context.Context, s Source) error {
	rc, err := s.Open(ctx)
	if err != nil {
		return &SourceError{Name: s.Name(), Op: "open", Err: unwrapPathErr(err)}
	}
	defer rc.Close()
	in, closeZ, err := decode(&countingReader{r: rc, meter: r.meter, n: &r.bytes}, s.Name(), r.o.MaxLine)
	if err != nil {
		return readError(ctx, s.Name(), err)
	}
	defer closeZ()
	spec := r.formatOf(in)
	r.formats = append(r.formats, SourceFormat{Source: s.Name(), Format: spec.format.String(), Inner: innerName(spec),
		Layout: spec.layout, Forced: r.o.Format != FormatAuto})
	return r.chunks(ctx, s.Name(), in, spec)
}

// readError is a source that could not be read (a SourceError), unless
// the read was stopped (ctx) or the input is bad in a way already worded
// (a line too long).
func readError(ctx context.Context, name string, err error) error {
	var in *problem.Input
	if ctx.Err() != nil || errors.As(err, &in) {
		return err
	}
	return &SourceError{Name: name, Op: "read", Err: err}
}

// chunks cuts a source's decoded stream into chunks that end at a line
// boundary and hands them to the workers.
func (r *chunkReader) chunks(ctx context.Context, name string, in io.Reader, spec formatSpec) error {
	var carry []byte
	line := int64(1)
	var offset int64 // of the first byte of carry, in the decoded stream
	for {
		bp := r.pool.Get().(*[]byte)
		buf, eof, err := r.fill(in, append((*bp)[:0], carry...))
		if err != nil {
			r.lines += int64(bytes.Count(buf, []byte{'\n'})) // read, if not parsed
			return readError(ctx, name, err)
		}
		if at, ok := longLine(buf, r.o.MaxLine); ok {
			return lineTooLong(name, line+int64(bytes.Count(buf[:at], []byte{'\n'})), offset+int64(at), r.o.MaxLine)
		}
		lastEnd := bytes.LastIndexByte(buf, '\n') + 1
		cut := len(buf)
		if !eof {
			cut = lastEnd
		}
		carry = append(carry[:0], buf[cut:]...)
		data := buf[:cut]
		*bp = buf
		offset += int64(cut)
		if len(data) > 0 {
			c := &chunk{index: r.index, source: name, firstLine: line, data: data, buf: bp, spec: spec, qualify: r.sources > 1}
			nl := int64(bytes.Count(data, []byte{'\n'}))
			if data[len(data)-1] != '\n' {
				nl++
			}
			r.index++
			line += nl
			r.lines += nl
			if err := r.send(ctx, c); err != nil {
				return err
			}
		} else {
			r.pool.Put(bp)
		}
		if eof {
			return nil
		}
	}
}

// longLine finds the first line of b longer than max (the last one may
// be unfinished) and returns where it starts.
func longLine(b []byte, max int) (int, bool) {
	if len(b) <= max {
		return 0, false
	}
	for start := 0; start < len(b); {
		end := bytes.IndexByte(b[start:], '\n')
		if end < 0 {
			end = len(b) - start
		}
		if end > max && len(bytes.TrimRight(b[start:start+end], "\r")) > max {
			return start, true
		}
		start += end + 1
		if len(b)-start <= max {
			return 0, false
		}
	}
	return 0, false
}

// fill reads into buf (which starts with the carry of the last chunk) up
// to the chunk size (not the buffer's capacity, so that every pass cuts
// the same chunks); while no newline is in, it grows, so that a line up
// to MaxLine fits in one chunk, and stops once the line is longer. The
// carry holds no newline, so only newly read bytes need looking at. eof:
// the source is done.
func (r *chunkReader) fill(in io.Reader, buf []byte) (_ []byte, eof bool, _ error) {
	target := max(r.o.ChunkSize, len(buf)+1)
	for {
		if cap(buf) < target {
			size := target
			if size < r.o.MaxLine && size*2 > r.o.MaxLine {
				size = r.o.MaxLine + 1 // the last growth: room for the limit at once
			}
			nb := make([]byte, len(buf), size)
			copy(nb, buf)
			buf = nb
		}
		n, err := io.ReadFull(in, buf[len(buf):target])
		buf = buf[:len(buf)+n]
		if err == io.EOF || err == io.ErrUnexpectedEOF {
			return buf, true, nil
		}
		if err != nil {
			return buf, false, err
		}
		if bytes.IndexByte(buf[len(buf)-n:], '\n') >= 0 || len(buf) > r.o.MaxLine {
			return buf, false, nil
		}
		target = min(target*2, r.o.MaxLine+1)
	}
}

// send hands c to the workers, or back to the pool when the options skip
// it (Options.Parse).
func (r *chunkReader) send(ctx context.Context, c *chunk) error {
	if r.o.Parse != nil && !r.o.Parse(c.index) {
		r.pool.Put(c.buf)
		return nil
	}
	c.seq = r.seq
	r.seq++
	select {
	case r.inflight <- struct{}{}:
	case <-ctx.Done():
		return ctx.Err()
	}
	c.held = int64(cap(*c.buf))
	if err := r.held.acquire(ctx, c.held); err != nil {
		return err
	}
	select {
	case r.work <- c:
	case <-ctx.Done():
		return ctx.Err()
	}
	return nil
}

// formatOf is the format a source is read in: forced by the options, or
// what its first lines show.
func (r *chunkReader) formatOf(in io.Reader) formatSpec {
	forced := r.o.Format
	br, ok := in.(*bufio.Reader)
	var head []byte
	if ok {
		head, _ = br.Peek(64 << 10)
	}
	switch {
	case !ok: // a CSV file or a JSON array, turned into JSON lines
		return formatSpec{format: FormatJSON}
	case forced == FormatAuto:
		return detect(head)
	case forced.wraps():
		spec := detect(head)
		if spec.format != forced {
			var payloads [][]byte
			for _, l := range firstLines(head, sampleLines) {
				if p := wrappedPayload(forced, l); p != nil {
					payloads = append(payloads, p)
				}
			}
			inner := detectPayloads(payloads)
			spec = formatSpec{format: forced, inner: inner.format, layout: inner.layout}
		}
		return spec
	case forced == FormatText:
		if spec := detect(head); spec.prefix != infer.PrefixNone || spec.twoLine {
			return spec // a shipper's prefix over console lines, or two-line records: text all the same
		}
		return formatSpec{format: FormatText, layout: consoleLayout(firstLines(head, sampleLines))}
	}
	return formatSpec{format: forced}
}

func innerName(s formatSpec) string {
	if s.format.wraps() {
		return s.inner.String()
	}
	return ""
}

type countingReader struct {
	r     io.Reader
	meter progress.Meter
	n     *atomic.Int64 // a decoding goroutine may be the one reading
}

func (c *countingReader) Read(p []byte) (int, error) {
	n, err := c.r.Read(p)
	c.n.Add(int64(n))
	c.meter.Add(int64(n))
	return n, err
}
