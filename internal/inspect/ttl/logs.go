package ttl

import (
	"cmp"
	"context"
	"fmt"
	"slices"
	"strconv"
	"strings"
	"time"

	"github.com/dupctl/dupctl/internal/logs"
)

// ReadLogs reads runs from structured worker logs (internal/logs): a run
// is one token's hold of a lock, from "lock acquired" to "lock released"
// (or "acked", whichever closes it first), matched by job id and attempt,
// else lock key and token; its TTL is the lockTtl the lock was taken with.
// A job type whose logs carry no lock events uses the duration field of
// its lines instead (durationMs on "completed"), never both, so no run is
// counted twice.
//
// Runs are counted per token, not per lock key: when another token
// acquires the key while a run holds it, the run was taken over (its
// lease had run out). A run taken over that logs no release or ack but
// keeps working (any later line of its job, or a "lock lost") lasted at
// least until its last line: it is a run that outlived its TTL, and the
// takeover is kept as evidence.
//
// A lock span already contains the queue wait when the lock is taken at
// enqueue; durations from a field carry no wait, so --include-wait skips
// them. Locks acquired and never released (a crash, a kill, or still
// running at the end of the logs) are counted as skipped.
func ReadLogs(ctx context.Context, sources []logs.Source, o logs.Options, defaultType string, c *Collector) (logs.Stats, error) {
	if defaultType == "" {
		defaultType = TableOptions{}.defaultType()
	}
	fields := NewCollector(c.opts)
	p := &pairer{open: map[string]*openRun{}, holder: map[string]*openRun{}, spans: map[string]bool{}, c: c, fields: fields,
		defaultType: defaultType}
	st, err := logs.Scan(ctx, sources, o, p.event)
	for _, s := range sources {
		c.Source(s.Name())
	}
	if err != nil {
		return st, err
	}
	if err := logs.NotRead(st); err != nil {
		return st, err
	}
	for _, s := range st.Samples {
		c.Skip(fmt.Sprintf("%s: malformed line: %s", s.Where(), s.Reason))
	}
	if extra := st.Malformed - int64(len(st.Samples)); extra > 0 {
		c.skipped.Rows += extra
	}
	p.unclosed()
	// Durations from fields count only for job types without lock spans.
	for name, s := range fields.types {
		if !p.spans[name] && s.n > 0 {
			c.series(name).merge(s, c.exact)
		}
	}
	c.skipped.Rows += fields.skipped.Rows
	for _, e := range fields.skipped.Examples {
		if len(c.skipped.Examples) < maxSkipExamples {
			c.skipped.Examples = append(c.skipped.Examples, e)
		}
	}
	c.last = nil
	return st, nil
}

// openRun is a lock acquired and not yet released.
type openRun struct {
	start   time.Time
	ttl     time.Duration
	jobType string
	where   string
	keys    []string
	lockKey string
	// last is the run's latest line (lastWhere where it is).
	last      time.Time
	lastWhere string
	// taken is the takeover: another token acquired the lock key while
	// this run held it.
	taken *Takeover
}

type pairer struct {
	open        map[string]*openRun
	holder      map[string]*openRun // lock key -> the run that last acquired it
	spans       map[string]bool     // job types with lock spans
	c, fields   *Collector
	defaultType string
	dropped     []*openRun // runs no key finds any more (taken over, no other key)
}

// runKeys are the names a run can be found by: job id + attempt, lock
// key + token, lock key alone (in that order of trust).
func runKeys(ev *logs.Event) []string {
	var ks []string
	if id := ev.JobID(); id != "" {
		ks = append(ks, "j\x00"+id+"\x00"+strconv.Itoa(ev.Attempt))
	}
	if k := ev.LockKey(); k != "" {
		if tok := ev.LockToken(); tok != "" {
			ks = append(ks, "t\x00"+k+"\x00"+tok)
		} else {
			ks = append(ks, "k\x00"+k)
		}
	}
	return ks
}

func (p *pairer) jobType(ev *logs.Event) string {
	if t := ev.JobType(); t != "" {
		return strings.Clone(t)
	}
	return p.defaultType
}

func (p *pairer) event(ev *logs.Event) error {
	switch ev.Kind {
	case logs.KindLockAcquired:
		ks := runKeys(ev)
		if len(ks) == 0 || ev.Time.IsZero() {
			p.c.Skip(ev.Where() + ": lock acquired without a job id, a lock key or a timestamp")
			return nil
		}
		r := &openRun{start: ev.Time, ttl: ev.LockTTL, jobType: p.jobType(ev), where: strings.Clone(ev.Where()), keys: ks,
			lockKey: strings.Clone(ev.LockKey()), last: ev.Time, lastWhere: strings.Clone(ev.Where())}
		if h := p.holder[r.lockKey]; r.lockKey != "" && h != nil && p.isOpen(h) && h.taken == nil && !sameRun(h, r) {
			tok := ev.LockToken()
			h.taken = &Takeover{Where: r.where, At: ev.Time, By: strings.Clone(tok)}
		}
		for _, k := range ks {
			if old, ok := p.open[k]; ok {
				if old.taken != nil && k == "k\x00"+r.lockKey {
					// The lock key alone found the run taken over: it
					// stays open under its other keys.
					p.unkey(old, k)
					continue
				}
				p.drop(old) // acquired again: the earlier one was never released
				p.c.Skip(old.where + ": lock acquired and never released or acked")
			}
			p.open[k] = r
		}
		if r.lockKey != "" {
			p.holder[r.lockKey] = r
		}
	case logs.KindLockReleased, logs.KindAcked:
		if r := p.find(ev); r != nil {
			p.drop(r)
			if ev.Time.IsZero() {
				p.c.Skip(ev.Where() + ": release without a timestamp")
				return nil
			}
			ttl := r.ttl
			if ttl == 0 {
				ttl = ev.LockTTL
			}
			p.count(r, ev.Time, strings.Clone(ev.Where()), ttl)
			return nil
		}
		p.fieldRun(ev)
	default:
		if r := p.find(ev); r != nil && !ev.Time.IsZero() && ev.Time.After(r.last) {
			r.last, r.lastWhere = ev.Time, strings.Clone(ev.Where())
		}
		p.fieldRun(ev)
	}
	return nil
}

// count records a run that ended at end (a release, an ack, or its last
// line).
func (p *pairer) count(r *openRun, end time.Time, where string, ttl time.Duration) {
	p.spans[r.jobType] = true
	d := end.Sub(r.start)
	if why := p.c.add(p.c.series(r.jobType), JobRun{Duration: d, HasWait: true, TTL: ttl}); why != "" {
		p.c.Skip(where + ": " + why)
		return
	}
	if eff := p.c.effectiveTTL(p.c.series(r.jobType), ttl); r.taken != nil && eff > 0 && d > eff {
		// Taken over after its lease ran out while it still worked: the
		// evidence of a run that outlived its TTL. (A takeover within the
		// lease is someone else's release - audit logs says whose.)
		t := *r.taken
		t.Run, t.Until, t.Held, t.TTL = r.where, where, d, eff
		p.c.series(r.jobType).takeover(t)
	}
}

// sameRun: two acquisitions by one run (a retry of the acquire, a
// renewal logged as one) are not a takeover.
func sameRun(a, b *openRun) bool {
	for _, k := range a.keys {
		if strings.HasPrefix(k, "j\x00") && slices.Contains(b.keys, k) {
			return true
		}
	}
	return false
}

func (p *pairer) isOpen(r *openRun) bool {
	for _, k := range r.keys {
		if p.open[k] == r {
			return true
		}
	}
	return false
}

// unkey stops k from finding r; a run no key finds is kept for the end.
func (p *pairer) unkey(r *openRun, k string) {
	if p.open[k] == r {
		delete(p.open, k)
	}
	if !p.isOpen(r) {
		p.dropped = append(p.dropped, r)
	}
}

// fieldRun records a line's own duration field (a "completed" line with
// durationMs).
func (p *pairer) fieldRun(ev *logs.Event) {
	if ev.Duration <= 0 {
		return
	}
	if why := p.fields.add(p.fields.series(p.jobType(ev)), JobRun{Duration: ev.Duration, TTL: ev.LockTTL}); why != "" {
		p.fields.Skip(ev.Where() + ": " + why)
	}
}

func (p *pairer) find(ev *logs.Event) *openRun {
	for _, k := range runKeys(ev) {
		if r, ok := p.open[k]; ok {
			return r
		}
	}
	return nil
}

func (p *pairer) drop(r *openRun) {
	for _, k := range r.keys {
		if p.open[k] == r {
			delete(p.open, k)
		}
	}
}

// unclosed handles the locks still held when the logs end, oldest first:
// a run taken over that kept working past its TTL is counted until its
// last line; the others are skipped (a crash, a kill, or still running).
func (p *pairer) unclosed() {
	var runs []*openRun
	seen := map[*openRun]bool{}
	for _, r := range p.open {
		if !seen[r] {
			seen[r] = true
			runs = append(runs, r)
		}
	}
	for _, r := range p.dropped {
		if !seen[r] {
			seen[r] = true
			runs = append(runs, r)
		}
	}
	slices.SortFunc(runs, func(a, b *openRun) int { return cmp.Or(a.start.Compare(b.start), cmp.Compare(a.where, b.where)) })
	for _, r := range runs {
		ttl := p.c.effectiveTTL(p.c.series(r.jobType), r.ttl)
		if r.taken != nil && ttl > 0 && r.last.After(r.taken.At) && r.last.Sub(r.start) > ttl {
			p.count(r, r.last, r.lastWhere, r.ttl)
			continue
		}
		why := r.where + ": lock acquired and never released or acked (crash, kill, or still running)"
		if r.taken != nil {
			why += fmt.Sprintf("; taken over at %s by another token", r.taken.Where)
		}
		p.c.Skip(why)
	}
}
