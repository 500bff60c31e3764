package simulate

import (
	"bytes"
	"fmt"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/dupctl/dupctl/internal/cause"
	"github.com/dupctl/dupctl/internal/platform/report"
	"github.com/dupctl/dupctl/internal/sim/chaos"
)

// lockExpiryRun is a lock-expiry run as the proxies would record it: W1
// takes the lock (TTL 300ms), its TTL runs out at t=310ms while W1 still
// works, dupctl stops W1 at t=400ms and resumes it at t=900ms; W2 takes the
// expired lock at t=320ms, commits at t=590ms and releases; W1 commits at
// t=950ms.
func lockExpiryRun() *chaos.Result {
	evs := []chaos.Event{
		{T: 0, Lane: "dupctl", Kind: "publish", Key: "k", Text: "dupctl publishes k to :q"},
		{T: 5, Lane: "W1", Kind: "deliver", Key: "k", Text: "basic.deliver k"},
		{T: 10, Lane: "W1", Kind: "lock", Key: "k", Text: "SET lock:k NX -> OK (TTL 300ms)"},
		{T: 315, Lane: "W2", Kind: "deliver", Key: "k", Text: "basic.deliver k"},
		{T: 320, Lane: "W2", Kind: "lock", Key: "k", Text: "SET lock:k NX -> OK (TTL 300ms)"},
		{T: 400, Lane: "W1", Kind: "fault", Key: "k", Text: "dupctl stops the worker (SIGSTOP)", Fault: true},
		{T: 590, Lane: "W2", Kind: "commit", Key: "k", Text: "COMMIT: the writes for k are durable"},
		{T: 600, Lane: "W2", Kind: "unlock", Key: "k", Text: "lock script on lock:k -> released"},
		{T: 610, Lane: "W2", Kind: "ack", Key: "k", Text: "basic.ack k"},
		{T: 900, Lane: "W1", Kind: "resume", Key: "k", Text: "dupctl resumes the worker (SIGCONT)"},
		{T: 950, Lane: "W1", Kind: "commit", Key: "k", Text: "COMMIT: the writes for k are durable"},
		{T: 1000, Lane: "W1", Kind: "ack", Key: "k", Text: "basic.ack k"},
	}
	for i := range evs {
		evs[i].Seq = i + 1
	}
	released := int64(600)
	rr := chaos.RunResult{Seed: 3, Plan: chaos.Plan{Seed: 3, Point: chaos.BeforeWrite, Fault: chaos.Stop, Victim: "k"}, Fault: &evs[5],
		Outcome: chaos.OutcomeDup, Start: time.Date(2026, 12, 1, 9, 0, 0, 0, time.UTC), Events: evs, EffectsFrom: chaos.EffectsSQL,
		Keys: []chaos.KeyVerdict{{Key: "k", Effects: 2, Outcome: chaos.OutcomeDup, Cause: cause.LockExpiry.Code, Why: "W1's lock expired",
			Deciding: []int{3, 5, 6}}},
		Deliveries: []chaos.Delivery{
			{Lane: "W1", Key: "k", From: 5, To: 1000, End: "ack", Seq: 2, EndSeq: 12},
			{Lane: "W2", Key: "k", From: 315, To: 610, End: "ack", Seq: 4, EndSeq: 9},
		},
		Leases: []chaos.Lease{
			{Lane: "W1", Lock: "lock:k", Key: "k", From: 10, TTL: 300, Expires: 310, Seq: 3},
			{Lane: "W2", Lock: "lock:k", Key: "k", From: 320, TTL: 300, Expires: 620, Released: &released, Seq: 5},
		},
	}
	return &chaos.Result{Scenario: "lock-expiry", Workers: 2, Keys: 1, Runs: []chaos.RunResult{rr}}
}

func rowOf(t *testing.T, l *report.Lanes, lane, label string) report.LaneRow {
	t.Helper()
	for _, ln := range l.Lanes {
		for _, r := range ln.Rows {
			if ln.Name == lane && r.Label == label {
				return r
			}
		}
	}
	t.Fatalf("no row %q in lane %s", label, lane)
	return report.LaneRow{}
}

func spans(bars []report.Bar, kind string) []string {
	var out []string
	for _, b := range bars {
		if b.Kind == kind {
			out = append(out, fmt.Sprintf("%d-%d", b.From, b.To))
		}
	}
	return out
}

// TestWorkerLanesLockExpiry: W1's lease ends where its TTL ran out (and
// says that time is computed), hatched where W1 still worked - before its
// pause and after it, never during it; W2's lease ends released; the
// pause is drawn from the fault to the resume; W2's commit is the first
// effect and W1's the second, drawn as the duplicate; the cause and the
// events it rests on are ringed.
func TestWorkerLanesLockExpiry(t *testing.T) {
	res := lockExpiryRun()
	l := newWorkerLanes(res, &res.Runs[0], 0).lanes()
	var names []string
	for _, ln := range l.Lanes {
		names = append(names, ln.Name)
	}
	if !slices.Equal(names, []string{"W1", "W2", "dupctl"}) {
		t.Errorf("lanes %v, want W1, W2, dupctl", names)
	}
	if l.Cause == nil || l.Cause.Code != cause.LockExpiry.Code {
		t.Fatalf("cause %+v", l.Cause)
	}
	w1 := rowOf(t, l, "W1", "lock:k")
	if got := spans(w1.Bars, report.BarLease); !slices.Equal(got, []string{"10-310"}) || !strings.Contains(w1.Bars[0].End, "computed") {
		t.Errorf("W1's lease %v ending %q: want 10-310, its expiry said to be computed", got, w1.Bars[0].End)
	}
	if got := spans(w1.Bars, report.BarBelieved); !slices.Equal(got, []string{"310-400", "900-1000"}) {
		t.Errorf("W1 acting as holder %v: want 310-400 and 900-1000 (not while stopped)", got)
	}
	w2 := rowOf(t, l, "W2", "lock:k")
	if got := spans(w2.Bars, report.BarLease); !slices.Equal(got, []string{"320-600"}) || w2.Bars[0].End != "released" ||
		len(spans(w2.Bars, report.BarBelieved)) > 0 {
		t.Errorf("W2's lease %v ending %q", spans(w2.Bars, ""), w2.Bars[0].End)
	}
	proc := rowOf(t, l, "W1", "process")
	if got := spans(proc.Bars, report.BarPaused); !slices.Equal(got, []string{"400-900"}) {
		t.Errorf("W1 paused %v, want 400-900", got)
	}
	fault := proc.Marks[0]
	if fault.Kind != report.MarkPause || !fault.Evidence || fault.At != 400 {
		t.Errorf("fault mark %+v: want a ringed pause at 400", fault)
	}
	e1, e2 := rowOf(t, l, "W2", "side effects (at COMMIT)"), rowOf(t, l, "W1", "side effects (at COMMIT)")
	if len(e1.Marks) != 1 || e1.Marks[0].Kind != report.MarkEffect || e1.Marks[0].At != 590 {
		t.Errorf("W2's effects %+v: want its commit at 590", e1.Marks)
	}
	if len(e2.Marks) != 1 || e2.Marks[0].Kind != report.MarkDuplicate || e2.Marks[0].At != 950 {
		t.Errorf("W1's effects %+v: want the duplicate at 950", e2.Marks)
	}
	ringed := 0
	for _, ln := range l.Lanes {
		for _, r := range ln.Rows {
			for _, m := range r.Marks {
				if m.Evidence && m.Kind != report.MarkDuplicate {
					ringed++
				}
			}
		}
	}
	if ringed != 3 {
		t.Errorf("%d ringed marks, want the two locks and the fault", ringed)
	}
	for _, want := range []string{"computed", "--effects-sql"} {
		if !strings.Contains(l.Note, want) {
			t.Errorf("note %q does not say %q", l.Note, want)
		}
	}
	if !l.T0.Equal(res.Runs[0].Start) {
		t.Errorf("t0 %v, want the run's start", l.T0)
	}
}

// TestWorkerLanesEffectLines: effect lines are drawn where the log placed
// them, on the copy that wrote them; a line naming no copy gets a lane of
// its own, and a line with no time is not drawn but said.
func TestWorkerLanesEffectLines(t *testing.T) {
	res := lockExpiryRun()
	rr := &res.Runs[0]
	at := func(ms int64) *int64 { return &ms }
	rr.EffectsFrom = chaos.EffectsFile
	rr.Keys[0].Effects = 3
	rr.Effects = []chaos.EffectLine{{Key: "k", Lane: "W2", T: at(592), When: chaos.WhenTimestamp, Line: 1},
		{Key: "k", T: at(951), When: chaos.WhenTimestamp, Line: 2}, {Key: "k", Line: 3}}
	l := newWorkerLanes(res, rr, 0).lanes()
	if got := rowOf(t, l, "W2", "side effects").Marks; len(got) != 1 || got[0].At != 592 || got[0].Kind != report.MarkEffect {
		t.Errorf("W2's effects %+v", got)
	}
	if got := rowOf(t, l, "effects log (copy not named)", "side effects").Marks; len(got) != 1 || got[0].Kind != report.MarkDuplicate {
		t.Errorf("unnamed copy's effects %+v: want the second effect", got)
	}
	for _, want := range []string{"1 side-effect line of the effects log carries no time", "k had 3 side effects, 2 drawn"} {
		if !strings.Contains(l.Note, want) {
			t.Errorf("note %q does not say %q", l.Note, want)
		}
	}
}

// TestWorkerHTMLEscapes: the page draws one section per run with its
// lanes and events table, and every outside string is escaped.
func TestWorkerHTMLEscapes(t *testing.T) {
	res := lockExpiryRun()
	res.Runs[0].Events[0].Text = `dupctl publishes <script>alert(1)</script>`
	var b bytes.Buffer
	if err := writeWorkerHTML(&b, scenario(t, "lock-expiry"), res); err != nil {
		t.Fatal(err)
	}
	page := b.String()
	if strings.Contains(page, "<script>") {
		t.Error("an event's text is not escaped")
	}
	if n := strings.Count(page, `<section class="incident"`); n != 1 {
		t.Errorf("%d run sections, want 1", n)
	}
	if n := strings.Count(page, `<tr id="run-0-ev-`); n != len(res.Runs[0].Events) {
		t.Errorf("%d event rows, want %d", n, len(res.Runs[0].Events))
	}
}

// TestWorkerLanesBusyLoop: a copy that bounces a busy lock for seconds has
// its many deliveries on one row, every one still drawn.
func TestWorkerLanesBusyLoop(t *testing.T) {
	res := lockExpiryRun()
	rr := &res.Runs[0]
	for i := 0; i < 30; i++ {
		from := int64(320 + 10*i)
		rr.Deliveries = append(rr.Deliveries, chaos.Delivery{Lane: "W2", Key: "k", From: from, To: from + 5, End: "requeued", Redelivered: true})
	}
	l := newWorkerLanes(res, rr, 0).lanes()
	row := rowOf(t, l, "W2", "31 deliveries")
	if len(row.Bars) != 31 {
		t.Errorf("%d delivery bars on the shared row, want 31", len(row.Bars))
	}
	for _, ln := range l.Lanes {
		for _, r := range ln.Rows {
			if ln.Name == "W2" && strings.HasPrefix(r.Label, "k (") {
				t.Errorf("a delivery row of its own (%q) past %d deliveries", r.Label, deliveryRowsMax)
			}
		}
	}
}
