package live

import (
	"context"
	"errors"
	"testing"
	"time"

	"github.com/dupctl/dupctl/internal/platform/connect"
	"github.com/dupctl/dupctl/internal/testenv"
	"github.com/dupctl/dupctl/internal/worker"
	"github.com/redis/go-redis/v9"
)

// testLocker is a Locker on the test Redis and a key of the test's own;
// the key, and the others named, are deleted at the end.
func testLocker(t *testing.T, name, suffix string, others ...string) (*Locker, redis.UniversalClient, string) {
	t.Helper()
	rdb, err := connect.Redis(context.Background(), testenv.Need(t, testenv.Redis))
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { rdb.Close() })
	key := testenv.UniqueName(name) + suffix
	t.Cleanup(func() {
		keys := []string{key}
		for _, o := range others {
			keys = append(keys, key+o)
		}
		rdb.Del(context.Background(), keys...)
	})
	return &Locker{Client: rdb}, rdb, key
}

func TestLocker(t *testing.T) {
	ctx := context.Background()
	l, rdb, key := testLocker(t, "locker", ":lock:order:1", ":fence")

	// TTLs of minutes: a machine however busy holds the lock until the
	// test lets it go, so nothing here depends on how fast it runs.
	a, ok, err := l.Acquire(ctx, key, time.Minute, true)
	if err != nil || !ok || len(a.Token) != 32 || a.Fence != 1 {
		t.Fatalf("acquire: %+v %v %v", a, ok, err)
	}
	if pttl := rdb.PTTL(ctx, key).Val(); pttl <= 0 || pttl > time.Minute {
		t.Fatalf("PTTL %s: the lock must expire", pttl)
	}
	if _, ok, _ := l.Acquire(ctx, key, time.Minute, true); ok {
		t.Fatal("a held lock was acquired twice")
	}
	// A release with another token deletes nothing.
	if released, err := l.Release(ctx, worker.Lease{Key: key, Token: "not-mine"}); released || err != nil {
		t.Fatalf("foreign release: %v %v", released, err)
	}
	// Renewal extends only while the token is ours.
	if ok, err := l.Renew(ctx, a, 5*time.Minute); !ok || err != nil || rdb.PTTL(ctx, key).Val() <= time.Minute {
		t.Fatalf("renew: %v %v", ok, err)
	}
	if ok, _ := l.Renew(ctx, worker.Lease{Key: key, Token: "not-mine"}, time.Minute); ok {
		t.Fatal("renewed someone else's lock")
	}
	// The script survives SCRIPT FLUSH (EVALSHA falls back to EVAL on NOSCRIPT).
	if err := rdb.ScriptFlush(ctx).Err(); err != nil {
		t.Fatal(err)
	}
	if released, err := l.Release(ctx, a); !released || err != nil {
		t.Fatalf("release after SCRIPT FLUSH: %v %v", released, err)
	}
	// The fencing token only grows.
	b, ok, err := l.Acquire(ctx, key, time.Minute, true)
	if err != nil || !ok || b.Fence != 2 {
		t.Fatalf("second fence %d", b.Fence)
	}
	// Plain DEL deletes whoever holds it: the unsafe unlock.
	if deleted, _ := l.Delete(ctx, key); !deleted {
		t.Fatal("DEL deleted nothing")
	}
}

// TestRenewer drives the renewer with its own ticks and waits until each
// has been acted on, so nothing depends on how fast the machine is.
func TestRenewer(t *testing.T) {
	ctx := context.Background()
	l, rdb, key := testLocker(t, "renew", ":lock", ":paused")
	ticks, acted := make(chan time.Time), make(chan struct{})
	tick := func() {
		ticks <- time.Now()
		<-acted
	}
	lease, ok, err := l.Acquire(ctx, key, 5*time.Second, false)
	if !ok || err != nil {
		t.Fatal(err)
	}
	r := l.startRenewer(ctx, lease, time.Minute, 1000, ticks, acted)
	tick()
	tick()
	if pttl := rdb.PTTL(ctx, key).Val(); pttl <= 5*time.Second || rdb.Get(ctx, key).Val() != lease.Token {
		t.Fatalf("after renewals the lock has PTTL %s: renewal did not extend it to a minute", pttl)
	}
	// Someone takes the key over: the renewer stops and says why.
	rdb.Set(ctx, key, "other", time.Minute)
	tick()
	if n, err := r.Stop(); n != 2 || !errors.Is(err, ErrLockLost) {
		t.Fatalf("renewer after takeover: %d renewals, %v", n, err)
	}
	// A capped renewer gives up: no lock lives forever.
	rdb.Del(ctx, key)
	if lease, ok, err = l.Acquire(ctx, key, 5*time.Second, false); !ok || err != nil {
		t.Fatal(err)
	}
	r = l.startRenewer(ctx, lease, time.Minute, 2, ticks, acted)
	tick()
	tick()
	if n, err := r.Stop(); n != 2 || err == nil {
		t.Fatalf("capped renewer: %d renewals, %v", n, err)
	}
	// A paused renewer leaves the lease alone.
	if lease, ok, err = l.Acquire(ctx, key+":paused", 5*time.Second, false); !ok || err != nil {
		t.Fatal(err)
	}
	r = l.startRenewer(ctx, lease, time.Minute, 10, ticks, acted)
	r.Pause()
	tick()
	if n, err := r.Stop(); n != 0 || err != nil {
		t.Fatalf("paused renewer: %d renewals, %v", n, err)
	}
}

// TestRenewerTicksOnItsOwn: without given ticks, the renewer renews every
// ttl/3. It waits for the first renewal, however long the machine takes.
func TestRenewerTicksOnItsOwn(t *testing.T) {
	ctx := context.Background()
	l, _, key := testLocker(t, "renew", ":lock")
	lease, ok, err := l.Acquire(ctx, key, time.Minute, false)
	if !ok || err != nil {
		t.Fatal(err)
	}
	r := l.StartRenewer(ctx, lease, 30*time.Millisecond, 1) // stops after its first renewal
	select {
	case <-r.done:
	case <-time.After(time.Minute):
		t.Fatal("no renewal within a minute")
	}
	if n, err := r.Stop(); n != 1 || err == nil {
		t.Fatalf("renewer: %d renewals, %v", n, err)
	}
}

func TestLedger(t *testing.T) {
	ctx := context.Background()
	pool, err := connect.Postgres(ctx, testenv.Need(t, testenv.Postgres), connect.PostgresOptions{})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { pool.Close() })
	l, err := NewLedger(pool, testenv.UniqueName("ledger"))
	if err != nil {
		t.Fatal(err)
	}
	if err := l.Create(ctx); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { l.Drop(context.Background()) })

	if ok, err := l.Claim(ctx, "k1"); !ok || err != nil {
		t.Fatalf("claim: %v %v", ok, err)
	}
	if ok, _ := l.Claim(ctx, "k1"); ok {
		t.Fatal("claimed twice")
	}
	if err := l.MarkFailed(ctx, "k1", true, "boom"); err != nil {
		t.Fatal(err)
	}
	if ok, _ := l.Claim(ctx, "k1"); !ok {
		t.Fatal("a FAILED key cannot be claimed by the retry")
	}
	if err := l.Commit(ctx, "k1"); err != nil {
		t.Fatal(err)
	}
	// Guarded: SUCCEEDED never regresses.
	if err := l.MarkFailed(ctx, "k1", true, "late"); err != nil {
		t.Fatal(err)
	}
	if st, _ := l.Status(ctx, "k1"); st != worker.StatusSucceeded {
		t.Fatalf("guarded write regressed SUCCEEDED to %s", st)
	}
	// Overwrite: the unsafe variant does regress it.
	if err := l.MarkFailed(ctx, "k1", false, "late"); err != nil {
		t.Fatal(err)
	}
	if st, _ := l.Status(ctx, "k1"); st != worker.StatusFailed {
		t.Fatalf("overwrite left %s", st)
	}
	// Effect + record in one transaction: the second is rolled back.
	e := worker.Effect{BusinessKey: "order-1", IdempotencyKey: "k2", Worker: "W1", Attempt: 1}
	if ok, err := l.EffectTxn(ctx, e); !ok || err != nil {
		t.Fatalf("txn: %v %v", ok, err)
	}
	if ok, err := l.EffectTxn(ctx, e); ok || err != nil {
		t.Fatalf("second txn applied: %v %v", ok, err)
	}
	// Fencing: an older token is rejected after a newer one wrote.
	if ok, _ := l.Effect(ctx, worker.Effect{BusinessKey: "order-2", IdempotencyKey: "k3", Worker: "W2", Attempt: 1, Fence: 5}); !ok {
		t.Fatal("token 5 rejected")
	}
	if ok, _ := l.Effect(ctx, worker.Effect{BusinessKey: "order-2", IdempotencyKey: "k3", Worker: "W1", Attempt: 1, Fence: 4}); ok {
		t.Fatal("stale token 4 accepted")
	}
	per, err := l.EffectsPerKey(ctx)
	if err != nil || per["order-1"] != 1 || per["order-2"] != 1 {
		t.Fatalf("effects per key: %v %v", per, err)
	}
	if st, _ := l.Status(ctx, "absent"); st != worker.StatusAbsent {
		t.Fatalf("absent key: %q", st)
	}
}
