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
	Prefix       string
	Timeline     sim.Timeline
}

// CheckTargets refuses non-loopback servers unless allowed: a live run
// writes (queues, a schema, keys).
func CheckTargets(allowRemote bool, urls ...string) error {
	if allowRemote {
		return nil
	}
	for _, u := range urls {
		if u != "" && !connect.IsLoopback(u) {
			return problem.Inputf("", "{Live} writes queues, a schema and keys: %s is not a loopback address; pass {AllowRemote} to run against it anyway", redact.URL(u))
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
	busy       atomic.Int32
	seq        atomic.Int64
}

func (r *run) real(virtualMs int64) time.Duration {
	return time.Duration(virtualMs) * r.o.Scale / 1000
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
	var rb [4]byte
	_, _ = rand.Read(rb[:])
	o.Plan.Apply(&o.Config)
	r := &run{o: o, cfg: o.Config, prefix: "dupctl_live_" + hex.EncodeToString(rb[:]), deliveries: map[int]int{}, fired: map[string]bool{}}
	r.topo = Topology{Prefix: r.prefix}
	if o.OnStart != nil {
		o.OnStart(r.prefix)
	}

	rdb, err := connect.Redis(ctx, o.RedisURL)
	if err != nil {
		return nil, err
	}
	defer rdb.Close()
	r.cache = &laggingCache{rdb: rdb, prefix: r.prefix + ":cache:", lag: r.real(r.cfg.CacheLag)}
	pool, err := connect.Postgres(ctx, o.PGURL, connect.PostgresOptions{MaxConns: int32(2*r.cfg.Workers + 2)})
	if err != nil {
		return nil, err
	}
	defer pool.Close()
	admin, err := connect.AMQP(ctx, o.AMQPURL)
	if err != nil {
		return nil, err
	}
	defer admin.Close()
	ach, err := admin.Channel()
	if err != nil {
		return nil, fmt.Errorf("open channel: %w", err)
	}
	ledger, err := NewLedger(pool, r.prefix)
	if err != nil {
		return nil, err
	}
	// Cleanup runs whatever happened, with its own context: a Ctrl-C or a
	// failed run leaves nothing behind.
	defer r.cleanup(rdb, ledger, admin)
	if err := r.topo.Declare(ach); err != nil {
		return nil, err
	}
	if err := ledger.Create(ctx); err != nil {
		return nil, err
	}
	pub, err := NewPublisher(admin)
	if err != nil {
		return nil, err
	}

	runCtx, cancel := context.WithTimeout(ctx, o.Deadline)
	defer cancel()
	r.start = time.Now()
	r.rec = newRecorder(r)
	for j := 0; j < r.cfg.Jobs; j++ {
		if err := pub.Publish(runCtx, r.topo.Work(), r.job(j), 1, nil, 0); err != nil {
			return nil, err
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
	dupDone := make(chan struct{})
	if o.Plan.DupAt > 0 {
		go func() {
			defer close(dupDone)
			select {
			case <-time.After(r.real(o.Plan.DupAt)):
			case <-workerCtx.Done():
				return
			}
			r.rec.add("broker", "duplicate", "publisher sends "+r.job(0).JobID+" again")
			if err := pub.Publish(workerCtx, r.topo.Work(), r.job(0), 1, amqp.Table{"duplicate": true}, 0); err != nil && workerCtx.Err() == nil {
				errs <- err
			}
		}()
	} else {
		close(dupDone)
	}
	waitErr := r.waitQuiet(runCtx, ach, dupDone, errs)
	stopWorkers()
	wg.Wait()
	if waitErr != nil {
		return nil, waitErr
	}
	return r.verdict(ctx, ledger, ach)
}

func (r *run) job(j int) Job {
	return Job{JobID: "job-" + strconv.Itoa(j+1), BusinessKey: "order-" + strconv.Itoa(j%r.cfg.Keys+1)}
}

// waitQuiet returns when nothing is left to do: no ready message in the
// work or retry queue, no worker busy, the planned duplicate sent, for a
// quiet period longer than a retry's backoff.
func (r *run) waitQuiet(ctx context.Context, ch *amqp.Channel, dupDone <-chan struct{}, errs <-chan error) error {
	quiet := max(3*r.real(r.cfg.BackoffBase), 2*r.real(r.cfg.Duration.Quantile(0.99)), 300*time.Millisecond)
	var since time.Time
	tick := time.NewTicker(20 * time.Millisecond)
	defer tick.Stop()
	for {
		select {
		case err := <-errs:
			return err
		case <-ctx.Done():
			if errors.Is(ctx.Err(), context.DeadlineExceeded) {
				return fmt.Errorf("live run did not settle within %s", r.o.Deadline)
			}
			return ctx.Err()
		case <-tick.C:
		}
		work, err1 := Depth(ch, r.topo.Work())
		retry, err2 := Depth(ch, r.topo.Retry())
		if err := errors.Join(err1, err2); err != nil {
			return err
		}
		select {
		case <-dupDone:
		default:
			since = time.Time{}
			continue
		}
		if work+retry > 0 || r.busy.Load() > 0 {
			since = time.Time{}
			continue
		}
		if since.IsZero() {
			since = time.Now()
		} else if time.Since(since) >= quiet {
			return nil
		}
	}
}

// verdict counts effects and dead letters and applies the invariants.
func (r *run) verdict(ctx context.Context, l *Ledger, ch *amqp.Channel) (*Result, error) {
	out := &Result{Scenario: r.o.Scenario, Profile: r.cfg.Profile.Name, Prefix: r.prefix, Elapsed: time.Since(r.start), Crashes: r.crashes}
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
