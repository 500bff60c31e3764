// Package loggen writes synthetic, seeded logs of a queue worker fleet for
// dupctl's correctness tests and benchmarks: jobs flow through the safe
// consumer flow (receive, lock, idempotency check, claim, side effect,
// commit, unlock, ack), with realistic noise (retries, lock contention,
// DLQ, crashes that the idempotency layer absorbs) and injected incidents
// of every duplicate cause, each labelled with the truth. The same seed
// gives the same bytes.
package loggen

import (
	"bytes"
	"container/heap"
	"fmt"
	"io"
	"math/rand/v2"
	"time"
)

// Cause is the injected reason a side effect ran twice.
type Cause string

// The injected causes; they match the audit's cause names.
const (
	Redelivery    Cause = "redelivery"
	LockExpiry    Cause = "lock-expiry"
	LockKeyJobID  Cause = "lock-key-job-id"
	UnlockNoToken Cause = "unlock-no-token"
	UnstableKey   Cause = "unstable-key"
	NonAtomic     Cause = "non-atomic-commit"
	StaleCache    Cause = "stale-cache"
	RaceNoLock    Cause = "race-no-lock"
	// NonAtomicUnloggedCheck is a crash between the effect and the status
	// commit whose redelivery's idempotency check is not logged: the log
	// cannot tell it from a redelivery that ran without a check
	// (Truth.Ambiguous names both).
	NonAtomicUnloggedCheck Cause = "non-atomic-unlogged-check"
)

// Causes lists every injectable incident, cycled through in this order.
func Causes() []Cause {
	return []Cause{Redelivery, LockExpiry, LockKeyJobID, UnlockNoToken, UnstableKey, NonAtomic, StaleCache, RaceNoLock,
		NonAtomicUnloggedCheck}
}

// Dialect is a log layout.
type Dialect string

// The dialects: flat camelCase JSON, flat snake_case JSON, Spring Boot's
// logstash-logback-encoder with the MDC nested under "mdc" and the event
// only in the message text, and Go slog with grouped attributes and the
// event name as the message. Then the message-only shapes of the logging
// libraries services use, with the step only in a sentence (worded in
// several ways per library and job type) and the flow's fields beside it
// (msgrender.go).
const (
	Camel    Dialect = "camel"
	Snake    Dialect = "snake"
	Logstash Dialect = "logstash"
	Slog     Dialect = "slog"
	// SlogMsg is Go log/slog's JSONHandler, sentences in "msg".
	SlogMsg Dialect = "slog-msg"
	// Zap is zap's production JSON: "ts" in epoch seconds, "caller".
	Zap Dialect = "zap"
	// Logback is logstash-logback-encoder with the MDC at the top level.
	Logback Dialect = "logback"
	// ECS is Spring Boot 3.4's structured logging in the ECS format.
	ECS Dialect = "ecs"
	// Pino is pino's JSON: numeric levels, epoch milliseconds, 0-based
	// attempts.
	Pino Dialect = "pino"
	// Structlog is structlog's JSONRenderer: the sentence is "event".
	Structlog Dialect = "structlog"
	// CamelMsg is Camel with the event field replaced by a ~100-character
	// message that starts with the event's name, as in issue 16's
	// measurement ("side_effect: payment capture sent for order,
	// provider=... see span for details").
	CamelMsg Dialect = "camel-msg"
)

// Dialects lists them.
func Dialects() []Dialect {
	return []Dialect{Camel, Snake, Logstash, Slog, SlogMsg, Zap, Logback, ECS, Pino, Structlog, CamelMsg}
}

// Config shapes a generated log.
type Config struct {
	Seed    uint64
	Jobs    int
	Workers int
	Dialect Dialect
	// IncidentEvery injects one incident every N jobs, cycling through
	// Causes (0: none, clean logs).
	IncidentEvery int
	// Lean drops the optional steps (claim, release, completed) to make
	// small lines per job, for the large benchmark.
	Lean bool
	// Pad adds a filler attribute of this many bytes to each line (to
	// reach a target line size).
	Pad int
	// Gap between job starts (default 20ms).
	Gap time.Duration
	// Skew shifts each worker's clock by up to ±Skew.
	Skew  time.Duration
	Start time.Time
	// Record keeps every line written as a Step in the summary (the truth
	// a test checks the audit's statements against).
	Record bool
	// Pods runs each worker as its own process (a pod, writing its own
	// file): the console formats' pids and thread names repeat across
	// workers, as they do in real pods (every pod's listener thread is
	// ntContainer#0-1), rather than naming one process's threads.
	Pods bool
}

// Truth is one injected duplicate.
type Truth struct {
	BusinessKey string
	JobType     string
	Cause       Cause
	// Ambiguous names the causes the written lines cannot tell apart
	// (an unlogged check): the right verdict names them all.
	Ambiguous []Cause
}

// Step is one line written, as the generator meant it.
type Step struct {
	Worker, Job, Message, Order string
	Attempt                     int
	Kind                        string // received, lock_acquired, ..., side_effect
	Time                        time.Time
	FromCache                   bool          // a check answered by the cache
	LockTTL                     time.Duration // a lock's TTL, as logged
	// Line is the line's number in the writer Out gave for its worker
	// (several steps share one in a batched format: OTLP).
	Line int64
}

// Summary is what was written.
type Summary struct {
	Lines     int64
	Bytes     int64
	Incidents []Truth
	Steps     []Step // with Config.Record
}

// Out chooses where a worker's lines go (one writer for everything, or a
// file per worker).
type Out func(worker string) io.Writer

// Single sends every line to w.
func Single(w io.Writer) Out { return func(string) io.Writer { return w } }

type ev struct {
	t      time.Time
	seq    int
	worker string
	kind   string
	f      fields
}

type fields struct {
	job, msg, order, idem, lockKey, token, jobType, errType, result, source string
	ttl, attempt, durMs                                                     int
	redelivered, noToken                                                    bool
}

type evHeap []*ev

func (h evHeap) Len() int { return len(h) }
func (h evHeap) Less(i, j int) bool {
	if !h[i].t.Equal(h[j].t) {
		return h[i].t.Before(h[j].t)
	}
	return h[i].seq < h[j].seq
}
func (h evHeap) Swap(i, j int) { h[i], h[j] = h[j], h[i] }
func (h *evHeap) Push(x any)   { *h = append(*h, x.(*ev)) }
func (h *evHeap) Pop() any {
	old := *h
	x := old[len(old)-1]
	*h = old[:len(old)-1]
	return x
}

type gen struct {
	c       Config
	rng     *rand.Rand
	lines   map[io.Writer]int64
	nInc    int // incidents written
	h       evHeap
	seq     int
	out     Out
	sum     Summary
	buf     []byte
	skew    map[string]time.Duration
	workers []string
	msgN    int
	as      []attr // scratch fields of a line (attrs.go)
	padText string
	inner   []byte // scratch line a wrapper wraps
	// batches holds a batched format's events per writer until a line
	// is full (the writers in the order they first came).
	batches map[io.Writer][]*ev
	batchWs []io.Writer
}

var jobTypes = []string{"payment", "email", "settlement"}

// Write generates the log.
func Write(c Config, out Out) (Summary, error) {
	if c.Workers <= 0 {
		c.Workers = 8
	}
	if c.Gap <= 0 {
		c.Gap = 20 * time.Millisecond
	}
	if c.Start.IsZero() {
		c.Start = time.Date(2026, 11, 3, 9, 0, 0, 0, time.UTC)
	}
	if c.Dialect == "" {
		c.Dialect = Camel
	}
	g := &gen{c: c, rng: rand.New(rand.NewPCG(c.Seed, c.Seed^0x9e3779b97f4a7c15)), out: out, skew: map[string]time.Duration{}}
	for i := 1; i <= c.Workers; i++ {
		w := fmt.Sprintf("worker-%d", i)
		g.workers = append(g.workers, w)
		if c.Skew > 0 {
			g.skew[w] = time.Duration(g.rng.Int64N(int64(2*c.Skew))) - c.Skew
		}
	}
	causes := Causes()
	for i := 0; i < c.Jobs; i++ {
		start := c.Start.Add(time.Duration(i) * c.Gap)
		jt := jobTypes[i%len(jobTypes)]
		order := fmt.Sprintf("ord-%07d", i+1)
		if c.IncidentEvery > 0 && i%c.IncidentEvery == c.IncidentEvery/2 {
			cause := causes[(i/c.IncidentEvery)%len(causes)]
			tr := Truth{BusinessKey: order, JobType: jt, Cause: cause}
			if cause == NonAtomicUnloggedCheck {
				tr.Cause, tr.Ambiguous = NonAtomic, []Cause{Redelivery, NonAtomic}
			}
			g.incident(start, jt, order, cause)
			g.nInc++
			g.sum.Incidents = append(g.sum.Incidents, tr)
		} else {
			g.clean(start, jt, order, i)
		}
		if err := g.flush(start); err != nil {
			return g.sum, err
		}
	}
	return g.sum, g.flush(time.Time{})
}

// flush writes every queued event before t (all of them when t is zero):
// later jobs start after t, so nothing earlier can still arrive.
func (g *gen) flush(t time.Time) error {
	size, batch := batched(g.c.Dialect)
	for g.h.Len() > 0 && (t.IsZero() || g.h[0].t.Before(t)) {
		e := heap.Pop(&g.h).(*ev)
		w := g.out(e.worker)
		if !batch {
			g.buf = g.render(g.buf[:0], e)
			if err := g.write(w, e); err != nil {
				return err
			}
			continue
		}
		if g.batches == nil {
			g.batches = map[io.Writer][]*ev{}
		}
		if _, ok := g.batches[w]; !ok {
			g.batchWs = append(g.batchWs, w)
		}
		g.batches[w] = append(g.batches[w], e)
		if len(g.batches[w]) >= size {
			if err := g.writeBatch(w); err != nil {
				return err
			}
		}
	}
	if t.IsZero() {
		for _, w := range g.batchWs {
			if err := g.writeBatch(w); err != nil {
				return err
			}
		}
	}
	return nil
}

// writeBatch writes w's pending events as one line.
func (g *gen) writeBatch(w io.Writer) error {
	evs := byWorker(g.batches[w])
	if len(evs) == 0 {
		return nil
	}
	g.batches[w] = evs[:0]
	g.buf = g.renderOTLP(g.buf[:0], evs)
	return g.write(w, evs...)
}

// write writes the line in g.buf to w, recording the events it holds (a
// console line may be followed by its stack trace's lines).
func (g *gen) write(w io.Writer, evs ...*ev) error {
	lines := int64(bytes.Count(g.buf, []byte{'\n'}))
	if g.c.Record {
		if g.lines == nil {
			g.lines = map[io.Writer]int64{}
		}
		for _, e := range evs {
			g.sum.Steps = append(g.sum.Steps, Step{Worker: e.worker, Job: e.f.job, Message: e.f.msg, Order: e.f.order, Attempt: e.f.attempt,
				Kind: e.kind, Time: e.t, FromCache: e.f.source == "cache", LockTTL: ms(e.f.ttl), Line: g.lines[w] + 1})
		}
		g.lines[w] += lines
	}
	n, err := w.Write(g.buf)
	g.sum.Lines += lines
	g.sum.Bytes += int64(n)
	return err
}

func (g *gen) emit(t time.Time, worker, kind string, f fields) {
	g.seq++
	heap.Push(&g.h, &ev{t: t, seq: g.seq, worker: worker, kind: kind, f: f})
}

func (g *gen) worker() string { return g.workers[g.rng.IntN(len(g.workers))] }

func (g *gen) otherWorker(not string) string {
	for {
		if w := g.worker(); w != not || len(g.workers) == 1 {
			return w
		}
	}
}

func (g *gen) token() string { return fmt.Sprintf("%016x", g.rng.Uint64()) }

func (g *gen) newMsg() (job, msg string) {
	g.msgN++
	return fmt.Sprintf("job-%08d", g.msgN), fmt.Sprintf("msg-%08x", g.rng.Uint32())
}

func ms(n int) time.Duration { return time.Duration(n) * time.Millisecond }

// run is one delivery processed by one worker.
type run struct {
	g              *gen
	t              time.Time
	w              string
	base           fields
	lockTTL        int // ms
	useLock, check bool
	claim          bool
	cacheCheck     bool
}

func (g *gen) newRun(t time.Time, jt, order, job, msg string, attempt int) *run {
	return &run{g: g, t: t, w: g.worker(), useLock: true, check: true, claim: !g.c.Lean, lockTTL: 30000,
		base: fields{job: job, msg: msg, order: order, idem: jt + ":" + order, lockKey: "lock:" + jt + ":order:" + order, jobType: jt,
			attempt: attempt, redelivered: attempt > 1}}
}

func (r *run) step(d int, kind string, mod func(*fields)) {
	r.t = r.t.Add(ms(d))
	f := r.base
	if mod != nil {
		mod(&f)
	}
	r.g.emit(r.t, r.w, kind, f)
}

func (r *run) receive() { r.step(0, "received", nil) }

func (r *run) lock() {
	if !r.useLock {
		return
	}
	r.base.token = r.g.token()
	r.step(2, "lock_acquired", func(f *fields) { f.ttl = r.lockTTL })
}

func (r *run) checkMiss() {
	if !r.check {
		return
	}
	src := "db"
	if r.cacheCheck {
		src = "cache"
	}
	r.step(3, "idempotency_check", func(f *fields) { f.result, f.source = "miss", src })
}

func (r *run) effectCommit(effectAfter int) {
	if r.claim {
		r.step(2, "claimed", nil)
	}
	r.step(effectAfter, "side_effect", nil)
	r.step(4, "committed", nil)
}

func (r *run) finish(start time.Time) {
	if r.useLock && !r.g.c.Lean {
		r.step(1, "lock_released", nil)
	}
	r.step(1, "acked", nil)
	if !r.g.c.Lean {
		d := int(r.t.Sub(start) / time.Millisecond)
		r.step(0, "completed", func(f *fields) { f.durMs = d })
	}
}

// clean writes one job that ends with exactly one side effect (or none,
// for a dead-lettered job), with the noise a healthy fleet has.
func (g *gen) clean(start time.Time, jt, order string, i int) {
	job, msg := g.newMsg()
	r := g.newRun(start, jt, order, job, msg, 1)
	work := 20 + g.rng.IntN(400)
	switch x := g.rng.IntN(100); {
	case x < 4: // fails before the effect, retried, succeeds
		r.receive()
		r.lock()
		r.checkMiss()
		r.step(work/2, "failed", func(f *fields) { f.errType = pick(g.rng, "TimeoutError", "ConnectionReset", "UpstreamUnavailable") })
		if r.useLock && !g.c.Lean {
			r.step(1, "lock_released", nil)
		}
		r.step(1, "retry", nil)
		r2 := g.newRun(r.t.Add(ms(2000)), jt, order, job, msg, 2)
		g.happy(r2, r2.t, work)
	case x < 5: // poison message: dead-lettered after 3 attempts
		t := start
		for a := 1; a <= 3; a++ {
			ra := g.newRun(t, jt, order, job, msg, a)
			ra.receive()
			ra.step(3, "failed", func(f *fields) { f.errType = "ValidationError" })
			if a < 3 {
				ra.step(1, "retry", nil)
			} else {
				ra.step(1, "dead_lettered", nil)
			}
			t = ra.t.Add(ms(1000 * a))
		}
	case x < 7: // crash after commit before ack: the redelivery is caught
		r.receive()
		r.lock()
		r.checkMiss()
		r.effectCommit(work)
		r.step(1, "crash", nil)
		r2 := g.newRun(r.t.Add(ms(500)), jt, order, job, msg, 2)
		r2.w = g.otherWorker(r.w)
		r2.lockTTL = r.lockTTL
		// The dead worker's lock is still there until its TTL runs out.
		r2.receive()
		r2.step(1, "lock_failed", nil)
		r2.step(1, "retry", nil)
		r3 := g.newRun(r.t.Add(ms(r.lockTTL+1000)), jt, order, job, msg, 3)
		r3.receive()
		r3.lock()
		r3.step(3, "duplicate_caught", func(f *fields) { f.result = "hit"; f.source = "db" })
		r3.finish(r3.t)
	case x < 9: // a second message for the same order, caught by the lock then by idempotency
		g.happy(r, start, work)
		job2, msg2 := g.newMsg()
		r2 := g.newRun(start.Add(ms(5)), jt, order, job2, msg2, 1)
		r2.w = g.otherWorker(r.w)
		r2.receive()
		r2.step(1, "lock_failed", nil)
		r2.step(1, "retry", nil)
		r3 := g.newRun(start.Add(ms(work+3000)), jt, order, job2, msg2, 2)
		r3.receive()
		r3.lock()
		r3.step(3, "duplicate_caught", func(f *fields) { f.result = "hit"; f.source = "db" })
		r3.finish(r3.t)
	case x < 10: // long job past its lock TTL, but nobody else came: no duplicate
		r.lockTTL = 5000
		g.happy(r, start, 6000+work)
	default:
		g.happy(r, start, work)
	}
}

func (g *gen) happy(r *run, start time.Time, work int) {
	r.receive()
	r.lock()
	r.checkMiss()
	r.effectCommit(work)
	r.finish(start)
}

func pick(rng *rand.Rand, s ...string) string { return s[rng.IntN(len(s))] }

// incident writes one job whose side effect runs twice for cause c.
func (g *gen) incident(start time.Time, jt, order string, c Cause) {
	job, msg := g.newMsg()
	in := &incident{g: g, start: start, jt: jt, order: order, job: job, msg: msg}
	in.r1 = g.newRun(start, jt, order, job, msg, 1)
	in.work = 50 + g.rng.IntN(300)
	if write := incidentWriters[c]; write != nil {
		write(in)
	}
}

// incident is one injected duplicate being written: its first run and the
// job it belongs to.
type incident struct {
	g                   *gen
	r1                  *run
	start               time.Time
	jt, order, job, msg string
	work                int // ms the side effect takes
}

// incidentWriters writes each cause's lines, one method per cause.
var incidentWriters = map[Cause]func(*incident){
	Redelivery:             (*incident).redelivery,
	LockExpiry:             (*incident).lockExpiry,
	LockKeyJobID:           (*incident).lockKeyJobID,
	UnlockNoToken:          (*incident).unlockNoToken,
	UnstableKey:            (*incident).unstableKey,
	NonAtomic:              (*incident).nonAtomic,
	StaleCache:             (*incident).staleCache,
	NonAtomicUnloggedCheck: (*incident).nonAtomicUnloggedCheck,
	RaceNoLock:             (*incident).raceNoLock,
}

// other starts a run of job/msg at t on a worker other than the first run's.
func (in *incident) other(t time.Time, job, msg string, attempt int) *run {
	r := in.g.newRun(t, in.jt, in.order, job, msg, attempt)
	r.w = in.g.otherWorker(in.r1.w)
	return r
}

// second starts a run of a second message for the same order at t, on
// another worker.
func (in *incident) second(t time.Time) *run {
	job2, msg2 := in.g.newMsg()
	return in.other(t, job2, msg2, 1)
}

// crashAfterCommit runs the first run's effect and commit, then kills its
// worker before the ack.
func (in *incident) crashAfterCommit() {
	r1 := in.r1
	r1.effectCommit(in.work)
	if !in.g.c.Lean {
		r1.step(1, "lock_released", nil)
	}
	r1.step(1, "crash", nil)
}

// redelivery: no idempotency layer; the worker dies after the effect and
// the commit, before the ack; the redelivery runs the effect again.
func (in *incident) redelivery() {
	r1 := in.r1
	r1.check = false
	r1.claim = false
	r1.receive()
	r1.lock()
	in.crashAfterCommit()
	r2 := in.other(r1.t.Add(ms(800)), in.job, in.msg, 2)
	r2.check, r2.claim = false, false
	in.g.happy(r2, r2.t, in.work)
}

// lockExpiry: check-then-act without claim; the first run outlives its 5s
// lock; a second message for the order takes the lock and runs.
func (in *incident) lockExpiry() {
	g, r1, start := in.g, in.r1, in.start
	r1.lockTTL = 5000
	r1.claim = false
	r1.receive()
	r1.lock()
	r1.checkMiss()
	r2 := in.second(start.Add(ms(6500)))
	r2.claim = false
	g.happy(r2, r2.t, 100)
	r1.effectCommit(9000)
	if g.nInc%2 == 1 {
		// The holder's token-checked unlock finds the other worker's
		// token: it logs that it lost the lock instead of releasing it.
		r1.step(1, "lock_lost", nil)
		r1.step(1, "acked", nil)
		if !g.c.Lean {
			r1.step(0, "completed", func(f *fields) { f.durMs = int(r1.t.Sub(start) / time.Millisecond) })
		}
		return
	}
	r1.finish(start)
}

// lockKeyJobID: the lock key is built from the job id: two messages for
// one order lock different keys and run together.
func (in *incident) lockKeyJobID() {
	r1 := in.r1
	r2 := in.second(in.start.Add(ms(15)))
	for _, r := range []*run{r1, r2} {
		r.base.lockKey = "lock:job:" + r.base.job
		r.claim = false
	}
	in.g.happy(r1, in.start, in.work+100)
	in.g.happy(r2, r2.t, in.work)
}

// unlockNoToken: a second message finds the lock busy but its deferred
// unlock deletes the holder's lock by key; its retry walks in.
func (in *incident) unlockNoToken() {
	g, r1 := in.g, in.r1
	r1.claim = false
	r1.receive()
	r1.lock()
	r1.checkMiss()
	w := in.second(in.start.Add(ms(20)))
	w.receive()
	w.step(1, "lock_failed", nil)
	w.step(1, "lock_released", func(f *fields) { f.noToken = true })
	w.step(1, "retry", nil)
	r3 := g.newRun(w.t.Add(ms(300)), in.jt, in.order, w.base.job, w.base.msg, 2)
	r3.w = w.w
	r3.claim = false
	g.happy(r3, r3.t, 50)
	r1.effectCommit(in.work + 1500)
	r1.finish(in.start)
}

// unstableKey: the key carries a per-attempt part; the worker crashes
// after the commit, the redelivery's new key is not found.
func (in *incident) unstableKey() {
	g, r1 := in.g, in.r1
	r1.base.idem = unstableKey(g, in.jt, in.order, 1, r1.t)
	r1.receive()
	r1.lock()
	r1.checkMiss()
	in.crashAfterCommit()
	r2 := in.other(r1.t.Add(ms(700)), in.job, in.msg, 2)
	r2.base.idem = unstableKey(g, in.jt, in.order, 2, r2.t)
	g.happy(r2, r2.t, in.work)
}

// nonAtomic: the effect runs outside the transaction that records it; the
// worker dies in between; the redelivery finds no record.
func (in *incident) nonAtomic() {
	r2 := in.crashBeforeCommit()
	in.g.happy(r2, r2.t, in.work)
}

// nonAtomicUnloggedCheck: as nonAtomic, but the redelivery's check is not
// logged: the log shows a redelivery running the effect with no check line.
func (in *incident) nonAtomicUnloggedCheck() {
	r2 := in.crashBeforeCommit()
	r2.check = false // it checks, but says nothing
	in.g.happy(r2, r2.t, in.work)
}

// crashBeforeCommit runs the first run's effect and kills its worker
// before the commit; it returns the redelivery, not yet run.
func (in *incident) crashBeforeCommit() *run {
	r1 := in.r1
	r1.claim = false
	r1.receive()
	r1.lock()
	r1.checkMiss()
	r1.step(in.work, "side_effect", nil)
	r1.step(2, "crash", nil)
	r2 := in.other(r1.t.Add(ms(r1.lockTTL+500)), in.job, in.msg, 2)
	r2.claim = false
	return r2
}

// staleCache: "already done?" is answered by a cache that lags the
// database.
func (in *incident) staleCache() {
	g, r1 := in.g, in.r1
	r1.cacheCheck = true
	r1.claim = false
	g.happy(r1, in.start, in.work)
	r2 := in.second(r1.t.Add(ms(400)))
	r2.cacheCheck = true
	r2.claim = false
	g.happy(r2, r2.t, in.work)
}

// raceNoLock: no lock, check-then-act: two messages for one order race.
func (in *incident) raceNoLock() {
	r1 := in.r1
	r2 := in.second(in.start.Add(ms(10)))
	for _, r := range []*run{r1, r2} {
		r.useLock, r.claim = false, false
		r.base.lockKey = ""
	}
	in.g.happy(r1, in.start, in.work)
	in.g.happy(r2, r2.t, in.work)
}

// unstableKey varies the per-attempt part of the key by incident, so every
// classifier class shows up.
func unstableKey(g *gen, jt, order string, attempt int, t time.Time) string {
	switch g.msgN % 4 {
	case 0:
		return fmt.Sprintf("%s:%s:%d", jt, order, attempt)
	case 1:
		return fmt.Sprintf("%s:%s:%d", jt, order, t.UnixMilli())
	case 2:
		u := g.rng.Uint64()
		v := g.rng.Uint64()
		return fmt.Sprintf("%s:%s:%08x-%04x-4%03x-%x%03x-%012x", jt, order, uint32(u), uint16(u>>32), uint16(u>>48)&0xfff, 8+(v>>62),
			uint16(v>>32)&0xfff, v&0xffffffffffff)
	default:
		return fmt.Sprintf("%s-%s-%s", jt, order, t.UTC().Format("20060102T150405.000"))
	}
}
