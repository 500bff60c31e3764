package logs

import (
	"cmp"
	"fmt"
	"slices"
	"strings"
	"time"

	logread "github.com/dupctl/dupctl/internal/logs"
)

// group is one key's events, rebuilt into runs.
type group struct {
	kind   byte
	key    string
	events []logread.Event
	runs   []*run
	fx     []*logread.Event // side effects in time order
	runOf  map[*logread.Event]*run
	// untimed counts the lines that carried no time dupctl could read.
	untimed int
	// keyless are lock lines that name no key, by file (pass 2's).
	keyless map[string][]keylessLine
}

// run is one delivery processed by one worker: received ... ack/crash.
type run struct {
	worker, job, msg string
	attempt          int
	redelivered      bool
	// retries is the run this one retries in place (same worker, same
	// message, no new delivery), nil for a delivery's first run.
	retries    *run
	events     []*logread.Event
	received   *logread.Event
	acquire    *logread.Event // first lock acquisition
	lockFailed *logread.Event
	release    *logread.Event
	checks     []*logread.Event
	claim      *logread.Event
	effects    []*logread.Event
	commit     *logread.Event
	ack        *logread.Event
	end        *logread.Event // crash, retry, DLQ or failure
	closed     bool
}

func (r *run) first() *logread.Event { return r.events[0] }
func (r *run) last() *logread.Event  { return r.events[len(r.events)-1] }

// adopt joins lines that carry only a job or message id to this key when
// one of its runs has that id.
func (g *group) adopt(orphans map[string][]logread.Event) {
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
	// A line without a time is ordered as if it had the time of the line
	// before it in the same file, so it stays in place - and keeps no time
	// of its own: no cause reads a time off it, no evidence shows one.
	last := map[string]time.Time{}
	borrowed := map[srcLine]bool{}
	for i := range g.events {
		e := &g.events[i]
		if e.Time.IsZero() {
			g.untimed++
			e.Time = last[e.Source]
			borrowed[srcLine{e.Source, e.Line}] = true
		}
		last[e.Source] = e.Time
	}
	slices.SortStableFunc(g.events, func(a, b logread.Event) int {
		return cmp.Or(a.Time.Compare(b.Time), cmp.Compare(a.Source, b.Source), cmp.Compare(a.Line, b.Line))
	})
	for i := range g.events {
		if e := &g.events[i]; borrowed[srcLine{e.Source, e.Line}] {
			e.Time = time.Time{}
		}
	}
	g.runOf = map[*logread.Event]*run{}
	// A line names its run by worker, id and attempt. Many services log
	// the message id and attempt only where the listener receives and
	// acks, and the business key alone in between: a line without an
	// attempt belongs to its worker's latest run of that id, and one
	// without an id or an attempt to its worker's latest run.
	x := runIndex{open: map[string]*run{}, latestID: map[string]*run{}, latest: map[string]*run{}}
	for i := range g.events {
		e := &g.events[i]
		id := cmp.Or(e.JobID(), e.MessageID())
		k := runKey(e)
		r := g.begin(e, id, x.find(e, id, k), &x)
		x.open[k] = r
		if id != "" {
			x.latestID[workerID(e, id)] = r
		}
		x.latest[e.Consumer()] = r
		r.add(e)
		g.runOf[e] = r
		if e.Kind == logread.KindSideEffect {
			g.fx = append(g.fx, e)
		}
	}
}

// runIndex finds a line's run: by worker, id and attempt (open), by worker
// and id (latestID), by worker (latest).
type runIndex struct{ open, latestID, latest map[string]*run }

// workerID is latestID's key: the line's worker and a job or message id.
func workerID(e *logread.Event, id string) string { return e.Consumer() + "\x00" + id }

// find is the run a line continues, nil for none.
func (x *runIndex) find(e *logread.Event, id, k string) *run {
	r := x.open[k]
	switch {
	case e.HasAttempt && id != "" && e.Kind != logread.KindReceived && retriedInPlace(x.latestID[workerID(e, id)], r):
		// The delivery's attempt (deliveryCount=1 on the ack) of a
		// run its worker then retried in place: the line is the
		// retried attempt's, the latest run of its message.
		return x.latestID[workerID(e, id)]
	case e.HasAttempt:
	case id != "":
		r = cmp.Or(x.latestID[workerID(e, id)], r)
	default:
		r = cmp.Or(x.latest[e.Consumer()], r)
	}
	return r
}

// begin is the run line e belongs to: r, or a new run it begins.
func (g *group) begin(e *logread.Event, id string, r *run, x *runIndex) *run {
	switch {
	case r == nil || (r.closed && e.Kind == logread.KindReceived) || (r.received != nil && e.Kind == logread.KindReceived):
		r = &run{worker: e.Consumer(), job: e.JobID(), msg: e.MessageID(), attempt: e.Attempt, redelivered: e.Redelivered == logread.True}
		if prev := x.latest[e.Consumer()]; id == "" && prev != nil && prev.ack == nil && (e.Kind == logread.KindRetry || endedInRetry(prev)) {
			// The next attempt of a job its worker retries in place,
			// unacked ("retrying" attempt=2, no message id on its
			// lines, or the first line after such a retry): the
			// same message as the attempt it retries, and the ack that
			// names the message is this attempt's.
			r.job, r.msg, r.redelivered, r.retries = prev.job, prev.msg, prev.redelivered, prev
			if pid := cmp.Or(prev.job, prev.msg); pid != "" {
				x.latestID[workerID(e, pid)] = r
			}
		}
		g.runs = append(g.runs, r)
	case retriedAgain(r, e):
		// The retry's next attempt, logged with no attempt number
		// ("retry #2 in 2.8s", then the check again): a run of its own,
		// of the same message, as an attempt field would have made it.
		r = &run{worker: r.worker, job: r.job, msg: r.msg, attempt: r.attempt + 1, redelivered: r.redelivered}
		g.runs = append(g.runs, r)
	}
	return r
}

// retriedAgain reports whether e, on a line with no attempt, runs the job
// again after its run ended with a retry and no ack: the lock, the check
// or the side effect anew.
func retriedAgain(r *run, e *logread.Event) bool {
	if !endedInRetry(r) || r.events[0] == r.end || e.HasAttempt {
		return false // a run the retry line itself began is that next attempt
	}
	switch e.Kind {
	case logread.KindLockAcquired, logread.KindCheck, logread.KindClaimed, logread.KindSideEffect:
		return true
	}
	return false
}

// retriedInPlace reports whether run l retries run r in place, at one or
// more removes.
func retriedInPlace(l, r *run) bool {
	if r == nil {
		return false
	}
	for ; l != nil; l = l.retries {
		if l.retries == r {
			return true
		}
	}
	return false
}

// endedInRetry reports whether run r ended with a retry and no ack.
func endedInRetry(r *run) bool {
	return r != nil && r.closed && r.ack == nil && r.end != nil && r.end.Kind == logread.KindRetry
}

// srcLine names a line.
type srcLine struct {
	source string
	line   int64
}

func runKey(e *logread.Event) string {
	id := e.JobID()
	if id == "" {
		id = e.MessageID()
	}
	return workerID(e, id) + "\x00" + fmt.Sprint(e.Attempt)
}

func (r *run) add(e *logread.Event) {
	r.events = append(r.events, e)
	if r.job == "" {
		r.job = e.JobID()
	}
	if r.msg == "" {
		r.msg = e.MessageID()
	}
	if e.Redelivered == logread.True {
		r.redelivered = true
	}
	switch e.Kind {
	case logread.KindReceived:
		r.received = e
	case logread.KindLockAcquired:
		if r.acquire == nil {
			r.acquire = e
		}
	case logread.KindLockFailed:
		r.lockFailed = e
	case logread.KindLockReleased:
		r.release = e
	case logread.KindCheck, logread.KindDuplicate:
		r.checks = append(r.checks, e)
	case logread.KindClaimed:
		r.claim = e
	case logread.KindSideEffect:
		r.effects = append(r.effects, e)
	case logread.KindCommitted:
		r.commit = e
	case logread.KindAcked:
		r.ack = e
		r.closed = true
	case logread.KindCrash, logread.KindRetry, logread.KindDeadLettered:
		r.end = e
		r.closed = true
	case logread.KindFailed:
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

// mayHoldLock reports whether a lock line that names no key, job or
// message stands among the run's lines in its file: it may be the run's.
func (g *group) mayHoldLock(r *run) bool {
	first, last := r.first(), r.last()
	if first.Source != last.Source {
		return false
	}
	for _, l := range g.keyless[first.Source] {
		if l.line > first.Line && l.line < last.Line {
			return true
		}
	}
	return false
}

// namesLock reports whether a line of the run names a lock: a lock key on
// any line, or a line recognised as a lock step (a lock whose key the
// lines do not carry is a lock all the same).
func (r *run) namesLock() bool {
	if r.acquire != nil || r.release != nil || r.lockFailed != nil || r.lockKey() != "" {
		return true
	}
	for _, e := range r.events {
		if e.Kind == logread.KindLockLost {
			return true
		}
	}
	return false
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

func (r *run) idemKey(e *logread.Event) string {
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
	Time   time.Time     `json:"time,omitzero"`
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
		if e.Kind == logread.KindSideEffect {
			nfx++
			repeat = nfx > 1
		}
		t.Rows = append(t.Rows, TimelineRow{Time: e.Time, Offset: e.Time.Sub(t0), Lane: lane[w], Worker: w,
			Event: eventLabel(e), Detail: detail(e), Where: e.Where(), Repeat: repeat})
	}
	return t
}

// eventLabel is the kind, or the raw name for lines of no known kind.
func eventLabel(e *logread.Event) string {
	if e.Kind == logread.KindOther {
		n := e.Name
		if len(n) > 40 {
			n = n[:40] + "..."
		}
		return n
	}
	return e.Kind.String()
}

// detail is the few fields that matter for a step.
func detail(e *logread.Event) string {
	var parts []string
	add := func(k, v string) {
		if v != "" {
			parts = append(parts, k+"="+v)
		}
	}
	switch e.Kind {
	case logread.KindReceived:
		add("msg", e.MessageID())
		add("job", e.JobID())
		if e.HasAttempt {
			add("attempt", fmt.Sprint(e.Attempt))
		}
		if e.Redelivered == logread.True {
			parts = append(parts, "redelivered")
		}
	case logread.KindLockAcquired, logread.KindLockFailed, logread.KindLockReleased:
		add("key", e.LockKey())
		tok := e.LockToken()
		if len(tok) > 8 {
			tok = tok[:8] + "…"
		}
		if e.Kind == logread.KindLockReleased && tok == "" {
			parts = append(parts, "token=(none)")
		}
		add("token", tok)
		if e.LockTTL > 0 {
			add("ttl", e.LockTTL.String())
		}
	case logread.KindCheck, logread.KindDuplicate:
		add("key", e.IdempotencyKey())
		switch e.Hit {
		case logread.True:
			parts = append(parts, "found")
		case logread.False:
			parts = append(parts, "not found")
		}
		switch e.FromCache {
		case logread.True:
			parts = append(parts, "from cache")
		case logread.False:
			parts = append(parts, "from db")
		}
	case logread.KindSideEffect, logread.KindClaimed, logread.KindCommitted:
		add("key", e.IdempotencyKey())
	case logread.KindFailed:
		add("error", e.Get(logread.ErrorType))
	}
	if e.Duration > 0 {
		add("duration", e.Duration.String())
	}
	return strings.Join(parts, " ")
}
