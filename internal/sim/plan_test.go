package sim

import (
	"context"
	"math"
	"testing"
	"time"

	"github.com/dupctl/dupctl/internal/worker"
)

// The plans the live runner follows must show each cause in the simulator
// too: the faulty profile duplicates, the safe one does not.
func TestPlansShowTheirCause(t *testing.T) {
	for name, plan := range Plans() {
		sc, err := ScenarioByName(name)
		if err != nil {
			t.Fatal(err)
		}
		for _, pn := range []string{sc.Faulty, sc.Safe} {
			p, _ := worker.ProfileByName(pn)
			res, err := Play(context.Background(), PlayOptions{Scenario: name, Config: sc.Config(p), Plan: plan})
			if err != nil {
				t.Fatal(err)
			}
			want := pn == sc.Faulty
			rep := res.Report()
			if got := len(rep.Findings) > 0 && rep.Findings[0].Code == RuleDuplicate.Code; got != want {
				t.Errorf("%s under %s: report %+v, want a duplicate finding=%v", name, pn, rep.Findings, want)
			}
			if res.Found.Has(VDuplicate) != want {
				t.Errorf("%s under %s: %s, want duplicate=%v", name, pn, res.Found, want)
				for _, ev := range res.Timeline.Events {
					t.Logf("  %s %s %s", fmtDur(ev.T), ev.Lane, ev.Text)
				}
			}
		}
	}
}

func TestMillis(t *testing.T) {
	for d, want := range map[time.Duration]int64{0: 0, time.Microsecond: 1, 999 * time.Microsecond: 1, time.Millisecond: 1,
		1500 * time.Microsecond: 1, 2 * time.Minute: 120_000, -time.Second: -1000} {
		if got := Millis(d); got != want {
			t.Errorf("Millis(%s) = %d, want %d", d, got, want)
		}
	}
}

// A holder that dies at t=0 stops acting as owner at t=0: the chart must
// not draw it holding on until the end of the run.
func TestLeaseOfACrashedHolderEndsAtTheCrash(t *testing.T) {
	sc, _ := ScenarioByName("crash")
	p, _ := worker.ProfileByName("claim")
	res, err := Run(context.Background(), Options{Scenario: sc, Profiles: []worker.Profile{p}})
	if err != nil {
		t.Fatal(err)
	}
	ex := res.Profiles[0].Example
	if ex == nil {
		t.Fatal("claim under crash: no counterexample")
	}
	var crashAt int64 = -1
	for _, ev := range ex.Timeline.Events {
		if ev.Kind == "crash" {
			crashAt = ev.T
			break
		}
	}
	if crashAt < 0 || len(ex.Timeline.Leases) == 0 {
		t.Fatalf("no crash or no lease in the timeline: %+v", ex.Timeline)
	}
	first := ex.Timeline.Leases[0]
	if first.Believed != crashAt {
		t.Errorf("lease token %d: holder acted as owner until %d ms, but it crashed at %d ms", first.Token, first.Believed, crashAt)
	}
}

// The upper bound of a duplicate rate is a number, also when there are more
// duplicates than jobs (a job redelivered again and again past the ack
// timeout): JSON cannot carry NaN.
func TestUpper95IsANumber(t *testing.T) {
	for _, c := range []struct{ k, n int }{{0, 1000}, {5, 1000}, {1000, 1000}, {19179, 1000}, {3, 0}} {
		u := upper95(c.k, c.n)
		if math.IsNaN(u) || math.IsInf(u, 0) || (c.n > 0 && u < float64(c.k)/float64(c.n)) {
			t.Errorf("upper95(%d, %d) = %v", c.k, c.n, u)
		}
	}
}
