package logs

import (
	"bufio"
	"bytes"
	"compress/gzip"
	"context"
	"io"
	"os"
	"strings"
	"sync"
	"time"

	"github.com/dupctl/dupctl/internal/logs/internal/infer"
)

// Learn reads a sample of each source (its first lines) and infers what the
// mapping does not say: each file's layout (a shipper's prefix, two-line
// records, what each bracket and word of a console prefix holds), which
// field names the worker and which are threads, loggers or context, where
// the business key is, and which message template records which step. The
// result is a mapping for the whole scan (Learned.Mapping) and a report of
// what was inferred, from what and how sure. It runs on the sample only: the
// scan applies the result line by line.
func Learn(ctx context.Context, sources []Source, o LearnOptions) (*Learned, error) {
	user := o.Mapping
	if user == nil {
		user = Default()
	}
	o.Config = user.config
	sampling := *user
	sampling.learned = &readHints{fills: map[string]*clockFill{}, worker: true}
	l := &learner{o: o, user: user, sampling: &sampling, miner: infer.NewMiner()}
	per := o.PerSource
	if per <= 0 {
		per = 256 << 10
	}
	if len(sources) > 0 {
		per = min(per, max(maxSample/len(sources), 16<<10))
	}
	for i, s := range sources {
		if err := ctx.Err(); err != nil {
			return nil, err
		}
		if err := l.source(ctx, i, s, per, len(sources)); err != nil {
			return nil, err
		}
	}
	return l.infer(len(sources))
}

// LearnFromInput returns a mapping that learns from its input: the first
// scan with it samples the sources (Learn, with o's year and date; the
// scan's format and zone) and reads them - and every later scan with the
// same mapping, the second pass of an audit - with what was learned
// (Stats.Inferred says what). Sources that cannot be read twice (stdin as
// it comes) are read with the mapping as it is.
func (m *Mapping) LearnFromInput(o LearnOptions) *Mapping {
	c := *m
	c.learning = &learning{o: o}
	return &c
}

// Unlearned is m without learning: the user's mapping as given.
func (m *Mapping) Unlearned() *Mapping {
	c := *m
	c.learning = nil
	return &c
}

// reading is the mapping lines are read with: what was learned once the
// first scan learned it, else m.
func (m *Mapping) reading() *Mapping {
	if m.learning != nil && m.learning.learned != nil && m.learning.learned.mapping != nil {
		return m.learning.learned.mapping
	}
	return m
}

// learning is a mapping's learning, done once.
type learning struct {
	o       LearnOptions
	once    sync.Once
	learned *Learned
	err     error
}

// learnFrom is what the mapping learned from these sources (nil: it does
// not learn, or they cannot be read twice).
func (m *Mapping) learnFrom(ctx context.Context, sources []Source, o *Options) (*Learned, error) {
	if m == nil || m.learning == nil || len(sources) == 0 {
		return nil, nil
	}
	for _, s := range sources {
		if !s.Rewindable() {
			return nil, nil
		}
	}
	l := m.learning
	l.once.Do(func() {
		lo := l.o
		user := *m
		user.learning = nil
		lo.Mapping, lo.Format, lo.TZ = &user, o.Format, o.TZ
		l.learned, l.err = Learn(ctx, sources, lo)
	})
	return l.learned, l.err
}

// maxSample bounds the bytes sampled over all sources.
const maxSample = 16 << 20

// LearnOptions shape a learning.
type LearnOptions struct {
	// Mapping is the user's mapping (--field, --event, --mapping,
	// dupctl.yaml; nil: the built-in one): what it says is never
	// overridden by what is learned.
	Mapping *Mapping
	// Config is what Mapping was compiled from (set by Learn).
	Config Config
	// Format forces every source's format, as in a scan.
	Format Format
	TZ     *time.Location
	// Year completes times that leave it out (RFC 3164); Date those that
	// are a time of day (zerolog's Kitchen). Zero: from the file and its
	// neighbouring lines.
	Year int
	Date time.Time
	// PerSource is how many bytes of each source are sampled (0: 256 KiB;
	// at most 16 MiB over all sources).
	PerSource int
}

// Learned is what a sample of the input taught, and how.
type Learned struct {
	Sources []SourceLayout `json:"sources"`
	Worker  LearnedWorker  `json:"worker"`
	Key     LearnedKey     `json:"business_key"`
	Fields  []infer.Fact   `json:"fields"`
	Roles   []LearnedRole  `json:"roles"`
	// Missing are the steps no template was confidently found for, with
	// the templates that fit best.
	Missing []MissingRole `json:"missing"`
	// Dropped are learned phrases left out because they also matched
	// lines of another step.
	Dropped []string `json:"dropped_phrases,omitempty"`
	Lines   int      `json:"sample_lines"`
	// MessageIDs is the shape of the message ids ("uuid"): a line that
	// names no key but holds one in its lock key joins that message.
	MessageIDs string `json:"message_ids,omitempty"`

	config  Config // the learned fields and phrases, as dupctl.yaml holds them
	mapping *Mapping
}

// SourceLayout is what one source's first lines were read as.
type SourceLayout struct {
	Source string `json:"source"`
	Layout string `json:"layout"`
	// Times says how times that leave out their year or date are
	// completed ("" when the source's times are whole).
	Times string `json:"times,omitempty"`
}

// LearnedWorker is who wrote the lines.
type LearnedWorker struct {
	Fields []string `json:"fields"` // outermost first: instance, then process
	Lanes  []string `json:"lanes"`
	Known  bool     `json:"known"`
	Reason string   `json:"reason"`
}

// LearnedKey is where the business key is.
type LearnedKey struct {
	Field  string `json:"field,omitempty"`
	Shape  string `json:"shape,omitempty"`
	Mapped bool   `json:"mapped"`
	Reason string `json:"reason"`
}

// LearnedRole is the step one message template records.
type LearnedRole struct {
	Role       string  `json:"role"`
	Template   string  `json:"template"`
	Phrase     string  `json:"phrase,omitempty"` // the learned phrase ("" when the vocabulary's)
	Lines      int     `json:"lines"`
	Confidence float64 `json:"confidence"`
	Evidence   string  `json:"evidence"`
	By         string  `json:"by"` // "vocabulary" or "inferred"
	Example    string  `json:"example"`
}

// MissingRole is a step no template was confidently given.
type MissingRole struct {
	Role       string        `json:"role"`
	Candidates []LearnedRole `json:"candidates"`
}

// Mapping is the mapping a scan of the same sources reads with: the user's,
// with the learned fields and phrases where the user said nothing.
func (l *Learned) Mapping() *Mapping { return l.mapping }

// Config is what was learned, as a mapping config.
func (l *Learned) Config() Config { return l.config }

// Suggest is the phrase to give for a step no template was confidently
// given: the best candidate's ("" when none).
func (l *Learned) Suggest(kind Kind) (phrase, example string) {
	for _, m := range l.Missing {
		if m.Role == kind.String() && len(m.Candidates) > 0 {
			return m.Candidates[0].Phrase, m.Candidates[0].Example
		}
	}
	return "", ""
}

// learner gathers the sample's records.
type learner struct {
	o        LearnOptions
	user     *Mapping
	sampling *Mapping
	miner    *infer.Miner
	recs     []infer.Record
	tmpls    []*infer.Template
	layouts  []SourceLayout
	names    []string
	specs    []formatSpec
	times    []sourceTimes
	msgIDs   []string // message ids seen (a bounded few)
	lockRead [2]int   // sampled lines whose lock key, token a named field reads
}

// sourceTimes is what one source's sample says of its times.
type sourceTimes struct {
	partial      int       // lines whose time leaves out the year or the date
	year         int       // a year a whole time in the sample has
	date         time.Time // a date a whole time in the sample has
	mtime        time.Time
	monthDayOnly bool
}

// source samples one source.
func (l *learner) source(ctx context.Context, i int, s Source, limit, n int) error {
	head, err := readHead(ctx, s, limit)
	if err != nil {
		return &SourceError{Name: s.Name(), Op: "read", Err: err}
	}
	spec := l.specOf(head)
	l.names = append(l.names, s.Name())
	l.specs = append(l.specs, spec)
	st := sourceTimes{}
	if fi, err := os.Stat(s.Name()); err == nil {
		st.mtime = fi.ModTime()
	}
	dec := decoder{spec: spec, source: s.Name(), qualify: n > 1}
	x := &extractor{m: l.sampling, tz: l.o.TZ}
	var fields []infer.KV
	x.rec = func(path, v []byte) {
		if len(v) > 0 && len(fields) < 64 {
			fields = append(fields, infer.KV{Key: string(path), Value: string(v)})
		}
	}
	var evs []Event
	add := func() *Event { evs = append(evs, Event{}); return &evs[len(evs)-1] }
	line := int64(0)
	for len(head) > 0 {
		var ln []byte
		j := bytes.IndexByte(head, '\n')
		if j < 0 {
			break // the sample's last line may be cut
		}
		ln, head = bytes.TrimRight(head[:j], "\r"), head[j+1:]
		line++
		if len(bytes.TrimSpace(ln)) == 0 || dec.continuation(ln) {
			continue
		}
		fields, evs = fields[:0], evs[:0]
		if err := dec.read(x, ln, add); err != nil {
			continue
		}
		for k := range evs {
			l.add(i, line, &evs[k], fields, &st)
		}
	}
	l.times = append(l.times, st)
	layout := spec.String()
	if spec.format == FormatJSON && spec.layout == "" {
		layout = "json"
	}
	l.layouts = append(l.layouts, SourceLayout{Source: s.Name(), Layout: layout})
	return nil
}

// specOf is a sampled source's format, as a scan chooses it.
func (l *learner) specOf(head []byte) formatSpec {
	switch f := l.o.Format; {
	case f == FormatAuto:
		return detect(head)
	case f == FormatText:
		spec := detect(head)
		if spec.prefix != infer.PrefixNone || spec.twoLine {
			return spec
		}
		return formatSpec{format: FormatText, layout: consoleLayout(firstLines(head, sampleLines))}
	default:
		return formatSpec{format: f}
	}
}

// add makes a record of one sampled event.
func (l *learner) add(src int, line int64, ev *Event, fields []infer.KV, st *sourceTimes) {
	r := infer.Record{Source: src, Line: line, Level: strings.Clone(ev.Fields[Level]), Key: strings.Clone(ev.Fields[BusinessKey])}
	for _, kv := range fields {
		if s, ok := l.user.lookup([]byte(kv.Key)); ok {
			switch s.field {
			case Message, EventName, Timestamp, Level, ErrorText:
				continue
			}
		}
		if kv.Key == "message" || kv.Key == "timestamp" || kv.Key == "level" || kv.Key == infer.File {
			continue // a console layout's own parts
		}
		r.Fields = append(r.Fields, kv)
	}
	if ev.Fields[LockKey] != "" {
		l.lockRead[0]++
	}
	if ev.Fields[LockToken] != "" {
		l.lockRead[1]++
	}
	if id := ev.Fields[MessageID]; id != "" && len(l.msgIDs) < 1000 {
		l.msgIDs = append(l.msgIDs, strings.Clone(id))
	}
	r.Message = strings.Clone(ev.Name)
	if ev.Fields[EventName] != "" && ev.Fields[Message] != "" && len(ev.Fields[EventName]) > 0 {
		r.Message = strings.Clone(ev.Fields[EventName])
	}
	if ev.Kind != KindOther {
		r.Hint = infer.RoleByName(ev.Kind.String())
		r.ByName = ev.Match.Phrase == 0
	}
	if !ev.Time.IsZero() {
		r.Time = ev.Time.UnixNano()
		if st.year == 0 {
			st.year, st.date = ev.Time.Year(), ev.Time.Truncate(24*time.Hour)
		}
	} else if ts := ev.Fields[Timestamp]; ts != "" {
		if c, ok := infer.ParseClock([]byte(ts)); ok {
			st.partial++
			st.monthDayOnly = c.HasDate()
		}
	}
	l.recs = append(l.recs, r)
	t, _ := l.miner.Add(r.Message)
	l.tmpls = append(l.tmpls, t)
}

// readHead reads up to limit bytes of a source (decompressed).
func readHead(ctx context.Context, s Source, limit int) ([]byte, error) {
	rc, err := s.Open(ctx)
	if err != nil {
		return nil, unwrapPathErr(err)
	}
	defer rc.Close()
	br := bufio.NewReader(rc)
	var in io.Reader = br
	if magic, _ := br.Peek(2); len(magic) == 2 && magic[0] == 0x1f && magic[1] == 0x8b {
		zr, err := gzip.NewReader(br)
		if err != nil {
			return nil, err
		}
		defer zr.Close()
		in = zr
	}
	buf := make([]byte, limit)
	n, err := io.ReadFull(in, buf)
	if err != nil && err != io.EOF && err != io.ErrUnexpectedEOF {
		return nil, err
	}
	buf = buf[:n]
	if n < limit && (n == 0 || buf[n-1] != '\n') {
		buf = append(buf, '\n') // the whole source, its last line unended
	}
	return buf, nil
}
