package simulate

import (
	"fmt"
	"io"

	"github.com/dupctl/dupctl/internal/platform/findings"
	"github.com/dupctl/dupctl/internal/platform/report"
	"github.com/dupctl/dupctl/internal/sim"
)

func writeRisk(w io.Writer, th *report.Theme, res *sim.RiskResult) error {
	r := res.Options
	fmt.Fprintf(w, "%s jobs of %s (p50 %s, p99 %s), lock TTL %s, ack timeout %s\n", th.Strong("simulate risk:"),
		r.Duration, sim.FormatMillis(r.Duration.Quantile(0.5)), sim.FormatMillis(r.Duration.Quantile(0.99)),
		sim.FormatMillis(r.LockTTL), ackText(r.AckTimeout))
	fmt.Fprintf(w, "%.3g%% of jobs outlive the TTL; %.3g%% are delivered twice, %.3g%% crash mid-flow; %s jobs per profile, seed %d\n\n",
		100*res.PLongerThanTTL, 100*r.DupRate, 100*r.CrashRate, count(r.Jobs), r.Seed)
	t := report.NewTable("PROFILE", "LOCK EXPIRIES/M", "DUPLICATES/M", "(95% UPPER)", "LOST/M", "DLQ/M").AlignRight(1, 2, 3, 4, 5)
	for _, row := range res.Rows {
		dup := fmt.Sprintf("%.0f", row.DuplicatesPerM)
		if row.DuplicatesPerM > 0 {
			dup = th.Severity(findings.Error, dup)
		}
		t.Row(row.Profile, fmt.Sprintf("%.0f", row.LockExpiriesPerM), dup, fmt.Sprintf("%.0f", row.DuplicatesCI95High),
			fmt.Sprintf("%.0f", row.LossesPerM), fmt.Sprintf("%.0f", row.DeadLetteredPerM))
	}
	return t.Render(w)
}

func ackText(ms int64) string {
	if ms == 0 {
		return "none"
	}
	return sim.FormatMillis(ms)
}
