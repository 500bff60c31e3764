package chaos

import (
	"encoding/json"
	"strings"
	"testing"
	"time"

	"github.com/dupctl/dupctl/internal/cause"
)

// The judge needs no service: traces recorded from real runs against
// the shared Redis, PostgreSQL and RabbitMQ (testdata/traces, written by
// DUPCTL_CHAOS_TRACES) judge again to the verdict the run gave, whole -
// outcomes, causes, their sentences, evidence and deciding events.
func TestJudgeRecordedTraces(t *testing.T) {
	cases := []struct {
		file    string
		outcome string // the run's
		victim  string // the victim key's outcome and cause
		cause   string
		lost    bool // a holder went on after its lock was taken
	}{
		{"clean-lock-expiry-safe-flow.json", OutcomeOK, OutcomeOK, "", false},
		{"redelivery-crash-before-ack.json", OutcomeDup, OutcomeDup, cause.Redelivery.Code, false},
		{"lock-expiry-paused-holder.json", OutcomeDup, OutcomeDup, cause.LockExpiry.Code, false},
		{"loss-acked-first.json", OutcomeLoss, OutcomeLoss, RuleLoss.Code, false},
		{"lock-failover-played.json", OutcomeDup, OutcomeDup, cause.LockFailover.Code, false},
		{"redis-cut-lock-lost-unnoticed.json", OutcomeOK, OutcomeOK, "", true},
	}
	for _, c := range cases {
		t.Run(strings.TrimSuffix(c.file, ".json"), func(t *testing.T) {
			f, err := loadTrace(c.file)
			if err != nil {
				t.Fatal(err)
			}
			tr, effects := f.decode()
			rr := tr.judge(effects, f.Unsettled)
			if rr.Outcome != c.outcome || rr.Fault == nil || rr.Missing != "" {
				t.Errorf("run %s (fault %v, missing %q), want %s with its fault", rr.Outcome, rr.Fault != nil, rr.Missing, c.outcome)
			}
			k := keyVerdict(t, rr, tr.plan.Victim)
			if k.Outcome != c.victim || k.Cause != c.cause {
				t.Errorf("victim %s %s, want %s %s: %s", k.Outcome, k.Cause, c.victim, c.cause, k.Why)
			}
			if (len(rr.LockLost) > 0) != c.lost {
				t.Errorf("lock lost %v, want %v", rr.LockLost, c.lost)
			}
			if rr.conditionMissed != f.ConditionMissed {
				t.Errorf("condition missed %v, the run judged %v", rr.conditionMissed, f.ConditionMissed)
			}
			got, _ := json.MarshalIndent(rr, "", "  ")
			want, _ := json.MarshalIndent(f.Verdict, "", "  ")
			if string(got) != string(want) {
				t.Errorf("the trace judges otherwise than the run did:\n%s", firstDiff(string(want), string(got)))
			}
		})
	}
}

// A verdict follows the trace: the same recorded runs, with one thing
// the proxies saw taken away, are judged by what is left.
func TestJudgeFollowsTheTrace(t *testing.T) {
	cases := []struct {
		name, file string
		change     func(*trace)
		cause      string
		why        string // in the victim's sentence
	}{
		{"the redelivered copy arrived as a new message", "redelivery-crash-before-ack.json", func(tr *trace) {
			for _, d := range tr.delivs {
				d.redelivered = false
			}
		}, cause.RuleUnexplained.Code, "handled another message for"},
		{"the paused holder released its lock before the next took it", "lock-expiry-paused-holder.json", func(tr *trace) {
			first, second := tr.leases[0], tr.leases[1]
			first.released = second.from.Add(-time.Millisecond)
		}, cause.RuleUnexplained.Code, "matches no known cause"},
		{"the failover lost no lock on a real Sentinel setup", "lock-failover-played.json", func(tr *trace) {
			tr.faults.sentinel = &sentinelFacts{master: "127.0.0.1:1", newMaster: "127.0.0.1:2"}
		}, cause.RuleUnexplained.Code, "matches no known cause"},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			f, err := loadTrace(c.file)
			if err != nil {
				t.Fatal(err)
			}
			tr, effects := f.decode()
			c.change(tr)
			k := keyVerdict(t, tr.judge(effects, f.Unsettled), tr.plan.Victim)
			if k.Cause != c.cause || !strings.Contains(k.Why, c.why) {
				t.Errorf("victim %s %s, want %s with %q: %s", k.Outcome, k.Cause, c.cause, c.why, k.Why)
			}
		})
	}
}

func keyVerdict(t *testing.T, rr *RunResult, key string) KeyVerdict {
	t.Helper()
	for _, k := range rr.Keys {
		if k.Key == key {
			return k
		}
	}
	t.Fatalf("no verdict on %s in %+v", key, rr.Keys)
	return KeyVerdict{}
}

// firstDiff shows the first line where two texts part, with a little
// before it.
func firstDiff(want, got string) string {
	w, g := strings.Split(want, "\n"), strings.Split(got, "\n")
	for i := 0; i < max(len(w), len(g)); i++ {
		if i >= len(w) || i >= len(g) || w[i] != g[i] {
			from := max(0, i-3)
			return "recorded:\n" + strings.Join(w[from:min(len(w), i+2)], "\n") + "\njudged now:\n" + strings.Join(g[from:min(len(g), i+2)], "\n")
		}
	}
	return ""
}
