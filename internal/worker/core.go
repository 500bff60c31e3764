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

// CacheReader reads the status cache that may lag the ledger.
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
	// Event records what happened, for the timeline.
	Event(m Message, op Op, r Result, note string)
}

// Core is the seed's consumer flow over real systems.
type Core struct {
	Profile     Profile
	Name        string // the worker's instance name, recorded with its effects
	Locker      Locker
	Ledger      Ledger
	Cache       CacheReader
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
	f := Flow{Attempt: uint8(min(m.Attempt, 255)), MaxAttempts: uint8(c.MaxAttempts)}
	key := c.IdemKey(m)
	lockKey := c.LockKey(m)
	var lease Lease
	if err := c.Hooks.At(ctx, m, Of(PointAfterReceive)); err != nil {
		return err
	}
	for op := f.Start(p); op != OpDone; {
		r, note, err := c.exec(ctx, op, m, d, &f, key, lockKey, &lease)
		if err != nil {
			return fmt.Errorf("%s: %w", op, err)
		}
		c.Hooks.Event(m, op, r, note)
		next := f.Next(p, op, r)
		if ps := Reached(p, op, r, next); ps != 0 {
			if err := c.Hooks.At(ctx, m, ps); err != nil {
				return err
			}
		}
		op = next
	}
	return nil
}

func (c *Core) exec(ctx context.Context, op Op, m Message, d Delivery, f *Flow, key, lockKey string, lease *Lease) (Result, string, error) {
	p := &c.Profile
	switch op {
	case OpAckEarly, OpAck:
		return ResOK, "", d.Ack(ctx)
	case OpLock:
		l, ok, err := c.Locker.Acquire(ctx, lockKey, c.LockTTL, p.Fence)
		if err != nil || !ok {
			return ResBusy, "", err
		}
		*lease = l
		return ResOK, "token " + l.Token, nil
	case OpUnlockBusy:
		deleted, err := c.Locker.Delete(ctx, lockKey)
		if deleted {
			return ResOK, "deleted another worker's lock", err
		}
		return ResOK, "", err
	case OpRetryBusy:
		return ResOK, "", d.Retry(ctx, m.Attempt+1, c.backoff(m.Attempt), "lock busy")
	case OpCheck:
		var st Status
		var err error
		if p.StatusFrom == StatusCache {
			st, err = c.Cache.Status(ctx, key)
		} else {
			st, err = c.Ledger.Status(ctx, key)
		}
		if st == StatusSucceeded {
			return ResBusy, string(st), err
		}
		return ResOK, string(st), err
	case OpClaim:
		ok, err := c.Ledger.Claim(ctx, key)
		if !ok {
			return ResBusy, "", err
		}
		return ResOK, "", err
	case OpWork:
		return ResOK, "", c.Hooks.Work(ctx, m)
	case OpEffect, OpEffectTxn:
		if c.Hooks.EffectFails(m) {
			return ResRetryable, "failed (retryable)", nil
		}
		e := Effect{BusinessKey: m.BusinessKey, IdempotencyKey: key, Worker: c.Name, Attempt: m.Attempt}
		if p.Fence {
			e.Fence = lease.Fence
		}
		var applied bool
		var err error
		if op == OpEffectTxn {
			applied, err = c.Ledger.EffectTxn(ctx, e)
		} else {
			applied, err = c.Ledger.Effect(ctx, e)
		}
		if !applied {
			return ResBusy, "not applied", err
		}
		return ResOK, "", err
	case OpCommit:
		return ResOK, "", c.Ledger.Commit(ctx, key)
	case OpMarkFailed:
		return ResOK, "", c.Ledger.MarkFailed(ctx, key, p.StatusWrite == StatusGuarded, "side effect failed")
	case OpUnlock:
		if p.Unlock == UnlockDel {
			deleted, err := c.Locker.Delete(ctx, lockKey)
			if !deleted {
				return ResOK, "lock already gone", err
			}
			return ResOK, "", err
		}
		released, err := c.Locker.Release(ctx, *lease)
		if !released {
			return ResOK, "not ours any more: left alone", err
		}
		return ResOK, "", err
	case OpRetry:
		return ResOK, "", d.Retry(ctx, m.Attempt+1, c.backoff(m.Attempt), "side effect failed")
	case OpDeadLetter:
		reason := "lock busy"
		if f.Failed() {
			reason = "side effect failed"
		}
		return ResOK, "", d.DeadLetter(ctx, reason)
	}
	return ResOK, "", fmt.Errorf("unknown operation %d", op)
}

// backoff is base * 2^(attempt-1).
func (c *Core) backoff(attempt int) time.Duration {
	return c.BackoffBase << max(attempt-1, 0)
}
