// Command goworker is a small payment consumer for testing dupctl's
// `simulate <scenario> --worker`: the seed's safe flow by default, and one
// environment switch per common bug. It is a user's worker as far as dupctl
// is concerned: dupctl only starts it and watches its traffic.
//
// Flow (the seed's safe flow): take the business-key lock (SET NX PX with a
// random token, renewed while working), claim the idempotency key and run
// the side effect in one transaction, write the status cache, release the
// lock with a compare-and-delete script, then ack.
//
// Environment:
//
//	AMQP_URL, REDIS_URL, DATABASE_URL   where to connect (dupctl's proxies)
//	READ_DATABASE_URL                   a read replica, for STATUS=replica
//	QUEUE                               queue to declare and consume
//	CHARGES, IDEM                       tables: CHARGES(order_id, idempotency_key, worker), IDEM(key primary key, status)
//	WORKER                              a name for the logs
//	WORK=100ms                          how long the job's own work takes
//	LOCK=on|off                         take the business-key lock | none (check-then-act races)
//	LOCK_TTL=2s RENEW=true              lock TTL, and renewal while working
//	IDEM=txn|check|none                 claim+effect in one transaction | SELECT then act | nothing
//	KEY=stable|attempt                  idempotency key from the order | plus the delivery attempt
//	STATUS=db|cache|replica             decide "already done?" from the database | the Redis cache | READ_DATABASE_URL
//	                                    (replica: a SELECT there first, then IDEM's flow on the primary)
//	UNLOCK=cas|del                      compare-and-delete | plain DEL (also on the lock-busy path)
//	ACK=after|first                     ack after the commit | on receipt
//	PREFETCH=1                          basic.qos (Spring AMQP's default is 250)
//	BUSY=requeue|poll                   a busy lock: nack with requeue | poll it within the delivery (redis-py's blocking Lock)
//	LOCKLOST=ignore|abort               a failed renewal is ignored | the job stops before its effect and the message is requeued
//	ONERROR=exit|ack                    a failed job exits the worker (the broker redelivers) | is acked and forgotten
//
// A Redis error while taking the lock requeues the message, as a busy lock
// does: the worker lives on while Redis is out of reach.
package main

import (
	"context"
	"crypto/rand"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"os/signal"
	"strconv"
	"sync/atomic"
	"syscall"
	"time"

	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/pgxpool"
	amqp "github.com/rabbitmq/amqp091-go"
	"github.com/redis/go-redis/v9"
)

type config struct {
	queue, charges, idem, name    string
	work, ttl                     time.Duration
	renew, lock                   bool
	idemMode, key, status, unlock string
	ackFirst                      bool
	pollLock, abortOnLost         bool
	ackOnError                    bool
}

func env(k, def string) string {
	if v := os.Getenv(k); v != "" {
		return v
	}
	return def
}

func duration(k, def string) time.Duration {
	d, err := time.ParseDuration(env(k, def))
	if err != nil {
		fatal(fmt.Errorf("%s: %w", k, err))
	}
	return d
}

func fatal(err error) {
	fmt.Fprintln(os.Stderr, "goworker:", err)
	os.Exit(1)
}

// The safe flow's lock scripts: release and renew only while the token is ours.
var (
	unlockScript = redis.NewScript(`if redis.call("GET", KEYS[1]) == ARGV[1] then return redis.call("DEL", KEYS[1]) else return 0 end`)
	renewScript  = redis.NewScript(`if redis.call("GET", KEYS[1]) == ARGV[1] then return redis.call("PEXPIRE", KEYS[1], ARGV[2]) else return 0 end`)
)

func main() {
	c := config{
		queue: env("QUEUE", "orders"), charges: env("CHARGES", "charges"), idem: env("IDEM_TABLE", "payments_idem"), name: env("WORKER", strconv.Itoa(os.Getpid())),
		work: duration("WORK", "100ms"), ttl: duration("LOCK_TTL", "2s"), renew: env("RENEW", "true") == "true", lock: env("LOCK", "on") == "on",
		idemMode: env("IDEM", "txn"), key: env("KEY", "stable"), status: env("STATUS", "db"), unlock: env("UNLOCK", "cas"), ackFirst: env("ACK", "after") == "first",
		pollLock: env("BUSY", "requeue") == "poll", abortOnLost: env("LOCKLOST", "ignore") == "abort",
		ackOnError: env("ONERROR", "exit") == "ack",
	}
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
	defer stop()
	if err := run(ctx, c); err != nil && ctx.Err() == nil {
		fatal(err)
	}
}

func run(ctx context.Context, c config) error {
	rdb := redis.NewClient(mustRedis(os.Getenv("REDIS_URL")))
	defer rdb.Close()
	pool, err := pgxpool.New(ctx, os.Getenv("DATABASE_URL"))
	if err != nil {
		return err
	}
	defer pool.Close()
	conn, err := amqp.Dial(os.Getenv("AMQP_URL"))
	if err != nil {
		return err
	}
	defer conn.Close()
	ch, err := conn.Channel()
	if err != nil {
		return err
	}
	if _, err := ch.QueueDeclare(c.queue, true, false, false, false, nil); err != nil {
		return err
	}
	prefetch, err := strconv.Atoi(env("PREFETCH", "1"))
	if err != nil {
		return fmt.Errorf("PREFETCH: %w", err)
	}
	if err := ch.Qos(prefetch, 0, false); err != nil {
		return err
	}
	ds, err := ch.Consume(c.queue, "", false, false, false, false, nil)
	if err != nil {
		return err
	}
	w := &worker{c: c, rdb: rdb, db: pool}
	if c.status == "replica" {
		if w.reads, err = pgxpool.New(ctx, os.Getenv("READ_DATABASE_URL")); err != nil {
			return fmt.Errorf("READ_DATABASE_URL: %w", err)
		}
		defer w.reads.Close()
	}
	for {
		select {
		case <-ctx.Done():
			return nil
		case d, ok := <-ds:
			if !ok {
				// The broker closed the connection: exit, and let the
				// supervisor start a fresh process, as most deployments do.
				return errors.New("AMQP connection closed")
			}
			if err := w.handle(ctx, d); err != nil {
				return err
			}
		}
	}
}

func mustRedis(u string) *redis.Options {
	o, err := redis.ParseURL(u)
	if err != nil {
		fatal(fmt.Errorf("REDIS_URL: %w", err))
	}
	return o
}

type worker struct {
	c     config
	rdb   *redis.Client
	db    *pgxpool.Pool
	reads *pgxpool.Pool // READ_DATABASE_URL, with STATUS=replica
}

func (w *worker) log(event, order string, kv ...any) {
	m := map[string]any{"time": time.Now().UTC().Format(time.RFC3339Nano), "event": event, "orderId": order, "worker": w.c.name}
	for i := 0; i+1 < len(kv); i += 2 {
		m[fmt.Sprint(kv[i])] = kv[i+1]
	}
	b, _ := json.Marshal(m)
	fmt.Println(string(b))
}

// errLockLost stops a job whose lock went away before its effect
// (LOCKLOST=abort).
var errLockLost = errors.New("the lock was lost before the effect")

func (w *worker) handle(ctx context.Context, d amqp.Delivery) error {
	var job struct {
		OrderID string `json:"orderId"`
	}
	if err := json.Unmarshal(d.Body, &job); err != nil || job.OrderID == "" {
		w.log("invalid_payload", "", "error", fmt.Sprint(err))
		return d.Reject(false)
	}
	order := job.OrderID
	if w.c.ackFirst {
		if err := d.Ack(false); err != nil {
			return err
		}
	}
	var held *heldLock
	if w.c.lock {
		var err error
		if held, err = w.lock(ctx, order); err != nil {
			w.log("lock_error", order, "error", err.Error())
		}
		if held == nil { // busy, or Redis out of reach: back to the queue, after a pause
			return w.requeue(d)
		}
	}
	done, err := w.process(ctx, d, order, held)
	held.release()
	switch {
	case errors.Is(err, errLockLost):
		w.log("lock_lost", order)
		return w.requeue(d)
	case err != nil && w.c.ackOnError && !w.c.ackFirst:
		// The trap: the failure is logged and the message acked, as if
		// the job had run.
		w.log("failed", order, "error", err.Error())
		return d.Ack(false)
	case err != nil:
		return err
	}
	w.log("done", order, "skipped", !done)
	if w.c.ackFirst {
		return nil
	}
	return d.Ack(false)
}

// requeue sends a delivery back after a pause.
func (w *worker) requeue(d amqp.Delivery) error {
	time.Sleep(50 * time.Millisecond)
	if w.c.ackFirst {
		return nil
	}
	return d.Nack(false, true)
}

// heldLock is a business-key lock the worker holds.
type heldLock struct {
	w          *worker
	key, token string
	stopRenew  func()
	lost       atomic.Bool // a renewal failed (LOCKLOST=abort)
}

// lock takes the business-key lock, polling it with BUSY=poll; nil when
// another holder has it.
func (w *worker) lock(ctx context.Context, order string) (*heldLock, error) {
	lockKey := "lock:payment:order:" + order
	var tb [16]byte
	_, _ = rand.Read(tb[:])
	token := hex.EncodeToString(tb[:])
	deadline := time.Now().Add(30 * time.Second)
	for {
		got, err := w.rdb.SetNX(ctx, lockKey, token, w.c.ttl).Result()
		if err != nil {
			return nil, err
		}
		if got {
			break
		}
		if w.c.pollLock && time.Now().Before(deadline) {
			time.Sleep(20 * time.Millisecond)
			continue
		}
		w.log("lock_busy", order, "lockKey", lockKey)
		if w.c.unlock == "del" {
			// The trap: a deferred unlock that also runs when the lock was
			// never ours, deleting the holder's lock.
			w.rdb.Del(ctx, lockKey)
		}
		return nil, nil
	}
	h := &heldLock{w: w, key: lockKey, token: token}
	h.stopRenew = w.renew(ctx, h)
	return h, nil
}

// release stops the renewal and releases the lock; nil holds none.
func (h *heldLock) release() {
	if h == nil {
		return
	}
	h.stopRenew()
	ctx := context.Background()
	if h.w.c.unlock == "del" {
		h.w.rdb.Del(ctx, h.key)
	} else {
		unlockScript.Run(ctx, h.w.rdb, []string{h.key}, h.token)
	}
}

// stillHeld reports, with LOCKLOST=abort, whether the lock is still ours:
// no renewal failed, and Redis answers with our token.
func (h *heldLock) stillHeld(ctx context.Context) bool {
	if h == nil || !h.w.c.abortOnLost {
		return true
	}
	if h.lost.Load() {
		return false
	}
	v, err := h.w.rdb.Get(ctx, h.key).Result()
	return err == nil && v == h.token
}

// renew extends the lock every third of its TTL while the token is ours;
// with LOCKLOST=abort a failed renewal marks the lock lost.
func (w *worker) renew(ctx context.Context, h *heldLock) func() {
	if !w.c.renew {
		return func() {}
	}
	stop := make(chan struct{})
	go func() {
		t := time.NewTicker(w.c.ttl / 3)
		defer t.Stop()
		for {
			select {
			case <-stop:
				return
			case <-t.C:
				n, err := renewScript.Run(ctx, w.rdb, []string{h.key}, h.token, w.c.ttl.Milliseconds()).Int()
				if w.c.abortOnLost && (err != nil || n == 0) {
					h.lost.Store(true)
					return
				}
			}
		}
	}()
	return func() { close(stop) }
}

// process runs the check, the work and the side effect; false means the
// order was already done.
func (w *worker) process(ctx context.Context, d amqp.Delivery, order string, held *heldLock) (bool, error) {
	idemKey := "payment:" + order
	if w.c.key == "attempt" {
		attempt := 1
		if d.Redelivered {
			attempt = 2
		}
		idemKey += ":" + strconv.Itoa(attempt)
	}
	switch {
	case w.c.status == "cache":
		v, err := w.rdb.Get(ctx, "status:"+order).Result()
		if err != nil && err != redis.Nil {
			return false, err
		}
		if v == "SUCCEEDED" {
			return false, nil
		}
	case w.c.status == "replica" || w.c.idemMode == "check":
		// STATUS=replica asks the read replica, the trap when it lags;
		// with IDEM=txn the claim on the primary still decides.
		db := w.db
		if w.c.status == "replica" {
			db = w.reads
		}
		var status string
		err := db.QueryRow(ctx, "select status from "+w.c.idem+" where key = $1", idemKey).Scan(&status)
		if err != nil && !errors.Is(err, pgx.ErrNoRows) {
			return false, err
		}
		if status == "SUCCEEDED" {
			return false, nil
		}
	}
	time.Sleep(w.c.work)
	if !held.stillHeld(ctx) {
		return false, errLockLost
	}
	charge := "insert into " + w.c.charges + " (order_id, idempotency_key, worker) values ($1, $2, $3)"
	if w.c.idemMode == "txn" && w.c.status != "cache" {
		tx, err := w.db.Begin(ctx)
		if err != nil {
			return false, err
		}
		defer tx.Rollback(ctx)
		tag, err := tx.Exec(ctx, "insert into "+w.c.idem+" (key, status) values ($1, 'SUCCEEDED') on conflict do nothing", idemKey)
		if err != nil {
			return false, err
		}
		if tag.RowsAffected() == 0 {
			return false, nil
		}
		if _, err := tx.Exec(ctx, charge, order, idemKey, w.c.name); err != nil {
			return false, err
		}
		if err := tx.Commit(ctx); err != nil {
			return false, err
		}
	} else {
		if _, err := w.db.Exec(ctx, charge, order, idemKey, w.c.name); err != nil {
			return false, err
		}
		if w.c.idemMode != "none" || w.c.status == "cache" {
			if _, err := w.db.Exec(ctx, "insert into "+w.c.idem+" (key, status) values ($1, 'SUCCEEDED') on conflict (key) do update set status = 'SUCCEEDED'", idemKey); err != nil {
				return false, err
			}
		}
	}
	w.log("side_effect", order, "idempotencyKey", idemKey, "attempt", map[bool]int{false: 1, true: 2}[d.Redelivered])
	if err := w.rdb.Set(ctx, "status:"+order, "SUCCEEDED", time.Hour).Err(); err != nil {
		// The cache only speeds the next check up: the job is done.
		w.log("status_cache_error", order, "error", err.Error())
	}
	return true, nil
}
