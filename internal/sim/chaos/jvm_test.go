package chaos_test

import (
	"context"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/dupctl/dupctl/internal/cause"
	"github.com/dupctl/dupctl/internal/platform/findings"
	"github.com/dupctl/dupctl/internal/sim/chaos"
	"github.com/dupctl/dupctl/internal/testenv"
)

// The JVM worker (testdata/workers/jvmworker) is the consumer flow Spring
// Boot teams write - a manual-ack listener, a Redis lock service, an
// idempotency table, a status cache - in plain Java on Debian's packages,
// logging Spring Boot's default console lines. It is compiled once per test
// binary by javac and run through every worker scenario: the safe flow must
// be ok at every point, each bug switch must be caught with its cause.

// javaLib is where Debian installs the jars.
const javaLib = "/usr/share/java"

// jvmJars are the worker's classpath, in order, and the Debian packages
// that ship them.
var jvmJars = []struct{ jar, pkg string }{
	{"amqp-client.jar", "librabbitmq-client-java"},
	{"postgresql.jar", "libpostgresql-jdbc-java"},
	{"logback-classic.jar", "liblogback-java"},
	{"logback-core.jar", "liblogback-java"},
	{"slf4j-api.jar", "libslf4j-java"},
	{"jackson-databind.jar", "libjackson2-databind-java"},
	{"jackson-core.jar", "libjackson2-core-java"},
	{"jackson-annotations.jar", "libjackson2-annotations-java"},
}

var (
	jvmOnce sync.Once
	jvmCmd  string
	jvmErr  error
)

// jvmWorker compiles the JVM worker once and returns the command that
// starts it. Without javac, java or a jar it skips, naming the Debian
// packages; with DUPCTL_INTEGRATION=required (CI, where .ci/run installs
// them) it fails instead.
func jvmWorker(t *testing.T) string {
	t.Helper()
	var missing []string
	for _, tool := range []string{"javac", "java"} {
		if _, err := exec.LookPath(tool); err != nil {
			missing = append(missing, tool+" (openjdk-17-jdk-headless)")
		}
	}
	var cp []string
	for _, j := range jvmJars {
		p := filepath.Join(javaLib, j.jar)
		if _, err := os.Stat(p); err != nil {
			missing = append(missing, p+" ("+j.pkg+")")
		}
		cp = append(cp, p)
	}
	if len(missing) > 0 {
		msg := "the JVM worker needs " + strings.Join(missing, ", ") + ": apt-get install -y openjdk-17-jdk-headless " +
			"librabbitmq-client-java libpostgresql-jdbc-java liblogback-java libjackson2-databind-java"
		if testenv.Required() {
			t.Fatalf("DUPCTL_INTEGRATION=required: %s", msg)
		}
		t.Skip(msg)
	}
	jvmOnce.Do(func() { jvmCmd, jvmErr = compileJVMWorker(cp) })
	if jvmErr != nil {
		t.Fatal(jvmErr)
	}
	return jvmCmd
}

// compileJVMWorker runs javac over the worker's sources into one class
// tree (with its logback.xml) that every run reuses.
func compileJVMWorker(jars []string) (string, error) {
	src, err := filepath.Abs("../../../testdata/workers/jvmworker")
	if err != nil {
		return "", err
	}
	classes := filepath.Join(binDir, "jvmworker")
	var sources []string
	err = filepath.WalkDir(filepath.Join(src, "src"), func(p string, d os.DirEntry, err error) error {
		if err == nil && strings.HasSuffix(p, ".java") {
			sources = append(sources, p)
		}
		return err
	})
	if err != nil {
		return "", err
	}
	cp := strings.Join(jars, ":")
	args := append([]string{"-nowarn", "-d", classes, "-cp", cp}, sources...)
	if out, err := exec.Command("javac", args...).CombinedOutput(); err != nil {
		return "", fmt.Errorf("javac the JVM worker: %v\n%s", err, out)
	}
	logback, err := os.ReadFile(filepath.Join(src, "logback.xml"))
	if err != nil {
		return "", err
	}
	if err := os.WriteFile(filepath.Join(classes, "logback.xml"), logback, 0o644); err != nil {
		return "", err
	}
	// A JVM takes most of a second to start; C1 only and the serial
	// collector make it start sooner and compete less with the other copy.
	return fmt.Sprintf("exec java -XX:TieredStopAtLevel=1 -XX:+UseSerialGC -Xmx128m "+
		"-cp '%s:%s' com.example.payments.PaymentWorkerApplication", classes, cp), nil
}

// jvmSetup is setup with the JVM worker: its connections named as a
// Spring Boot application reads them (the recipe docs/worker-chaos.md
// gives), the tables and names of the goworker fixture, and the switches.
func jvmSetup(t *testing.T, scenario string, switches ...string) *fixture {
	t.Helper()
	f := setup(t, scenario)
	f.opts.Worker = jvmWorker(t)
	var env []string
	for _, e := range f.opts.Env {
		if !strings.HasPrefix(e, "AMQP_URL=") && !strings.HasPrefix(e, "REDIS_URL=") && !strings.HasPrefix(e, "DATABASE_URL=") {
			env = append(env, e)
		}
	}
	env = append(env, "SPRING_RABBITMQ_ADDRESSES={amqp}", "SPRING_DATA_REDIS_URL={redis}",
		"SPRING_DATASOURCE_URL={postgres_jdbc}", "SPRING_DATASOURCE_USERNAME={postgres_user}",
		"SPRING_DATASOURCE_PASSWORD={postgres_password}")
	f.opts.Env = append(env, switches...)
	f.opts.ReadyTimeout, f.opts.RunTimeout = time.Minute, time.Minute
	return f
}

// jvmCase is one variant of the matrix: a scenario, the points it is run
// at (nil: all of the scenario's), the switches, and the verdict it must
// get: "" is ok at every run, else the only non-ok outcome and cause
// ("DUP DUP_EFFECT_REDELIVERY", "LOSS CHAOS_LOSS"), at least once.
type jvmCase struct {
	name     string
	scenario string
	at       []chaos.Point
	switches []string
	want     string
	// finding is a code the report must also hold (a foreign unlock).
	finding string
}

// jvmMatrix: the safe flow at every point of every scenario, then one
// variant per bug switch. CACHE=off where the status cache in front of the
// database would itself catch the redelivery the bug is about (its key is
// the order: a hit skips the charge).
func jvmMatrix() []jvmCase {
	dup := func(c cause.Cause) string { return chaos.OutcomeDup + " " + c.Code }
	return []jvmCase{
		{name: "safe/crash", scenario: "crash"},
		{name: "safe/redelivery", scenario: "redelivery"},
		{name: "safe/lock-expiry", scenario: "lock-expiry", switches: []string{"LOCK_TTL=300ms"}},
		{name: "safe/unstable-key", scenario: "unstable-key"},
		{name: "safe/stale-cache", scenario: "stale-cache"},
		{name: "safe/race", scenario: "race"},

		{name: "IDEM=none/crash", scenario: "crash", at: []chaos.Point{chaos.BeforeAck},
			switches: []string{"IDEM=none", "CACHE=off"}, want: dup(cause.Redelivery)},
		{name: "IDEM=none/redelivery", scenario: "redelivery", at: []chaos.Point{chaos.BeforeAck, chaos.AfterWrite},
			switches: []string{"IDEM=none", "CACHE=off"}, want: dup(cause.Redelivery)},
		{name: "IDEM=check/redelivery", scenario: "redelivery", at: []chaos.Point{chaos.AfterWrite},
			switches: []string{"IDEM=check", "CACHE=off"}, want: dup(cause.NonAtomicCommit)},
		{name: "IDEM=check,LOCK=off/race", scenario: "race",
			switches: []string{"IDEM=check", "LOCK=off", "CACHE=off", "WORK=400ms"}, want: dup(cause.Race)},
		{name: "RENEW=false/lock-expiry", scenario: "lock-expiry",
			switches: []string{"IDEM=check", "CACHE=off", "LOCK_TTL=300ms", "RENEW=false", "WORK=400ms"}, want: dup(cause.LockExpiry)},
		{name: "UNLOCK=del/lock-expiry", scenario: "lock-expiry",
			switches: []string{"IDEM=check", "CACHE=off", "UNLOCK=del", "LOCK_TTL=600ms"}, want: dup(cause.UnlockNoToken),
			finding: chaos.RuleForeignUnlock.Code},
		{name: "KEY=attempt/unstable-key", scenario: "unstable-key",
			switches: []string{"KEY=attempt", "CACHE=off"}, want: dup(cause.UnstableKey)},
		{name: "KEY=message-id/race", scenario: "race",
			switches: []string{"KEY=message-id", "CACHE=off"}, want: dup(cause.UnstableKey)},
		{name: "LOCK_KEY=message-id/race", scenario: "race",
			switches: []string{"LOCK_KEY=message-id", "IDEM=check", "CACHE=off", "WORK=400ms"}, want: dup(cause.LockKeyJobID)},
		{name: "STATUS=cache/stale-cache", scenario: "stale-cache",
			switches: []string{"STATUS=cache"}, want: dup(cause.StaleCache)},
		{name: "ACK=first/crash", scenario: "crash", at: []chaos.Point{chaos.BeforeWrite},
			switches: []string{"ACK=first"}, want: chaos.OutcomeLoss + " " + chaos.RuleLoss.Code},
	}
}

// TestJVMWorkerMatrix runs the JVM worker through the scenario matrix with
// the effects counted by the query; each run's verdict and time are logged
// (go test -v) for the record.
func TestJVMWorkerMatrix(t *testing.T) {
	for _, c := range jvmMatrix() {
		t.Run(c.name, func(t *testing.T) {
			f := jvmSetup(t, c.scenario, c.switches...)
			spec, err := chaos.SpecFor(c.scenario)
			if err != nil {
				t.Fatal(err)
			}
			f.opts.At = c.at
			// One business key per run: the victim is the run's only
			// message, and the matrix stays within minutes.
			f.opts.Keys = 1
			f.opts.CacheLag = 700 * time.Millisecond
			f.opts.Runs = len(spec.Points)
			if len(c.at) > 0 {
				f.opts.Runs = len(c.at)
			}
			if c.want == "" {
				f.opts.Runs *= soak()
			}
			res := runLogged(t, f)
			if c.want == "" {
				clean(t, res)
				return
			}
			only(t, res, c.want)
			if c.finding != "" && !slices.Contains(findingCodes(res), c.finding) {
				t.Fatalf("no %s finding\n%s", c.finding, describe(res))
			}
		})
	}
}

// runLogged runs the fixture and logs each run's plan, verdict and time.
func runLogged(t *testing.T, f *fixture) *chaos.Result {
	t.Helper()
	start := time.Now()
	res := f.run(t)
	took := time.Since(start)
	var b strings.Builder
	for _, rr := range res.Runs {
		fmt.Fprintf(&b, "seed %d: %s: %s in %dms", rr.Seed, rr.Plan, rr.Outcome, rr.ElapsedMs)
		if rr.Fault == nil {
			b.WriteString(" (fault not reached)")
		}
		for _, k := range rr.Keys {
			if k.Outcome != chaos.OutcomeOK {
				fmt.Fprintf(&b, "; %s %s %s effects=%d", k.Key, k.Outcome, k.Cause, k.Effects)
			}
		}
		b.WriteByte('\n')
	}
	t.Logf("%d run(s) in %s\n%s", len(res.Runs), took.Round(time.Millisecond), b.String())
	return res
}

// countInLog has the fixture count the effects in the workers' console
// output instead of the query, and returns the query (the table is the
// reference the log's counts are compared with).
func countInLog(f *fixture) string {
	query := f.opts.EffectsSQL
	f.opts.EffectsSQL, f.opts.EffectsLog = "", chaos.WorkerOutput
	return query
}

// The same bug counted in the JVM worker's console output - Spring Boot's
// default logback line, "payment charged order=... key=... attempt=..." -
// instead of the query: the same cause, and the counts agree with the
// table.
func TestJVMWorkerEffectsFromConsoleLog(t *testing.T) {
	f := jvmSetup(t, "crash", "IDEM=none", "CACHE=off")
	query := countInLog(f)
	f.opts.At, f.opts.Keys = []chaos.Point{chaos.BeforeAck}, 2
	res := runLogged(t, f)
	only(t, res, chaos.OutcomeDup+" "+cause.Redelivery.Code)
	inTable := effectsInTable(t, f, query)
	for _, k := range res.Runs[0].Keys {
		if k.Effects != inTable[k.Key] {
			t.Errorf("%s: %d effects in the console log, %d rows in the table", k.Key, k.Effects, inTable[k.Key])
		}
		if k.Outcome == chaos.OutcomeDup && (k.IdemKeys == nil || *k.IdemKeys != 1) {
			t.Errorf("%s: idempotency keys %v, want 1 read off its key= fields", k.Key, k.IdemKeys)
		}
	}
}

func effectsInTable(t *testing.T, f *fixture, query string) map[string]int {
	t.Helper()
	rows, err := f.deps.Postgres.Query(context.Background(), query)
	if err != nil {
		t.Fatal(err)
	}
	defer rows.Close()
	out := map[string]int{}
	for rows.Next() {
		var key string
		var n, idem int
		if err := rows.Scan(&key, &n, &idem); err != nil {
			t.Fatal(err)
		}
		out[key] = n
	}
	if rows.Err() != nil {
		t.Fatal(rows.Err())
	}
	return out
}

// Issue 31's three JVM cases the judge once got wrong, each now asserted.

// A worker whose only "already paid?" check is the status cache, killed
// right after its charge committed and before it wrote the status: the
// redelivery reads the cache, finds nothing and charges again. That is a
// non-atomic commit (the check ran and found nothing because the status
// was never written), and the explanation names the cache read its
// evidence shows - once it was REDELIVERY, "nothing checked".
//
//	dupctl simulate crash --worker '<jvm worker>' ... --worker-env STATUS=cache \
//	  --cache-keys 'status:*' --at after-write --jobs 1
func TestJVMWorkerCacheOnlyCheckKilledAfterWrite(t *testing.T) {
	f := jvmSetup(t, "crash", "STATUS=cache")
	f.opts.At, f.opts.Keys = []chaos.Point{chaos.AfterWrite}, 1
	res := runLogged(t, f)
	only(t, res, chaos.OutcomeDup+" "+cause.NonAtomicCommit.Code)
	k := res.Runs[0].Keys[0]
	read := "GET status:" + k.Key + " -> nil"
	if !hasEvidence(k, read) || !strings.Contains(k.Why, read) || strings.Contains(k.Why, "nothing checked") {
		t.Fatalf("the cause disagrees with its evidence: %q, evidence %q\n%s", k.Why, k.Evidence, describe(res))
	}
}

// Counted in the console log, a key charged twice in the table (no
// idempotency, killed right after its first charge committed - before the
// JVM logged it) is never "ok": a duplicate when both lines made it to
// the log, else "not decided", an error naming the flag that decides it.
// (It once was ok with a CHAOS_EFFECT_UNCOUNTED warning, exit 0.)
//
//	dupctl simulate crash --worker '<jvm worker>' ... --worker-env IDEM=none --worker-env CACHE=off \
//	  --effects-log - --at after-write --jobs 1
func TestJVMWorkerEffectsLogAfterWriteDoubled(t *testing.T) {
	f := jvmSetup(t, "crash", "IDEM=none", "CACHE=off")
	query := countInLog(f)
	f.opts.At, f.opts.Keys = []chaos.Point{chaos.AfterWrite}, 1
	res := runLogged(t, f)
	k := res.Runs[0].Keys[0]
	inTable := effectsInTable(t, f, query)[k.Key]
	switch {
	case inTable != 2:
		t.Fatalf("%s: %d charges in the table, want 2 (no idempotency, redelivered)\n%s", k.Key, inTable, describe(res))
	case k.Outcome == chaos.OutcomeDup && k.Effects == 2:
	case k.Outcome == chaos.OutcomeUndecided && k.Effects == 1 && k.Cause == chaos.RuleUncounted.Code &&
		strings.Contains(k.Why, "{EffectsSQL}"):
		if sev := res.Report().Findings[0].Severity; sev != findings.Error {
			t.Fatalf("not decided is %s: exit 0 at the default --fail-on", sev)
		}
	default:
		t.Fatalf("%s: %s (%s) with %d effects counted, %d in the table\n%s", k.Key, k.Outcome, k.Cause, k.Effects, inTable, describe(res))
	}
}

// Spring AMQP's default prefetch (250) lets the paused worker take the
// lock-expiry scenario's second message: the other worker finds the lock
// still held (the TTL has not run out), requeues it, and the broker gives
// it to the paused one, which handles it after it resumes. No other holder
// ever takes the expired lock. Such a run is tried again and, when no
// attempt gets another holder, is CHAOS_FAULT_NOT_REACHED saying so - never
// "reached, ok" for a worker whose lock (300ms, no renewal) is shorter than
// its job (400ms).
//
//	dupctl simulate lock-expiry --worker '<jvm worker>' ... --worker-env PREFETCH=250 --worker-env IDEM=check \
//	  --worker-env CACHE=off --worker-env LOCK_TTL=300ms --worker-env RENEW=false --worker-env WORK=400ms --at after-lock
func TestJVMWorkerLockExpiryPrefetchedToThePausedWorker(t *testing.T) {
	f := jvmSetup(t, "lock-expiry", "PREFETCH=250", "IDEM=check", "CACHE=off", "LOCK_TTL=300ms", "RENEW=false", "WORK=400ms")
	f.opts.At, f.opts.Keys = []chaos.Point{chaos.AfterLock}, 1
	res := runLogged(t, f)
	rr := res.Runs[0]
	if rr.Fault != nil {
		only(t, res, chaos.OutcomeDup+" "+cause.LockExpiry.Code)
		return
	}
	if rr.Failed() || !strings.Contains(rr.Missing, "no other worker took the lock") || len(rr.Attempts) != chaos.DefaultAttempts-1 ||
		!slices.Equal(findingCodes(res), []string{chaos.RuleNotReached.Code}) {
		t.Fatalf("not reached with %q after %d attempt(s), findings %v\n%s", rr.Missing, len(rr.Attempts)+1, findingCodes(res), describe(res))
	}
}

func hasEvidence(k chaos.KeyVerdict, s string) bool {
	for _, e := range k.Evidence {
		if strings.Contains(e, s) {
			return true
		}
	}
	return false
}
