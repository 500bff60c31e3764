package sim

import (
	"fmt"
	"github.com/dupctl/dupctl/internal/cause"
	"strings"

	"github.com/dupctl/dupctl/internal/platform/english"
	"github.com/dupctl/dupctl/internal/platform/findings"
	"github.com/dupctl/dupctl/internal/worker"
)

// This file turns what the simulator found into findings and the JSON
// "data" of the simulate commands (documented in docs/simulate.md): the
// one place those findings are built.

// Report is a scenario run's findings. In the demonstration (no profile
// chosen), the faulty profile's duplicate is the expected result (info);
// anything that differs from the documented expectation is an error.
func (r *Result) Report() *findings.Report {
	rep := &findings.Report{Command: "simulate " + r.Scenario.Name, Data: scenarioData(r)}
	rep.Check(RuleDuplicate.Code, RuleLoss.Code, RuleNonOwnerUnlock.Code, RuleLivelock.Code, RuleIncomplete.Code)
	if r.Demo {
		rep.Check(RuleMatrixMismatch.Code)
	}
	for i := range r.Profiles {
		rep.Add(profileFindings(r.Scenario, &r.Profiles[i], r.Demo)...)
	}
	return rep
}

func profileFindings(sc *Scenario, pr *ProfileResult, demo bool) []findings.Finding {
	var out []findings.Finding
	subject := sc.Name + "/" + pr.Profile.Name
	var evidence []string
	if ex := pr.Example; ex != nil {
		evidence = KeyEvents(&ex.Timeline)
		evidence = append(evidence, "replay: dupctl simulate replay "+ex.Token)
	}
	expectedHere := pr.demonstrates(sc, demo)
	explored := ExploredText(pr)
	for _, x := range violationRules {
		if !pr.Found.Has(x.v) {
			continue
		}
		f := x.rule.New(subject, fmt.Sprintf("profile %s %s (%s)", pr.Profile.Name, x.verb, explored), evidence...)
		if expectedHere {
			f.Severity = findings.Info
			f.Message += " (expected: the scenario's demonstration of the cause)"
		}
		out = append(out, f)
	}
	if pr.Explore == ExploreExhaustive && !pr.Complete {
		out = append(out, incomplete(subject, pr.States))
	}
	if demo && pr.HasExpected && pr.Complete && pr.Outcome() != pr.Expected {
		out = append(out, mismatch(subject, pr.Expected, pr.Outcome()))
	}
	return out
}

// violationRules pairs each invariant with its rule and how a finding
// says a profile broke it.
var violationRules = []struct {
	v    Violation
	rule findings.Rule
	verb string
}{
	{VDuplicate, RuleDuplicate, "runs a side effect twice"},
	{VLoss, RuleLoss, "loses a job"},
	{VNonOwnerUnlock, RuleNonOwnerUnlock, "releases a lock it does not hold"},
	{VLivelock, RuleLivelock, "has a schedule that never finishes"},
}

// mismatch is the finding for a result that differs from the documented
// matrix cell; evidence may say how to reproduce it.
func mismatch(subject string, expected, observed Expect, evidence ...string) findings.Finding {
	return RuleMatrixMismatch.New(subject, fmt.Sprintf("documented %s, observed %s", expected, observed), evidence...)
}

func incomplete(subject string, states int) findings.Finding {
	return RuleIncomplete.New(subject, "stopped after "+english.Number(states)+" states")
}

// ExploredText says how much of the scope a profile's exploration covered.
func ExploredText(pr *ProfileResult) string {
	if pr.Explore == ExploreRandom {
		return fmt.Sprintf("%s of %s random schedules", english.Number(pr.FailingRuns), english.Number(pr.Runs))
	}
	return fmt.Sprintf("exhaustive, %s states", english.Number(pr.States))
}

// KeyEvents picks the lines of a timeline that explain it: the faults, the
// clock's effects and the side effects.
func KeyEvents(tl *Timeline) []string {
	var out []string
	for _, ev := range tl.Events {
		switch ev.Kind {
		case "crash", "pause", "drop", "duplicate", "expire", "ack-timeout", "failover", "effect", "duplicate-effect", "requeue":
		case "unlock":
			if !strings.Contains(ev.Text, "deleted the lock of") {
				continue
			}
		case "mark-failed":
			// The status race's own step: a late FAILED over SUCCEEDED.
			if !strings.Contains(ev.Text, "overwrote SUCCEEDED") {
				continue
			}
		default:
			continue
		}
		out = append(out, fmt.Sprintf("step %d t=%s %s: %s", ev.Step, FormatMillis(ev.T), ev.Lane, ev.Text))
	}
	return out
}

// ViolationText says what a violation means in a sentence's words.
func ViolationText(v Violation) string {
	switch v {
	case VDuplicate:
		return "a side effect runs twice"
	case VLoss:
		return "a job is lost"
	case VNonOwnerUnlock:
		return "a lock is released by a non-owner"
	case VLivelock:
		return "a schedule never finishes"
	}
	return v.String()
}

// FaultsText lists a config's fault budget.
func FaultsText(c *Config) string {
	f := c.Faults
	var faults []string
	if f.Crash > 0 {
		faults = append(faults, fmt.Sprintf("%d crash (%s)", f.Crash, pointsText(f.CrashAt)))
	}
	if f.Pause > 0 {
		faults = append(faults, fmt.Sprintf("%d pause of %s (%s)", f.Pause, FormatMillis(c.PauseFor), pointsText(f.PauseAt)))
	}
	if f.DropAck > 0 {
		faults = append(faults, fmt.Sprintf("%d connection drop before the ack", f.DropAck))
	}
	if f.DupPublish > 0 {
		faults = append(faults, fmt.Sprintf("%d publisher duplicate", f.DupPublish))
	}
	if f.EffectFail > 0 {
		faults = append(faults, fmt.Sprintf("%d retryable effect failure", f.EffectFail))
	}
	if f.Failover > 0 {
		faults = append(faults, fmt.Sprintf("%d Redis failover before the lock replicated (%s)", f.Failover, pointsText(f.FailoverAt)))
	}
	if len(faults) == 0 {
		return "none"
	}
	return strings.Join(faults, ", ")
}

func pointsText(ps worker.Points) string {
	var names []string
	for p := worker.PointAfterReceive; p < worker.NumPoints; p++ {
		if ps.Has(p) {
			names = append(names, p.String())
		}
	}
	if len(names) == int(worker.NumPoints)-1 {
		return "at any point"
	}
	return "at " + strings.Join(names, " or ")
}

// Report is the matrix's findings: a cell that differs from its
// documentation is an error, a cell whose exploration stopped early a
// warning.
func (m *MatrixResult) Report() *findings.Report {
	rep := &findings.Report{Command: "simulate matrix"}
	rep.Check(RuleMatrixMismatch.Code, RuleIncomplete.Code)
	cells := []cellJSON{}
	for _, row := range m.Cells {
		for _, c := range row {
			subject := c.Scenario + "/" + c.Profile
			cells = append(cells, cellJSON{Scenario: c.Scenario, Profile: c.Profile, Expected: c.Expected.String(), Observed: c.Observed.String(),
				Found: c.Found.String(), States: c.States, Complete: c.Complete, Match: c.Match(), Skipped: c.States < 0})
			switch {
			case c.States < 0:
			case !c.Complete:
				rep.Add(incomplete(subject, c.States))
			case c.Expected != c.Observed:
				rep.Add(mismatch(subject, c.Expected, c.Observed, fmt.Sprintf("dupctl simulate %s --profile %s", c.Scenario, c.Profile)))
			}
		}
	}
	rep.Data = map[string]any{"cells": cells, "states": m.States}
	return rep
}

type cellJSON struct {
	Scenario string `json:"scenario"`
	Profile  string `json:"profile"`
	Expected string `json:"expected"`
	Observed string `json:"observed"`
	Found    string `json:"violations"`
	States   int    `json:"states"`
	Complete bool   `json:"complete"`
	Match    bool   `json:"match"`
	Skipped  bool   `json:"skipped_by_shard,omitempty"`
}

// Report is the replayed schedule's findings.
func (r *ReplayResult) Report() *findings.Report {
	p := r.Schedule.Config.Profile
	rep := &findings.Report{Command: "simulate replay"}
	rep.Check(RuleDuplicate.Code, RuleLoss.Code, RuleNonOwnerUnlock.Code, RuleLivelock.Code)
	subject := r.Scenario.Name + "/" + p.Name
	ev := KeyEvents(&r.Timeline)
	for _, x := range violationRules {
		if !r.Found.Has(x.v) {
			continue
		}
		f := x.rule.New(subject, fmt.Sprintf("profile %s: %s in this schedule", p.Name, ViolationText(x.v)), ev...)
		if r.Schedule.Expected {
			// The same severity as the command that printed the token.
			f.Severity = findings.Info
			f.Message += " (expected: the scenario's demonstration of the cause)"
		}
		rep.Add(f)
	}
	rep.Data = map[string]any{
		"scenario": r.Scenario.Name, "profile": p.Name, "switches": p.Describe(), "scope": scopeOf(&r.Schedule.Config), "seed": r.Schedule.Seed,
		"outcome": OutcomeOf(r.Found).String(), "violations": r.Found.String(), "stats": r.Stats, "timeline": r.Timeline,
		"counterfactual": counterfactualData(r.Counterfactual),
	}
	return rep
}

// Report is the risk estimate's findings: jobs that outlive the lock TTL,
// and duplicates per million under each profile.
func (r *RiskResult) Report() *findings.Report {
	o := r.Options
	rep := &findings.Report{Command: "simulate risk", Data: map[string]any{
		"job_duration": o.Duration.String(), "p50_ms": o.Duration.Quantile(0.5), "p99_ms": o.Duration.Quantile(0.99),
		"lock_ttl_ms": o.LockTTL, "ack_timeout_ms": o.AckTimeout, "dup_rate": o.DupRate, "crash_rate": o.CrashRate,
		"seed": o.Seed, "p_duration_above_ttl": r.PLongerThanTTL, "profiles": r.Rows,
	}}
	rep.Check(RuleRiskDuplicates.Code, RuleRiskLoss.Code, RuleRiskExpiry.Code)
	profiles := map[string]worker.Profile{}
	for _, p := range o.Profiles {
		profiles[p.Name] = p
	}
	if r.PLongerThanTTL > 0 {
		rep.Add(RuleRiskExpiry.New("lock TTL "+FormatMillis(o.LockTTL),
			fmt.Sprintf("%.3g%% of jobs run longer than the lock TTL (p99 %s)", 100*r.PLongerThanTTL, FormatMillis(o.Duration.Quantile(0.99)))))
	}
	for _, row := range r.Rows {
		ev := fmt.Sprintf("%s jobs simulated; lock expiries %.0f/M, lost %.0f/M, dead-lettered %.0f/M", english.Number(row.Jobs),
			row.LockExpiriesPerM, row.LossesPerM, row.DeadLetteredPerM)
		p, known := profiles[row.Profile]
		if row.DuplicatesPerM > 0 {
			f := RuleRiskDuplicates.New("profile "+row.Profile, fmt.Sprintf("%.0f duplicate side effects per million jobs", row.DuplicatesPerM), ev)
			if known {
				f.Fix = duplicateFix(p, row)
			}
			rep.Add(f)
		}
		if row.LossesPerM > 0 {
			f := RuleRiskLoss.New("profile "+row.Profile, fmt.Sprintf("%.0f lost jobs per million", row.LossesPerM), ev)
			if known {
				f.Fix = lossFix(p)
			}
			rep.Add(f)
		}
	}
	return rep
}

// duplicateFix is the fix for the mitigations this profile lacks that the
// risk model exercises (duplicate deliveries, crashes, lock expiry; not
// effect failures, so not the status race), in the words of the causes
// each leaves open (internal/cause): no idempotency lets a redelivery run
// again, check-then-act is a non-atomic commit. No lock advice where no
// lock is taken, no TTL advice where the lock never expired.
func duplicateFix(p worker.Profile, row worker.RiskRow) string {
	var parts []string
	switch p.Idem {
	case worker.IdemNone:
		parts = append(parts, cause.Redelivery.Remedy)
	case worker.IdemCheck:
		parts = append(parts, cause.NonAtomicCommit.Remedy)
	}
	if p.Idem != worker.IdemNone && p.Key == worker.KeyPerAttempt {
		parts = append(parts, cause.UnstableKey.Remedy)
	}
	switch {
	case p.Idem == worker.IdemNone:
	case p.StatusFrom == worker.StatusCache:
		parts = append(parts, cause.StaleCache.Remedy)
	case p.StatusFrom == worker.StatusReplica:
		// The stale-cache cause with a replica as the cache.
		parts = append(parts, "decide 'already done?' on the primary, not on a read replica")
	}
	if p.Lock {
		if p.LockKey == worker.LockKeyJob {
			parts = append(parts, cause.LockKeyJobID.Remedy)
		}
		if p.Unlock == worker.UnlockDel {
			parts = append(parts, cause.UnlockNoToken.Remedy)
		}
		if row.LockExpiriesPerM > 0 && !p.Renew {
			parts = append(parts, cause.LockExpiry.Remedy)
		}
	}
	if len(parts) == 0 {
		return RuleRiskDuplicates.Fix
	}
	return upperFirst(strings.Join(parts, "; ")) + "."
}

// lossFix is the fix for the way this profile loses work.
func lossFix(p worker.Profile) string {
	var parts []string
	if p.Ack == worker.AckBefore {
		parts = append(parts, "acknowledge the message only after the status commit, never on receipt")
	}
	if p.Idem == worker.IdemClaim {
		parts = append(parts, "let a PROCESSING claim left by a dead worker expire and be reclaimed (a claimed_at with a lease), "+
			"instead of reading any claim as done")
	}
	if len(parts) == 0 {
		return RuleRiskLoss.Fix
	}
	return upperFirst(strings.Join(parts, "; ")) + "."
}

func upperFirst(s string) string {
	if s == "" {
		return s
	}
	return strings.ToUpper(s[:1]) + s[1:]
}

// The JSON "data" of a scenario run.

type scenarioJSON struct {
	Name   string `json:"name"`
	Title  string `json:"title"`
	Cause  string `json:"cause"`
	Faulty string `json:"faulty_profile"`
	Safe   string `json:"safe_profile"`
}

// ScopeJSON is a config as the simulate commands' JSON shows it.
type ScopeJSON struct {
	Workers      int    `json:"workers"`
	Jobs         int    `json:"jobs"`
	BusinessKeys int    `json:"business_keys"`
	LockTTLMs    int64  `json:"lock_ttl_ms"`
	AckTimeoutMs int64  `json:"ack_timeout_ms"`
	JobDuration  string `json:"job_duration"`
	PauseMs      int64  `json:"pause_ms"`
	CacheLagMs   int64  `json:"cache_lag_ms"`
	ReplicaLagMs int64  `json:"replica_lag_ms"`
	MaxAttempts  int    `json:"max_attempts"`
	Faults       string `json:"faults"`
}

type counterfactualJSON struct {
	Profile    string `json:"profile"`
	Outcome    string `json:"outcome"`
	Violations string `json:"violations"`
	Stats      Stats  `json:"stats"`
}

type exampleJSON struct {
	Violation      string               `json:"violation"`
	Steps          int                  `json:"steps"`
	OriginalSteps  int                  `json:"original_steps"`
	Token          string               `json:"replay_token"`
	Stats          Stats                `json:"stats"`
	Timeline       Timeline             `json:"timeline"`
	Counterfactual []counterfactualJSON `json:"counterfactual"`
}

type profileJSON struct {
	Profile  string `json:"profile"`
	Switches string `json:"switches"`
	Expected string `json:"expected,omitempty"`
	// ScopeChanged: flags changed the scenario's scope, so no documented
	// outcome applies (expected is absent).
	ScopeChanged bool         `json:"scope_changed"`
	Outcome      string       `json:"outcome"`
	Violations   string       `json:"violations"`
	Explore      string       `json:"explore"`
	States       int          `json:"states"`
	Transitions  int          `json:"transitions"`
	Runs         int          `json:"runs"`
	FailingRuns  int          `json:"failing_runs"`
	Complete     bool         `json:"complete"`
	Example      *exampleJSON `json:"counterexample"`
}

type scenarioDataJSON struct {
	Scenario scenarioJSON  `json:"scenario"`
	Scope    ScopeJSON     `json:"scope"`
	Profiles []profileJSON `json:"profiles"`
}

// ScopeOf is a config's scope as JSON.
func ScopeOf(c *Config) ScopeJSON { return scopeOf(c) }

func scopeOf(c *Config) ScopeJSON {
	return ScopeJSON{Workers: c.Workers, Jobs: c.Jobs, BusinessKeys: c.Keys, LockTTLMs: c.LockTTL, AckTimeoutMs: c.AckTimeout,
		JobDuration: c.Duration.String(), PauseMs: c.PauseFor, CacheLagMs: c.CacheLag,
		ReplicaLagMs: c.ReplicaLag, MaxAttempts: int(c.MaxAttempts), Faults: FaultsText(c)}
}

func counterfactualData(cfs []Counterfactual) []counterfactualJSON {
	out := []counterfactualJSON{}
	for _, cf := range cfs {
		out = append(out, counterfactualJSON{Profile: cf.Profile.Name, Outcome: OutcomeOf(cf.Found).String(), Violations: cf.Found.String(),
			Stats: cf.Stats})
	}
	return out
}

func exampleData(ex *Counterexample) *exampleJSON {
	if ex == nil {
		return nil
	}
	return &exampleJSON{Violation: ex.Violation.String(), Steps: ex.Steps, OriginalSteps: ex.OriginalSteps, Token: ex.Token,
		Stats: ex.Stats, Timeline: ex.Timeline, Counterfactual: counterfactualData(ex.Counterfactual)}
}

func scenarioData(res *Result) scenarioDataJSON {
	sc := res.Scenario
	out := scenarioDataJSON{Scenario: scenarioJSON{Name: sc.Name, Title: sc.Title, Cause: sc.Cause, Faulty: sc.Faulty, Safe: sc.Safe},
		Profiles: []profileJSON{}}
	if len(res.Profiles) > 0 {
		out.Scope = scopeOf(&res.Profiles[0].Config)
	}
	for _, pr := range res.Profiles {
		p := profileJSON{Profile: pr.Profile.Name, Switches: pr.Profile.Describe(), Outcome: pr.Outcome().String(),
			Violations: pr.Found.String(), Explore: pr.Explore, States: pr.States, Transitions: pr.Transitions, Runs: pr.Runs,
			FailingRuns: pr.FailingRuns, Complete: pr.Complete, Example: exampleData(pr.Example), ScopeChanged: pr.ScopeChanged}
		if pr.HasExpected {
			p.Expected = pr.Expected.String()
		}
		out.Profiles = append(out.Profiles, p)
	}
	return out
}

// Report is the played plan's findings: the invariants its one schedule
// broke in the simulator.
func (r *PlayResult) Report() *findings.Report {
	p := r.Config.Profile
	rep := &findings.Report{Command: "simulate " + r.Scenario + " (plan)"}
	rep.Check(RuleDuplicate.Code, RuleLoss.Code, RuleNonOwnerUnlock.Code, RuleLivelock.Code)
	subject := r.Scenario + "/" + p.Name
	ev := KeyEvents(&r.Timeline)
	for _, x := range violationRules {
		if r.Found.Has(x.v) {
			rep.Add(x.rule.New(subject, fmt.Sprintf("profile %s: %s in the plan's schedule", p.Name, ViolationText(x.v)), ev...))
		}
	}
	rep.Data = map[string]any{
		"scenario": r.Scenario, "profile": p.Name, "plan": r.Plan.Describe(), "scope": scopeOf(&r.Config),
		"outcome": OutcomeOf(r.Found).String(), "violations": r.Found.String(), "stats": r.Stats, "timeline": r.Timeline,
	}
	return rep
}
