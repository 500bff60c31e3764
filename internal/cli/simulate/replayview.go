package simulate

import (
	"fmt"
	"io"

	"github.com/dupctl/dupctl/internal/platform/report"
	"github.com/dupctl/dupctl/internal/sim"
)

func writeReplay(w io.Writer, th *report.Theme, r *sim.ReplayResult) error {
	p := r.Schedule.Config.Profile
	fmt.Fprintf(w, "%s %s under %s: %s\n", th.Strong("replay "+r.Scenario.Name+":"), r.Scenario.Title, p.Name, outcomeText(th, r.Found))
	fmt.Fprintf(w, "Scope: %s\n\n", scopeText(&r.Schedule.Config))
	if err := writeTimeline(w, th, &r.Timeline); err != nil {
		return err
	}
	fmt.Fprintf(w, "\n%s\n", th.Strong("The same schedule under every profile:"))
	return writeCounterfactuals(w, th, r.Counterfactual)
}

// writeCounterfactuals is the table of one schedule under every profile.
func writeCounterfactuals(w io.Writer, th *report.Theme, cfs []sim.Counterfactual) error {
	t := report.NewTable("PROFILE", "OUTCOME", "EFFECTS", "CAUGHT", "FENCED", "LOCK EXPIRIES", "DLQ")
	for _, cf := range cfs {
		t.Row(cf.Profile.Name, outcomeText(th, cf.Found), fmt.Sprint(cf.Stats.Effects), fmt.Sprint(cf.Stats.Caught),
			fmt.Sprint(cf.Stats.Fenced), fmt.Sprint(cf.Stats.LockExpiries), fmt.Sprint(cf.Stats.DeadLettered))
	}
	return t.Render(w)
}
