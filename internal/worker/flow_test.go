package worker

import (
	"strings"
	"testing"
)

// walk runs one delivery through the flow with the given results for the
// operations that can return something other than OK.
func walk(p Profile, attempt uint8, results map[Op]Result) string {
	f := Flow{Attempt: attempt, MaxAttempts: 3}
	var ops []string
	op := f.Start(&p)
	for op != OpDone && len(ops) < 20 {
		ops = append(ops, op.String())
		r := results[op]
		op = f.Next(&p, op, r)
	}
	return strings.Join(ops, " ")
}

func TestFlowHappyPaths(t *testing.T) {
	want := map[string]string{
		"naive":       "work effect ack",
		"lock-only":   "lock work effect unlock ack",
		"check":       "check work effect commit ack",
		"lock-check":  "lock check work effect commit unlock ack",
		"claim":       "lock claim work effect commit unlock ack",
		"ack-first":   "ack-early lock check work effect commit unlock",
		"txn":         "work effect-txn ack",
		"safe":        "lock work effect-txn unlock ack",
		"per-attempt": "lock work effect-txn unlock ack",
	}
	for name, w := range want {
		p, err := ProfileByName(name)
		if err != nil {
			t.Fatal(err)
		}
		if got := walk(p, 1, nil); got != w {
			t.Errorf("%s: %q, want %q", name, got, w)
		}
	}
}

func TestFlowPaths(t *testing.T) {
	lc, _ := ProfileByName("lock-check")
	del, _ := ProfileByName("lock-del")
	safe, _ := ProfileByName("safe")
	tests := []struct {
		name    string
		p       Profile
		attempt uint8
		res     map[Op]Result
		want    string
	}{
		{"already done: skip the work", lc, 1, map[Op]Result{OpCheck: ResBusy}, "lock check unlock ack"},
		{"lock busy: retry with backoff", lc, 1, map[Op]Result{OpLock: ResBusy}, "lock retry-busy"},
		{"lock busy, attempts exhausted: DLQ", lc, 3, map[Op]Result{OpLock: ResBusy}, "lock dead-letter"},
		{"plain DEL on the busy path", del, 1, map[Op]Result{OpLock: ResBusy}, "lock unlock-busy retry-busy"},
		{"retryable failure: mark, unlock, retry", lc, 1, map[Op]Result{OpEffect: ResRetryable},
			"lock check work effect mark-failed unlock retry"},
		{"retryable failure on the last attempt: DLQ", lc, 3, map[Op]Result{OpEffect: ResRetryable},
			"lock check work effect mark-failed unlock dead-letter"},
		{"permanent failure: straight to the DLQ", lc, 1, map[Op]Result{OpEffect: ResFatal},
			"lock check work effect mark-failed unlock dead-letter"},
		{"transaction finds SUCCEEDED: rolled back", safe, 1, map[Op]Result{OpEffectTxn: ResBusy}, "lock work effect-txn unlock ack"},
	}
	for _, tt := range tests {
		if got := walk(tt.p, tt.attempt, tt.res); got != tt.want {
			t.Errorf("%s: %q, want %q", tt.name, got, tt.want)
		}
	}
}

func TestReachedPoints(t *testing.T) {
	naive, _ := ProfileByName("naive")
	ps := Reached(&naive, OpEffect, ResOK, OpAck)
	for _, pt := range []Point{PointAfterEffect, PointAfterCommit, PointBeforeAck} {
		if !ps.Has(pt) {
			t.Errorf("naive after the effect is also %s", pt)
		}
	}
	lc, _ := ProfileByName("lock-check")
	if ps := Reached(&lc, OpEffect, ResOK, OpCommit); ps != Of(PointAfterEffect) {
		t.Errorf("lock-check after the effect: %b", ps)
	}
	if ps := Reached(&lc, OpUnlock, ResOK, OpAck); ps != Of(PointBeforeAck) {
		t.Errorf("lock-check after unlock: %b", ps)
	}
}

func TestProfileSwitches(t *testing.T) {
	p, _ := ProfileByName("lock-check")
	if err := p.Set("idem", "txn"); err != nil {
		t.Fatal(err)
	}
	if p.Idem != IdemTxn || p.Name != "custom" || !strings.Contains(p.Describe(), "idem=txn") {
		t.Fatalf("after --idem txn: %+v", p)
	}
	for _, bad := range [][2]string{{"idem", "maybe"}, {"lock", "sometimes"}, {"colour", "on"}} {
		if err := p.Set(bad[0], bad[1]); err == nil {
			t.Errorf("Set(%q, %q) accepted", bad[0], bad[1])
		}
	}
	if _, err := ProfileByName("nope"); err == nil {
		t.Error("unknown profile accepted")
	}
	for _, sw := range Switches {
		for _, v := range strings.Split(sw.Values, "|") {
			q := p
			if err := q.Set(sw.Name, v); err != nil {
				t.Errorf("documented value --%s %s refused: %v", sw.Name, v, err)
			}
		}
	}
}
