package logs

import (
	"container/list"
	"context"
	"errors"
	"slices"
	"time"

	"github.com/dupctl/dupctl/internal/cause"
	logread "github.com/dupctl/dupctl/internal/logs"
)

// FollowOptions shape the audit of logs that do not end: the batch
// audit's options (mapping, strictness, clock skew, format, zone, the
// longest line) and the window its state is kept in.
type FollowOptions struct {
	Options
	// Window is how long a key's lines are kept after its last one, by
	// the logs' own times (lines without a time: the time they arrived)
	// (0: an hour). A duplicate is found when both side effects are in it.
	Window time.Duration
	// Poll and Settle are the log reader's (logread.FollowOptions), and
	// Rescan the globs and directories it lists again for new files.
	Poll, Settle time.Duration
	Rescan       []string
	// Now is the clock lines without a time are placed by (nil: the wall
	// clock).
	Now func() time.Time
	// MaxKept bounds the duplicated keys the summary details (0: 1000),
	// the latest found; the causes count every one.
	MaxKept int
	// MaxKeyLines bounds the lines kept per key (0: 1000): past it, the
	// oldest quarter goes.
	MaxKeyLines int
	// Found is called, on Follow's goroutine, with each duplicate as soon
	// as it is found (nil: the summary alone); its error ends the follow.
	Found func(Finding) error
	// Seen, when set, is called on Follow's goroutine with every line read
	// (dupctl watch counts them); the event is valid during the call only.
	Seen func(*logread.Event)
}

// Finding is a duplicate as it is found: a key's side effect has just
// been read again. Duplicate is judged by the same classifier as the
// batch audit's, on the key's lines in the window so far.
type Finding struct {
	Duplicate
	// Where is the line of the side effect just read (file:line); At the
	// stream's time when it was read.
	Where string    `json:"where"`
	At    time.Time `json:"at"`
}

// FollowStats say what a follow kept and let go.
type FollowStats struct {
	Window time.Duration `json:"window_ns"`
	// Findings counts what was reported as it was found: a key once per
	// side effect after its first.
	Findings int64 `json:"findings"`
	// DuplicateKeys counts the keys found duplicated (a key that left the
	// window and was duplicated again counts again); NotKept those the
	// summary no longer details (MaxKept).
	DuplicateKeys int64 `json:"duplicate_keys"`
	NotKept       int64 `json:"duplicates_not_detailed"`
	// KeysInWindow are the keys held at the end; KeysLeft those that left
	// the window; LinesDropped the lines of keys over MaxKeyLines.
	KeysInWindow int       `json:"keys_in_window"`
	KeysLeft     int64     `json:"keys_left_window"`
	LinesDropped int64     `json:"key_lines_dropped"`
	StreamTime   time.Time `json:"stream_time,omitzero"`
}

// Follow audits sources that may never end (logread.Follow: stdin, files
// as they grow, truncated or replaced) and calls o.Found with each
// duplicate as soon as its second - and each later - side effect is read.
// State is kept per key for Window after the key's last line, so memory
// follows the keys of one window, not the time followed. It returns the
// summary when ctx is done (a signal, a deadline) or every source has
// ended: the duplicates (judged again on all their lines in the window),
// causes and metrics. An error from Found, an unreadable source or a
// malformed line with Strict ends it with that error, and the summary so
// far.
func Follow(ctx context.Context, sources []logread.Source, o FollowOptions) (*Result, error) {
	f := newFollower(o)
	st, err := logread.Follow(ctx, sources, logread.FollowOptions{
		Options: logread.Options{Mapping: f.o.Mapping, Strict: o.Strict, Format: o.Format, TZ: o.TZ, MaxLine: o.MaxLine},
		Poll:    o.Poll, Settle: o.Settle, Rescan: o.Rescan,
	}, f.event)
	res := f.finish(st)
	if err != nil && !errors.Is(err, context.Canceled) && !errors.Is(err, context.DeadlineExceeded) {
		return res, err
	}
	return res, nil
}

// fkey is a key's identity: its kind (business, idempotency, job or
// message) and text.
type fkey struct {
	kind byte
	key  string
}

// keyState is one key's lines in the window.
type keyState struct {
	k       fkey
	events  []logread.Event // owned (cloned)
	effects int
	last    time.Time // the stream's time at its last line
	elem    *list.Element
	found   bool // a duplicate was found in this stay in the window
}

// kept is a duplicated key the summary details.
type kept struct {
	k fkey
	d Duplicate
}

type follower struct {
	o       FollowOptions
	res     *Result
	stats   FollowStats
	clock   streamClock
	keys    map[fkey]*keyState
	byLast  *list.List // of *keyState, oldest last line first
	kept    map[fkey]*list.Element
	keptOrd *list.List // of *kept, the first found first
	causes  map[string]int
	metrics *metricsAcc
	kinds   [logread.NumKinds]int64
	mapped  [logread.NumFields]int64
	strs    map[string]string // interned (intern)
}

func newFollower(o FollowOptions) *follower {
	if o.Mapping == nil {
		o.Mapping = logread.Default()
	}
	if o.Window <= 0 {
		o.Window = time.Hour
	}
	if o.Now == nil {
		o.Now = time.Now
	}
	if o.MaxKept <= 0 {
		o.MaxKept = 1000
	}
	if o.MaxKeyLines <= 0 {
		o.MaxKeyLines = 1000
	}
	if o.Found == nil {
		o.Found = func(Finding) error { return nil }
	}
	return &follower{o: o, res: &Result{ClockSkew: o.ClockSkew}, stats: FollowStats{Window: o.Window},
		clock: streamClock{now: o.Now}, keys: map[fkey]*keyState{}, byLast: list.New(), kept: map[fkey]*list.Element{},
		keptOrd: list.New(), causes: map[string]int{}, metrics: newMetricsAcc(), strs: map[string]string{}}
}

func (f *follower) event(e *logread.Event) error {
	now := f.clock.at(e)
	if f.o.Seen != nil {
		f.o.Seen(e)
	}
	f.kinds[e.Kind]++
	f.metrics.add(e)
	for fld := range f.o.Mapping.Overrides() {
		if e.Fields[fld] != "" {
			f.mapped[fld]++
		}
	}
	f.leave(now) // first: a key whose last line is older than the window starts again
	kind, key := groupKey(e)
	if kind == 0 {
		return nil // no key to group it under (the batch audit does not count it either)
	}
	ks := f.touch(fkey{kind, key}, now)
	f.add(ks, e)
	if e.Kind != logread.KindSideEffect {
		return nil
	}
	f.res.Effects++
	if kind != kBusiness && kind != kIdem {
		f.res.NoKey++
	}
	ks.effects++
	if ks.effects < 2 {
		return nil
	}
	d, ok := f.judge(ks)
	if !ok {
		return nil
	}
	f.stats.Findings++
	return f.o.Found(Finding{Duplicate: d, Where: e.Where(), At: now})
}

// touch finds or makes a key's state and moves it to the newest end.
func (f *follower) touch(k fkey, now time.Time) *keyState {
	ks := f.keys[k]
	if ks == nil {
		k.key = string([]byte(k.key)) // the event's strings are borrowed
		ks = &keyState{k: k}
		f.keys[k] = ks
		ks.elem = f.byLast.PushBack(ks)
		f.res.Keys++
	} else {
		f.byLast.MoveToBack(ks.elem)
	}
	ks.last = now
	return ks
}

// add keeps a line of the key, dropping its oldest quarter when it holds
// MaxKeyLines.
func (f *follower) add(ks *keyState, e *logread.Event) {
	if len(ks.events) >= f.o.MaxKeyLines {
		drop := max(len(ks.events)/4, 1)
		for i := range drop {
			if ks.events[i].Kind == logread.KindSideEffect {
				ks.effects--
			}
		}
		n := copy(ks.events, ks.events[drop:])
		clear(ks.events[n:])
		ks.events = ks.events[:n]
		f.stats.LinesDropped += int64(drop)
	}
	ks.events = append(ks.events, f.slim(e))
}

// judgedFields are the fields judging a key reads (group.go, classify.go);
// a line kept in the window keeps only these.
var judgedFields = logread.Fields(logread.JobID, logread.MessageID, logread.BusinessKey, logread.IdempotencyKey, logread.LockKey,
	logread.LockToken, logread.Consumer, logread.JobType, logread.ErrorType)

// slim is a line as the window keeps it: its own copy of what judging
// reads, the name only where it labels the line (eventLabel), and the
// strings that repeat (a file, a worker, a job type) shared.
func (f *follower) slim(e *logread.Event) logread.Event {
	c := *e
	for fld := range c.Fields {
		if judgedFields&logread.Fields(logread.Field(fld)) == 0 {
			c.Fields[fld] = ""
		}
	}
	c.Name = ""
	if e.Kind == logread.KindOther {
		c.Name = e.Name[:min(len(e.Name), 41)]
	}
	c.Paths = nil
	c = c.Clone()
	c.Source = f.intern(c.Source)
	for _, fld := range []logread.Field{logread.Consumer, logread.JobType, logread.ErrorType} {
		c.Fields[fld] = f.intern(c.Fields[fld])
	}
	return c
}

// intern shares a string that repeats; the table is bounded (cleared when
// full: a field with a new value a line shares nothing, and costs no more).
func (f *follower) intern(s string) string {
	if s == "" {
		return s
	}
	if v, ok := f.strs[s]; ok {
		return v
	}
	if len(f.strs) >= 4096 {
		clear(f.strs)
	}
	f.strs[s] = s
	return s
}

// judge classifies a key's lines in the window, as the batch audit does,
// and records the verdict for the summary.
func (f *follower) judge(ks *keyState) (Duplicate, bool) {
	g := &group{kind: ks.k.kind, key: ks.k.key, events: slices.Clone(ks.events)}
	if ks.k.kind == kBusiness || ks.k.kind == kIdem {
		g.adopt(f.orphans(g))
	}
	g.build(f.o.ClockSkew)
	if g.effects() < 2 {
		return Duplicate{}, false
	}
	d := g.classify(f.o.ClockSkew)
	if !ks.found {
		ks.found = true
		f.stats.DuplicateKeys++
		f.res.Untimed += g.untimed
		f.res.TimedLines += len(g.events)
	}
	f.keep(ks.k, d)
	return d, true
}

// orphans are the lines with only a job or message id that one of g's
// runs has: they join its timeline, as in the batch audit.
func (f *follower) orphans(g *group) map[string][]logread.Event {
	out := map[string][]logread.Event{}
	for i := range g.events {
		for _, id := range []string{g.events[i].JobID(), g.events[i].MessageID()} {
			if id == "" {
				continue
			}
			if _, done := out[id]; done {
				continue
			}
			var evs []logread.Event
			for _, kind := range []byte{kJob, kMessage} {
				if o := f.keys[fkey{kind, id}]; o != nil {
					evs = append(evs, o.events...)
				}
			}
			out[id] = evs
		}
	}
	return out
}

// keep records a key's latest verdict for the summary: the causes count
// each key once, by its latest verdict; the details of the MaxKept latest
// found are kept.
func (f *follower) keep(k fkey, d Duplicate) {
	if el, ok := f.kept[k]; ok {
		kd := el.Value.(*kept)
		f.causes[kd.d.Cause]--
		kd.d = d
		f.causes[d.Cause]++
		return
	}
	f.causes[d.Cause]++
	f.kept[k] = f.keptOrd.PushBack(&kept{k: k, d: d})
	if f.keptOrd.Len() > f.o.MaxKept {
		old := f.keptOrd.Remove(f.keptOrd.Front()).(*kept)
		delete(f.kept, old.k)
		f.stats.NotKept++
	}
}

// leave lets go of the keys whose last line is older than the window, a
// duplicated one judged a last time on all its lines.
func (f *follower) leave(now time.Time) {
	edge := now.Add(-f.o.Window)
	for el := f.byLast.Front(); el != nil; el = f.byLast.Front() {
		ks := el.Value.(*keyState)
		if !ks.last.Before(edge) {
			return
		}
		f.forget(ks)
	}
}

func (f *follower) forget(ks *keyState) {
	if ks.found {
		if _, ok := f.kept[ks.k]; ok {
			f.judge(ks)
		}
	}
	f.byLast.Remove(ks.elem)
	delete(f.keys, ks.k)
	f.stats.KeysLeft++
}

// finish judges the duplicated keys still in the window on all their
// lines and builds the summary.
func (f *follower) finish(st logread.Stats) *Result {
	res := f.res
	for el := f.byLast.Front(); el != nil; el = el.Next() {
		if ks := el.Value.(*keyState); ks.found {
			if _, ok := f.kept[ks.k]; ok {
				f.judge(ks)
			}
		}
	}
	res.Input = st
	res.Duplicates = []Duplicate{}
	for el := f.keptOrd.Front(); el != nil; el = el.Next() {
		res.Duplicates = append(res.Duplicates, el.Value.(*kept).d)
	}
	res.Causes = []CauseCount{}
	for _, r := range cause.Rules() {
		if n := f.causes[r.Code]; n > 0 {
			res.Causes = append(res.Causes, CauseCount{Cause: r.Code, Count: n})
		}
	}
	res.Metrics = f.metrics.result()
	res.EventKinds = kindCounts(f.kinds)
	res.UnusedMappings = unusedMappings(f.o.Mapping, &f.mapped)
	res.Timelines = []Timeline{}
	f.stats.KeysInWindow = len(f.keys)
	f.stats.StreamTime = f.clock.t
	stats := f.stats
	res.Follow = &stats
	return res
}

// streamClock is the follow's time: the logs' own times as they are read
// (never going back), and for a line without one, the time since the last
// timed line by the clock (the wall clock when no line had a time).
type streamClock struct {
	now       func() time.Time
	t         time.Time
	anchor    time.Time // the stream's time at the last timed line
	anchorArr time.Time // when that line arrived
}

func (c *streamClock) at(e *logread.Event) time.Time {
	arrived := c.now()
	switch {
	case !e.Time.IsZero():
		if e.Time.After(c.t) {
			c.t = e.Time
		}
		c.anchor, c.anchorArr = c.t, arrived
	case c.anchorArr.IsZero():
		if arrived.After(c.t) {
			c.t = arrived
		}
	default:
		if t := c.anchor.Add(arrived.Sub(c.anchorArr)); t.After(c.t) {
			c.t = t
		}
	}
	return c.t
}
