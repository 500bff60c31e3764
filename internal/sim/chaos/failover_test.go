package chaos_test

import (
	"slices"
	"strings"
	"testing"

	"github.com/dupctl/dupctl/internal/cause"
	"github.com/dupctl/dupctl/internal/sim/chaos"
	"github.com/dupctl/dupctl/internal/testenv"
)

// The failover scenario on goworker: right after a worker's SET NX for the
// victim's lock answered OK, dupctl plays a Redis failover at the proxy (the
// lock key deleted, every worker's Redis connection dropped) and publishes
// a second copy; the other worker is granted the same lock while the first
// still works. WORK is long enough for the second copy to arrive meanwhile.

// TestFailoverLockOnlyRunsTheEffectTwice: a lock and nothing else (no
// idempotency record) runs the charge twice, and the cause is the lock
// lost in the failover - not an expiry (the TTL is far from over), not
// unexplained.
func TestFailoverLockOnlyRunsTheEffectTwice(t *testing.T) {
	f := setup(t, "failover", "IDEM=none", "WORK=400ms", "LOCK_TTL=5s")
	f.opts.Runs, f.opts.Keys = 2, 1
	res := f.run(t)
	only(t, res, "DUP "+cause.LockFailover.Code)
	for _, rr := range res.Runs {
		if rr.Fault == nil || !strings.Contains(rr.Fault.Text, "Redis fails over right after the worker took the lock") {
			t.Fatalf("seed %d: the fault is %+v\n%s", rr.Seed, rr.Fault, describe(res))
		}
		k := rr.Keys[0]
		if k.Effects != 2 || !strings.Contains(k.Why, "before the lock replicated") || !strings.Contains(k.Why, "granted the same lock to") {
			t.Errorf("seed %d: %d effects, why %q", rr.Seed, k.Effects, k.Why)
		}
		if !slices.Contains(k.Deciding, rr.Fault.Seq) || len(k.Deciding) != 3 {
			t.Errorf("seed %d: the cause rests on %v, want the first lease, the failover (%d) and the second lease",
				rr.Seed, k.Deciding, rr.Fault.Seq)
		}
	}
	fixes := 0
	for _, fd := range res.Report().Findings {
		if fd.Code == cause.LockFailover.Code {
			fixes++
			if !strings.Contains(fd.Fix, "fencing token") {
				t.Errorf("fix %q does not name the fencing token", fd.Fix)
			}
		}
	}
	if fixes == 0 {
		t.Errorf("no %s finding in the report", cause.LockFailover.Code)
	}
}

// TestFailoverLockThenCheck: the simulator's faulty profile for failover
// (lock, then SELECT-then-act): the second holder checks before the first
// committed, and charges too.
func TestFailoverLockThenCheck(t *testing.T) {
	f := setup(t, "failover", "IDEM=check", "WORK=400ms", "LOCK_TTL=5s")
	f.opts.Runs, f.opts.Keys = 1, 1
	only(t, f.run(t), "DUP "+cause.LockFailover.Code)
}

// TestFailoverSafeFlow: the same failover on the seed's safe flow (the
// idempotency claim and the charge in one transaction) charges once, and
// the run reached its condition: both workers held the lock at once.
func TestFailoverSafeFlow(t *testing.T) {
	f := setup(t, "failover", "WORK=400ms", "LOCK_TTL=5s")
	f.opts.Runs, f.opts.Keys = 2, 1
	res := f.run(t)
	clean(t, res)
	for _, rr := range res.Runs {
		holders := map[string]bool{}
		for _, l := range rr.Leases {
			holders[l.Lane] = true
		}
		if len(holders) < 2 {
			t.Errorf("seed %d: the lock was held by %v only\n%s", rr.Seed, holders, describe(res))
		}
	}
}

// TestFailoverNotReachedIsNoPass: with one worker the second copy waits
// for the first holder to finish, so no one else is granted the lost
// lock: the run proves nothing, and says so instead of passing.
func TestFailoverNotReachedIsNoPass(t *testing.T) {
	f := setup(t, "failover", "WORK=100ms", "LOCK_TTL=5s")
	f.opts.Runs, f.opts.Keys, f.opts.Workers, f.opts.Attempts = 1, 1, 1, 1
	res := f.run(t)
	rr := res.Runs[0]
	if rr.Fault != nil || !strings.Contains(rr.Missing, "no other worker took the lock") {
		t.Fatalf("fault %+v, missing %q: want the run not reached\n%s", rr.Fault, rr.Missing, describe(res))
	}
	found := false
	for _, fd := range res.Report().Findings {
		found = found || fd.Code == chaos.RuleNotReached.Code
	}
	if !found {
		t.Errorf("no %s finding: a run whose failover lost nothing passed", chaos.RuleNotReached.Code)
	}
}

// TestFailoverBehindSentinel: with the workers' Redis behind Sentinels
// (testenv.RedisSentinel), the failover is still played at the proxy - the
// lock key deleted on the master the Sentinels name, whose command count
// shows the workers' traffic reached it - and named the same way.
func TestFailoverBehindSentinel(t *testing.T) {
	testenv.Need(t, testenv.Redis)
	s := testenv.RedisSentinel(t, testenv.SentinelOptions{Password: "chaos-pw"})
	f := setupRedis(t, s.URL, "failover", "IDEM=none", "WORK=400ms", "LOCK_TTL=5s")
	f.opts.Runs, f.opts.Keys = 1, 1
	n := s.Node(s.MasterAddr(t))
	defer n.Close()
	before := commandsOn(t, n)
	only(t, f.run(t), "DUP "+cause.LockFailover.Code)
	if cmds := commandsOn(t, n) - before; cmds < 10 {
		t.Errorf("the master served %d commands during the run: the workers' traffic did not reach it", cmds)
	}
}
