package chaos_test

import (
	"slices"
	"strings"
	"testing"

	"github.com/dupctl/dupctl/internal/cause"
	"github.com/dupctl/dupctl/internal/sim/chaos"
)

// Every verdict earned (issue 31): a cause agrees with every line of its
// evidence, a run whose scenario condition did not happen is not reached
// (and tried again), and the new faults - the Redis connection cut after
// the lock, the PostgreSQL connection dropped before the commit - each
// catch the bug they are about.

// A worker whose only "already paid?" check is the status cache, killed
// right after its charge committed: the status was never written, so the
// redelivery's cache read finds nothing and charges again. That is a
// non-atomic commit, whose explanation names the read its evidence shows -
// with or without --cache-keys, the GET is observed on the wire.
func TestCacheOnlyCheckKilledAfterWriteIsNonAtomic(t *testing.T) {
	for _, keys := range []string{"status:*", ""} {
		t.Run("cache-keys="+keys, func(t *testing.T) {
			f := setup(t, "crash", "STATUS=cache")
			f.opts.CacheKeys = keys
			f.opts.At, f.opts.Keys = []chaos.Point{chaos.AfterWrite}, 1
			res := f.run(t)
			only(t, res, chaos.OutcomeDup+" "+cause.NonAtomicCommit.Code)
			k := res.Runs[0].Keys[0]
			read := "GET status:" + k.Key + " -> nil"
			if !hasEvidence(k, read) || !strings.Contains(k.Why, read) || strings.Contains(k.Why, "nothing checked") {
				t.Fatalf("the cause disagrees with its evidence: %q, evidence %q\n%s", k.Why, k.Evidence, describe(res))
			}
		})
	}
}

// notReached fails unless every run ended not reached, with what was
// missing, and nothing else failed.
func notReached(t *testing.T, res *chaos.Result, missing string) {
	t.Helper()
	for _, rr := range res.Runs {
		if rr.Fault != nil || !strings.Contains(rr.Missing, missing) || rr.Failed() {
			t.Fatalf("seed %d: fault %v, outcome %s, missing %q: want not reached with %q\n%s",
				rr.Seed, rr.Fault != nil, rr.Outcome, rr.Missing, missing, describe(res))
		}
	}
	codes := findingCodes(res)
	if len(codes) != len(res.Runs) || slices.ContainsFunc(codes, func(c string) bool { return c != chaos.RuleNotReached.Code }) {
		t.Fatalf("findings %v, want one %s per run", codes, chaos.RuleNotReached.Code)
	}
}

// One worker takes both messages of a race one after the other: the race
// never happened. The run is tried again with the other key as its victim,
// and after the last attempt it is not reached, never "ok".
func TestRaceHandledInTurnIsNotReached(t *testing.T) {
	f := setup(t, "race")
	f.opts.Workers, f.opts.Keys, f.opts.Attempts = 1, 2, 2
	res := f.run(t)
	notReached(t, res, "were handled one after the other, never at once")
	rr := res.Runs[0]
	if len(rr.Attempts) != 1 || rr.Attempts[0].Plan.Victim == rr.Plan.Victim || rr.Plan.Attempt != 2 {
		t.Fatalf("attempts %+v then %+v: want a second attempt on the other key", rr.Attempts, rr.Plan)
	}
	if ev := res.Report().Findings[0].Evidence; len(ev) == 0 || !strings.HasPrefix(ev[0], "attempt 1 (") {
		t.Fatalf("the finding does not list the first attempt: %q", ev)
	}
}

// lock-expiry paused a worker that takes no lock: there was no lock to
// expire, whatever the second message did.
func TestLockExpiryWithoutALockIsNotReached(t *testing.T) {
	f := setup(t, "lock-expiry", "LOCK=off")
	f.opts.At, f.opts.Keys, f.opts.Attempts = []chaos.Point{chaos.BeforeWrite}, 1, 1
	notReached(t, f.run(t), "held no lock on")
}

// stale-cache with --cache-keys naming keys the worker never writes:
// nothing lagged.
func TestStaleCacheWithNothingToLagIsNotReached(t *testing.T) {
	f := setup(t, "stale-cache")
	f.opts.CacheKeys, f.opts.Keys, f.opts.Attempts = "nocache:*", 1, 1
	notReached(t, f.run(t), "was seen, so nothing lagged")
}

// A prefetch above 1 lets the paused worker take lock-expiry's second
// message itself: when no other worker took the expired lock, the run is
// not reached after its attempts - never "reached, ok" for a worker whose
// lock is shorter than its job.
func TestLockExpiryPrefetchNeverOKUnearned(t *testing.T) {
	f := setup(t, "lock-expiry", "PREFETCH=250", "IDEM=check", "LOCK_TTL=300ms", "RENEW=false", "WORK=400ms")
	f.opts.At, f.opts.Keys = []chaos.Point{chaos.AfterLock}, 1
	res := f.run(t)
	t.Log(describe(res))
	rr := res.Runs[0]
	if rr.Fault != nil {
		only(t, res, chaos.OutcomeDup+" "+cause.LockExpiry.Code)
		return
	}
	if !strings.Contains(rr.Missing, "no other worker took the lock") || len(rr.Attempts) != chaos.DefaultAttempts-1 {
		t.Fatalf("not reached with %q after %d attempt(s): want what was missing after %d attempts",
			rr.Missing, len(rr.Attempts)+1, chaos.DefaultAttempts)
	}
}

// A worker that polls a busy lock inside one delivery (redis-py's blocking
// Lock.acquire) sends no nack: the wire shows attempts at the lock and no
// requeue, and the evidence, shortened once the attempts run past nine
// (how many a slow machine makes in the lock's TTL varies), says attempts
// at the lock, never requeued deliveries.
func TestPolledLockEvidenceSaysNoRequeue(t *testing.T) {
	f := setup(t, "lock-expiry", "BUSY=poll", "IDEM=check", "LOCK_TTL=300ms", "RENEW=false", "WORK=400ms")
	f.opts.At, f.opts.Keys = []chaos.Point{chaos.AfterLock}, 1
	res := f.run(t)
	only(t, res, chaos.OutcomeDup+" "+cause.LockExpiry.Code)
	rr := res.Runs[0]
	kinds := map[string]int{}
	for _, e := range rr.Events {
		kinds[e.Kind]++
	}
	k := rr.Keys[0]
	ev := strings.Join(k.Evidence, "\n")
	shortened := hasEvidence(k, "more events from")
	switch {
	case kinds["busy"] == 0 || kinds["requeued"] > 0:
		t.Fatalf("the wire shows %d busy attempts and %d requeues: want attempts and no requeue\n%s",
			kinds["busy"], kinds["requeued"], describe(res))
	case hasEvidence(k, "requeued"):
		t.Fatalf("the evidence says requeued: %q", ev)
	case shortened && !hasEvidence(k, "at the lock that found it busy while the delivery stayed open"):
		t.Fatalf("the shortened evidence does not say attempts at the lock: %q", ev)
	case !shortened && !hasEvidence(k, "NX -> busy"):
		t.Fatalf("the evidence shows no attempt at the lock: %q", ev)
	}
	t.Logf("%d busy attempts, evidence shortened: %v", kinds["busy"], shortened)
}

// cutCase runs redelivery at after-lock: dupctl cuts the worker's Redis
// connection right after it took the lock, for the lock's TTL plus a
// margin, and publishes a second message.
func cutCase(t *testing.T, switches ...string) *chaos.Result {
	t.Helper()
	f := setup(t, "redelivery", switches...)
	f.opts.At, f.opts.Keys = []chaos.Point{chaos.AfterLock}, 1
	res := f.run(t)
	t.Log(describe(res))
	rr := res.Runs[0]
	if rr.Fault == nil || !strings.Contains(rr.Fault.Text, "drops the worker's Redis connections right after it took the lock") {
		t.Fatalf("the cut was not reached: %q\n%s", rr.Missing, describe(res))
	}
	return res
}

// A job shorter than the lock's TTL is done before the cut lock expires:
// another worker takes it afterwards, and finds the work done.
func TestRedisCutAfterLockSafeFlow(t *testing.T) {
	res := cutCase(t)
	clean(t, res)
	if codes := findingCodes(res); len(codes) > 0 {
		t.Fatalf("findings %v", codes)
	}
}

// A job longer than the TTL, whose renewals fail unnoticed: the worker
// writes after another took the lock. The idempotency claim stops the
// second charge, but the lock was worth nothing: a finding.
func TestRedisCutLockLostUnnoticed(t *testing.T) {
	res := cutCase(t, "LOCK_TTL=300ms", "WORK=700ms")
	rr := res.Runs[0]
	if rr.Failed() || len(rr.LockLost) != 1 || !slices.Equal(findingCodes(res), []string{chaos.RuleLockLost.Code}) {
		t.Fatalf("outcome %s, lock lost %+v, findings %v: want ok and one %s",
			rr.Outcome, rr.LockLost, findingCodes(res), chaos.RuleLockLost.Code)
	}
	if !strings.Contains(rr.LockLost[0].Why, "went on as its holder") {
		t.Fatalf("why %q", rr.LockLost[0].Why)
	}
}

// The same worker, stopping the job when a renewal fails: it requeues the
// message and the next holder charges once.
func TestRedisCutLockLostNoticed(t *testing.T) {
	res := cutCase(t, "LOCKLOST=abort", "LOCK_TTL=300ms", "WORK=700ms")
	clean(t, res)
	if codes := findingCodes(res); len(codes) > 0 {
		t.Fatalf("findings %v", codes)
	}
}

// With a SELECT-then-act check instead of a claim, the unnoticed loss is a
// duplicate: the lock expired while its cut-off holder still worked.
func TestRedisCutCheckThenActIsLockExpiry(t *testing.T) {
	res := cutCase(t, "IDEM=check", "LOCK_TTL=300ms", "WORK=700ms")
	only(t, res, chaos.OutcomeDup+" "+cause.LockExpiry.Code)
	k := res.Runs[0].Keys[0]
	if !strings.Contains(k.Why, "dupctl had cut its Redis connection") || !slices.Contains(findingCodes(res), chaos.RuleLockLost.Code) {
		t.Fatalf("why %q, findings %v", k.Why, findingCodes(res))
	}
}

// commitCase runs redelivery at before-commit: dupctl withholds the COMMIT
// of the worker's transaction and drops its PostgreSQL connection.
func commitCase(t *testing.T, switches ...string) *chaos.Result {
	t.Helper()
	f := setup(t, "redelivery", switches...)
	f.opts.At, f.opts.Keys = []chaos.Point{chaos.BeforeCommit}, 1
	return f.run(t)
}

// The safe flow's transaction is rolled back; the worker fails, the
// broker redelivers, the next attempt charges once.
func TestCommitDroppedSafeFlow(t *testing.T) {
	res := commitCase(t)
	clean(t, res)
	if f := res.Runs[0].Fault; !strings.Contains(f.Text, "the server rolls the transaction back") {
		t.Fatalf("fault %q", f.Text)
	}
}

// A worker that acks a failed job: the rolled-back charge is lost.
func TestCommitDroppedErrorAckedIsLoss(t *testing.T) {
	res := commitCase(t, "ONERROR=ack")
	only(t, res, chaos.OutcomeLoss+" "+chaos.RuleLoss.Code)
	if k := res.Runs[0].Keys[0]; !strings.Contains(k.Why, "before its COMMIT") {
		t.Fatalf("why %q", k.Why)
	}
}

// A worker that writes with autocommit has no COMMIT to withhold.
func TestCommitDroppedAutocommitNotReached(t *testing.T) {
	res := commitCase(t, "IDEM=check")
	rr := res.Runs[0]
	if rr.Fault != nil || rr.Failed() || !strings.Contains(res.Report().Findings[0].Message, "autocommit") {
		t.Fatalf("fault %v, outcome %s, findings %+v", rr.Fault, rr.Outcome, res.Report().Findings)
	}
}
