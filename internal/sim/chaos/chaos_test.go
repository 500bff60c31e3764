package chaos_test

import (
	"context"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"runtime"
	"slices"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/dupctl/dupctl/internal/cause"
	"github.com/dupctl/dupctl/internal/platform/config"
	"github.com/dupctl/dupctl/internal/platform/connect"
	"github.com/dupctl/dupctl/internal/platform/findings"
	"github.com/dupctl/dupctl/internal/sim/chaos"
	"github.com/dupctl/dupctl/internal/testenv"
	"github.com/redis/go-redis/v9"
)

var (
	binDir    string
	buildOnce sync.Once
	workerBin string
	buildErr  error
)

func TestMain(m *testing.M) {
	dir, err := os.MkdirTemp("", "dupctl-chaos-worker")
	if err != nil {
		panic(err)
	}
	binDir = dir
	code := m.Run()
	os.RemoveAll(dir)
	os.Exit(code)
}

// worker builds testdata/workers/goworker once per test binary.
func worker(t *testing.T) string {
	t.Helper()
	buildOnce.Do(func() {
		workerBin = filepath.Join(binDir, "goworker")
		out, err := exec.Command("go", "build", "-o", workerBin, "../../../testdata/workers/goworker").CombinedOutput()
		if err != nil {
			buildErr = fmt.Errorf("build goworker: %v\n%s", err, out)
		}
	})
	if buildErr != nil {
		t.Fatal(buildErr)
	}
	return workerBin
}

type fixture struct {
	deps chaos.Deps
	opts chaos.Options
	mu   sync.Mutex
	ids  []string // the runs' ids, as OnStart learns them
}

func (f *fixture) firstID() string {
	f.mu.Lock()
	defer f.mu.Unlock()
	if len(f.ids) == 0 {
		return ""
	}
	return f.ids[0]
}

// setup connects to the real services, creates the worker's tables and
// returns options that run goworker with the given switches.
func setup(t *testing.T, scenario string, switches ...string) *fixture {
	t.Helper()
	return setupRedis(t, testenv.Need(t, testenv.Redis), scenario, switches...)
}

// setupRedis is setup with the workers' Redis at redisURL.
func setupRedis(t *testing.T, redisURL, scenario string, switches ...string) *fixture {
	t.Helper()
	amqpURL := testenv.Need(t, testenv.AMQP)
	pgURL := testenv.Need(t, testenv.Postgres)
	bin := worker(t)
	ctx := context.Background()
	ac, err := connect.AMQP(ctx, amqpURL)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { ac.Close() })
	rdb, err := connect.Redis(ctx, redisURL)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { rdb.Close() })
	pool, err := connect.Postgres(ctx, pgURL, connect.PostgresOptions{MaxConns: 4})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(pool.Close)
	tbl := testenv.UniqueName("chaos")
	const schema = `create table %[1]s_charges (order_id text not null, idempotency_key text, worker text, at timestamptz default now());
		create table %[1]s_idem (key text primary key, status text not null)`
	if _, err := pool.Exec(ctx, fmt.Sprintf(schema, tbl)); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		pool.Exec(context.Background(), fmt.Sprintf("drop table %[1]s_charges; drop table %[1]s_idem", tbl))
	})
	f := &fixture{deps: chaos.Deps{AMQP: ac, Redis: rdb, Postgres: pool}}
	env := []string{"AMQP_URL={amqp}", "REDIS_URL={redis}", "DATABASE_URL={postgres}", "QUEUE={prefix}.orders",
		"CHARGES=" + tbl + "_charges", "IDEM_TABLE=" + tbl + "_idem", "WORKER=W{worker}", "WORK=50ms", "LOCK_TTL=500ms"}
	f.opts = chaos.Options{
		Scenario: scenario, Worker: bin, Workers: 2, Env: append(env, switches...),
		Publish: ":{prefix}.orders", Keys: 2,
		EffectsSQL: "select order_id, count(*), count(distinct idempotency_key) from " + tbl + "_charges group by 1",
		// The command line's limits (--ready-timeout, --run-timeout): a run
		// ends when it settles, so they only bound one that never does.
		CacheKeys: "status:*", Settle: 300 * time.Millisecond, RunTimeout: 2 * time.Minute, ReadyTimeout: time.Minute,
		AMQPURL: amqpURL, RedisURL: redisURL, DatabaseURL: pgURL,
		Replay:  func(seed uint64) string { return fmt.Sprintf("--seed %d", seed) },
		OnStart: func(id string) { f.mu.Lock(); f.ids = append(f.ids, id); f.mu.Unlock() },
	}
	if testing.Verbose() {
		f.opts.WorkerLog = os.Stderr
	}
	return f
}

func (f *fixture) run(t *testing.T) *chaos.Result {
	t.Helper()
	res, err := chaos.Run(context.Background(), f.deps, f.opts)
	if err != nil {
		t.Fatal(err)
	}
	f.checkCleanedUp(t)
	return res
}

// checkCleanedUp: no queue or key with a run's id survives it.
func (f *fixture) checkCleanedUp(t *testing.T) {
	t.Helper()
	ctx := context.Background()
	for _, id := range f.ids {
		keys, _ := f.deps.Redis.Keys(ctx, "*"+id+"*").Result()
		if len(keys) > 0 {
			t.Errorf("run %s left Redis keys %v", id, keys)
		}
		ch, err := f.deps.AMQP.Channel()
		if err != nil {
			t.Fatal(err)
		}
		if _, err := ch.QueueDeclarePassive(id+".orders", true, false, false, false, nil); err == nil {
			t.Errorf("run %s left queue %s.orders", id, id)
		}
		ch.Close()
	}
}

func describe(res *chaos.Result) string {
	var b strings.Builder
	for _, rr := range res.Runs {
		fmt.Fprintf(&b, "seed %d: %s (%s)\n", rr.Seed, rr.Outcome, rr.Plan)
		for _, k := range rr.Keys {
			fmt.Fprintf(&b, "  %s effects=%d %s %s %s\n", k.Key, k.Effects, k.Outcome, k.Cause, k.Why)
		}
		if rr.Fault == nil {
			b.WriteString("  fault not reached: " + rr.Missing + "\n")
		}
		for _, a := range rr.Attempts {
			fmt.Fprintf(&b, "  attempt %d (%s): %s\n", a.Plan.Attempt, a.Plan, a.Missing)
		}
		for _, l := range rr.LockLost {
			b.WriteString("  lock lost: " + l.Why + "\n")
		}
		for _, e := range rr.Events {
			fmt.Fprintf(&b, "    %s\n", e.Line())
		}
	}
	return b.String()
}

// causes counts the duplicate causes and losses over all runs.
func causes(res *chaos.Result) map[string]int {
	out := map[string]int{}
	for _, rr := range res.Runs {
		for _, k := range rr.Keys {
			if k.Outcome != chaos.OutcomeOK {
				out[k.Outcome+" "+k.Cause]++
			}
		}
	}
	return out
}

func TestCrashNoIdempotencyIsARedeliveryDuplicate(t *testing.T) {
	f := setup(t, "crash", "IDEM=none")
	f.opts.At = []chaos.Point{chaos.BeforeAck}
	res := f.run(t)
	got := causes(res)
	if got["DUP "+cause.Redelivery.Code] != 1 || len(got) != 1 {
		t.Fatalf("causes %v, want one redelivery duplicate\n%s", got, describe(res))
	}
	t.Log(describe(res))
	if res.Runs[0].Replay != "--seed 0" {
		t.Errorf("replay %q", res.Runs[0].Replay)
	}
}

// only fails unless every non-ok key of every run has the wanted outcome
// and cause, and at least one has.
func only(t *testing.T, res *chaos.Result, want string) {
	t.Helper()
	got := causes(res)
	if got[want] == 0 || len(got) != 1 {
		t.Fatalf("outcomes %v, want only %q\n%s", got, want, describe(res))
	}
}

// clean fails on any duplicate, loss or fault point not reached.
func clean(t *testing.T, res *chaos.Result) {
	t.Helper()
	for _, rr := range res.Runs {
		if rr.Failed() || rr.Fault == nil || rr.Unsettled != "" {
			t.Fatalf("safe flow: seed %d %s (fault reached: %v, unsettled: %q)\n%s",
				rr.Seed, rr.Outcome, rr.Fault != nil, rr.Unsettled, describe(res))
		}
	}
}

func TestCrashUnstableKeyIsCaughtByItsKey(t *testing.T) {
	f := setup(t, "crash", "KEY=attempt")
	f.opts.At = []chaos.Point{chaos.BeforeAck}
	only(t, f.run(t), "DUP "+cause.UnstableKey.Code)
}

// Without the effects query's third column, the proxy's view of the
// committed parameter values still names the unstable key.
func TestUnstableKeyFromTheWireAlone(t *testing.T) {
	f := setup(t, "unstable-key", "KEY=attempt")
	f.opts.EffectsSQL = strings.Replace(f.opts.EffectsSQL, ", count(distinct idempotency_key)", "", 1)
	f.opts.At = []chaos.Point{chaos.BeforeAck}
	only(t, f.run(t), "DUP "+cause.UnstableKey.Code)
}

func TestCrashAckFirstIsLoss(t *testing.T) {
	f := setup(t, "crash", "ACK=first")
	f.opts.At = []chaos.Point{chaos.BeforeWrite}
	only(t, f.run(t), "LOSS "+chaos.RuleLoss.Code)
}

func TestCrashSafeFlowAtEveryPoint(t *testing.T) {
	f := setup(t, "crash")
	f.opts.Runs = len(chaos.AllPoints()) * soak()
	clean(t, f.run(t))
}

func TestRedeliveryAfterBrokerCloseNoIdempotency(t *testing.T) {
	f := setup(t, "redelivery", "IDEM=none")
	f.opts.At = []chaos.Point{chaos.BeforeAck, chaos.AfterWrite}
	only(t, f.run(t), "DUP "+cause.Redelivery.Code)
}

func TestLockExpiryShortTTLWithoutRenewal(t *testing.T) {
	f := setup(t, "lock-expiry", "IDEM=check", "LOCK_TTL=300ms", "RENEW=false", "WORK=400ms")
	f.opts.Runs, f.opts.Keys = 2, 1
	only(t, f.run(t), "DUP "+cause.LockExpiry.Code)
}

func TestLockExpiryPlainDelUnlock(t *testing.T) {
	f := setup(t, "lock-expiry", "IDEM=check", "UNLOCK=del", "LOCK_TTL=600ms")
	f.opts.Runs, f.opts.Keys = 2, 1
	res := f.run(t)
	only(t, res, "DUP "+cause.UnlockNoToken.Code)
	t.Log(describe(res))
	rep := res.Report()
	foreign := 0
	for _, fd := range rep.Findings {
		if fd.Code == chaos.RuleForeignUnlock.Code {
			foreign++
		}
	}
	if foreign == 0 {
		t.Fatalf("no %s finding\n%s", chaos.RuleForeignUnlock.Code, describe(res))
	}
}

// TestLockExpiryBehindSentinel: the workers' Redis is the master three
// Sentinels name (testenv.RedisSentinel, a password on the data nodes):
// the proxy dials the master the Sentinels name, the workers get a plain
// redis:// URL of the proxy, and the lock expiry is seen on the wire and
// named as the duplicate's cause - as against a standalone Redis.
func TestLockExpiryBehindSentinel(t *testing.T) {
	testenv.Need(t, testenv.Redis)
	s := testenv.RedisSentinel(t, testenv.SentinelOptions{Password: "chaos-pw"})
	f := setupRedis(t, s.URL, "lock-expiry", "IDEM=check", "LOCK_TTL=300ms", "RENEW=false", "WORK=400ms")
	f.opts.Runs, f.opts.Keys = 1, 1
	n := s.Node(s.MasterAddr(t))
	defer n.Close()
	before := commandsOn(t, n)
	only(t, f.run(t), "DUP "+cause.LockExpiry.Code)
	if cmds := commandsOn(t, n) - before; cmds < 10 {
		t.Errorf("the master served %d commands during the run: the workers' traffic did not reach it", cmds)
	}
}

// commandsOn is the number of commands a Redis server has processed.
func commandsOn(t *testing.T, c interface {
	Info(ctx context.Context, section ...string) *redis.StringCmd
}) int64 {
	t.Helper()
	info, err := c.Info(context.Background(), "stats").Result()
	if err != nil {
		t.Fatal(err)
	}
	for _, line := range strings.Split(info, "\n") {
		if v, ok := strings.CutPrefix(strings.TrimSpace(line), "total_commands_processed:"); ok {
			n, _ := strconv.ParseInt(v, 10, 64)
			return n
		}
	}
	t.Fatal("no total_commands_processed in INFO stats")
	return 0
}

func TestLockExpirySafeFlow(t *testing.T) {
	f := setup(t, "lock-expiry", "LOCK_TTL=300ms")
	f.opts.Runs, f.opts.Keys = 2*soak(), 1
	clean(t, f.run(t))
}

func TestStaleCacheStatusFromCache(t *testing.T) {
	f := setup(t, "stale-cache", "STATUS=cache")
	f.opts.Keys, f.opts.CacheLag = 1, 700*time.Millisecond
	only(t, f.run(t), "DUP "+cause.StaleCache.Code)
}

func TestStaleCacheSafeFlow(t *testing.T) {
	f := setup(t, "stale-cache")
	f.opts.Keys, f.opts.CacheLag, f.opts.Runs = 1, 700*time.Millisecond, soak()
	clean(t, f.run(t))
}

// soak is how many times the safe flows repeat each point: 1 in CI,
// DUPCTL_CHAOS_SOAK for a longer run.
func soak() int {
	if n, err := strconv.Atoi(os.Getenv("DUPCTL_CHAOS_SOAK")); err == nil && n > 0 {
		return n
	}
	return 1
}

// TestInterruptCleansUp cancels a run while one worker is stopped
// (SIGSTOP) mid-message, as Ctrl-C does: no worker process, queue or key
// of the run may survive.
func TestInterruptCleansUp(t *testing.T) {
	if runtime.GOOS != "linux" {
		t.Skip("reads /proc to find the worker processes")
	}
	f := setup(t, "lock-expiry")
	f.opts.Keys, f.opts.Pause = 1, time.Minute
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	stopped := make(chan struct{})
	go func() {
		// cancel once the fault (the long pause) has begun
		for {
			time.Sleep(20 * time.Millisecond)
			if id := f.firstID(); id != "" && pausedProcess(id) {
				close(stopped)
				cancel()
				return
			}
		}
	}()
	_, err := chaos.Run(ctx, f.deps, f.opts)
	select {
	case <-stopped:
	default:
		t.Fatalf("the run ended before the pause (err %v)", err)
	}
	if !errors.Is(err, context.Canceled) {
		t.Fatalf("err %v, want context.Canceled", err)
	}
	if ps := workersOf(f.firstID()); len(ps) > 0 {
		t.Fatalf("worker processes %v survived the interrupt", ps)
	}
	f.checkCleanedUp(t)
}

// workersOf lists the processes whose environment names the run's id.
func workersOf(id string) []string {
	var out []string
	dirs, _ := os.ReadDir("/proc")
	for _, d := range dirs {
		env, err := os.ReadFile(filepath.Join("/proc", d.Name(), "environ"))
		if err == nil && strings.Contains(string(env), "QUEUE="+id+".orders") {
			out = append(out, d.Name())
		}
	}
	return out
}

// pausedProcess reports whether one of the run's workers is stopped (state T).
func pausedProcess(id string) bool {
	for _, pid := range workersOf(id) {
		stat, err := os.ReadFile(filepath.Join("/proc", pid, "stat"))
		if i := strings.LastIndexByte(string(stat), ')'); err == nil && i > 0 && i+2 < len(stat) && stat[i+2] == 'T' {
			return true
		}
	}
	return false
}

// TestProveJobCitesTheRun is the API doctor calls with a dupctl.yaml job.
func TestProveJobCitesTheRun(t *testing.T) {
	f := setup(t, "")
	job := config.Job{Name: "payment", Worker: &config.Worker{
		Command: f.opts.Worker, Env: append(f.opts.Env, "IDEM=none"), Publish: f.opts.Publish, EffectsSQL: f.opts.EffectsSQL,
	}}
	base := f.opts
	base.Worker, base.Env, base.Publish, base.EffectsSQL = "", nil, "", ""
	p, err := chaos.ProveJob(context.Background(), f.deps, chaos.ProveOptions{Job: job, Base: base, Scenarios: []string{"redelivery"}})
	if err != nil {
		t.Fatal(err)
	}
	if p.Passed() {
		t.Fatalf("a worker without idempotency passed: %s", p.Summary())
	}
	// One run per point of the scenario: the ack withheld, the commit's
	// reply lost, the Redis connection cut after the lock, the COMMIT
	// withheld. Without idempotency each redelivery charges again, and
	// so does the second message another worker takes the lock for once
	// the cut one's expired (a lock expiry when the cut worker still held
	// its message then, else unexplained: nothing checked); a worker that
	// writes with autocommit has no COMMIT to withhold.
	head := "job payment (" + f.opts.Worker + "): redelivery 3/4 points: redelivery: 3 duplicate(s), 0 loss(es) (DUP_EFFECT_REDELIVERY, "
	got := p.Summary()
	if !strings.HasPrefix(got, head) || !strings.HasSuffix(got, "; seeds 0, 1, 2)") ||
		!strings.Contains(got, cause.LockExpiry.Code) && !strings.Contains(got, cause.RuleUnexplained.Code) {
		t.Fatalf("summary\n got %s\nwant %s{%s|%s}; seeds 0, 1, 2)", got, head, cause.LockExpiry.Code, cause.RuleUnexplained.Code)
	}
	if n := len(p.Report().Findings); n != 4 {
		t.Fatalf("%d findings, want one per duplicated run and the point not reached", n)
	}
}

// Counted in the workers' own output instead of the effects query, the
// same bugs get the same verdicts, and the counts agree with the table.
func TestEffectsCountedInTheWorkersOutput(t *testing.T) {
	f := setup(t, "crash", "IDEM=none")
	query := f.opts.EffectsSQL
	f.opts.EffectsSQL, f.opts.EffectsLog = "", chaos.WorkerOutput
	f.opts.At = []chaos.Point{chaos.BeforeAck}
	res := f.run(t)
	only(t, res, "DUP "+cause.Redelivery.Code)
	rows, err := f.deps.Postgres.Query(context.Background(), query)
	if err != nil {
		t.Fatal(err)
	}
	inTable := map[string]int{}
	for rows.Next() {
		var key string
		var n, idem int
		if err := rows.Scan(&key, &n, &idem); err != nil {
			t.Fatal(err)
		}
		inTable[key] = n
	}
	if rows.Err() != nil {
		t.Fatal(rows.Err())
	}
	for _, k := range res.Runs[0].Keys {
		if k.Effects != inTable[k.Key] {
			t.Errorf("%s: %d effects in the log, %d rows in the table", k.Key, k.Effects, inTable[k.Key])
		}
	}
}

// The idempotency keys on the effect lines tell an unstable key.
func TestEffectsLogUnstableKey(t *testing.T) {
	f := setup(t, "crash", "KEY=attempt")
	f.opts.EffectsSQL, f.opts.EffectsLog = "", chaos.WorkerOutput
	f.opts.At = []chaos.Point{chaos.BeforeAck}
	res := f.run(t)
	only(t, res, "DUP "+cause.UnstableKey.Code)
	for _, k := range res.Runs[0].Keys {
		if k.Outcome == chaos.OutcomeDup && (k.IdemKeys == nil || *k.IdemKeys != 2) {
			t.Errorf("%s: idempotency keys %v, want 2 read off its effect lines", k.Key, k.IdemKeys)
		}
	}
}

// Two messages for one order at once, no lock, a SELECT-then-act check:
// both workers pass the check before either commits.
func TestRaceWithoutLockIsARace(t *testing.T) {
	f := setup(t, "race", "IDEM=check", "LOCK=off", "WORK=400ms")
	f.opts.Keys = 1
	only(t, f.run(t), "DUP "+cause.Race.Code)
}

// The safe consumer flow absorbs the same race: the lock serialises the two
// messages and the claim in one transaction stops the second.
func TestRaceSafeFlow(t *testing.T) {
	f := setup(t, "race")
	f.opts.Keys, f.opts.Runs = 1, soak()
	clean(t, f.run(t))
}

// The reply to the worker's first committed write is lost with its
// PostgreSQL connection: the charge is durable, the worker fails before
// it records the status, and the broker redelivers. A SELECT-then-act
// check finds nothing and charges again.
func TestCommitReplyLostCheckThenAct(t *testing.T) {
	f := setup(t, "redelivery", "IDEM=check")
	f.opts.At, f.opts.Keys = []chaos.Point{chaos.AfterWrite}, 1
	res := f.run(t)
	t.Log(describe(res))
	only(t, res, "DUP "+cause.NonAtomicCommit.Code)
	if rr := res.Runs[0]; rr.Fault == nil || !strings.Contains(rr.Fault.Text, "drops its PostgreSQL connection") {
		t.Fatalf("fault %+v, want the dropped connection", rr.Fault)
	}
}

// The safe consumer flow claims and charges in one transaction: the
// redelivery finds the claim.
func TestCommitReplyLostSafeFlow(t *testing.T) {
	f := setup(t, "redelivery")
	f.opts.At, f.opts.Keys, f.opts.Runs = []chaos.Point{chaos.AfterWrite}, 1, soak()
	clean(t, f.run(t))
}

// shellWorker points the fixture at testdata/workers/shworker: RabbitMQ's
// C client (amqp-tools) and psql's simple query protocol, with the key as
// a literal in the SQL, instead of goworker's amqp091-go and pgx.
func shellWorker(t *testing.T, f *fixture, idem string) {
	t.Helper()
	for _, tool := range []string{"amqp-consume", "amqp-declare-queue", "psql"} {
		if _, err := exec.LookPath(tool); err != nil {
			if testenv.Required() {
				t.Fatalf("the shell worker needs %s (Debian: amqp-tools, postgresql-client): %v", tool, err)
			}
			t.Skipf("the shell worker needs %s (Debian: amqp-tools, postgresql-client)", tool)
		}
	}
	abs, err := filepath.Abs("../../../testdata/workers/shworker/worker.sh")
	if err != nil {
		t.Fatal(err)
	}
	f.opts.Worker = abs
	var env []string
	for _, e := range f.opts.Env {
		if !strings.HasPrefix(e, "AMQP_URL=") && !strings.HasPrefix(e, "REDIS_URL=") {
			env = append(env, e)
		}
	}
	f.opts.Env = append(env, "AMQP_HOST={amqp_host}", "AMQP_PORT={amqp_port}", "IDEM="+idem, "WORK=0.05")
}

func TestShellWorkerNoIdempotencyIsARedeliveryDuplicate(t *testing.T) {
	f := setup(t, "crash")
	shellWorker(t, f, "none")
	f.opts.At, f.opts.Keys = []chaos.Point{chaos.BeforeAck}, 1
	only(t, f.run(t), "DUP "+cause.Redelivery.Code)
}

// The safe flow at every point the shell worker reaches (it takes no
// lock).
func TestShellWorkerSafeFlow(t *testing.T) {
	f := setup(t, "crash")
	shellWorker(t, f, "txn")
	f.opts.At = []chaos.Point{chaos.AfterReceive, chaos.BeforeWrite, chaos.AfterWrite, chaos.BeforeAck, chaos.AfterAck}
	f.opts.Runs, f.opts.Keys = len(f.opts.At)*soak(), 1
	clean(t, f.run(t))
}

// Counted in the log, the after-write kill leaves the victim's effect
// unlogged: the shell worker commits, then logs. The verdict says the log
// cannot tell, never "lost".
func TestShellWorkerEffectsLogAfterWriteIsUncounted(t *testing.T) {
	f := setup(t, "crash")
	shellWorker(t, f, "txn")
	f.opts.At, f.opts.Keys = []chaos.Point{chaos.AfterWrite}, 1
	f.opts.EffectsSQL, f.opts.EffectsLog = "", chaos.WorkerOutput
	res := f.run(t)
	k := res.Runs[0].Keys[0]
	if k.Outcome != chaos.OutcomeUndecided || k.Cause != chaos.RuleUncounted.Code {
		t.Fatalf("key %+v, want uncounted\n%s", k, describe(res))
	}
	if codes := findingCodes(res); !slices.Equal(codes, []string{chaos.RuleUncounted.Code}) {
		t.Fatalf("findings %v, want only %s", codes, chaos.RuleUncounted.Code)
	}
}

// goworker without idempotency, killed after its first charge committed:
// the table holds two charges. Whether the first one's line left the
// worker before the SIGKILL is a race; counted in the log, the key is a
// duplicate (both lines logged) or "not decided" (only the redelivery's),
// an error either way, never ok.
func TestEffectsLogAfterWriteMayBeOneShort(t *testing.T) {
	f := setup(t, "crash", "IDEM=none")
	f.opts.EffectsSQL, f.opts.EffectsLog = "", chaos.WorkerOutput
	f.opts.At, f.opts.Keys = []chaos.Point{chaos.AfterWrite}, 1
	res := f.run(t)
	codes := findingCodes(res)
	k := res.Runs[0].Keys[0]
	switch {
	case slices.Equal(codes, []string{cause.Redelivery.Code}) && k.Outcome == chaos.OutcomeDup:
	case slices.Equal(codes, []string{chaos.RuleUncounted.Code}) && k.Outcome == chaos.OutcomeUndecided && k.Effects == 1:
		if !strings.Contains(k.Why, "{EffectsSQL}") { // the command line words it --effects-sql
			t.Errorf("the verdict does not say which option decides it: %s", k.Why)
		}
	default:
		t.Fatalf("findings %v, key %s: want %s (DUP) or %s (not decided)\n%s",
			codes, k.Outcome, cause.Redelivery.Code, chaos.RuleUncounted.Code, describe(res))
	}
	if res.Report().Findings[0].Severity != findings.Error {
		t.Fatalf("%s is not an error: exit 0 at the default --fail-on", codes[0])
	}
}

func findingCodes(res *chaos.Result) []string {
	var out []string
	for _, f := range res.Report().Findings {
		out = append(out, f.Code)
	}
	return out
}
