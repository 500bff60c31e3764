package chaos

import (
	"context"
	"fmt"
	"slices"
	"strings"

	"github.com/dupctl/dupctl/internal/logs"
	"github.com/dupctl/dupctl/internal/platform/config"
	"github.com/dupctl/dupctl/internal/platform/findings"
	"github.com/dupctl/dupctl/internal/platform/problem"
)

// Proof is a worker run that doctor's checklist line "crash scenarios
// tested: die before ack, die before the status update, lock expiring
// mid-run" can cite: which scenarios ran on the job's own worker, at
// which points, and what they found.
type Proof struct {
	Job       string          `json:"job"`
	Worker    string          `json:"worker"`
	Scenarios []ScenarioProof `json:"scenarios"`
	results   []*Result
}

// ScenarioProof is one scenario's runs.
type ScenarioProof struct {
	Scenario string `json:"scenario"`
	Runs     int    `json:"runs"`
	// Reached counts the runs whose fault point came: a point the
	// worker never passes proves nothing.
	Reached    int      `json:"reached"`
	Duplicates int      `json:"duplicates"`
	Losses     int      `json:"losses"`
	Causes     []string `json:"causes,omitempty"`
	// Failing are the seeds of the failing runs, for replay.
	Failing []uint64 `json:"failing_seeds,omitempty"`
}

// Passed reports that every run reached its fault point and none lost or
// duplicated anything.
func (p *Proof) Passed() bool {
	for _, s := range p.Scenarios {
		if s.Reached < s.Runs || s.Duplicates+s.Losses > 0 {
			return false
		}
	}
	return len(p.Scenarios) > 0
}

// Summary is one line for doctor: "job payment (java -jar app.jar): crash
// 6/6 points, lock-expiry 2/2: no duplicate, no loss", or what failed and
// the seeds to replay.
func (p *Proof) Summary() string {
	var parts, bad []string
	for _, s := range p.Scenarios {
		parts = append(parts, fmt.Sprintf("%s %d/%d points", s.Scenario, s.Reached, s.Runs))
		if s.Duplicates+s.Losses > 0 {
			seeds := make([]string, len(s.Failing))
			for i, x := range s.Failing {
				seeds[i] = fmt.Sprint(x)
			}
			bad = append(bad, fmt.Sprintf("%s: %d duplicate(s), %d loss(es) (%s; seeds %s)",
				s.Scenario, s.Duplicates, s.Losses, strings.Join(s.Causes, ", "), strings.Join(seeds, ", ")))
		}
	}
	verdict := "no duplicate, no loss"
	if len(bad) > 0 {
		verdict = strings.Join(bad, "; ")
	}
	return fmt.Sprintf("job %s (%s): %s: %s", p.Job, p.Worker, strings.Join(parts, ", "), verdict)
}

// Report merges the findings of every scenario.
func (p *Proof) Report() *findings.Report {
	rep := &findings.Report{Command: "simulate {Worker} (job " + p.Job + ")", Data: p}
	for _, r := range p.results {
		sub := r.Report()
		rep.Check(sub.Checks...)
		rep.Add(sub.Findings...)
	}
	return rep
}

// JobOptions fills Options from a dupctl.yaml job's worker section; base
// carries the connections and limits.
func JobOptions(job config.Job, base Options) (Options, error) {
	w := job.Worker
	if w == nil || strings.TrimSpace(w.Command) == "" {
		return Options{}, problem.Inputf("", "job %s in dupctl.yaml has no worker command (jobs[].worker.command)", job.Name)
	}
	o := base
	o.Worker, o.Workers, o.Env, o.Publish = w.Command, w.Workers, w.Env, w.Publish
	o.Body, o.EffectsSQL, o.EffectsLog, o.CacheKeys = w.Body, w.EffectsSQL, w.EffectsLog, w.CacheKeys
	if w.EffectsLog != "" {
		c := logs.Config{Events: job.Logs.Events, Fields: map[string][]string{}}
		for name, path := range job.Logs.Fields {
			c.Fields[name] = []string{path}
		}
		m, err := logs.Compile(c)
		if err != nil {
			return Options{}, fmt.Errorf("job %s's logs mapping: %w", job.Name, err)
		}
		o.LogMapping = m
	}
	return o, nil
}

// ProveOptions are one dupctl.yaml job to prove: the job, the
// connections it runs against (Base: its URLs, the rest as Options), and
// the scenarios (none: the checklist's).
type ProveOptions struct {
	Job       config.Job
	Base      Options
	Scenarios []string
}

// ProveJob runs a job's worker through the crash scenarios of the
// checklist, one run per fault point: crash (die after receiving, after
// the lock, before and after the first write, before and after the ack)
// and, when the worker has a Redis, lock-expiry (paused past its lock's
// TTL). ProveOptions.Scenarios overrides the list.
func ProveJob(ctx context.Context, d Deps, po ProveOptions) (*Proof, error) {
	job, scenarios := po.Job, po.Scenarios
	o, err := JobOptions(job, po.Base)
	if err != nil {
		return nil, err
	}
	if len(scenarios) == 0 {
		scenarios = []string{"crash"}
		if o.RedisURL != "" {
			scenarios = append(scenarios, "lock-expiry")
		}
	}
	p := &Proof{Job: job.Name, Worker: o.Worker}
	for _, name := range scenarios {
		spec, err := SpecFor(name)
		if err != nil {
			return nil, err
		}
		so := o
		so.Scenario, so.Runs, so.At = name, len(spec.Points), nil
		res, err := Run(ctx, d, so)
		if err != nil {
			return nil, err
		}
		p.results = append(p.results, res)
		sp := ScenarioProof{Scenario: name, Runs: len(res.Runs)}
		for _, rr := range res.Runs {
			if rr.Fault != nil {
				sp.Reached++
			}
			for _, k := range rr.Keys {
				switch k.Outcome {
				case OutcomeDup:
					sp.Duplicates++
				case OutcomeLoss:
					sp.Losses++
				default:
					continue
				}
				if !slices.Contains(sp.Causes, k.Cause) {
					sp.Causes = append(sp.Causes, k.Cause)
				}
			}
			if rr.Failed() {
				sp.Failing = append(sp.Failing, rr.Seed)
			}
		}
		p.Scenarios = append(p.Scenarios, sp)
	}
	return p, nil
}
