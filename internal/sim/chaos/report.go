package chaos

import (
	"fmt"

	"github.com/dupctl/dupctl/internal/platform/findings"
)

// Report turns the runs into findings: a duplicate under its cause's code,
// a loss, a fault point that never came, a foreign unlock, a run that did
// not settle. Each failing finding carries its schedule and the command
// that replays its seed.
func (res *Result) Report() *findings.Report {
	rep := &findings.Report{Command: "simulate " + res.Scenario + " {Worker}", Data: res}
	rules := map[string]findings.Rule{}
	for _, r := range append(causeRules(), Rules()...) {
		rep.Check(r.Code)
		rules[r.Code] = r
	}
	for i := range res.Runs {
		rr := &res.Runs[i]
		where := fmt.Sprintf("seed %d, %s", rr.Seed, rr.Plan)
		replay := func(ev []string) []string {
			if rr.Replay != "" {
				ev = append(ev, "replay: "+rr.Replay)
			}
			return ev
		}
		dupKeys := map[string]bool{}
		for _, kv := range rr.Keys {
			switch kv.Outcome {
			case OutcomeDup:
				dupKeys[kv.Key] = true
				rule := rules[kv.Cause]
				rep.Add(rule.New(kv.Key, fmt.Sprintf("side effect ran %d times (%s): %s", kv.Effects, where, kv.Why), replay(kv.Evidence)...))
			case OutcomeLoss:
				rep.Add(RuleLoss.New(kv.Key, fmt.Sprintf("message lost (%s): %s", where, kv.Why), replay(kv.Evidence)...))
			}
			if kv.Cause == RuleUncounted.Code {
				rep.Add(RuleUncounted.New(kv.Key, fmt.Sprintf("%s: %s", where, kv.Why), replay(kv.Evidence)...))
			}
		}
		switch {
		case rr.Fault == nil && rr.conditionMissed:
			rep.Add(RuleNotReached.New(rr.Plan.Victim, fmt.Sprintf("the fault came (%s%s), but %s: the run proves nothing about it",
				where, attemptsText(rr), rr.Missing), attemptsEvidence(rr)...))
		case rr.Fault == nil:
			rep.Add(RuleNotReached.New(rr.Plan.Victim, fmt.Sprintf("the %s point never came for %s (%s): %s",
				rr.Plan.Point, rr.Plan.Victim, where, notReachedHint(rr.Plan.Point))))
		}
		for _, line := range rr.ForeignUnlocks {
			rep.Add(RuleForeignUnlock.New(rr.Plan.Victim, fmt.Sprintf("%s (%s)", line, where), replay(nil)...))
		}
		for _, ll := range rr.LockLost {
			rep.Add(RuleLockLost.New(ll.Key, fmt.Sprintf("%s (%s)", ll.Why, where), replay(ll.Evidence)...))
		}
		if rr.Unsettled != "" {
			rep.Add(RuleUnsettled.New(fmt.Sprintf("seed %d", rr.Seed), "the run did not settle: "+rr.Unsettled))
		}
	}
	return rep
}

// attemptsText says how many times a run was tried.
func attemptsText(rr *RunResult) string {
	if len(rr.Attempts) == 0 {
		return ""
	}
	return fmt.Sprintf("; %d attempts", len(rr.Attempts)+1)
}

// attemptsEvidence lists what each earlier attempt lacked.
func attemptsEvidence(rr *RunResult) []string {
	var out []string
	for _, a := range rr.Attempts {
		out = append(out, fmt.Sprintf("attempt %d (%s, run %s): %s", a.Plan.Attempt, a.Plan, a.ID, a.Missing))
	}
	return out
}

func notReachedHint(p Point) string {
	switch p {
	case AfterLock:
		return "dupctl saw no lock taken on it through its Redis proxy (SET NX, or a lock script); does the worker lock, and through {redis}?"
	case BeforeWrite, AfterWrite:
		return "dupctl saw no INSERT/UPDATE/DELETE with the business key as a parameter through its PostgreSQL proxy; " +
			"does the worker write through {postgres}?"
	case BeforeCommit:
		return "dupctl saw no COMMIT of a transaction holding a write of it: a worker that writes with autocommit (each statement its own " +
			"transaction) has no commit to cut off, or it writes outside {postgres}"
	case BeforeAck, AfterAck:
		return "the worker never acked it (auto-ack consumers, or it died first)"
	}
	return "the message was never delivered through dupctl's AMQP proxy"
}
