package audit

import (
	"cmp"
	"fmt"
	"slices"
	"strings"
	"time"

	"github.com/dupctl/dupctl/internal/logs"
)

// group is one key's events, rebuilt into runs.
type group struct {
	kind   byte
	key    string
	events []logs.Event
	runs   []*run
	fx     []*logs.Event // side effects in time order
	runOf  map[*logs.Event]*run
}

// run is one delivery processed by one worker: received ... ack/crash.
type run struct {
	worker, job, msg string
	attempt          int
	redelivered      bool
	events           []*logs.Event
	received         *logs.Event
	acquire          *logs.Event // first lock acquisition
	lockFailed       *logs.Event
	release          *logs.Event
	checks           []*logs.Event
	claim            *logs.Event
	effects          []*logs.Event
	commit           *logs.Event
	ack              *logs.Event
	end              *logs.Event // crash, retry, DLQ or failure
	closed           bool
}

func (r *run) first() *logs.Event { return r.events[0] }
func (r *run) last() *logs.Event  { return r.events[len(r.events)-1] }

// adopt joins lines that carry only a job or message id to this key when
// one of its runs has that id.
func (g *group) adopt(orphans map[string][]logs.Event) {
	if len(orphans) == 0 {
		return
	}
	ids := map[string]bool{}
	for i := range g.events {
		for _, id := range []string{g.events[i].JobID(), g.events[i].MessageID()} {
			if id != "" {
				ids[id] = true
			}
		}
	}
	for id := range ids {
		g.events = append(g.events, orphans[id]...)
	}
}

// build orders the events and cuts them into runs.
func (g *group) build(skew time.Duration) {
	// A line without a time takes the time of the line before it in the
	// same file, so it stays in place.
	last := map[string]time.Time{}
	for i := range g.events {
		e := &g.events[i]
		if e.Time.IsZero() {
			e.Time = last[e.Source]
		}
		last[e.Source] = e.Time
	}
	slices.SortStableFunc(g.events, func(a, b logs.Event) int {
		return cmp.Or(a.Time.Compare(b.Time), cmp.Compare(a.Source, b.Source), cmp.Compare(a.Line, b.Line))
	})
	g.runOf = map[*logs.Event]*run{}
	open := map[string]*run{}
	for i := range g.events {
		e := &g.events[i]
		k := runKey(e)
		r := open[k]
		if r == nil || (r.closed && e.Kind == logs.KindReceived) || (r.received != nil && e.Kind == logs.KindReceived) {
			r = &run{worker: e.Consumer(), job: e.JobID(), msg: e.MessageID(), attempt: e.Attempt, redelivered: e.Redelivered == logs.True}
			open[k] = r
			g.runs = append(g.runs, r)
		}
		r.add(e)
		g.runOf[e] = r
		if e.Kind == logs.KindSideEffect {
			g.fx = append(g.fx, e)
		}
	}
}

func runKey(e *logs.Event) string {
	id := e.JobID()
	if id == "" {
		id = e.MessageID()
	}
	return e.Consumer() + "\x00" + id + "\x00" + fmt.Sprint(e.Attempt)
}

func (r *run) add(e *logs.Event) {
	r.events = append(r.events, e)
	if r.job == "" {
		r.job = e.JobID()
	}
	if r.msg == "" {
		r.msg = e.MessageID()
	}
	if e.Redelivered == logs.True {
		r.redelivered = true
	}
	switch e.Kind {
	case logs.KindReceived:
		r.received = e
	case logs.KindLockAcquired:
		if r.acquire == nil {
			r.acquire = e
		}
	case logs.KindLockFailed:
		r.lockFailed = e
	case logs.KindLockReleased:
		r.release = e
	case logs.KindCheck, logs.KindDuplicate:
		r.checks = append(r.checks, e)
	case logs.KindClaimed:
		r.claim = e
	case logs.KindSideEffect:
		r.effects = append(r.effects, e)
	case logs.KindCommitted:
		r.commit = e
	case logs.KindAcked:
		r.ack = e
		r.closed = true
	case logs.KindCrash, logs.KindRetry, logs.KindDeadLettered:
		r.end = e
		r.closed = true
	case logs.KindFailed:
		r.end = e
	}
}

func (g *group) effects() int { return len(g.fx) }

// lockKey of a run: its acquisition's key, else any key it logged.
func (r *run) lockKey() string {
	if r.acquire != nil && r.acquire.LockKey() != "" {
		return r.acquire.LockKey()
	}
	for _, e := range r.events {
		if k := e.LockKey(); k != "" {
			return k
		}
	}
	return ""
}

func (r *run) ttl() time.Duration {
	if r.acquire != nil && r.acquire.LockTTL > 0 {
		return r.acquire.LockTTL
	}
	for _, e := range r.events {
		if e.LockTTL > 0 {
			return e.LockTTL
		}
	}
	return 0
}

func (r *run) idemKey(e *logs.Event) string {
	if k := e.IdempotencyKey(); k != "" {
		return k
	}
	for _, x := range r.events {
		if k := x.IdempotencyKey(); k != "" {
			return k
		}
	}
	return ""
}

// Timeline is one key's events as lanes per worker.
type Timeline struct {
	Key     string        `json:"key"`
	Workers []string      `json:"workers"`
	Rows    []TimelineRow `json:"rows"`
}

// TimelineRow is one event on a worker's lane.
type TimelineRow struct {
	Time   time.Time     `json:"time"`
	Offset time.Duration `json:"offset_ns"`
	Lane   int           `json:"lane"`
	Worker string        `json:"worker"`
	Event  string        `json:"event"`
	Detail string        `json:"detail"`
	Where  string        `json:"where"`
	Repeat bool          `json:"repeat"` // a side effect after the first
}

func (g *group) timeline() Timeline {
	t := Timeline{Key: g.key, Workers: []string{}, Rows: []TimelineRow{}}
	lane := map[string]int{}
	var t0 time.Time
	nfx := 0
	for i := range g.events {
		e := &g.events[i]
		w := orDash(e.Consumer())
		if _, ok := lane[w]; !ok {
			lane[w] = len(t.Workers)
			t.Workers = append(t.Workers, w)
		}
		if i == 0 {
			t0 = e.Time
		}
		repeat := false
		if e.Kind == logs.KindSideEffect {
			nfx++
			repeat = nfx > 1
		}
		t.Rows = append(t.Rows, TimelineRow{Time: e.Time, Offset: e.Time.Sub(t0), Lane: lane[w], Worker: w,
			Event: eventLabel(e), Detail: detail(e), Where: e.Where(), Repeat: repeat})
	}
	return t
}

// eventLabel is the kind, or the raw name for lines of no known kind.
func eventLabel(e *logs.Event) string {
	if e.Kind == logs.KindOther {
		n := e.Name
		if len(n) > 40 {
			n = n[:40] + "..."
		}
		return n
	}
	return e.Kind.String()
}

// detail is the few fields that matter for a step.
func detail(e *logs.Event) string {
	var parts []string
	add := func(k, v string) {
		if v != "" {
			parts = append(parts, k+"="+v)
		}
	}
	switch e.Kind {
	case logs.KindReceived:
		add("msg", e.MessageID())
		add("job", e.JobID())
		if e.Attempt > 0 {
			add("attempt", fmt.Sprint(e.Attempt))
		}
		if e.Redelivered == logs.True {
			parts = append(parts, "redelivered")
		}
	case logs.KindLockAcquired, logs.KindLockFailed, logs.KindLockReleased:
		add("key", e.LockKey())
		tok := e.LockToken()
		if len(tok) > 8 {
			tok = tok[:8] + "…"
		}
		if e.Kind == logs.KindLockReleased && tok == "" {
			parts = append(parts, "token=(none)")
		}
		add("token", tok)
		if e.LockTTL > 0 {
			add("ttl", e.LockTTL.String())
		}
	case logs.KindCheck, logs.KindDuplicate:
		add("key", e.IdempotencyKey())
		switch e.Hit {
		case logs.True:
			parts = append(parts, "found")
		case logs.False:
			parts = append(parts, "not found")
		}
		switch e.FromCache {
		case logs.True:
			parts = append(parts, "from cache")
		case logs.False:
			parts = append(parts, "from db")
		}
	case logs.KindSideEffect, logs.KindClaimed, logs.KindCommitted:
		add("key", e.IdempotencyKey())
	case logs.KindFailed:
		add("error", e.Get(logs.ErrorType))
	}
	if e.Duration > 0 {
		add("duration", e.Duration.String())
	}
	return strings.Join(parts, " ")
}
