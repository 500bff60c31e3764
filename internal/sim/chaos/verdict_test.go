package chaos

import (
	"strings"
	"testing"
	"time"

	"github.com/dupctl/dupctl/internal/platform/findings"
)

// judged builds a run that has settled, as the proxies would have left it,
// for the judge alone.
func judged(plan Plan, keys ...string) *run {
	r := &run{recorder: recorder{trace: trace{plan: plan, keys: keys, start: time.Now().Add(-time.Second), repub: map[string]bool{},
		id: "dc0a1b2c3d"}, held: map[string]int{}, current: map[string]*lease{}}, o: &Options{Attempts: DefaultAttempts},
		cut: map[*slot]time.Time{}}
	return r
}

// firedAt records the plan's fault as fired ms after the run's start.
func (r *run) firedAtMs(ms int64, lane string) {
	r.firedAt = r.start.Add(time.Duration(ms) * time.Millisecond)
	r.fired = &Event{T: ms, Lane: lane, Kind: "fault", Key: r.plan.Victim, Fault: true}
	r.events = append(r.events, *r.fired)
}

// With the effects counted in the log, the victim of an after-write fault
// with one effect line may have run twice: never ok, "not decided", an
// error finding that names the flag that decides it.
func TestEffectsLogAfterWriteIsNotDecided(t *testing.T) {
	for _, n := range []int{0, 1} {
		r := judged(Plan{Seed: 3, Attempt: 1, Fault: Kill, Point: AfterWrite, Victim: "dc0a1b2c3d-1"}, "dc0a1b2c3d-1")
		r.effectsLog = &effectsLog{path: WorkerOutput}
		r.firedAtMs(100, "W1")
		w1 := &slot{n: 1, inst: 1}
		r.delivs = []*delivery{
			{slot: w1, inst: 1, key: "dc0a1b2c3d-1", from: r.start, to: r.firedAt, end: "returned", faulted: true, committed: 1},
			{slot: &slot{n: 2, inst: 1}, inst: 1, key: "dc0a1b2c3d-1", from: r.firedAt.Add(time.Millisecond),
				to: r.firedAt.Add(time.Second), end: "ack", redelivered: true, committed: 1},
		}
		effects := map[string]effectRow{}
		if n > 0 {
			effects["dc0a1b2c3d-1"] = effectRow{n: n}
		}
		rr := r.verdict(effects, "")
		k := rr.Keys[0]
		if k.Outcome != OutcomeUndecided || rr.Outcome != OutcomeUndecided || !rr.Failed() {
			t.Fatalf("%d effect(s): key %s, run %s: want %q", n, k.Outcome, rr.Outcome, OutcomeUndecided)
		}
		if !strings.Contains(k.Why, "{EffectsSQL}") { // the command line words it --effects-sql
			t.Errorf("%d effect(s): %q does not say which option decides it", n, k.Why)
		}
		rep := (&Result{Scenario: "crash", Runs: []RunResult{*rr}}).Report()
		if len(rep.Findings) != 1 || rep.Findings[0].Code != RuleUncounted.Code || rep.Findings[0].Severity != findings.Error {
			t.Fatalf("%d effect(s): findings %+v, want one %s error", n, rep.Findings, RuleUncounted.Code)
		}
	}
}

// A busy loop is shortened in the evidence with what the wire showed:
// requeued deliveries only when a nack or reject with requeue was seen.
func TestBounceSaysWhatTheWireShowed(t *testing.T) {
	ev := func(kind string, n int) []Event {
		out := make([]Event, n)
		for i := range out {
			out[i] = Event{T: int64(i), Lane: "W2", Kind: kind, Key: "k"}
		}
		return out
	}
	var polled []Event
	polled = append(polled, ev("deliver", 1)...)
	polled = append(polled, ev("busy", 14)...)
	got := bounceText(polled)
	if strings.Contains(got, "requeued") ||
		!strings.Contains(got, "14 attempts at the lock that found it busy while the delivery stayed open") {
		t.Errorf("polled lock: %q", got)
	}
	var requeued []Event
	for i := 0; i < 5; i++ {
		requeued = append(requeued, ev("deliver", 1)...)
		requeued = append(requeued, ev("busy", 1)...)
		requeued = append(requeued, ev("requeued", 1)...)
	}
	if got := bounceText(requeued); got != "5 deliveries that found the lock busy and were requeued" {
		t.Errorf("requeued: %q", got)
	}
}

// A fault whose scenario condition did not follow is not reached, and
// says what was missing.
func TestUnmetConditions(t *testing.T) {
	w1, w2 := &slot{n: 1, inst: 1}, &slot{n: 2, inst: 1}
	ms := func(r *run, n int) time.Time { return r.start.Add(time.Duration(n) * time.Millisecond) }
	cases := []struct {
		name  string
		plan  Plan
		build func(r *run)
		want  string // "" reached
	}{
		{"lock-expiry: the second message went back to the paused worker", Plan{Fault: Stop, Point: AfterLock, Victim: "k"}, func(r *run) {
			l := &lease{lock: "lock:k", key: "k", slot: w1, inst: 1, from: ms(r, 90), ttl: 300 * time.Millisecond, expires: ms(r, 390)}
			l.deliv = &delivery{slot: w1, inst: 1, key: "k", from: ms(r, 80), to: ms(r, 900), end: "ack"}
			r.leases, r.faultLease = []*lease{l}, l
			r.delivs = []*delivery{l.deliv, {slot: w2, inst: 1, key: "k", from: ms(r, 120), to: ms(r, 170), end: "requeued"},
				{slot: w1, inst: 1, key: "k", from: ms(r, 171), to: ms(r, 950), end: "ack"}}
		}, "no other worker took the lock lock:k while W1 held k"},
		{"lock-expiry: another holder took it", Plan{Fault: Stop, Point: AfterLock, Victim: "k"}, func(r *run) {
			l := &lease{lock: "lock:k", key: "k", slot: w1, inst: 1, from: ms(r, 90), ttl: 300 * time.Millisecond, expires: ms(r, 390)}
			l.deliv = &delivery{slot: w1, inst: 1, key: "k", from: ms(r, 80), to: ms(r, 900), end: "ack"}
			r.leases, r.faultLease = []*lease{l, {lock: "lock:k", key: "k", slot: w2, inst: 1, from: ms(r, 400)}}, l
		}, ""},
		{"crash: never delivered again", Plan{Fault: Kill, Point: BeforeAck, Victim: "k"}, func(r *run) {
			r.delivs = []*delivery{{slot: w1, inst: 1, key: "k", from: ms(r, 80), to: ms(r, 100), end: "returned", faulted: true}}
		}, "the broker never delivered k again"},
		{"crash: acked first, nothing to come back", Plan{Fault: Kill, Point: BeforeWrite, Victim: "k"}, func(r *run) {
			r.delivs = []*delivery{{slot: w1, inst: 1, key: "k", from: ms(r, 80), to: ms(r, 81), end: "ack"}}
		}, ""},
		{"redelivery at after-write: never handled again", Plan{Fault: Close, Point: AfterWrite, Victim: "k"}, func(r *run) {
			r.delivs = []*delivery{{slot: w1, inst: 1, key: "k", from: ms(r, 80), to: ms(r, 120), end: "ack", faulted: true}}
		}, "nothing handled k again after the fault"},
		{"redelivery at after-write: acked on receipt, nothing to come back", Plan{Fault: Close, Point: AfterWrite, Victim: "k"}, func(r *run) {
			r.delivs = []*delivery{{slot: w1, inst: 1, key: "k", from: ms(r, 80), to: ms(r, 81), end: "ack", faulted: true}}
		}, ""},
		{"race: one after the other", Plan{Fault: Duplicate, Point: AfterReceive, Victim: "k"}, func(r *run) {
			r.delivs = []*delivery{{slot: w1, inst: 1, key: "k", from: ms(r, 80), to: ms(r, 90), end: "ack"},
				{slot: w1, inst: 1, key: "k", from: ms(r, 91), to: ms(r, 99), end: "ack"}}
		}, "handled one after the other"},
		{"real failover: the lock had replicated", Plan{Fault: Failover, Point: AfterLock, Victim: "k"}, func(r *run) {
			failoverLeases(r, ms)
			r.fo = &sentinelFailover{master: "127.0.0.1:1", newMaster: "127.0.0.1:2"}
		}, "the lock lock:k was on the new master 127.0.0.1:2 after the failover: it had replicated after all"},
		{"real failover: not completed", Plan{Fault: Failover, Point: AfterLock, Victim: "k"}, func(r *run) {
			failoverLeases(r, ms)
			r.fo = &sentinelFailover{master: "127.0.0.1:1"}
		}, "the failover did not complete"},
		{"real failover: lost, and granted again", Plan{Fault: Failover, Point: AfterLock, Victim: "k"}, func(r *run) {
			failoverLeases(r, ms)
			r.fo = &sentinelFailover{master: "127.0.0.1:1", newMaster: "127.0.0.1:2", lostSeq: 2}
		}, ""},
		{"stale-cache: nothing lagged", Plan{Fault: LagCache, Point: AfterAck, Victim: "k"}, func(r *run) {
			r.o.CacheKeys = "status:*"
			r.delivs = []*delivery{{slot: w2, inst: 1, key: "k", from: ms(r, 120), to: ms(r, 170), end: "ack"}}
		}, `no write to a status cache key of k matching "status:*" was seen`},
	}
	for _, c := range cases {
		r := judged(c.plan, "k")
		r.firedAtMs(100, "W1")
		c.build(r)
		r.finish(time.Now())
		got := r.unmet()
		if (c.want == "") != (got == "") || !strings.Contains(got, c.want) {
			t.Errorf("%s: unmet %q, want %q", c.name, got, c.want)
		}
	}
}

// failoverLeases: W1 took lock:k at 90ms and still works on k; W2 took
// it at 1500ms, after the failover.
func failoverLeases(r *run, ms func(*run, int) time.Time) {
	w1, w2 := &slot{n: 1, inst: 1}, &slot{n: 2, inst: 1}
	l := &lease{lock: "lock:k", key: "k", slot: w1, inst: 1, from: ms(r, 90), ttl: 30 * time.Second, expires: ms(r, 30090)}
	l.deliv = &delivery{slot: w1, inst: 1, key: "k", from: ms(r, 80)}
	r.leases, r.faultLease = []*lease{l, {lock: "lock:k", key: "k", slot: w2, inst: 1, from: ms(r, 1500)}}, l
}

// A real failover whose lock had replicated names no failover cause,
// though another worker took the lock.
func TestFailoverKeptLockIsNoCause(t *testing.T) {
	r := judged(Plan{Fault: Failover, Point: AfterLock, Victim: "k"}, "k")
	r.firedAtMs(100, "W1")
	failoverLeases(r, func(r *run, n int) time.Time { return r.start.Add(time.Duration(n) * time.Millisecond) })
	r.fo = &sentinelFailover{master: "127.0.0.1:1", newMaster: "127.0.0.1:2"}
	k := &duplicated{key: "k", leases: r.leases}
	r.finish(time.Now())
	if why, ok := r.lockFailover(k); ok {
		t.Errorf("a kept lock is named a failover: %s", why)
	}
	r.fo.lostSeq = 2 // the event saying the lock was missing on the new master
	r.finish(time.Now())
	if why, ok := r.lockFailover(k); !ok || !strings.Contains(why, "a real failover: 127.0.0.1:2 promoted in place of 127.0.0.1:1") {
		t.Errorf("a lost lock: %v %q", ok, why)
	}
}

// The first attempt's victim is the seed's; each later attempt takes the
// next key.
func TestAttemptsRotateTheVictim(t *testing.T) {
	spec, _ := SpecFor("lock-expiry")
	keys := []string{"k-1", "k-2", "k-3"}
	seen := map[string]bool{}
	for a := 1; a <= 3; a++ {
		p := planFor(spec, 7, keys, nil, a)
		if p.Attempt != a || p.Point != spec.Points[7%2] {
			t.Fatalf("attempt %d: plan %+v", a, p)
		}
		seen[p.Victim] = true
	}
	if len(seen) != 3 {
		t.Fatalf("victims %v, want every key once", seen)
	}
}

// record appends an event at ms after the run's start, as the proxies
// would have, and returns its seq.
func (r *run) record(ms int64, lane, kind, key string) int {
	r.events = append(r.events, Event{T: ms, Lane: lane, Kind: kind, Key: key, Text: kind + " " + key, Seq: len(r.events) + 1})
	return len(r.events)
}

// A key charged three times: the cause accounts for two, and the third is
// said in the finding too - which delivery made it and how it came about -
// not left in the evidence alone.
func TestThirdEffectIsExplained(t *testing.T) {
	r := judged(Plan{Seed: 4, Attempt: 1, Fault: Kill, Point: BeforeAck, Victim: "k"}, "k")
	ms := func(n int64) time.Time { return r.start.Add(time.Duration(n) * time.Millisecond) }
	w1, w2 := &slot{n: 1, inst: 2}, &slot{n: 2, inst: 1}
	first := &delivery{slot: w1, inst: 1, key: "k", copyN: 1, from: ms(10), to: ms(41), end: "returned", faulted: true, committed: 1}
	first.seq = r.record(10, "W1", "deliver", "k")
	first.commitSeqs = []int{r.record(30, "W1", "commit", "k")}
	r.firedAtMs(40, "W1")
	first.endSeq = r.record(41, "W1", "returned", "k")
	// W2's end is recorded after the broker redelivered to W1#2: the
	// broker requeues as the server side closes, the proxy records the end
	// as the client's side does.
	second := &delivery{slot: w2, inst: 1, key: "k", copyN: 1, redelivered: true, from: ms(50), to: ms(125), end: "returned", committed: 1}
	second.seq = r.record(50, "W2", "deliver", "k")
	second.commitSeqs = []int{r.record(70, "W2", "commit", "k")}
	third := &delivery{slot: w1, inst: 2, key: "k", copyN: 1, redelivered: true, from: ms(120), to: ms(150), end: "ack", committed: 1}
	third.seq = r.record(120, "W1#2", "deliver", "k")
	second.endSeq = r.record(125, "W2", "returned", "k")
	third.commitSeqs = []int{r.record(140, "W1#2", "commit", "k")}
	third.endSeq = r.record(150, "W1#2", "ack", "k")
	r.delivs = []*delivery{first, second, third}

	k := r.verdict(map[string]effectRow{"k": {n: 3}}, "").Keys[0]
	want := "the third effect: W1#2's delivery of k, redelivered at t=120ms after W2's delivery of it ended unacked " +
		"(its connection closed), committed a write for it at t=140ms without reading k first"
	if k.Outcome != OutcomeDup || !strings.Contains(k.Why, want) {
		t.Fatalf("%s %s: %q\nwant it to say %q", k.Outcome, k.Cause, k.Why, want)
	}

	// Counted three times with two writes seen: the third is said to be
	// one no write on the wire accounts for.
	r.delivs = []*delivery{first, second}
	if k := r.verdict(map[string]effectRow{"k": {n: 3}}, "").Keys[0]; !strings.Contains(k.Why,
		"1 more effect was counted: the proxies saw no further delivery commit a write for k") {
		t.Fatalf("three effects, two writes: %q", k.Why)
	}
	// Two effects: nothing beyond the cause.
	if k := r.verdict(map[string]effectRow{"k": {n: 2}}, "").Keys[0]; strings.Contains(k.Why, "third") ||
		strings.Contains(k.Why, "more effect") {
		t.Fatalf("two effects: %q", k.Why)
	}
}

// stale-cache's fault says what was held back at the ack, as recorded: a
// status write that already reached Redis is not "still held back".
func TestLagFaultSaysWhatWasHeld(t *testing.T) {
	events := []Event{{T: 80, Kind: "cache-held", Key: "k", Seq: 1}, {T: 90, Kind: "cache-landed", Key: "k", Seq: 2},
		{T: 95, Kind: "cache-landed", Key: "other", Seq: 3}}
	if got := lagFaultText("k", false, events); strings.Contains(got, "still held back") ||
		!strings.Contains(got, "its status cache write already reached Redis at t=90ms") {
		t.Errorf("landed before the ack: %q", got)
	}
	if got := lagFaultText("k", true, events); !strings.HasSuffix(got, "while its cache write is still held back") {
		t.Errorf("held at the ack: %q", got)
	}
	if got := lagFaultText("k", false, events[:1]); strings.Contains(got, "still held back") {
		t.Errorf("nothing landed, nothing held: %q", got)
	}
}

// After dupctl drops a copy's connection, the run is busy until that copy
// reacts - anything it does, or its exit, not dupctl's own records of the
// drop - for reactWait at the most: a quiet spell proves nothing on a
// loaded machine.
func TestRunAwaitsTheReactionToADroppedConnection(t *testing.T) {
	r := judged(Plan{Fault: Close, Point: AfterWrite, Victim: "k"}, "k")
	r.mu.Lock()
	defer r.mu.Unlock()
	r.fire("W2", "k", "dupctl drops its PostgreSQL connection")
	r.await("W2")
	r.add("W2", "commit", "k", "COMMIT: the writes for k are durable")
	r.add("W1", "write", "k", "insert ...")
	if why := r.busyLocked(); !strings.Contains(why, "W2 has not reacted yet") {
		t.Fatalf("busy %q before W2 reacted", why)
	}
	if why := r.unreacted(time.Now().Add(reactWait)); why != "" {
		t.Errorf("still awaited after reactWait: %q", why)
	}
	r.add("W2", "exit", "", "the worker process crashed (exit code 1)")
	if why := r.busyLocked(); strings.Contains(why, "reacted") {
		t.Fatalf("busy %q after W2 exited", why)
	}
}

// A message sent back to the broker (requeued, or returned with its
// connection) keeps the run busy until it is delivered again: in between,
// the queue may count it ready no more while no proxy has seen it yet -
// reactWait at the most, after which the broker dropped or dead-lettered
// it.
func TestBackInBrokerUntilDeliveredAgain(t *testing.T) {
	now := time.Now()
	w1 := &slot{n: 1, inst: 1}
	nacked := &delivery{slot: w1, inst: 1, key: "k", from: now.Add(-300 * time.Millisecond), to: now.Add(-200 * time.Millisecond),
		end: "requeued"}
	other := &delivery{slot: w1, inst: 1, key: "j", from: now.Add(-time.Second), to: now.Add(-900 * time.Millisecond), end: "ack"}
	if k := backInBroker([]*delivery{other, nacked}, now); k != "k" {
		t.Fatalf("requeued, not delivered again: %q, want k", k)
	}
	again := &delivery{slot: w1, inst: 1, key: "k", redelivered: true, from: now.Add(-100 * time.Millisecond)}
	if k := backInBroker([]*delivery{other, nacked, again}, now); k != "" {
		t.Fatalf("delivered again: %q", k)
	}
	if k := backInBroker([]*delivery{other, nacked}, now.Add(reactWait)); k != "" {
		t.Fatalf("gone back longer than reactWait ago: %q", k)
	}
}

// Every message dupctl published keeps the run busy until a worker is
// delivered it: the scenario's second message as well as the first.
func TestUndeliveredUntilEveryCopyIsDelivered(t *testing.T) {
	w1 := &slot{n: 1, inst: 1}
	events := []Event{{Lane: "dupctl", Kind: "publish", Key: "k"}, {Lane: "dupctl", Kind: "publish", Key: "j"},
		{Lane: "W1", Kind: "republish", Key: "j"}}
	first := &delivery{slot: w1, inst: 1, key: "k", end: "ack"}
	if k := undelivered(events, []*delivery{first}); k != "j" {
		t.Fatalf("j never delivered: %q", k)
	}
	j := &delivery{slot: w1, inst: 1, key: "j", end: "ack"}
	if k := undelivered(events, []*delivery{first, j}); k != "" {
		t.Fatalf("every publish delivered (a worker's republish is not dupctl's to wait for): %q", k)
	}
	events = append(events, Event{Lane: "dupctl", Kind: "publish", Key: "k"}) // the scenario's second message
	again := &delivery{slot: w1, inst: 1, key: "k", redelivered: true, end: "ack"}
	if k := undelivered(events, []*delivery{first, j, again}); k != "k" {
		t.Fatalf("a redelivery is not the second message: %q", k)
	}
	second := &delivery{slot: w1, inst: 1, key: "k", end: "ack"}
	if k := undelivered(events, []*delivery{first, j, again, second}); k != "" {
		t.Fatalf("both copies delivered: %q", k)
	}
}
