package worker

import (
	"context"
	"fmt"
	"time"
)

// The interfaces the live consumer loop runs the flow against. The
// simulator implements the same operations on in-memory fakes; the live
// adapters (internal/sim/live) implement them on Redis, PostgreSQL and
// RabbitMQ.

// Message is one delivery as the worker sees it.
type Message struct {
	JobID       string
	BusinessKey string
	Attempt     int
	Redelivered bool
	Delivery    int // this worker process's delivery count, for per-attempt keys
}

// Delivery settles one message with the broker.
type Delivery interface {
	Ack(ctx context.Context) error
	// Retry republishes the message with attempt+1 after backoff, then
	// acks this delivery.
	Retry(ctx context.Context, attempt int, backoff time.Duration, reason string) error
	// DeadLetter publishes the message to the DLQ with its context, then
	// acks this delivery.
	DeadLetter(ctx context.Context, reason string) error
}

// Lease is a held lock.
type Lease struct {
	Key   string
	Token string
	Fence int64
}

// Locker is the Redis lock.
type Locker interface {
	// Acquire is SET key token NX PX ttl (and INCR of the fencing counter
	// when fence is set); ok is false when another holds it.
	Acquire(ctx context.Context, key string, ttl time.Duration, fence bool) (l Lease, ok bool, err error)
	// Release deletes the lock only if the token is still ours.
	Release(ctx context.Context, l Lease) (released bool, err error)
	// Delete is a plain DEL by key: the unsafe unlock.
	Delete(ctx context.Context, key string) (deleted bool, err error)
}

// Status is a ledger status.
type Status string

const (
	StatusAbsent     Status = ""
	StatusProcessing Status = "PROCESSING"
	StatusSucceeded  Status = "SUCCEEDED"
	StatusFailed     Status = "FAILED"
)

// Effect is one side effect, as the audit trail records it.
type Effect struct {
	BusinessKey    string
	IdempotencyKey string
	Worker         string
	Attempt        int
	Fence          int64 // 0: no fencing token
}

// Ledger is the idempotency table (the source of truth) and the sink the
// side effect writes to.
type Ledger interface {
	Status(ctx context.Context, key string) (Status, error)
	// Claim inserts PROCESSING unless a row exists that is not FAILED.
	Claim(ctx context.Context, key string) (claimed bool, err error)
	Commit(ctx context.Context, key string) error
	// MarkFailed records a failure; guarded never overwrites SUCCEEDED.
	MarkFailed(ctx context.Context, key string, guarded bool, reason string) error
	// Effect performs the side effect; with a fencing token the sink
	// rejects tokens older than one it has seen (applied=false).
	Effect(ctx context.Context, e Effect) (applied bool, err error)
	// EffectTxn performs the effect and records SUCCEEDED in one
	// transaction; applied is false when the key was already SUCCEEDED.
	EffectTxn(ctx context.Context, e Effect) (applied bool, err error)
}

// CacheReader reads a view of the ledger that may lag it: the status
// cache, or a read replica.
type CacheReader interface {
	Status(ctx context.Context, key string) (Status, error)
}

// Hooks let a caller inject faults at the flow's named points and time the
// work. They are called on the worker's goroutine.
type Hooks interface {
	// At is called when the delivery reaches a set of fault points; an
	// error ends the handling (a crash or a dropped connection).
	At(ctx context.Context, m Message, points Points) error
	// Work performs the job's own work (sleeps its duration).
	Work(ctx context.Context, m Message) error
	// EffectFails reports whether this side effect should fail (retryable).
	EffectFails(m Message) bool
	// Event records what an operation did, for the timeline.
	Event(m Message, s *Step)
}

// Core is the consumer flow over real systems: the adapters of the
// interfaces above carry out each operation Flow decides on.
type Core struct {
	Profile Profile
	Name    string // the worker's instance name, recorded with its effects
	Locker  Locker
	Ledger  Ledger
	Cache   CacheReader
	// Replica reads the ledger on a read replica that lags it (profiles
	// that read status there); nil: none.
	Replica     CacheReader
	Hooks       Hooks
	LockTTL     time.Duration
	BackoffBase time.Duration
	MaxAttempts int
	LockKey     func(m Message) string
	IdemKey     func(m Message) string
}

// Handle runs one delivery through the flow: the same Flow decisions the
// simulator makes, executed one operation at a time.
func (c *Core) Handle(ctx context.Context, m Message, d Delivery) error {
	p := &c.Profile
	h := &handling{ctx: ctx, c: c, m: m, d: d, key: c.IdemKey(m), lockKey: c.LockKey(m)}
	h.flow = Flow{Attempt: uint8(min(m.Attempt, 255)), MaxAttempts: uint8(c.MaxAttempts)}
	if err := c.Hooks.At(ctx, m, Of(PointAfterReceive)); err != nil {
		return err
	}
	for op := h.flow.Start(p); op != OpDone; {
		s := Step{Op: op}
		next, at, err := h.flow.Advance(p, h, &s)
		if err != nil {
			return fmt.Errorf("%s: %w", op, err)
		}
		c.Hooks.Event(m, &s)
		if at != 0 {
			if err := c.Hooks.At(ctx, m, at); err != nil {
				return err
			}
		}
		op = next
	}
	return nil
}

// handling is one delivery on its way through Core's flow: Core's side of
// Observer, carrying out each operation on the real systems. It lives for
// one Handle call, so it keeps that call's context.
type handling struct {
	ctx          context.Context
	c            *Core
	m            Message
	d            Delivery
	flow         Flow
	key, lockKey string // the idempotency key and the lock key
	lease        Lease  // the lock, once held
}

func (h *handling) Ack(*Step) error { return h.d.Ack(h.ctx) }

func (h *handling) Lock(s *Step) error {
	l, ok, err := h.c.Locker.Acquire(h.ctx, h.lockKey, h.c.LockTTL, h.c.Profile.Fence)
	if err != nil || !ok {
		s.Result = ResBusy
		return err
	}
	h.lease = l
	s.Note = "token " + l.Token
	return nil
}

func (h *handling) UnlockBusy(s *Step) error {
	deleted, err := h.c.Locker.Delete(h.ctx, h.lockKey)
	if deleted {
		s.Note = "deleted another worker's lock"
	}
	return err
}

func (h *handling) Retry(s *Step) error {
	reason := "side effect failed"
	if s.Op == OpRetryBusy {
		reason = "lock busy"
	}
	return h.d.Retry(h.ctx, h.m.Attempt+1, h.c.backoff(h.m.Attempt), reason)
}

func (h *handling) Check(s *Step) error {
	read := h.c.Ledger.Status
	switch h.c.Profile.StatusFrom {
	case StatusCache:
		read = h.c.Cache.Status
	case StatusReplica:
		if h.c.Replica == nil {
			return fmt.Errorf("profile %s reads status from a read replica, and this worker has none", h.c.Profile.Name)
		}
		read = h.c.Replica.Status
	}
	st, err := read(h.ctx, h.key)
	s.Note = string(st)
	if st == StatusSucceeded {
		s.Result = ResBusy
	}
	return err
}

func (h *handling) Claim(s *Step) error {
	ok, err := h.c.Ledger.Claim(h.ctx, h.key)
	if !ok {
		s.Result = ResBusy
	}
	return err
}

func (h *handling) Work(*Step) error { return h.c.Hooks.Work(h.ctx, h.m) }

func (h *handling) Effect(s *Step) error {
	if h.c.Hooks.EffectFails(h.m) {
		s.Result, s.Note = ResRetryable, "failed (retryable)"
		return nil
	}
	e := Effect{BusinessKey: h.m.BusinessKey, IdempotencyKey: h.key, Worker: h.c.Name, Attempt: h.m.Attempt}
	if h.c.Profile.Fence {
		e.Fence = h.lease.Fence
	}
	apply := h.c.Ledger.Effect
	if s.Op == OpEffectTxn {
		apply = h.c.Ledger.EffectTxn
	}
	applied, err := apply(h.ctx, e)
	if !applied {
		s.Result, s.Note = ResBusy, "not applied"
	}
	return err
}

func (h *handling) Commit(*Step) error { return h.c.Ledger.Commit(h.ctx, h.key) }

func (h *handling) MarkFailed(*Step) error {
	return h.c.Ledger.MarkFailed(h.ctx, h.key, h.c.Profile.StatusWrite == StatusGuarded, "side effect failed")
}

func (h *handling) Unlock(s *Step) error {
	if h.c.Profile.Unlock == UnlockDel {
		deleted, err := h.c.Locker.Delete(h.ctx, h.lockKey)
		if !deleted {
			s.Note = "lock already gone"
		}
		return err
	}
	released, err := h.c.Locker.Release(h.ctx, h.lease)
	if !released {
		s.Note = "not ours any more: left alone"
	}
	return err
}

func (h *handling) DeadLetter(*Step) error {
	reason := "lock busy"
	if h.flow.Failed() {
		reason = "side effect failed"
	}
	return h.d.DeadLetter(h.ctx, reason)
}

// backoff is base * 2^(attempt-1).
func (c *Core) backoff(attempt int) time.Duration {
	return c.BackoffBase << max(attempt-1, 0)
}
