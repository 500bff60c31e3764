// Package audit rebuilds each business key's timeline from worker logs
// across workers and files, finds every key whose side effect ran more
// than once and classifies why, with the log lines that prove it: broker
// redelivery after a crash before the ack, lock expiry, lock key from the
// job id, unlock without token, unstable idempotency key, non-atomic
// commit, stale cache, race without a lock - or "unexplained" when the
// evidence does not decide. The same pass computes the fleet's metrics.
//
// Memory follows the number of distinct keys, not the size of the logs:
// a first pass keeps, per key, a hash, a side-effect count and the range
// of input chunks it appears in; a second pass re-reads only the chunks of
// the keys with duplicates and keeps their lines.
package logs

import (
	"context"
	"errors"
	"fmt"
	"hash/maphash"
	"slices"
	"strings"
	"time"

	logread "github.com/dupctl/dupctl/internal/logs"
	"github.com/dupctl/dupctl/internal/platform/findings"
	"github.com/dupctl/dupctl/internal/platform/progress"
)

// Options shape one audit.
type Options struct {
	Mapping *logread.Mapping
	Strict  bool
	// ClockSkew is how far apart two workers' clocks may be: orderings
	// across workers closer than this are not used as evidence.
	ClockSkew time.Duration
	// Incident is a business key whose timeline to return whatever it
	// holds; Timelines returns every duplicate's timeline.
	Incident  string
	Timelines bool
	Workers   int
	ChunkSize int
	Progress  progress.Meter
	// Format forces the log format of every source (FormatAuto: each
	// source's own); TZ is the zone of times written without one.
	Format logread.Format
	TZ     *time.Location
	// MaxLine is the longest line read (0: logread.DefaultMaxLine).
	MaxLine int
	// NoPrefilter reads every chunk the second pass re-reads whole, line
	// by line through the JSON scan (the prefilter's byte test off): the
	// same result, for comparing the two.
	NoPrefilter bool
}

// Result is an audit's outcome: the data behind JSON output and the text
// view.
type Result struct {
	Input      logread.Stats `json:"input"`
	Keys       int           `json:"keys"`
	Effects    int64         `json:"side_effects"`
	Duplicates []Duplicate   `json:"duplicates"`
	Causes     []CauseCount  `json:"causes"`
	Metrics    Metrics       `json:"metrics"`
	Timelines  []Timeline    `json:"timelines"`
	// EventKinds counts the lines of each kind the mapping read.
	EventKinds []KindCount `json:"event_kinds"`
	ReadAgain  int         `json:"chunks_read_again"`
	// UnusedMappings are the --field mappings no line matched.
	UnusedMappings []string `json:"unused_mappings,omitempty"`
	// Untimed counts the lines of duplicated keys without a time dupctl
	// could read: ordered by their place in their file, never by a time.
	Untimed    int           `json:"lines_without_time"`
	TimedLines int           `json:"lines_of_duplicates"`
	NoKey      int64         `json:"side_effects_without_key"`
	ClockSkew  time.Duration `json:"clock_skew_ns"`
	// Follow is what a follow (Follow) kept and let go; nil for a batch
	// audit.
	Follow *FollowStats `json:"follow,omitempty"`
	// prefiltered counts the lines the second pass passed over with the
	// prefilter's byte test (never in the report: the same report either
	// way).
	prefiltered int64
}

// Duplicate is one business key whose side effect ran more than once.
type Duplicate struct {
	Key     string `json:"key"`
	KeyKind string `json:"key_kind"` // business_key, idempotency_key, job_id, message_id
	JobType string `json:"job_type"`
	Effects int    `json:"side_effects"`
	// Cause is the rule code of the first duplicate effect's cause;
	// Candidates the causes it is undetermined between, if so.
	Cause       string   `json:"cause"`
	Candidates  []string `json:"candidates"`
	Explanation string   `json:"explanation"`
	Pairs       []Pair   `json:"pairs"`
	Workers     []string `json:"workers"`
}

// Pair explains one repeated side effect against the one before it.
type Pair struct {
	Cause       string     `json:"cause"`
	Explanation string     `json:"explanation"`
	Evidence    []Evidence `json:"evidence"`
	// Candidates are the causes the lines cannot tell apart (Cause is
	// then DUP_EFFECT_UNDETERMINED) and Decide the line that would.
	Candidates []string `json:"candidates"`
	Decide     string   `json:"decide"`
	// Absent are the lines the explanation says the log does not hold.
	Absent []Absence `json:"absent"`
	// Also lists other causes whose evidence holds too (less specific).
	Also []string `json:"also"`
}

// Evidence is one log line that supports a cause.
type Evidence struct {
	Where  string    `json:"where"` // file:line
	Time   time.Time `json:"time,omitzero"`
	Worker string    `json:"worker"`
	Event  string    `json:"event"`
	Detail string    `json:"detail"`
	Note   string    `json:"note"`
}

func (e Evidence) String() string {
	s := fmt.Sprintf("%s %s %s %s", e.Where, fmtTime(e.Time), orDash(e.Worker), e.Event)
	if e.Detail != "" {
		s += " " + e.Detail
	}
	if e.Note != "" {
		s += ": " + e.Note
	}
	return s
}

// KindCount is how many lines were read as one kind of event.
type KindCount struct {
	Kind   string `json:"kind"`
	Events int64  `json:"events"`
}

// ErrMappingNoEffects is the reason of the input error Run returns when
// the user's mapping leaves no line a side effect.
var ErrMappingNoEffects = errors.New("the mapping leaves no side effect")

// CauseCount counts duplicates per cause.
type CauseCount struct {
	Cause string `json:"cause"`
	Count int    `json:"count"`
}

// keyStat is what the first pass keeps per key: the chunks its lines are
// in - the first, up to three more as offsets from it, and the last - so
// the second pass re-reads only those (a key whose lines are in more
// chunks gets its whole range re-read), and its side-effect count.
type keyStat struct {
	first, last uint32
	more        [3]uint16
	n           uint8 // further chunks seen (4: more than the three kept)
	effects     uint8 // saturating
}

// saw adds chunk c, in input order.
func (s *keyStat) saw(c uint32) {
	if c == s.last {
		return
	}
	s.last = c
	switch {
	case s.n < 3 && c-s.first <= 0xffff:
		s.more[s.n] = uint16(c - s.first)
		s.n++
	default: // too many, or too far for an offset: the whole range
		s.n = 4
	}
}

// chunks calls fn for each chunk the key's lines are in (the whole range
// when it was in too many to keep).
func (s *keyStat) chunks(fn func(uint32)) {
	if s.n > 3 {
		for c := s.first; c <= s.last; c++ {
			fn(c)
		}
		return
	}
	fn(s.first)
	for i := uint8(0); i < s.n; i++ {
		fn(s.first + uint32(s.more[i]))
	}
}

const (
	kBusiness byte = iota + 1
	kIdem
	kJob
	kMessage
)

var keyKinds = map[byte]string{kBusiness: "business_key", kIdem: "idempotency_key", kJob: "job_id", kMessage: "message_id"}

// groupKey is the key a line's events are grouped under: the business
// key, else the idempotency key, else the job or message id.
func groupKey(e *logread.Event) (byte, string) {
	if k := e.BusinessKey(); k != "" {
		return kBusiness, k
	}
	if k := e.IdempotencyKey(); k != "" {
		return kIdem, k
	}
	if k := e.JobID(); k != "" {
		return kJob, k
	}
	if k := e.MessageID(); k != "" {
		return kMessage, k
	}
	return 0, ""
}

// hashKey is a key's identity in the first pass (never 0; its bit
// verbatimTag is clear, for the first pass's mark).
func hashKey(seed maphash.Seed, kind byte, key string) uint64 {
	return kindHash(maphash.String(seed, key), kind)
}

// kindHash is hashKey from the key's maphash: one hash of a key serves
// every kind.
func kindHash(h uint64, kind byte) uint64 {
	return (h^uint64(kind)*0x9e3779b97f4a7c15)&^verbatimTag | 1
}

// pass1Fields are what counting side effects per key and the metrics
// read.
var pass1Fields = logread.Fields(logread.EventName, logread.Message, logread.BusinessKey, logread.IdempotencyKey, logread.JobID,
	logread.MessageID, logread.JobType, logread.Destination, logread.Attempt, logread.RetryCount, logread.Duration, logread.ErrorType,
	logread.Result)

// ErrNotRewindable is returned when a second pass is needed over a stream
// that cannot be read again; Spool it first.
var ErrNotRewindable = errors.New("input cannot be read twice")

// Run audits the sources.
func Run(ctx context.Context, sources []logread.Source, o Options) (*Result, error) {
	for _, s := range sources {
		if !s.Rewindable() {
			return nil, fmt.Errorf("%s: %w", s.Name(), ErrNotRewindable)
		}
	}
	if o.Mapping == nil {
		o.Mapping = logread.Default()
	}
	seed := maphash.MakeSeed()
	res := &Result{ClockSkew: o.ClockSkew}
	scan := logread.Options{Mapping: o.Mapping, Strict: o.Strict, Workers: o.Workers, ChunkSize: o.ChunkSize, Progress: o.Progress,
		Format: o.Format, TZ: o.TZ, MaxLine: o.MaxLine}
	p1 := &firstPass{o: o, res: res, seed: seed, stats: make(map[uint64]keyStat, 1<<16), metrics: newMetricsAcc()}
	if !o.NoPrefilter {
		p1.pf = &prefilter{}
	}
	st, err := logread.Scan(ctx, sources, p1.options(scan), p1.event)
	res.Input = st
	if err != nil {
		return nil, err
	}
	if err := p1.finish(st); err != nil {
		return nil, err
	}
	p2 := newSecondPass(seed, o, res)
	if p1.pf != nil && p1.pf.usable(st.Chunks) {
		p2.pf = p1.pf
	}
	p1.choose(p2)
	p1.stats = nil // the second pass needs only the chosen keys
	if err := p2.run(ctx, sources, scan); err != nil {
		return nil, err
	}
	p2.finish()
	if p2.pf != nil {
		res.prefiltered = p2.pf.passed.Load()
	}
	return res, nil
}

// firstPass counts, per key, the side effects and the chunks the key was
// seen in, to choose the keys the second pass reads whole.
type firstPass struct {
	o         Options
	res       *Result
	seed      maphash.Seed
	stats     map[uint64]keyStat
	metrics   *metricsAcc
	kinds     [logread.NumKinds]int64
	mapped    [logread.NumFields]int64 // lines carrying each field the user mapped
	unmatched unmatchedLines
	// pf, when set, learns which chunks the second pass may pass over
	// line by line (prefilter.go).
	pf *prefilter
}

// options reads only what counting needs, and hashes each line's key on
// the parsing cores.
func (p *firstPass) options(scan logread.Options) logread.Options {
	first := scan
	first.Only = pass1Fields // no timestamps, locks or tokens: counting needs none
	for f := range p.o.Mapping.Overrides() {
		first.Only |= logread.Fields(f)
	}
	first.Prepare = func(e *logread.Event) {
		if kind, key := groupKey(e); kind != 0 {
			e.Tag = hashKey(p.seed, kind, key)
		}
	}
	if p.pf != nil {
		first.Prepare = nil
		first.PrepareLine = func(e *logread.Event, line []byte) {
			kind, key := groupKey(e)
			if kind == 0 {
				return
			}
			e.Tag = hashKey(p.seed, kind, key)
			if line != nil && (kind == kBusiness || kind == kIdem) && p.pf.verbatim(line, key) {
				e.Tag |= verbatimTag
			}
		}
	}
	return first
}

func (p *firstPass) event(e *logread.Event) error {
	if p.pf != nil {
		p.pf.saw(e)
	}
	p.kinds[e.Kind]++
	p.metrics.add(e)
	p.unmatched.add(e)
	for f := range p.o.Mapping.Overrides() {
		if e.Fields[f] != "" {
			p.mapped[f]++
		}
	}
	if e.Tag == 0 {
		return nil
	}
	kind, _ := groupKey(e)
	h := e.Tag &^ verbatimTag
	s, ok := p.stats[h]
	c := uint32(e.Chunk)
	if !ok {
		s.first, s.last = c, c
	}
	s.saw(c)
	if e.Kind == logread.KindSideEffect {
		p.res.Effects++
		if kind != kBusiness && kind != kIdem {
			p.res.NoKey++
		}
		if s.effects < 255 {
			s.effects++
		}
	}
	p.stats[h] = s
	return nil
}

// finish fills what the first pass learned into the result, and refuses
// input that was not read or holds no side effect.
func (p *firstPass) finish(st logread.Stats) error {
	res := p.res
	res.Keys = len(p.stats)
	res.UnusedMappings = unusedMappings(p.o.Mapping, &p.mapped)
	res.Metrics = p.metrics.result()
	res.EventKinds = kindCounts(p.kinds)
	if err := logread.NotRead(st); err != nil {
		return err
	}
	if res.Effects == 0 {
		return noEffects(p.o.Mapping, st, res.EventKinds, &p.unmatched)
	}
	return nil
}

// unusedMappings are the --field mappings no line matched (mapped counts
// the lines carrying each field).
func unusedMappings(m *logread.Mapping, mapped *[logread.NumFields]int64) []string {
	var out []string
	for f, paths := range m.Overrides() {
		if mapped[f] == 0 {
			out = append(out, fmt.Sprintf("%s=%s", f, strings.Join(paths, ",")))
		}
	}
	slices.Sort(out)
	return out
}

// kindCounts lists the kinds read, with their lines.
func kindCounts(kinds [logread.NumKinds]int64) []KindCount {
	out := []KindCount{}
	for k, n := range kinds {
		if n > 0 {
			out = append(out, KindCount{Kind: logread.Kind(k).String(), Events: n})
		}
	}
	return out
}

// choose marks for the second pass every key with more than one side
// effect, and the incident's key (a business, idempotency, job or message
// key).
func (p *firstPass) choose(p2 *secondPass) {
	for h, s := range p.stats {
		if s.effects > 1 {
			p2.mark(h, s)
		}
	}
	if p.o.Incident == "" {
		return
	}
	for _, k := range []byte{kBusiness, kIdem, kJob, kMessage} {
		h := hashKey(p.seed, k, p.o.Incident)
		if s, ok := p.stats[h]; ok {
			p2.mark(h, s)
			break
		}
	}
}

// Report turns a result into findings: one per duplicated key, plus the
// input checks.
func (r *Result) Report() *findings.Report {
	rep := &findings.Report{Command: "audit logs", Data: r}
	for _, rule := range Rules() {
		rep.Check(rule.Code)
	}
	for _, rule := range logread.Rules() {
		rep.Check(rule.Code)
	}
	byCode := map[string]findings.Rule{}
	for _, rule := range Rules() {
		byCode[rule.Code] = rule
	}
	for _, d := range r.Duplicates {
		rule := byCode[d.Cause]
		var ev []string
		for i, p := range d.Pairs {
			if len(d.Pairs) > 1 {
				ev = append(ev, fmt.Sprintf("repeat %d: %s (%s)", i+1, p.Explanation, p.Cause))
			}
			for _, e := range p.Evidence {
				ev = append(ev, e.String())
			}
			if len(p.Candidates) > 0 {
				ev = append(ev, fmt.Sprintf("undetermined between %s; what would decide: %s", joinComma(p.Candidates), p.Decide))
			}
			if len(p.Also) > 0 {
				ev = append(ev, "evidence also fits: "+joinComma(p.Also))
			}
		}
		f := rule.New(d.Key, fmt.Sprintf("side effect ran %d times: %s", d.Effects, d.Explanation), ev...)
		rep.Add(f)
	}
	rep.Add(logread.InputFindings(r.Input)...)
	for _, m := range r.UnusedMappings {
		rep.Add(logread.RuleMappingUnused.New(m,
			fmt.Sprintf("no line has a field at the path mapped ({Fields} %s): the mapping reads nothing", m)))
	}
	if r.Untimed > 0 {
		rep.Add(logread.RuleNoTimes.New("input", fmt.Sprintf("%d of the %d lines of duplicated keys carry no time dupctl could read: "+
			"they are ordered by their place in their file, and a cause that needs times (a lock's TTL, an order across workers) "+
			"is not claimed from them", r.Untimed, r.TimedLines)))
	}
	if r.NoKey > 0 {
		rep.Add(RuleNoBusinessKey.New("input", fmt.Sprintf("%d of %d side effects carry no business or idempotency key", r.NoKey, r.Effects)))
	}
	if r.Follow != nil && r.Effects == 0 && r.Input.Events > 0 {
		// A batch audit refuses such input; a follow says so in its summary.
		rep.Add(RuleNoEffects.New("input", fmt.Sprintf("none of the %d lines followed was a side effect, "+
			"so no duplicate could be found", r.Input.Events)))
	}
	return rep
}

func joinComma(s []string) string {
	out := ""
	for i, x := range s {
		if i > 0 {
			out += ", "
		}
		out += x
	}
	return out
}

func orDash(s string) string {
	if s == "" {
		return "-"
	}
	return s
}

func fmtTime(t time.Time) string {
	if t.IsZero() {
		return "-"
	}
	return t.UTC().Format("2006-01-02T15:04:05.000Z")
}
