package simulate

import (
	"github.com/dupctl/dupctl/internal/sim"
)

// The JSON "data" of simulate commands (documented in docs/simulate.md).

type scenarioJSON struct {
	Name   string `json:"name"`
	Title  string `json:"title"`
	Cause  string `json:"cause"`
	Faulty string `json:"faulty_profile"`
	Safe   string `json:"safe_profile"`
}

type scopeJSON struct {
	Workers      int    `json:"workers"`
	Jobs         int    `json:"jobs"`
	BusinessKeys int    `json:"business_keys"`
	LockTTLMs    int64  `json:"lock_ttl_ms"`
	AckTimeoutMs int64  `json:"ack_timeout_ms"`
	JobDuration  string `json:"job_duration"`
	PauseMs      int64  `json:"pause_ms"`
	CacheLagMs   int64  `json:"cache_lag_ms"`
	MaxAttempts  int    `json:"max_attempts"`
	Faults       string `json:"faults"`
}

type counterfactualJSON struct {
	Profile    string    `json:"profile"`
	Outcome    string    `json:"outcome"`
	Violations string    `json:"violations"`
	Stats      sim.Stats `json:"stats"`
}

type exampleJSON struct {
	Violation      string               `json:"violation"`
	Steps          int                  `json:"steps"`
	OriginalSteps  int                  `json:"original_steps"`
	Token          string               `json:"replay_token"`
	Stats          sim.Stats            `json:"stats"`
	Timeline       sim.Timeline         `json:"timeline"`
	Counterfactual []counterfactualJSON `json:"counterfactual"`
}

type profileJSON struct {
	Profile     string       `json:"profile"`
	Switches    string       `json:"switches"`
	Expected    string       `json:"expected,omitempty"`
	Outcome     string       `json:"outcome"`
	Violations  string       `json:"violations"`
	Explore     string       `json:"explore"`
	States      int          `json:"states"`
	Transitions int          `json:"transitions"`
	Runs        int          `json:"runs"`
	FailingRuns int          `json:"failing_runs"`
	Complete    bool         `json:"complete"`
	Example     *exampleJSON `json:"counterexample"`
}

type scenarioDataJSON struct {
	Scenario scenarioJSON  `json:"scenario"`
	Scope    scopeJSON     `json:"scope"`
	Profiles []profileJSON `json:"profiles"`
}

func scopeOf(c *sim.Config) scopeJSON {
	return scopeJSON{Workers: c.Workers, Jobs: c.Jobs, BusinessKeys: c.Keys, LockTTLMs: c.LockTTL, AckTimeoutMs: c.AckTimeout,
		JobDuration: c.Duration.String(), PauseMs: c.PauseFor, CacheLagMs: c.CacheLag, MaxAttempts: int(c.MaxAttempts), Faults: faultsText(c)}
}

func exampleData(ex *sim.Counterexample) *exampleJSON {
	if ex == nil {
		return nil
	}
	out := &exampleJSON{Violation: ex.Violation.String(), Steps: ex.Steps, OriginalSteps: ex.OriginalSteps, Token: ex.Token,
		Stats: ex.Stats, Timeline: ex.Timeline, Counterfactual: []counterfactualJSON{}}
	for _, cf := range ex.Counterfactual {
		out.Counterfactual = append(out.Counterfactual, counterfactualJSON{Profile: cf.Profile.Name, Outcome: sim.OutcomeOf(cf.Found).String(), Violations: cf.Found.String(), Stats: cf.Stats})
	}
	return out
}

func scenarioData(res *sim.Result) scenarioDataJSON {
	sc := res.Scenario
	out := scenarioDataJSON{Scenario: scenarioJSON{Name: sc.Name, Title: sc.Title, Cause: sc.Cause, Faulty: sc.Faulty, Safe: sc.Safe}, Profiles: []profileJSON{}}
	if len(res.Profiles) > 0 {
		out.Scope = scopeOf(&res.Profiles[0].Config)
	}
	for _, pr := range res.Profiles {
		p := profileJSON{Profile: pr.Profile.Name, Switches: pr.Profile.Describe(), Outcome: pr.Outcome().String(), Violations: pr.Found.String(),
			Explore: pr.Explore, States: pr.States, Transitions: pr.Transitions, Runs: pr.Runs, FailingRuns: pr.FailingRuns, Complete: pr.Complete,
			Example: exampleData(pr.Example)}
		if pr.HasExpected {
			p.Expected = pr.Expected.String()
		}
		out.Profiles = append(out.Profiles, p)
	}
	return out
}
