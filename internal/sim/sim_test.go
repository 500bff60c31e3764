package sim

import (
	"context"
	"encoding/json"
	"reflect"
	"slices"
	"strings"
	"testing"

	"github.com/dupctl/dupctl/internal/worker"
)

// TestMatrixExpectations checks every cell of the documented matrix
// (docs/simulate.md): exhaustive exploration must find exactly the
// documented outcome, and finish.
func TestMatrixExpectations(t *testing.T) {
	m, err := Matrix(context.Background(), MatrixOptions{Scenarios: Scenarios(), Profiles: worker.Profiles(), MaxStates: 5_000_000})
	if err != nil {
		t.Fatal(err)
	}
	for _, row := range m.Cells {
		for _, c := range row {
			if !c.Complete {
				t.Errorf("%s/%s: exploration incomplete after %d states", c.Scenario, c.Profile, c.States)
				continue
			}
			if c.Observed != c.Expected {
				t.Errorf("%s/%s: documented %s, observed %s (%s)", c.Scenario, c.Profile, c.Expected, c.Observed, c.Found)
			}
		}
	}
}

// The research catalogue's headline claims, spelled out.
func TestCatalogueClaims(t *testing.T) {
	claims := []struct {
		scenario, profile string
		want              Expect
	}{
		{"crash", "lock-only", ExpectDup},        // crash before ack duplicates without idempotency
		{"crash", "txn", ExpectSafe},             // ... and not with a transaction
		{"lock-expiry", "lock-fence", ExpectDup}, // a fencing token alone does not stop it
		{"lock-expiry", "txn", ExpectSafe},       // effect + record in one transaction does
		{"crash", "claim", ExpectLoss},           // claim-first shows as LOSS, not as safe
		{"crash", "ack-first", ExpectLoss},       // so does ack-first
		{"unlock-no-token", "lock-del", ExpectDup},
		{"unlock-no-token", "lock-check", ExpectSafe}, // compare-and-delete
		{"unstable-key", "per-attempt", ExpectDup},    // a per-attempt key duplicates even with a transaction
		{"status-race", "txn", ExpectDup},
		{"status-race", "safe", ExpectSafe},
		{"replica-lag", "replica", ExpectDup},     // a check on a lagging replica misses the commit
		{"replica-lag", "lock-check", ExpectSafe}, // the same check on the primary does not
		{"replica-lag", "claim", ExpectSafe},      // nor does INSERT ... ON CONFLICT on the primary
	}
	for _, c := range claims {
		sc, err := ScenarioByName(c.scenario)
		if err != nil {
			t.Fatal(err)
		}
		p, _ := worker.ProfileByName(c.profile)
		cfg := sc.Config(p)
		r := (&engine{cfg: &cfg}).exhaustive(context.Background(), 5_000_000)
		if got := expectOf(r.Found); got != c.want || !r.Complete {
			t.Errorf("%s under %s: got %s (complete %v), want %s", c.scenario, c.profile, got, r.Complete, c.want)
		}
	}
}

// TestFaultPointsReached: a scenario whose faults never fire proves
// nothing, so every named point and every fault must fire somewhere in the
// scenario's exploration across the profiles, and the faulty profile must
// break an invariant.
func TestFaultPointsReached(t *testing.T) {
	for _, sc := range Scenarios() {
		var cov Coverage
		var cfg Config
		for _, p := range worker.Profiles() {
			cfg = sc.Config(p)
			r := (&engine{cfg: &cfg}).exhaustive(context.Background(), 5_000_000)
			c := r.Reached
			cov.Crash |= c.Crash
			cov.Pause |= c.Pause
			cov.Failover |= c.Failover
			cov.Drop = cov.Drop || c.Drop
			cov.Dup = cov.Dup || c.Dup
			cov.Fail = cov.Fail || c.Fail
			cov.LockExpiry = cov.LockExpiry || c.LockExpiry
			cov.AckTimeout = cov.AckTimeout || c.AckTimeout
		}
		faulty, _ := worker.ProfileByName(sc.Faulty)
		fcfg := sc.Config(faulty)
		r := (&engine{cfg: &fcfg}).exhaustive(context.Background(), 5_000_000)
		fired := worker.Points(cov.Crash | cov.Pause | cov.Failover)
		if cov.Drop {
			fired |= worker.Of(worker.PointBeforeAck)
		}
		for _, pt := range sc.Points {
			if !fired.Has(pt) {
				t.Errorf("%s: fault point %s never fired", sc.Name, pt)
			}
		}
		f := cfg.Faults
		if f.DupPublish > 0 && !cov.Dup {
			t.Errorf("%s: publisher duplicate never fired", sc.Name)
		}
		if f.EffectFail > 0 && !cov.Fail {
			t.Errorf("%s: effect failure never fired", sc.Name)
		}
		if f.Pause > 0 && !cov.LockExpiry {
			t.Errorf("%s: the pause never let a lock expire", sc.Name)
		}
		if cfg.AckTimeout > 0 && !cov.AckTimeout {
			t.Errorf("%s: the ack deadline never passed", sc.Name)
		}
		if r.Found == 0 {
			t.Errorf("%s: the faulty profile %s found nothing", sc.Name, sc.Faulty)
		}
	}
}

func runJSON(t *testing.T, o Options) string {
	t.Helper()
	res, err := Run(context.Background(), o)
	if err != nil {
		t.Fatal(err)
	}
	var parts []string
	for _, p := range res.Profiles {
		b, err := json.Marshal(struct {
			P  ProfileResult
			TL *Timeline
		}{p, timelineOf(p.Example)})
		if err != nil {
			t.Fatal(err)
		}
		parts = append(parts, string(b))
	}
	return strings.Join(parts, "\n")
}

func timelineOf(ex *Counterexample) *Timeline {
	if ex == nil {
		return nil
	}
	return &ex.Timeline
}

// TestSameSeedSameOutput: the same seed gives the same exploration, the
// same counterexample and the same timeline, byte for byte.
func TestSameSeedSameOutput(t *testing.T) {
	for _, sc := range Scenarios() {
		for _, mode := range []string{ExploreRandom, ExploreExhaustive} {
			o := Options{Scenario: sc, Explore: mode, Seed: 42, Runs: 2000}
			a, b := runJSON(t, o), runJSON(t, o)
			if a != b {
				t.Fatalf("%s %s: two runs with seed 42 differ", sc.Name, mode)
			}
		}
	}
}

// TestShrinkNeverLonger: random exploration's counterexamples shrink to a
// schedule no longer than the one found, that still breaks the invariant.
func TestShrinkNeverLonger(t *testing.T) {
	for _, sc := range Scenarios() {
		p, _ := worker.ProfileByName(sc.Faulty)
		cfg := sc.Config(p)
		e := &engine{cfg: &cfg}
		found := 0
		for i := uint64(0); i < 3000 && found < 5; i++ {
			var trace []Action
			v, _ := e.runRandom(i, true, &trace, nil)
			if !v.Has(VDuplicate) {
				continue
			}
			found++
			scfg, short := shrink(cfg, i, trace, VDuplicate)
			if len(short) > len(trace) {
				t.Errorf("%s seed %d: shrunk %d > original %d", sc.Name, i, len(short), len(trace))
			}
			_, _, got, ok := record(Schedule{Scenario: sc.Name, Config: scfg, Seed: i, Actions: short})
			if !ok || !got.Has(VDuplicate) {
				t.Errorf("%s seed %d: shrunk schedule does not reproduce the duplicate (ok=%v, got %s)", sc.Name, i, ok, got)
			}
		}
		if found == 0 {
			t.Errorf("%s: random exploration of %s found no duplicate in 3000 runs", sc.Name, sc.Faulty)
		}
	}
}

// TestTokenRoundTrip: the replay token reproduces the counterexample.
func TestTokenRoundTrip(t *testing.T) {
	for _, sc := range Scenarios() {
		res, err := Run(context.Background(), Options{Scenario: sc})
		if err != nil {
			t.Fatal(err)
		}
		ex := res.Profiles[0].Example
		if ex == nil {
			t.Fatalf("%s: no counterexample for %s", sc.Name, sc.Faulty)
		}
		r, err := ParseToken(ex.Token)
		if err != nil {
			t.Fatalf("%s: %v", sc.Name, err)
		}
		tl, _, found, ok := record(r)
		if !ok || !found.Has(ex.Violation) {
			t.Fatalf("%s: token replay ok=%v found %s, want %s", sc.Name, ok, found, ex.Violation)
		}
		a, _ := json.Marshal(tl)
		b, _ := json.Marshal(ex.Timeline)
		if string(a) != string(b) {
			t.Fatalf("%s: token replay timeline differs", sc.Name)
		}
	}
	for _, bad := range []string{"", "dsim1_", "dsim1_!!!", "dsim0_abc", "nope", "dsim1_" + "aGVsbG8"} {
		if _, err := ParseToken(bad); err == nil {
			t.Errorf("ParseToken(%q) accepted", bad)
		}
	}
}

func TestParseDist(t *testing.T) {
	d, err := ParseDist("p50=30s,p99=4m")
	if err != nil {
		t.Fatal(err)
	}
	if q := d.Quantile(0.5); q < 29_900 || q > 30_100 {
		t.Errorf("p50 = %dms", q)
	}
	if q := d.Quantile(0.99); q < 239_000 || q > 241_000 {
		t.Errorf("p99 = %dms", q)
	}
	for _, bad := range []string{"", "fast", "p50=1m", "p50=2m,p99=1m", "p75=1s,p99=2s", "-5s", "p50=x,p99=1s"} {
		if _, err := ParseDist(bad); err == nil {
			t.Errorf("ParseDist(%q) accepted", bad)
		}
	}
}

func FuzzParseToken(f *testing.F) {
	sc, _ := ScenarioByName("crash")
	res, _ := Run(context.Background(), Options{Scenario: sc})
	f.Add(res.Profiles[0].Example.Token)
	sc, _ = ScenarioByName("replica-lag")
	res, _ = Run(context.Background(), Options{Scenario: sc})
	f.Add(res.Profiles[0].Example.Token)
	f.Add("dsim1_")
	f.Fuzz(func(t *testing.T, tok string) {
		r, err := ParseToken(tok)
		if err != nil {
			return
		}
		// Whatever parses must replay without panicking.
		record(r)
		// ... and write back a token that parses to the same replay.
		again, err := ParseToken(r.Token())
		if err != nil {
			t.Fatalf("the token written back does not parse: %v", err)
		}
		if !reflect.DeepEqual(r, again) {
			t.Fatalf("round trip changed the replay:\n%+v\n%+v", r, again)
		}
	})
}

func FuzzParseDist(f *testing.F) {
	f.Add("45s")
	f.Add("p50=30s,p99=4m")
	f.Fuzz(func(t *testing.T, s string) {
		d, err := ParseDist(s)
		if err != nil {
			return
		}
		if again, err := ParseDist(d.String()); err != nil || again.String() != d.String() {
			t.Fatalf("%q: written back as %q, which reads as %q (%v)", s, d.String(), again.String(), err)
		}
		if v := d.Sample(0.5); v < 0 {
			t.Fatalf("%q: negative sample %d", s, v)
		}
	})
}

func TestRiskNumbers(t *testing.T) {
	d, _ := ParseDist("p50=30s,p99=5m")
	lc, _ := worker.ProfileByName("lock-check")
	safe, _ := worker.ProfileByName("safe")
	res, err := Risk(context.Background(), RiskOptions{Duration: d, LockTTL: 120_000, AckTimeout: 1_800_000, Workers: 4, Jobs: 20_000,
		DupRate: 0.05, Profiles: []worker.Profile{lc, safe}, Seed: 1})
	if err != nil {
		t.Fatal(err)
	}
	// P(duration > 2m) for p50=30s, p99=5m lognormal: sigma = ln(10)/2.326
	// = 0.99, z = ln(4)/0.99 = 1.40, so about 8%.
	if p := res.PLongerThanTTL; p < 0.07 || p > 0.09 {
		t.Errorf("P(duration > TTL) = %.3f, want about 0.08", p)
	}
	if lcRow := res.Rows[0]; lcRow.LockExpiriesPerM < 60_000 || lcRow.DuplicatesPerM == 0 {
		t.Errorf("lock-check: %+v: want ~80,000 expiries/M and some duplicates", lcRow)
	}
	if safeRow := res.Rows[1]; safeRow.DuplicatesPerM != 0 {
		t.Errorf("safe: %+v: want no duplicates", safeRow)
	}
}

// The flow table must answer exactly as worker.Flow and worker.Reached do,
// for every profile, operation, result, attempt and failure state.
func TestFlowTableMatchesFlow(t *testing.T) {
	for _, p := range worker.Profiles() {
		tbl := newFlowTable(p)
		for op := worker.Op(0); op < worker.NumOps; op++ {
			for r := worker.Result(0); r < worker.NumResults; r++ {
				for maxAttempts := uint8(1); maxAttempts <= 6; maxAttempts++ {
					for attempt := uint8(1); attempt <= maxAttempts+1; attempt++ {
						for _, failWith := range []worker.Result{worker.ResOK, worker.ResRetryable, worker.ResFatal} {
							want := worker.Flow{Attempt: attempt, MaxAttempts: maxAttempts}
							if failWith != worker.ResOK {
								want.Next(&p, worker.OpEffect, failWith) // puts the flow on the failure path
							}
							got := want
							wantNext := want.Next(&p, op, r)
							wantAt := worker.Reached(&p, op, r, wantNext)
							gotNext, gotAt := tbl.step(&got, op, r)
							if gotNext != wantNext || gotAt != wantAt || got != want {
								t.Fatalf("%s %s r=%d attempt %d/%d failed=%v: table gives %s %b, flow %s %b", p.Name, op, r, attempt, maxAttempts,
									failWith != worker.ResOK, gotNext, gotAt, wantNext, wantAt)
							}
						}
					}
				}
			}
		}
	}
}

// TestRandomFastPathMatchesEnabled checks runRandom's calm fast path
// (pickStep) against the plain rule it shortcuts: draw among enabled's
// list, no draw when there is one action. Same seed, same schedule.
func TestRandomFastPathMatchesEnabled(t *testing.T) {
	for _, sc := range Scenarios() {
		for _, p := range worker.Profiles() {
			cfg := sc.Config(p)
			cfg.Jobs, cfg.Keys, cfg.Workers = 4, 3, 3
			e := &engine{cfg: &cfg}
			for seed := uint64(0); seed < 50; seed++ {
				var got []Action
				e.runRandom(seed, false, &got, nil)
				want := referenceRandom(e, seed)
				if !slices.Equal(got, want) {
					t.Fatalf("%s/%s seed %d: fast path took %v, enabled+draw %v", sc.Name, p.Name, seed, got, want)
				}
			}
		}
	}
}

func referenceRandom(e *engine, seed uint64) []Action {
	e.reset(seed)
	r := newRNG(seed ^ 0x2545f4914f6cdd1d)
	var trace []Action
	for int(e.s.Steps) < e.cfg.MaxSteps {
		buf := e.enabled(nil)
		if len(buf) == 0 {
			break
		}
		a := buf[0]
		if len(buf) > 1 {
			a = buf[r.intn(len(buf))]
		}
		if a.Kind() == aStop {
			break
		}
		trace = append(trace, a)
		e.apply(a)
	}
	return trace
}

// TestTickVisitsDueSources checks that a tick which visits only the timer
// sources nextTimer says are due leaves the same world as one visiting
// every source, on every tick of random schedules of every scenario.
func TestTickVisitsDueSources(t *testing.T) {
	ticks := 0
	for _, sc := range Scenarios() {
		for _, p := range worker.Profiles() {
			cfg := sc.Config(p)
			cfg.Jobs, cfg.Keys = 3, 2
			e := &engine{cfg: &cfg}
			all := &engine{cfg: &cfg}
			for seed := uint64(0); seed < 30; seed++ {
				var trace []Action
				e.runRandom(seed, false, &trace, nil)
				e.reset(seed)
				for _, a := range trace {
					e.enabled(nil)
					if a.Kind() == aTick {
						all.reset(seed)
						all.s.copyFrom(&e.s)
						all.nextAt, all.nextDue, all.nextSteps = e.nextAt, dueWorkers|dueMsgs|dueLocks|dueCache, e.nextSteps
						all.apply(a)
						ticks++
					}
					e.apply(a)
					if a.Kind() == aTick && !reflect.DeepEqual(emptyAsNil(e.s), emptyAsNil(all.s)) {
						t.Fatalf("%s/%s seed %d: a tick at %d visiting sources %05b left a different world than one visiting all:\n%+v\n%+v", sc.Name,
							p.Name, seed, e.s.Now, e.nextDue, emptyAsNil(e.s), emptyAsNil(all.s))
					}
				}
			}
		}
	}
	if ticks < 1000 {
		t.Fatalf("only %d ticks compared", ticks)
	}
}

// emptyAsNil makes every empty slice of s nil, for reflect.DeepEqual.
func emptyAsNil(s State) State {
	v := reflect.ValueOf(&s).Elem()
	for i := 0; i < v.NumField(); i++ {
		f := v.Field(i)
		if f.Kind() == reflect.Slice && f.Len() == 0 {
			reflect.NewAt(f.Type(), f.Addr().UnsafePointer()).Elem().Set(reflect.Zero(f.Type()))
		}
	}
	return s
}
