package live

import (
	"context"
	"crypto/rand"
	"encoding/hex"
	"errors"
	"fmt"
	"sync"
	"time"

	"github.com/dupctl/dupctl/internal/worker"
	"github.com/redis/go-redis/v9"
)

// The Lua scripts of the practice's safe lock. redis.Script runs EVALSHA and
// falls back to EVAL when the server answers NOSCRIPT (after a restart or
// SCRIPT FLUSH), so the script body crosses the wire only when needed.
var (
	// compare-and-delete: if GET(key) == token then DEL(key) else 0.
	unlockScript = redis.NewScript(`if redis.call("GET", KEYS[1]) == ARGV[1] then return redis.call("DEL", KEYS[1]) else return 0 end`)
	// compare-and-pexpire: extend only while the token is still ours.
	renewScript = redis.NewScript(`if redis.call("GET", KEYS[1]) == ARGV[1] then ` +
		`return redis.call("PEXPIRE", KEYS[1], ARGV[2]) else return 0 end`)
)

// Locker is the practice's Redis lock: SET key token NX PX ttl with a random
// token, compare-and-delete unlock, token-checked renewal and an optional
// fencing counter.
type Locker struct {
	Client redis.UniversalClient
	// FenceSuffix names the fencing counter next to each lock key.
	FenceSuffix string
}

// NewToken returns 128 random bits, hex encoded: nobody else's unlock can
// match it.
func NewToken() (string, error) {
	var b [16]byte
	if _, err := rand.Read(b[:]); err != nil {
		return "", fmt.Errorf("lock token: %w", err)
	}
	return hex.EncodeToString(b[:]), nil
}

// Acquire takes the lock if it is free.
func (l *Locker) Acquire(ctx context.Context, key string, ttl time.Duration, fence bool) (worker.Lease, bool, error) {
	token, err := NewToken()
	if err != nil {
		return worker.Lease{}, false, err
	}
	ok, err := l.Client.SetNX(ctx, key, token, ttl).Result()
	if err != nil || !ok {
		return worker.Lease{}, false, wrap("SET NX "+key, err)
	}
	lease := worker.Lease{Key: key, Token: token}
	if fence {
		// The counter only grows, so a later holder always has a larger
		// token than every earlier one.
		n, err := l.Client.Incr(ctx, key+l.fenceSuffix()).Result()
		if err != nil {
			return lease, true, wrap("INCR fence of "+key, err)
		}
		lease.Fence = n
	}
	return lease, true, nil
}

func (l *Locker) fenceSuffix() string {
	if l.FenceSuffix == "" {
		return ":fence"
	}
	return l.FenceSuffix
}

// Release deletes the lock only if its token is still ours.
func (l *Locker) Release(ctx context.Context, lease worker.Lease) (bool, error) {
	n, err := unlockScript.Run(ctx, l.Client, []string{lease.Key}, lease.Token).Int()
	return n == 1, wrap("compare-and-delete "+lease.Key, err)
}

// Delete is the unsafe unlock: DEL by key, whoever holds it.
func (l *Locker) Delete(ctx context.Context, key string) (bool, error) {
	n, err := l.Client.Del(ctx, key).Result()
	return n == 1, wrap("DEL "+key, err)
}

// Renew extends the lease to ttl from now if it is still ours.
func (l *Locker) Renew(ctx context.Context, lease worker.Lease, ttl time.Duration) (bool, error) {
	n, err := renewScript.Run(ctx, l.Client, []string{lease.Key}, lease.Token, ttl.Milliseconds()).Int()
	return n == 1, wrap("compare-and-pexpire "+lease.Key, err)
}

func wrap(what string, err error) error {
	if err == nil || errors.Is(err, redis.Nil) {
		return nil
	}
	return fmt.Errorf("%s: %w", what, err)
}

// ErrLockLost is reported by a Renewer whose lock was taken over.
var ErrLockLost = errors.New("lock lost: the key no longer holds our token")

// Renewer keeps a lease alive while its holder works: every ttl/3 it
// extends the lease, only while the token is still ours. It stops and
// reports when the lock is lost, when it has renewed max times (no lock
// lives forever: a stuck job must not hold it for good), or when stopped.
// Pause stops it like a stop-the-world pause stops a process.
type Renewer struct {
	locker *Locker
	lease  worker.Lease
	ttl    time.Duration
	max    int

	mu      sync.Mutex
	paused  bool
	renewed int
	err     error
	stop    chan struct{}
	done    chan struct{}
}

// StartRenewer begins renewing lease, every ttl/3.
func (l *Locker) StartRenewer(ctx context.Context, lease worker.Lease, ttl time.Duration, max int) *Renewer {
	return l.startRenewer(ctx, lease, ttl, max, nil, nil)
}

// startRenewer renews lease on every tick; nil ticks: every ttl/3. acted,
// when not nil, hears after each tick has been acted on: a test gives its
// own ticks and waits for each, so nothing depends on the machine's speed.
func (l *Locker) startRenewer(ctx context.Context, lease worker.Lease, ttl time.Duration, max int,
	ticks <-chan time.Time, acted chan<- struct{}) *Renewer {
	r := &Renewer{locker: l, lease: lease, ttl: ttl, max: max, stop: make(chan struct{}), done: make(chan struct{})}
	go r.loop(ctx, ticks, acted)
	return r
}

func (r *Renewer) loop(ctx context.Context, ticks <-chan time.Time, acted chan<- struct{}) {
	defer close(r.done)
	if ticks == nil {
		t := time.NewTicker(max(r.ttl/3, time.Millisecond))
		defer t.Stop()
		ticks = t.C
	}
	for {
		select {
		case <-r.stop:
			return
		case <-ctx.Done():
			return
		case <-ticks:
		}
		goOn := r.renew(ctx)
		if acted != nil {
			acted <- struct{}{}
		}
		if !goOn {
			return
		}
	}
}

// renew extends the lease once, unless paused, and reports whether to go
// on: not once the lock is lost, renewal failed or the cap is reached.
func (r *Renewer) renew(ctx context.Context) bool {
	r.mu.Lock()
	paused := r.paused
	r.mu.Unlock()
	if paused {
		return true
	}
	ok, err := r.locker.Renew(ctx, r.lease, r.ttl)
	r.mu.Lock()
	defer r.mu.Unlock()
	switch {
	case err != nil:
		r.err = err
	case !ok:
		r.err = ErrLockLost
	default:
		r.renewed++
		if r.renewed >= r.max {
			r.err = fmt.Errorf("renewed %d times: giving up so a stuck job cannot hold the lock forever", r.renewed)
		}
	}
	return r.err == nil
}

// Pause stops renewals until Resume.
func (r *Renewer) Pause()  { r.setPaused(true) }
func (r *Renewer) Resume() { r.setPaused(false) }

func (r *Renewer) setPaused(v bool) {
	r.mu.Lock()
	r.paused = v
	r.mu.Unlock()
}

// Stop ends renewal and returns why it had stopped on its own, if it had.
func (r *Renewer) Stop() (renewed int, err error) {
	select {
	case <-r.done:
	default:
		close(r.stop)
		<-r.done
	}
	r.mu.Lock()
	defer r.mu.Unlock()
	return r.renewed, r.err
}
