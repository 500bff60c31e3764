package live

import (
	"context"
	"errors"
	"fmt"
	"strconv"
	"strings"
	"sync"
	"time"

	"github.com/dupctl/dupctl/internal/platform/connect"
	"github.com/dupctl/dupctl/internal/sim"
	"github.com/dupctl/dupctl/internal/worker"
	"github.com/jackc/pgx/v5/pgxpool"
	amqp "github.com/rabbitmq/amqp091-go"
	"github.com/redis/go-redis/v9"
)

// instance is one life of a worker process, with its own connections.
func (r *run) instance(ctx context.Context, idx, instance int, pool *pgxpool.Pool) error {
	name := fmt.Sprintf("W%d", idx+1)
	if instance > 1 {
		name += "#" + strconv.Itoa(instance)
	}
	ictx, cancel := context.WithCancel(ctx)
	defer cancel()
	conn, err := connect.AMQP(ictx, r.o.AMQPURL)
	if err != nil {
		return err
	}
	defer conn.Close()
	rdb, err := connect.Redis(ictx, r.o.RedisURL)
	if err != nil {
		return err
	}
	defer rdb.Close()
	ch, err := conn.Channel()
	if err != nil {
		return fmt.Errorf("open channel: %w", err)
	}
	if err := ch.Qos(1, 0, false); err != nil {
		return fmt.Errorf("prefetch: %w", err)
	}
	pub, err := NewPublisher(conn)
	if err != nil {
		return err
	}
	ledger, _ := NewLedger(pool, r.prefix)
	w := &liveWorker{run: r, idx: idx, name: name, lane: fmt.Sprintf("W%d", idx+1), conn: conn, ch: ch, pub: pub}
	locker := &renewingLocker{Locker: Locker{Client: rdb}, renew: r.cfg.Profile.Renew, ttl: r.real(r.cfg.LockTTL),
		max: int(r.cfg.MaxRenewals)}
	w.locker = locker
	core := r.core(name, w, locker, ledger)
	for {
		// A worker takes a message only when it is idle (basic.get), as
		// in the model: with basic.consume, a worker that acks on receipt
		// would have the next message pushed into its buffer while busy.
		d, ok, err := ch.Get(r.topo.Work(), false)
		if err != nil {
			if ictx.Err() != nil {
				return nil
			}
			return errDrop // the channel or connection went away: reconnect
		}
		if !ok {
			select {
			case <-ictx.Done():
				return nil
			case <-time.After(2 * time.Millisecond):
			}
			continue
		}
		err = w.handle(ictx, core, d)
		locker.stop()
		switch {
		case errors.Is(err, errCrash):
			// The process dies: its connections close without an ack and
			// the broker requeues the delivery; its lock stays in Redis.
			conn.Close()
			rdb.Close()
			return errCrash
		case errors.Is(err, errDrop):
			conn.Close()
			return errDrop
		case err != nil && ictx.Err() == nil:
			return err
		}
	}
}

// core is the worker flow of one instance: the profile's steps over the
// live lock, ledger and cache, with the lock and idempotency keys the
// profile names (per job or per business key, per attempt or stable).
func (r *run) core(name string, w *liveWorker, locker *renewingLocker, ledger *Ledger) *worker.Core {
	cache := r.cache
	return &worker.Core{
		Profile:     r.cfg.Profile,
		Name:        name,
		Locker:      locker,
		Ledger:      &cachedLedger{Ledger: ledger, cache: cache},
		Cache:       cache,
		Hooks:       w,
		LockTTL:     r.real(r.cfg.LockTTL),
		BackoffBase: r.real(r.cfg.BackoffBase),
		MaxAttempts: int(r.cfg.MaxAttempts),
		LockKey: func(m worker.Message) string {
			if r.cfg.Profile.LockKey == worker.LockKeyJob {
				return r.prefix + ":lock:job:" + m.JobID
			}
			return r.prefix + ":lock:payment:order:" + strings.TrimPrefix(m.BusinessKey, "order-")
		},
		IdemKey: func(m worker.Message) string {
			if r.cfg.Profile.Key == worker.KeyPerAttempt {
				return fmt.Sprintf("payment:%s:%d", m.BusinessKey, m.Delivery)
			}
			return "payment:" + m.BusinessKey
		},
	}
}

// liveWorker is the Hooks of one worker instance.
type liveWorker struct {
	run    *run
	idx    int
	name   string // W2#3: the worker's third instance
	lane   string // W2: its timeline lane
	conn   *amqp.Connection
	ch     *amqp.Channel
	pub    *Publisher
	locker *renewingLocker

	job, n  int  // job index and its delivery number
	dropped bool // the planned drop closed the channel
	// mark is when the worker last handed control back to its core, and
	// behind how far the delivery has fallen behind the plan's timing:
	// the simulator's operations take no time and its timers are exact.
	mark   time.Time
	behind time.Duration
}

func (w *liveWorker) handle(ctx context.Context, core *worker.Core, d amqp.Delivery) error {
	r := w.run
	r.flight.add(0, 1)
	defer r.flight.add(0, -1)
	jobID, _ := d.Headers["jobId"].(string)
	key, _ := d.Headers["orderId"].(string)
	attempt := 1
	if a, ok := d.Headers["attempt"].(int32); ok {
		attempt = int(a)
	}
	j, _ := strconv.Atoi(strings.TrimPrefix(jobID, "job-"))
	r.mu.Lock()
	r.deliveries[j-1]++
	w.job, w.n = j-1, r.deliveries[j-1]
	r.mu.Unlock()
	w.dropped = false
	m := worker.Message{JobID: jobID, BusinessKey: key, Attempt: attempt, Redelivered: d.Redelivered, Delivery: int(r.seq.Add(1))}
	text := fmt.Sprintf("receive %s %s (delivery %d of this job, attempt %d", jobID, key, w.n, attempt)
	if d.Redelivered {
		text += ", redelivered"
	}
	if _, dup := d.Headers["duplicate"]; dup {
		text += ", publisher duplicate"
	}
	r.rec.add(w.name, "receive", text+")")
	r.rec.receive(w.lane, jobID)
	w.mark, w.behind = time.Now(), 0
	err := core.Handle(ctx, m, &delivery{w: w, d: d, job: Job{JobID: jobID, BusinessKey: key}, attempt: attempt, idemKey: core.IdemKey(m)})
	if w.dropped && err != nil && !errors.Is(err, errCrash) {
		r.rec.add(w.name, "ack", "ack failed: the broker took the delivery back ("+err.Error()+")")
		return errDrop
	}
	return err
}

// At injects the plan's faults.
func (w *liveWorker) At(ctx context.Context, m worker.Message, at worker.Points) error {
	r := w.run
	defer func() { w.mark = time.Now() }()
	switch {
	case r.plannedFault(sim.FaultCrash, w.job, w.n, at):
		r.mu.Lock()
		r.crashes++
		r.mu.Unlock()
		r.rec.add(w.name, "crash", "CRASH: the process dies ("+pointName(at)+"): connections closed without an ack")
		r.rec.end(w.lane, "crash")
		return errCrash
	case r.plannedFault(sim.FaultPause, w.job, w.n, at):
		d := r.real(r.cfg.PauseFor)
		r.rec.add(w.name, "pause", fmt.Sprintf("PAUSE %s (stop-the-world; renewal stops too) (%s)", sim.FormatMillis(r.cfg.PauseFor),
			pointName(at)))
		w.locker.pause(true)
		defer w.locker.pause(false)
		late, err := r.sleep(ctx, d)
		w.fellBehind(late)
		return err
	case r.plannedFault(sim.FaultDrop, w.job, w.n, at):
		// Close the channel before the ack: the broker requeues the
		// delivery; this worker does not know yet and tries to ack.
		r.rec.add(w.name, "drop", "connection drops before the ack")
		r.rec.end(w.lane, "requeued")
		w.dropped = true
		w.ch.Close()
	}
	return nil
}

func pointName(ps worker.Points) string {
	for p := worker.PointAfterReceive; p < worker.NumPoints; p++ {
		if ps.Has(p) {
			return p.String()
		}
	}
	return ""
}

// Work sleeps the job's duration.
func (w *liveWorker) Work(ctx context.Context, m worker.Message) error {
	r := w.run
	v := r.cfg.Duration.Sample(sim.Uniform(uint64(m.Delivery)))
	r.rec.add(w.name, "work", "work "+sim.FormatMillis(v))
	late, err := r.sleep(ctx, r.real(v))
	w.fellBehind(late)
	w.mark = time.Now()
	return err
}

// fellBehind adds d to how far the delivery is behind the plan's timing,
// and notes the run's worst.
func (w *liveWorker) fellBehind(d time.Duration) {
	w.behind += d
	w.run.slip.note(w.behind)
}

// EffectFails follows the plan.
func (w *liveWorker) EffectFails(m worker.Message) bool {
	return w.run.plannedFault(sim.FaultFail, w.job, w.n, 0)
}

// Event records an operation for the timeline.
func (w *liveWorker) Event(m worker.Message, st *worker.Step) {
	w.fellBehind(time.Since(w.mark)) // the operation's own time
	w.run.rec.op(w.name, m, st)
	w.mark = time.Now()
}

// delivery settles one message with RabbitMQ.
type delivery struct {
	w       *liveWorker
	d       amqp.Delivery
	job     Job
	attempt int
	idemKey string
	acked   bool // counted as settled (a flow that acks on receipt may ack again)
}

func (d *delivery) Ack(ctx context.Context) error {
	if err := d.d.Ack(false); err != nil {
		return fmt.Errorf("ack: %w", err)
	}
	if !d.acked {
		d.acked = true
		d.w.run.flight.add(-1, 0)
	}
	return nil
}

func (d *delivery) Retry(ctx context.Context, attempt int, backoff time.Duration, reason string) error {
	flight := d.w.run.flight
	flight.add(1, 0) // the copy in the retry queue, before any worker can take it
	if err := d.w.pub.Publish(ctx, d.w.run.topo.Retry(), d.job, attempt, amqp.Table{"x-retry-reason": reason}, backoff); err != nil {
		flight.add(-1, 0)
		return err
	}
	return d.Ack(ctx)
}

func (d *delivery) DeadLetter(ctx context.Context, reason string) error {
	h := amqp.Table{"idempotencyKey": d.idemKey, "error": reason, "failedAt": time.Now().UTC().Format(time.RFC3339Nano)}
	if err := d.w.pub.Publish(ctx, d.w.run.topo.DLX(), d.job, d.attempt, h, 0); err != nil {
		return err
	}
	return d.Ack(ctx)
}

// renewingLocker starts a Renewer with each lease when the profile renews,
// and lets a pause stop it.
type renewingLocker struct {
	Locker
	renew bool
	ttl   time.Duration
	max   int

	mu      sync.Mutex
	renewer *Renewer
}

func (l *renewingLocker) Acquire(ctx context.Context, key string, ttl time.Duration, fence bool) (worker.Lease, bool, error) {
	lease, ok, err := l.Locker.Acquire(ctx, key, ttl, fence)
	if ok && err == nil && l.renew {
		l.mu.Lock()
		l.renewer = l.StartRenewer(ctx, lease, l.ttl, l.max)
		l.mu.Unlock()
	}
	return lease, ok, err
}

func (l *renewingLocker) Release(ctx context.Context, lease worker.Lease) (bool, error) {
	l.stop()
	return l.Locker.Release(ctx, lease)
}

func (l *renewingLocker) Delete(ctx context.Context, key string) (bool, error) {
	return l.Locker.Delete(ctx, key)
}

func (l *renewingLocker) stop() {
	l.mu.Lock()
	defer l.mu.Unlock()
	if l.renewer != nil {
		l.renewer.Stop()
		l.renewer = nil
	}
}

func (l *renewingLocker) pause(v bool) {
	l.mu.Lock()
	defer l.mu.Unlock()
	if l.renewer != nil {
		l.renewer.setPaused(v)
	}
}

// laggingCache is the status cache in Redis: every ledger write reaches it
// lag later, like a cache refreshed from the database by another process.
type laggingCache struct {
	rdb     redis.UniversalClient
	prefix  string
	lag     time.Duration
	slip    *slip
	pending sync.WaitGroup
}

func (c *laggingCache) Status(ctx context.Context, key string) (worker.Status, error) {
	v, err := c.rdb.Get(ctx, c.prefix+key).Result()
	if errors.Is(err, redis.Nil) {
		return worker.StatusAbsent, nil
	}
	return worker.Status(v), err
}

func (c *laggingCache) write(key string, st worker.Status) {
	c.pending.Add(1)
	start := time.Now()
	time.AfterFunc(c.lag, func() {
		defer c.pending.Done()
		ctx, cancel := context.WithTimeout(context.Background(), time.Second)
		defer cancel()
		c.rdb.Set(ctx, c.prefix+key, string(st), 0)
		c.slip.note(time.Since(start) - c.lag) // how late the cache showed it
	})
}

// cachedLedger writes through to the lagging cache after each status
// change.
type cachedLedger struct {
	*Ledger
	cache *laggingCache
}

func (l *cachedLedger) Claim(ctx context.Context, key string) (bool, error) {
	ok, err := l.Ledger.Claim(ctx, key)
	if ok {
		l.cache.write(key, worker.StatusProcessing)
	}
	return ok, err
}

func (l *cachedLedger) Commit(ctx context.Context, key string) error {
	err := l.Ledger.Commit(ctx, key)
	if err == nil {
		l.cache.write(key, worker.StatusSucceeded)
	}
	return err
}

func (l *cachedLedger) EffectTxn(ctx context.Context, e worker.Effect) (bool, error) {
	ok, err := l.Ledger.EffectTxn(ctx, e)
	if ok {
		l.cache.write(e.IdempotencyKey, worker.StatusSucceeded)
	}
	return ok, err
}
