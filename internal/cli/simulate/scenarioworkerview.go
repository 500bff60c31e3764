package simulate

import (
	"fmt"
	"io"
	"strings"
	"time"

	"github.com/dupctl/dupctl/internal/platform/english"
	"github.com/dupctl/dupctl/internal/platform/findings"
	"github.com/dupctl/dupctl/internal/platform/report"
	"github.com/dupctl/dupctl/internal/sim"
	"github.com/dupctl/dupctl/internal/sim/chaos"
)

// writeWorkerRuns draws a worker run: one line per run (its seed, fault,
// whether the fault's point came, the outcome and the effects per key),
// why each failing key failed, and how many runs reached each point. The
// schedules and replay commands are in the findings below it.
func writeWorkerRuns(w io.Writer, th *report.Theme, sc *sim.Scenario, res *chaos.Result) error {
	fmt.Fprintf(w, "%s %s\n", th.Strong("simulate "+sc.Name+" --worker:"), sc.Title)
	fmt.Fprintf(w, "%s\n", th.Faint("Your worker, under real faults: "+res.Worker))
	fmt.Fprintf(w, "%d %s, %d business %s per run\n\n",
		res.Workers, english.Plural(res.Workers, "worker", "workers"), res.Keys, english.Plural(res.Keys, "key", "keys"))
	t := report.NewTable("SEED", "FAULT", "REACHED", "OUTCOME", "EFFECTS PER KEY", "TIME").AlignRight(0)
	reached := map[chaos.Point][2]int{}
	for _, rr := range res.Runs {
		got := "yes"
		if rr.Fault == nil {
			got = th.Severity(findings.Warn, "no")
		}
		c := reached[rr.Plan.Point]
		c[1]++
		if rr.Fault != nil {
			c[0]++
		}
		reached[rr.Plan.Point] = c
		var effects []string
		for _, k := range rr.Keys {
			effects = append(effects, fmt.Sprint(k.Effects))
		}
		outcome := th.Pass(rr.Outcome)
		if rr.Failed() {
			outcome = th.Severity(findings.Error, rr.Outcome)
		}
		elapsed := (time.Duration(rr.ElapsedMs) * time.Millisecond).Round(10 * time.Millisecond)
		t.Row(fmt.Sprint(rr.Seed), rr.Plan.String(), got, outcome, strings.Join(effects, " "), elapsed.String())
	}
	if err := t.Render(w); err != nil {
		return err
	}
	for _, rr := range res.Runs {
		for _, k := range rr.Keys {
			if k.Outcome == chaos.OutcomeOK {
				continue
			}
			fmt.Fprintf(w, "\n%s %s %s: %s\n", th.Strong(fmt.Sprintf("seed %d:", rr.Seed)), k.Key, outcomeWord(th, k.Outcome), k.Why)
			if rr.Replay != "" {
				fmt.Fprintf(w, "replay: %s\n", rr.Replay)
			}
		}
	}
	var cover []string
	for _, p := range res.Points {
		c, ok := reached[p]
		if !ok {
			cover = append(cover, string(p)+" not run")
			continue
		}
		cover = append(cover, fmt.Sprintf("%s %d/%d", p, c[0], c[1]))
	}
	fmt.Fprintf(w, "\nFault points reached (runs): %s\n", strings.Join(cover, ", "))
	return nil
}

func outcomeWord(th *report.Theme, o string) string {
	switch o {
	case chaos.OutcomeDup, chaos.OutcomeLoss:
		return th.Severity(findings.Error, o)
	}
	return th.Severity(findings.Warn, o)
}
