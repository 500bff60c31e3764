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
// is a lock held from "lock acquired" to "lock released" (or "acked",
// whichever closes it first), matched by job id and attempt, else lock
// key and token; its TTL is the lockTtl the lock was taken with. A job
// type whose logs carry no lock events uses the duration field of its
// lines instead (durationMs on "completed"), never both, so no run is
// counted twice.
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
	p := &pairer{open: map[string]*openRun{}, spans: map[string]bool{}, c: c, fields: fields, defaultType: defaultType}
	st, err := logs.Scan(ctx, sources, o, p.event)
	for _, s := range sources {
		c.Source(s.Name())
	}
	if err != nil {
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
}

type pairer struct {
	open        map[string]*openRun
	spans       map[string]bool // job types with lock spans
	c, fields   *Collector
	defaultType string
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
		r := &openRun{start: ev.Time, ttl: ev.LockTTL, jobType: p.jobType(ev), where: strings.Clone(ev.Where()), keys: ks}
		for _, k := range ks {
			if old, ok := p.open[k]; ok {
				p.drop(old) // acquired again: the earlier one was never released
				p.c.Skip(old.where + ": lock acquired and never released or acked")
			}
			p.open[k] = r
		}
	case logs.KindLockReleased, logs.KindAcked:
		if r := p.find(ev); r != nil {
			p.drop(r)
			if ev.Time.IsZero() {
				p.c.Skip(ev.Where() + ": release without a timestamp")
				return nil
			}
			p.spans[r.jobType] = true
			ttl := r.ttl
			if ttl == 0 {
				ttl = ev.LockTTL
			}
			if why := p.c.add(p.c.series(r.jobType), JobRun{Duration: ev.Time.Sub(r.start), HasWait: true, TTL: ttl}); why != "" {
				p.c.Skip(ev.Where() + ": " + why)
			}
			return nil
		}
		p.fieldRun(ev)
	default:
		p.fieldRun(ev)
	}
	return nil
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

// unclosed counts the locks still held when the logs end, oldest first.
func (p *pairer) unclosed() {
	var runs []*openRun
	seen := map[*openRun]bool{}
	for _, r := range p.open {
		if !seen[r] {
			seen[r] = true
			runs = append(runs, r)
		}
	}
	slices.SortFunc(runs, func(a, b *openRun) int { return cmp.Or(a.start.Compare(b.start), cmp.Compare(a.where, b.where)) })
	for _, r := range runs {
		p.c.Skip(r.where + ": lock acquired and never released or acked (crash, kill, or still running)")
	}
}
