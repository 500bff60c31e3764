package simulate

import (
	"fmt"
	"io"

	"github.com/dupctl/dupctl/internal/platform/report"
	"github.com/dupctl/dupctl/internal/sim/live"
)

func liveDocument(res *live.ScenarioResult, verbose bool) report.Document {
	return report.Document{Report: res.Report(), Text: func(w io.Writer, th *report.Theme) error {
		return writeLive(w, th, res, verbose)
	}}
}

// writeLive is the live table: per profile, the full virtual search's
// verdict, the simulator's for the one plan played, and the real servers'.
func writeLive(w io.Writer, th *report.Theme, res *live.ScenarioResult, verbose bool) error {
	sc := res.Scenario
	fmt.Fprintf(w, "%s %s, on the real servers\n", th.Strong("simulate "+sc.Name+" --live:"), sc.Title)
	if res.Scope != nil {
		fmt.Fprintf(w, "Scope: %s; one virtual second = %s\n", scopeText(res.Scope), res.Scale)
	}
	fmt.Fprintf(w, "Plan: %s\n\n", res.Plan)
	t := report.NewTable("PROFILE", "SEARCH", "PLAN", "REAL SERVERS", "EFFECTS", "DLQ", "CRASHES", "TIME")
	for _, r := range res.Rows {
		lv := outcomeText(th, r.Found)
		if !r.Match {
			lv = th.Mark(r.Live + " ≠ plan")
		}
		t.Row(r.Profile, r.Search, r.Virtual, lv, fmt.Sprint(r.Effects), fmt.Sprint(r.DLQ), fmt.Sprint(r.Crashes), r.Elapsed)
	}
	if err := t.Render(w); err != nil {
		return err
	}
	fmt.Fprintf(w, "%s\n", th.Faint("SEARCH: every schedule of the scope in the simulator; "+
		"PLAN: the one schedule played live, in the simulator"))
	for _, r := range res.Rows {
		if r.Why != "" {
			fmt.Fprintf(w, "%s %s\n", th.Strong(r.Profile+":"), r.Why)
		}
	}
	for _, r := range res.Rows {
		if r.Found != 0 || !r.Match {
			fmt.Fprintf(w, "\n%s\n", th.Strong(r.Profile+" on the real servers:"))
			if err := writeTimeline(w, th, r.Timeline); err != nil {
				return err
			}
			if !verbose {
				break
			}
		}
	}
	return nil
}
