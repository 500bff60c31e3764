// Package live runs the worker core against real Redis, PostgreSQL and
// RabbitMQ: the real adapters of internal/worker's interfaces (a Redis
// lock with token unlock, renewal and fencing; a PostgreSQL ledger and
// effects table; a RabbitMQ topology with retry queue and DLQ) and a runner
// that plays a scenario's fault plan for real, with one goroutine and its
// own connections per worker, then counts what happened. Everything it
// creates (queues, exchanges, schema, keys) is named from one random prefix
// and removed on every exit path.
package live

import (
	"context"
	"crypto/rand"
	"encoding/hex"
	"errors"
	"fmt"
	"strconv"
	"sync"
	"sync/atomic"
	"time"

	"github.com/dupctl/dupctl/internal/platform/connect"
	"github.com/dupctl/dupctl/internal/platform/problem"
	"github.com/dupctl/dupctl/internal/platform/redact"
	"github.com/dupctl/dupctl/internal/sim"
	"github.com/dupctl/dupctl/internal/worker"
	"github.com/jackc/pgx/v5/pgxpool"
	amqp "github.com/rabbitmq/amqp091-go"
	"github.com/redis/go-redis/v9"
)

// Options are one live run.
type Options struct {
	Scenario string
	Config   sim.Config // the scenario's system, in virtual time
	Plan     sim.Plan
	RedisURL string
	PGURL    string
	AMQPURL  string
	// Scale is the real time one virtual second takes (default 20ms): a
	// 30s lock TTL lives 600ms.
	Scale       time.Duration
	AllowRemote bool
	// Deadline bounds the run (default 2 minutes).
	Deadline time.Duration
	// OnStart, when set, learns the run's prefix (tests check cleanup).
	OnStart func(prefix string)
}

// Result is what the live run counted on the real systems.
type Result struct {
	Scenario     string
	Profile      string
	Found        sim.Violation
	Effects      int
	Duplicates   int
	Lost         int
	DeadLettered int
	Crashes      int
	Elapsed      time.Duration
	// Slip is how far the run fell behind its plan's timing at worst, in
	// real time: a delivery's operations (which take no time in the
	// simulator) and its timers firing late, the duplicate sent late, the
	// cache showing a write late. A machine too busy to keep the timing
	// plays another schedule than the simulator's, with a verdict of its
	// own.
	Slip     time.Duration
	Prefix   string
	Timeline sim.Timeline
}

// CheckTargets refuses non-loopback servers unless allowed: a live run
// writes (queues, a schema, keys).
func CheckTargets(allowRemote bool, urls ...string) error {
	if allowRemote {
		return nil
	}
	for _, u := range urls {
		if u != "" && !connect.IsLoopback(u) {
			return problem.Inputf("", "{Live} writes queues, a schema and keys: %s is not a loopback address; "+
				"pass {AllowRemote} to run against it anyway", redact.URL(u))
		}
	}
	return nil
}

var (
	errCrash = errors.New("crashed")
	errDrop  = errors.New("connection dropped")
)

type run struct {
	o      Options
	cfg    sim.Config
	prefix string
	topo   Topology
	start  time.Time
	rec    *recorder
	cache  *laggingCache

	mu         sync.Mutex
	deliveries map[int]int // job -> deliveries so far
	fired      map[string]bool
	crashes    int
	flight     *inflight
	slip       slip
	seq        atomic.Int64
}

func (r *run) real(virtualMs int64) time.Duration {
	return time.Duration(virtualMs) * r.o.Scale / 1000
}

// Playable says why a profile cannot be played live: its status reads go
// to a read replica, and a live run has the servers it is given, none of
// them a standby of the PostgreSQL one.
func Playable(p worker.Profile) error {
	if p.StatusFrom == worker.StatusReplica {
		return problem.Inputf("", "profile %s reads status from a read replica, and a live run has none; run it without {Live}", p.Name)
	}
	return nil
}

// Run plays one scenario plan under one profile on the real servers. It
// takes the servers' URLs rather than connections: each worker process
// dials its own, and a planned crash closes them for real.
func Run(ctx context.Context, o Options) (*Result, error) {
	if o.Scale <= 0 {
		o.Scale = 20 * time.Millisecond
	}
	if o.Deadline <= 0 {
		o.Deadline = 2 * time.Minute
	}
	if err := CheckTargets(o.AllowRemote, o.RedisURL, o.PGURL, o.AMQPURL); err != nil {
		return nil, err
	}
	if err := Playable(o.Config.Profile); err != nil {
		return nil, err
	}
	var rb [4]byte
	_, _ = rand.Read(rb[:])
	o.Plan.Apply(&o.Config)
	r := &run{o: o, cfg: o.Config, prefix: "dupctl_live_" + hex.EncodeToString(rb[:]), deliveries: map[int]int{}, fired: map[string]bool{},
		flight: newInflight()}
	r.topo = Topology{Prefix: r.prefix}
	if o.OnStart != nil {
		o.OnStart(r.prefix)
	}
	s, err := r.connect(ctx)
	defer s.close()
	if err != nil {
		return nil, err
	}
	// Cleanup runs whatever happened, with its own context: a Ctrl-C or a
	// failed run leaves nothing behind.
	defer r.cleanup(s.rdb, s.ledger, s.admin)
	if err := r.topo.Declare(s.ach); err != nil {
		return nil, err
	}
	if err := s.ledger.Create(ctx); err != nil {
		return nil, err
	}
	pub, err := NewPublisher(s.admin)
	if err != nil {
		return nil, err
	}
	if err := r.play(ctx, s.pool, pub); err != nil {
		return nil, err
	}
	return r.verdict(ctx, s.ledger, s.ach)
}

// systems are the run's own connections: for setting up, publishing the
// jobs and reading the verdict (each worker dials its own).
type systems struct {
	rdb     redis.UniversalClient
	pool    *pgxpool.Pool
	admin   *amqp.Connection
	ach     *amqp.Channel
	ledger  *Ledger
	closers []func()
}

// close closes what was opened, last first.
func (s *systems) close() {
	for i := len(s.closers) - 1; i >= 0; i-- {
		s.closers[i]()
	}
}

func (r *run) connect(ctx context.Context) (*systems, error) {
	s := &systems{}
	var err error
	if s.rdb, err = connect.Redis(ctx, r.o.RedisURL); err != nil {
		return s, err
	}
	s.closers = append(s.closers, func() { s.rdb.Close() })
	r.cache = &laggingCache{rdb: s.rdb, prefix: r.prefix + ":cache:", lag: r.real(r.cfg.CacheLag), slip: &r.slip}
	if s.pool, err = connect.Postgres(ctx, r.o.PGURL, connect.PostgresOptions{MaxConns: int32(2*r.cfg.Workers + 2)}); err != nil {
		return s, err
	}
	s.closers = append(s.closers, s.pool.Close)
	if s.admin, err = connect.AMQP(ctx, r.o.AMQPURL); err != nil {
		return s, err
	}
	s.closers = append(s.closers, func() { s.admin.Close() })
	if s.ach, err = s.admin.Channel(); err != nil {
		return s, fmt.Errorf("open channel: %w", err)
	}
	if s.ledger, err = NewLedger(s.pool, r.prefix); err != nil {
		return s, err
	}
	return s, nil
}

// play publishes the jobs, runs the workers and the planned duplicate, and
// returns once the run has settled.
func (r *run) play(ctx context.Context, pool *pgxpool.Pool, pub *Publisher) error {
	runCtx, cancel := context.WithTimeout(ctx, r.o.Deadline)
	defer cancel()
	r.start = time.Now()
	r.rec = newRecorder(r)
	for j := 0; j < r.cfg.Jobs; j++ {
		if err := r.publish(runCtx, pub, r.job(j), nil); err != nil {
			return err
		}
	}
	var wg sync.WaitGroup
	workerCtx, stopWorkers := context.WithCancel(runCtx)
	defer stopWorkers()
	errs := make(chan error, r.cfg.Workers+1)
	for w := 0; w < r.cfg.Workers; w++ {
		wg.Add(1)
		go func() {
			defer wg.Done()
			if err := r.worker(workerCtx, w, pool); err != nil && workerCtx.Err() == nil {
				errs <- fmt.Errorf("worker W%d: %w", w+1, err)
			}
		}()
	}
	dupDone := r.duplicate(workerCtx, pub, errs)
	err := r.waitSettled(runCtx, dupDone, errs)
	stopWorkers()
	wg.Wait()
	return err
}

// publish sends a job to the work queue, counted in flight from before it
// is sent, so that no worker can settle it before it counts.
func (r *run) publish(ctx context.Context, pub *Publisher, j Job, headers amqp.Table) error {
	r.flight.add(1, 0)
	if err := pub.Publish(ctx, r.topo.Work(), j, 1, headers, 0); err != nil {
		r.flight.add(-1, 0)
		return err
	}
	return nil
}

// duplicate publishes the plan's duplicate of the first job at its time;
// the channel is closed once it is sent, or when there is none.
func (r *run) duplicate(ctx context.Context, pub *Publisher, errs chan<- error) <-chan struct{} {
	done := make(chan struct{})
	if r.o.Plan.DupAt <= 0 {
		close(done)
		return done
	}
	go func() {
		defer close(done)
		late, err := r.sleep(ctx, r.real(r.o.Plan.DupAt))
		if err != nil {
			return
		}
		r.slip.note(late)
		r.rec.add("broker", "duplicate", "publisher sends "+r.job(0).JobID+" again")
		if err := r.publish(ctx, pub, r.job(0), amqp.Table{"duplicate": true}); err != nil && ctx.Err() == nil {
			errs <- err
		}
	}()
	return done
}

func (r *run) job(j int) Job {
	return Job{JobID: "job-" + strconv.Itoa(j+1), BusinessKey: "order-" + strconv.Itoa(j%r.cfg.Keys+1)}
}

// waitSettled returns when nothing is left to happen: every message
// published to the work or retry queue acked, no delivery being handled,
// the planned duplicate sent. It waits for those events, not for a quiet
// period on the clock, so a slow machine cannot end the run early.
func (r *run) waitSettled(ctx context.Context, dupDone <-chan struct{}, errs <-chan error) error {
	for {
		changed, settled := r.flight.state()
		if settled && dupDone == nil {
			return nil
		}
		select {
		case err := <-errs:
			return err
		case <-ctx.Done():
			if errors.Is(ctx.Err(), context.DeadlineExceeded) {
				return fmt.Errorf("live run did not settle within %s", r.o.Deadline)
			}
			return ctx.Err()
		case <-changed:
		case <-dupDone:
			dupDone = nil
		}
	}
}

// sleep waits d, a modelled duration (work, a pause, the time to the
// planned duplicate); late is how much longer it took.
func (r *run) sleep(ctx context.Context, d time.Duration) (late time.Duration, err error) {
	start := time.Now()
	t := time.NewTimer(d)
	defer t.Stop()
	select {
	case <-t.C:
		return time.Since(start) - d, nil
	case <-ctx.Done():
		return 0, ctx.Err()
	}
}

// slip is how far a run fell behind its plan's timing, at worst.
type slip struct{ worst atomic.Int64 }

// note records one measure of how far behind the run is.
func (s *slip) note(d time.Duration) {
	late := int64(d)
	for {
		cur := s.worst.Load()
		if late <= cur || s.worst.CompareAndSwap(cur, late) {
			return
		}
	}
}

// inflight counts what is still to happen in a live run: messages
// published to the work or retry queue and not yet acked (a requeued
// delivery is still unacked), and deliveries being handled.
type inflight struct {
	mu       sync.Mutex
	messages int
	handling int
	changed  chan struct{} // closed, and replaced, on every change
}

func newInflight() *inflight { return &inflight{changed: make(chan struct{})} }

func (f *inflight) add(messages, handling int) {
	f.mu.Lock()
	defer f.mu.Unlock()
	f.messages += messages
	f.handling += handling
	close(f.changed)
	f.changed = make(chan struct{})
}

// state is the channel the next change closes, and whether the run has
// settled now.
func (f *inflight) state() (changed <-chan struct{}, settled bool) {
	f.mu.Lock()
	defer f.mu.Unlock()
	return f.changed, f.messages == 0 && f.handling == 0
}

// verdict counts effects and dead letters and applies the invariants.
func (r *run) verdict(ctx context.Context, l *Ledger, ch *amqp.Channel) (*Result, error) {
	out := &Result{Scenario: r.o.Scenario, Profile: r.cfg.Profile.Name, Prefix: r.prefix, Elapsed: time.Since(r.start), Crashes: r.crashes,
		Slip: time.Duration(r.slip.worst.Load())}
	per, err := l.EffectsPerKey(ctx)
	if err != nil {
		return nil, err
	}
	dead := map[string]bool{}
	for {
		m, ok, err := ch.Get(r.topo.DLQ(), true)
		if err != nil {
			return nil, fmt.Errorf("read DLQ: %w", err)
		}
		if !ok {
			break
		}
		out.DeadLettered++
		if k, ok := m.Headers["orderId"].(string); ok {
			dead[k] = true
		}
	}
	for k := 0; k < r.cfg.Keys; k++ {
		key := "order-" + strconv.Itoa(k+1)
		n := per[key]
		out.Effects += n
		if n > 1 {
			out.Duplicates += n - 1
			out.Found |= sim.VDuplicate
		}
		if n == 0 && !dead[key] {
			out.Lost++
			out.Found |= sim.VLoss
		}
	}
	out.Found |= r.rec.violations()
	out.Timeline = r.rec.finish()
	return out, nil
}

func (r *run) cleanup(rdb redis.UniversalClient, l *Ledger, admin *amqp.Connection) {
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	r.cache.pending.Wait() // no cache write may land after the keys are gone
	if ch, err := admin.Channel(); err == nil {
		_ = r.topo.Delete(ch)
		ch.Close()
	} else if conn, err := connect.AMQP(ctx, r.o.AMQPURL); err == nil {
		if ch, err := conn.Channel(); err == nil {
			_ = r.topo.Delete(ch)
		}
		conn.Close()
	}
	_ = l.Drop(ctx)
	iter := rdb.Scan(ctx, 0, r.prefix+":*", 1000).Iterator()
	var keys []string
	for iter.Next(ctx) {
		keys = append(keys, iter.Val())
	}
	if len(keys) > 0 {
		rdb.Del(ctx, keys...)
	}
}

// plannedFault returns the plan's fault for this delivery at these points,
// once.
func (r *run) plannedFault(kind string, job, n int, at worker.Points) bool {
	r.mu.Lock()
	defer r.mu.Unlock()
	for i, f := range r.o.Plan.Faults {
		id := fmt.Sprint(i, "/", job, "/", n)
		if f.Kind == kind && !r.fired[id] && f.Matches(job, n, at) {
			r.fired[id] = true
			return true
		}
	}
	return false
}

// worker is one worker process: it connects, consumes and handles until
// its context ends; a planned crash closes its connections without an ack
// and starts a new instance with new connections.
func (r *run) worker(ctx context.Context, idx int, pool *pgxpool.Pool) error {
	for instance := 1; ctx.Err() == nil; instance++ {
		err := r.instance(ctx, idx, instance, pool)
		switch {
		case errors.Is(err, errCrash), errors.Is(err, errDrop):
			continue
		case err != nil:
			return err
		}
	}
	return nil
}
