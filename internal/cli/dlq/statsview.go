package dlq

import (
	"fmt"
	"io"
	"slices"
	"strings"
	"time"

	"github.com/dupctl/dupctl/internal/platform/text"
	"github.com/dupctl/dupctl/internal/replay/dlqread"

	"github.com/dupctl/dupctl/internal/platform/english"
	"github.com/dupctl/dupctl/internal/platform/report"
)

func writeStats(w io.Writer, th *report.Theme, s *dlqread.StatsResult, now time.Time, verbose bool) error {
	head := fmt.Sprintf("%s queue %s (vhost %s): %s messages, %s", th.Strong("dlq stats:"), s.Queue, s.Vhost,
		english.Number(int64(s.Messages)), bytesText(s.Bytes))
	if s.Oldest != nil {
		head += ", oldest died " + ago(now, *s.Oldest)
	}
	fmt.Fprintln(w, head)
	if s.Read.Read < s.Read.AtStart.Messages {
		fmt.Fprintf(w, "%s\n", th.Faint(fmt.Sprintf("read %d of the %d counted at the start (--limit or --idle)",
			s.Read.Read, s.Read.AtStart.Messages)))
	}
	if s.Messages == 0 {
		fmt.Fprintln(w, "The queue is empty.")
		return nil
	}
	fmt.Fprintln(w)
	t := report.NewTable("GROUP", "MESSAGES", "REASON", "DIED IN", "ORIGINAL ROUTE", "JOB TYPE", "DEATHS", "CLASS", "ERROR").AlignRight(1)
	for _, g := range s.Groups {
		errText := g.ErrorPattern
		if !verbose {
			errText = text.ClipRunes(errText, 60, "...")
		}
		t.Row(g.ID, english.Number(int64(g.Messages)), g.Reason, dash(g.Queue), routeText(g.Exchange, g.RoutingKeys),
			dash(g.JobType), deathsText(g), classText(th, g.Class), dash(errText))
	}
	if err := t.Render(w); err != nil {
		return err
	}
	fmt.Fprintf(w, "\nBy reason: %s\n", countsText(s.ByReason))
	fmt.Fprintf(w, "By class:  %s\n", countsText(s.ByClass))
	if len(s.Groups) > 0 {
		fmt.Fprintf(w, "Preview a group's replay: %s\n", s.Groups[0].Replay)
	}
	fmt.Fprintf(w, "%s\n", th.Faint(readNote(s.Read)))
	return nil
}

func deathsText(g *dlqread.Group) string {
	avg := float64(g.DeathsTotal) / float64(max(g.Messages, 1))
	s := fmt.Sprintf("%.1f avg, %d max", avg, g.DeathsMax)
	if g.ReplayedMax > 0 {
		s += fmt.Sprintf(", replayed %dx", g.ReplayedMax)
	}
	if g.DeliveryLimited > 0 {
		// One death, but limit + 1 deliveries each.
		s += ", poison"
	}
	return s
}

func routeText(exchange string, keys []string) string {
	if exchange == "" && len(keys) == 0 {
		return "-"
	}
	ex := exchange
	if ex == "" {
		ex = `""`
	}
	return ex + " / " + strings.Join(keys, ",")
}

func countsText(m map[string]int) string {
	keys := make([]string, 0, len(m))
	for k := range m {
		keys = append(keys, k)
	}
	slices.Sort(keys)
	parts := make([]string, len(keys))
	for i, k := range keys {
		parts[i] = fmt.Sprintf("%s %s", k, english.Number(int64(m[k])))
	}
	return strings.Join(parts, ", ")
}
