package chaos_test

import (
	"context"
	"errors"
	"io"
	"slices"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/dupctl/dupctl/internal/cause"
	"github.com/dupctl/dupctl/internal/platform/problem"
	"github.com/dupctl/dupctl/internal/sim/chaos"
	"github.com/dupctl/dupctl/internal/testenv"
	"github.com/redis/go-redis/v9"
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

// The real failover: with the workers' Redis behind Sentinels
// (testenv.RedisSentinel: 1 master, 1 replica, 3 Sentinels), dupctl cuts
// the replica off before the victim's SET NX is forwarded, asks the
// Sentinels to fail over once it answered OK, and finds the lock missing
// on the new master. WORK outlasts the failover (1-2 s here), so the
// second holder is granted the lock while the first still works; the TTL
// is far from over, so no expiry can pass for the cause.

// sentinelEpoch is the Sentinels' config epoch of the master: each
// failover raises it, whoever asked for it.
func sentinelEpoch(t *testing.T, s *testenv.Sentinels) int {
	t.Helper()
	c := s.Client(0)
	defer c.Close()
	m, err := c.Master(context.Background(), s.Master).Result()
	if err != nil {
		t.Fatal(err)
	}
	n, err := strconv.Atoi(m["config-epoch"])
	if err != nil {
		t.Fatalf("SENTINEL MASTER: config-epoch %q", m["config-epoch"])
	}
	return n
}

// realFailover checks one run's real failover: the Sentinels failed over
// (the epoch rose), the schedule shows the worker's SET NX answered OK on
// the old master, then the lock key missing on the new one, then another
// worker granted the lock; it returns the event saying the lock was lost.
func realFailover(t *testing.T, res *chaos.Result, rr chaos.RunResult) chaos.Event {
	t.Helper()
	if rr.Fault == nil || !strings.Contains(rr.Fault.Text, "a real Sentinel failover right after the worker took the lock") {
		t.Fatalf("seed %d: the fault is %+v\n%s", rr.Seed, rr.Fault, describe(res))
	}
	var lost *chaos.Event
	var firstLock, secondLock *chaos.Event
	for i, e := range rr.Events {
		switch {
		case e.Kind == "failover" && strings.Contains(e.Text, "-> 0: the lock write was lost"):
			lost = &rr.Events[i]
		case e.Kind == "lock" && e.Seq < rr.Fault.Seq:
			firstLock = &rr.Events[i]
		case e.Kind == "lock" && lost != nil && secondLock == nil && firstLock != nil && e.Lane != firstLock.Lane:
			secondLock = &rr.Events[i]
		}
	}
	if lost == nil || firstLock == nil || secondLock == nil {
		t.Fatalf("seed %d: want the first lock, the lock missing on the new master, then another worker's lock: %v %v %v\n%s",
			rr.Seed, firstLock, lost, secondLock, describe(res))
	}
	if !strings.Contains(firstLock.Text, "NX -> OK") || !strings.Contains(secondLock.Text, "NX -> OK") {
		t.Errorf("seed %d: the two grants are %q and %q", rr.Seed, firstLock.Text, secondLock.Text)
	}
	// The figures docs/benchmarks.md reports (go test -v).
	took, _, _ := strings.Cut(strings.SplitN(lost.Text, ", ", 2)[1], " after")
	waited := "none"
	if _, w, ok := strings.Cut(rr.Events[0].Text, "dupctl waited "); ok {
		waited, _, _ = strings.Cut(w, " ")
	}
	t.Logf("seed %d: %s, lock lost on the new master, %d effects, failover %s, run %d ms, waited for the setup %s", rr.Seed, rr.Outcome,
		rr.Keys[0].Effects, took, rr.ElapsedMs, waited)
	return *lost
}

// TestFailoverSentinelLockOnly: a lock and nothing else, under the real
// failover, twice (the second run waits for the first failover's old
// master to be demoted and in sync again): two charges each, named
// DUP_EFFECT_LOCK_FAILOVER on the evidence of the real failover.
func TestFailoverSentinelLockOnly(t *testing.T) {
	testenv.Need(t, testenv.Redis)
	s := testenv.RedisSentinel(t, testenv.SentinelOptions{Password: "chaos-pw"})
	f := setupRedis(t, s.URL, "failover", "IDEM=none", "WORK=4s", "LOCK_TTL=30s")
	f.opts.Runs, f.opts.Keys = 2*soak(), 1
	epoch := sentinelEpoch(t, s)
	res := f.run(t)
	if got := sentinelEpoch(t, s) - epoch; got != f.opts.Runs {
		t.Errorf("the Sentinels failed over %d times for %d runs\n%s", got, f.opts.Runs, describe(res))
	}
	only(t, res, "DUP "+cause.LockFailover.Code)
	for _, rr := range res.Runs {
		lost := realFailover(t, res, rr)
		k := rr.Keys[0]
		if k.Effects != 2 || !strings.Contains(k.Why, "a real failover") || !slices.Contains(k.Deciding, lost.Seq) {
			t.Errorf("seed %d: %d effects, why %q, deciding %v (want the lost lock, event %d)", rr.Seed, k.Effects, k.Why, k.Deciding, lost.Seq)
		}
		if !slices.ContainsFunc(k.Evidence, func(l string) bool { return strings.Contains(l, "the lock write was lost") }) {
			t.Errorf("seed %d: the evidence does not name the real failover: %v", rr.Seed, k.Evidence)
		}
	}
}

// TestFailoverSentinelSafeFlow: the seed's safe flow (the claim and the
// charge in one transaction) under the same real failover: both workers
// held the lock at once, one charge.
func TestFailoverSentinelSafeFlow(t *testing.T) {
	testenv.Need(t, testenv.Redis)
	s := testenv.RedisSentinel(t, testenv.SentinelOptions{})
	f := setupRedis(t, s.URL, "failover", "WORK=4s", "LOCK_TTL=30s")
	f.opts.Runs, f.opts.Keys = soak(), 1
	epoch := sentinelEpoch(t, s)
	res := f.run(t)
	if got := sentinelEpoch(t, s) - epoch; got != f.opts.Runs {
		t.Errorf("the Sentinels failed over %d times for %d runs\n%s", got, f.opts.Runs, describe(res))
	}
	clean(t, res)
	for _, rr := range res.Runs {
		realFailover(t, res, rr)
	}
}

// TestFailoverSentinelCancelRestores: a run cancelled (Ctrl-C) while the
// replica is being cut off, or once it is cut off and waits for the
// failover (the victim's lock already taken on the master), gives it its
// masterauth back all the same.
func TestFailoverSentinelCancelRestores(t *testing.T) {
	testenv.Need(t, testenv.Redis)
	cases := []struct {
		name string
		// now says when to cancel, given the replica's masterauth and
		// whether the master has the victim's lock.
		now func(masterauth string, locked bool) bool
	}{
		{"during the cut", func(auth string, _ bool) bool { return strings.HasPrefix(auth, "dupctl-cut-") }},
		{"cut, waiting for the failover", func(auth string, locked bool) bool { return strings.HasPrefix(auth, "dupctl-cut-") && locked }},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			s := testenv.RedisSentinel(t, testenv.SentinelOptions{})
			f := setupRedis(t, s.URL, "failover", "IDEM=none", "WORK=4s", "LOCK_TTL=30s")
			f.opts.Runs, f.opts.Keys = 1, 1
			ctx, cancel := context.WithCancel(context.Background())
			defer cancel()
			cut := make(chan struct{})
			go func() {
				m, n := s.Node(s.Servers[0]), s.Node(s.Servers[1])
				defer m.Close()
				defer n.Close()
				for ctx.Err() == nil {
					auth, _ := n.ConfigGet(ctx, "masterauth").Result()
					locked := false
					if id := f.firstID(); id != "" {
						locked = m.Exists(ctx, victimLock(id)).Val() == 1
					}
					if c.now(auth["masterauth"], locked) {
						close(cut)
						cancel()
						return
					}
					time.Sleep(5 * time.Millisecond)
				}
			}()
			_, err := chaos.Run(ctx, f.deps, f.opts)
			select {
			case <-cut:
			default:
				t.Fatalf("the run was never cancelled (run: %v)", err)
			}
			if !errors.Is(err, context.Canceled) {
				t.Errorf("err %v, want the cancel", err)
			}
			for _, addr := range s.Servers {
				n := s.Node(addr)
				auth, err := n.ConfigGet(context.Background(), "masterauth").Result()
				n.Close()
				if err != nil || auth["masterauth"] != "" {
					t.Errorf("%s: masterauth %q (%v), want it back to none", addr, auth["masterauth"], err)
				}
			}
		})
	}
}

// victimLock is goworker's lock key of a run's first (and victim) key.
func victimLock(id string) string {
	return "lock:payment:order:" + id + "-1"
}

// TestFailoverSentinelMissedLockRestores: the replica is cut off before
// the victim's SET NX, but another holder has the lock, so the command
// takes nothing: the replica gets its masterauth back at once (before the
// worker's next try cuts it off again), and the run goes on to a real
// failover once the lock is free.
func TestFailoverSentinelMissedLockRestores(t *testing.T) {
	testenv.Need(t, testenv.Redis)
	s := testenv.RedisSentinel(t, testenv.SentinelOptions{})
	f := setupRedis(t, s.URL, "failover", "IDEM=none", "WORK=4s", "LOCK_TTL=30s")
	f.opts.Runs, f.opts.Keys = 1, 1
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	master, replica := s.Node(s.Servers[0]), s.Node(s.Servers[1])
	defer master.Close()
	defer replica.Close()
	held := make(chan string, 1)
	onStart := f.opts.OnStart
	f.opts.OnStart = func(id string) {
		onStart(id)
		if err := master.Set(ctx, victimLock(id), "another-holder", time.Minute).Err(); err != nil {
			t.Error(err)
		}
		held <- victimLock(id)
	}
	// The replica's masterauth after the first cut's: its own ("") when the
	// missed lock restored it, another cut's when not. Either way the lock
	// is then let go, once the replica is connected to the master again
	// (ROLE): a cut that lands while it is still reconnecting with the
	// right masterauth (the handshake's AUTH sent) does not stop that
	// reconnection, and the lock would then replicate.
	after := make(chan string, 1)
	go func() {
		var lock, first string
		select {
		case lock = <-held:
		case <-ctx.Done():
			return
		}
		defer master.Del(context.Background(), lock)
		for ctx.Err() == nil {
			auth, err := replica.ConfigGet(ctx, "masterauth").Result()
			v := auth["masterauth"]
			switch {
			case err != nil:
			case first == "" && strings.HasPrefix(v, "dupctl-cut-"):
				first = v
			case first != "" && v != first:
				after <- v
				for ctx.Err() == nil {
					if role, err := replica.Do(ctx, "ROLE").Slice(); err == nil && len(role) > 3 && role[3] == "connected" {
						return
					}
					time.Sleep(time.Millisecond)
				}
				return
			}
			time.Sleep(time.Millisecond)
		}
	}()
	res, err := chaos.Run(ctx, f.deps, f.opts)
	cancel()
	if err != nil {
		t.Fatal(err)
	}
	select {
	case v := <-after:
		if v != "" {
			t.Errorf("after the missed lock's cut the replica's masterauth went to %q, want its own (none) back first", v)
		}
	default:
		t.Fatalf("the replica was never cut off, or never given anything else back\n%s", describe(res))
	}
	rr := res.Runs[0]
	if !slices.ContainsFunc(rr.Events, func(e chaos.Event) bool {
		return e.Kind == "replica-restored" && strings.Contains(e.Text, "SET did not take the lock")
	}) {
		t.Errorf("no event says the SET NX took nothing and the replica got its masterauth back\n%s", describe(res))
	}
	realFailover(t, res, rr)
}

// TestFailoverSentinelRefusedConfig: a replica whose ACL refuses CONFIG
// cannot be cut off: the run stops before any worker starts, with the
// error and what to grant, never a failover played at the proxy instead.
func TestFailoverSentinelRefusedConfig(t *testing.T) {
	testenv.Need(t, testenv.Redis)
	s := testenv.RedisSentinel(t, testenv.SentinelOptions{})
	acl(t, s.Node(s.Servers[1]), "-config")
	f := setupRedis(t, s.URL, "failover", "IDEM=none", "WORK=4s", "LOCK_TTL=30s")
	f.opts.Runs, f.opts.Keys = 1, 1
	var workers strings.Builder
	f.opts.WorkerLog = &workers
	_, err := chaos.Run(context.Background(), f.deps, f.opts)
	var sys *problem.Unavailable
	if !errors.As(err, &sys) || !strings.Contains(err.Error(), "CONFIG GET masterauth") || !strings.Contains(sys.Hint, "CONFIG SET") {
		t.Fatalf("err %v (%T), want the refused CONFIG GET with a hint", err, err)
	}
	if workers.Len() > 0 {
		t.Errorf("workers ran: %s", workers.String())
	}
}

// TestFailoverSentinelRefusedCutUpFront: a replica whose ACL lets dupctl
// read its masterauth but refuses a command of the cut stops the run
// before any worker starts, as ACL DRYRUN says; for a user that may not
// ask ACL DRYRUN the refusal comes at the cut, mid-run, and the replica
// gets its masterauth back.
func TestFailoverSentinelRefusedCutUpFront(t *testing.T) {
	testenv.Need(t, testenv.Redis)
	s := testenv.RedisSentinel(t, testenv.SentinelOptions{})
	replica := s.Servers[1]
	f := setupRedis(t, s.URL, "failover", "IDEM=none", "WORK=1s", "LOCK_TTL=30s")
	f.opts.Runs, f.opts.Keys = 1, 1
	cases := []struct {
		rules, want string
		upFront     bool
	}{
		{"-config|set", "CONFIG SET masterauth on " + replica + ": ACL DRYRUN default: This user has no permissions", true},
		{"-client|kill", "CLIENT KILL TYPE master on " + replica + ": ACL DRYRUN default: This user has no permissions", true},
		{"-config|rewrite", "CONFIG REWRITE on " + replica + ": ACL DRYRUN default: This user has no permissions", true},
		// Last: without ACL the rules cannot be taken back.
		{"-client|kill -acl", "CLIENT KILL TYPE master on " + replica + ": NOPERM", false},
	}
	for _, c := range cases {
		rules := strings.Fields(c.rules)
		for _, r := range rules {
			acl(t, s.Node(replica), r)
		}
		started := 0 // workers, as each is given its output file
		f.opts.WorkerFile = func(uint64, int, string) (io.WriteCloser, error) { started++; return discard{}, nil }
		_, err := chaos.Run(context.Background(), f.deps, f.opts)
		var sys *problem.Unavailable
		if !errors.As(err, &sys) || !strings.Contains(err.Error(), c.want) || !strings.Contains(sys.Hint, "CLIENT KILL") {
			t.Errorf("%s: err %v (%T), want %q with a hint", c.rules, err, err, c.want)
		}
		if ran := started > 0; ran == c.upFront {
			t.Errorf("%s: %d workers started, want them to start: %v", c.rules, started, !c.upFront)
		}
		n := s.Node(replica)
		if auth, err := n.ConfigGet(context.Background(), "masterauth").Result(); err != nil || auth["masterauth"] != "" {
			t.Errorf("%s: the replica's masterauth is %q (%v), want none", c.rules, auth["masterauth"], err)
		}
		n.Close()
		if c.upFront {
			acl(t, s.Node(replica), "+"+strings.TrimPrefix(rules[0], "-"))
		}
	}
}

type discard struct{}

func (discard) Write(p []byte) (int, error) { return len(p), nil }
func (discard) Close() error                { return nil }

// TestFailoverSentinelRefusedFailoverRestores: Sentinels that refuse
// SENTINEL FAILOVER fail the run once the replica was cut off and the lock
// taken; the replica gets its masterauth back and syncs again.
func TestFailoverSentinelRefusedFailoverRestores(t *testing.T) {
	testenv.Need(t, testenv.Redis)
	s := testenv.RedisSentinel(t, testenv.SentinelOptions{})
	for i := range s.Sentinels {
		acl(t, redis.NewClient(&redis.Options{Addr: s.Sentinels[i]}), "-sentinel|failover")
	}
	f := setupRedis(t, s.URL, "failover", "IDEM=none", "WORK=4s", "LOCK_TTL=30s")
	f.opts.Runs, f.opts.Keys = 1, 1
	epoch := sentinelEpoch(t, s)
	_, err := chaos.Run(context.Background(), f.deps, f.opts)
	var sys *problem.Unavailable
	if !errors.As(err, &sys) || !strings.Contains(err.Error(), "SENTINEL FAILOVER") || !strings.Contains(sys.Hint, "SENTINEL FAILOVER") {
		t.Fatalf("err %v (%T), want the refused SENTINEL FAILOVER with a hint", err, err)
	}
	if sentinelEpoch(t, s) != epoch {
		t.Error("the Sentinels failed over")
	}
	n := s.Node(s.Servers[1])
	defer n.Close()
	ctx := context.Background()
	if auth, err := n.ConfigGet(ctx, "masterauth").Result(); err != nil || auth["masterauth"] != "" {
		t.Errorf("the replica's masterauth is %q (%v), want it back to none", auth["masterauth"], err)
	}
	deadline := time.Now().Add(20 * time.Second)
	for {
		info, err := n.Info(ctx, "replication").Result()
		if err == nil && strings.Contains(info, "master_link_status:up") {
			break
		}
		if time.Now().After(deadline) {
			t.Fatalf("the replica did not sync again: %v %s", err, info)
		}
		time.Sleep(100 * time.Millisecond)
	}
}

// acl takes rules from the default user of a Redis node or Sentinel.
func acl(t *testing.T, c interface {
	Do(ctx context.Context, args ...any) *redis.Cmd
	Close() error
}, rule string) {
	t.Helper()
	defer c.Close()
	if err := c.Do(context.Background(), "ACL", "SETUSER", "default", rule).Err(); err != nil {
		t.Fatal(err)
	}
}
