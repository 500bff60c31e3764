package dlq

import (
	"context"
	"fmt"
	"io"
	"slices"
	"strings"
	"time"

	"github.com/dupctl/dupctl/internal/cli/cmdutil"
	"github.com/dupctl/dupctl/internal/platform/findings"
	"github.com/dupctl/dupctl/internal/platform/iostreams"
	"github.com/dupctl/dupctl/internal/platform/report"
	"github.com/dupctl/dupctl/internal/replay"
	"github.com/spf13/cobra"
)

// StatsOptions are one `dlq stats` run.
type StatsOptions struct {
	Factory *cmdutil.Factory
	Queue   string
	readFlags
	Idle time.Duration
	analysisFlags
}

// NewCmdStats is `dupctl dlq stats`.
func NewCmdStats(f *cmdutil.Factory, runF func(*StatsOptions) error) *cobra.Command {
	o := &StatsOptions{Factory: f}
	cmd := &cobra.Command{
		Use:   "stats --queue QUEUE",
		Short: "What is in a dead-letter queue and why, grouped, with what can be replayed",
		Long: `Stats reads the DLQ (non-destructively: every message is requeued at the
end) and groups its messages by last death reason (rejected, expired, maxlen,
delivery_limit), the queue they died in, their original exchange and routing
keys (x-death, or Spring AMQP's x-original-exchange / x-original-routingKey),
job type and error message (x-exception-message and friends; numbers and ids
are masked so one failure mode is one group).

Each group is classified retryable or non-retryable by the built-in rules
(timeouts, connection errors and 5xx are temporary; validation, not found
and 4xx are permanent) and your own (--rules FILE). The table says which
errors should never have been retried and gives each group an id that
'dlq replay --group ID' replays.` + readExitStatus,
		Example: `  dupctl dlq stats --queue orders.dlq
  dupctl dlq stats --queue orders.dlq --rules dlq-rules.txt -o json
  dupctl dlq stats --queue orders.dlq --error-field header.x-error --job-type-field body.kind`,
		Args: cobra.NoArgs,
		RunE: func(cmd *cobra.Command, args []string) error {
			if err := requireQueue(o.Queue); err != nil {
				return err
			}
			if err := o.checkRead(); err != nil {
				return err
			}
			if runF != nil {
				return runF(o)
			}
			return runStats(cmd.Context(), o)
		},
	}
	fs := cmd.Flags()
	fs.StringVarP(&o.Queue, "queue", "q", "", "the dead-letter queue")
	o.registerRead(fs, "read at most this many messages (default: all counted at the start)")
	fs.DurationVar(&o.Idle, "idle", 3*time.Second, "stop when no message arrives for this long")
	o.register(fs)
	return cmd
}

func runStats(ctx context.Context, o *StatsOptions) error {
	f := o.Factory
	an, idem, err := o.analyzer()
	if err != nil {
		return err
	}
	c, err := amqpConn(f, "stats")
	if err != nil {
		return err
	}
	read := o.readOptions(f, o.Queue, "dlq stats")
	read.Idle = o.Idle
	rep, s, err := replay.RunStats(ctx, replay.StatsOptions{
		Read:     read,
		Vhost:    c.vhost,
		Analyzer: an, IdempotencyKeys: idem, Dial: c.dial, Now: f.Now,
	})
	if err != nil {
		return readErr(o.Queue, err)
	}
	now := f.Now()
	return f.Emit(ctx, report.Document{Report: rep, Text: func(w io.Writer, th *report.Theme) error {
		return writeStats(w, th, s, now, f.Global.Verbose)
	}})
}

func writeStats(w io.Writer, th *report.Theme, s *replay.Stats, now time.Time, verbose bool) error {
	head := fmt.Sprintf("%s queue %s (vhost %s): %s messages, %s", th.Strong("dlq stats:"), s.Queue, s.Vhost,
		iostreams.Count(int64(s.Messages)), bytesText(s.Bytes))
	if s.Oldest != nil {
		head += ", oldest died " + ago(now, *s.Oldest)
	}
	fmt.Fprintln(w, head)
	if s.Read.Read < s.Read.AtStart.Messages {
		fmt.Fprintf(w, "%s\n", th.Faint(fmt.Sprintf("read %d of the %d counted at the start (--limit or --idle)", s.Read.Read, s.Read.AtStart.Messages)))
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
			errText = clip(errText, 60)
		}
		t.Row(g.ID, iostreams.Count(int64(g.Messages)), g.Reason, dash(g.Queue), routeText(g.Exchange, g.RoutingKeys),
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

// readNote is the side effect of the read that just happened.
func readNote(r replay.ReadResult) string {
	note := fmt.Sprintf("Read %d messages and requeued them: they are now marked redelivered.", r.Read)
	if r.Quorum {
		note += " Quorum queue: each read added 1 to x-delivery-count and moved them behind the others."
	}
	return note
}

func classText(th *report.Theme, c replay.Class) string {
	switch c {
	case replay.NonRetryable:
		return th.Severity(findings.Error, string(c))
	case replay.Retryable:
		return th.Pass(string(c))
	}
	return th.Faint(string(c))
}

func deathsText(g *replay.Group) string {
	avg := float64(g.DeathsTotal) / float64(max(g.Messages, 1))
	s := fmt.Sprintf("%.1f avg, %d max", avg, g.DeathsMax)
	if g.ReplayedMax > 0 {
		s += fmt.Sprintf(", replayed %dx", g.ReplayedMax)
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
		parts[i] = fmt.Sprintf("%s %s", k, iostreams.Count(int64(m[k])))
	}
	return strings.Join(parts, ", ")
}

func dash(s string) string {
	if s == "" {
		return "-"
	}
	return s
}

func clip(s string, n int) string {
	r := []rune(s)
	if len(r) <= n {
		return s
	}
	return string(r[:n-3]) + "..."
}

func bytesText(n int64) string {
	switch {
	case n >= 1<<30:
		return fmt.Sprintf("%.1f GiB", float64(n)/(1<<30))
	case n >= 1<<20:
		return fmt.Sprintf("%.1f MiB", float64(n)/(1<<20))
	case n >= 1<<10:
		return fmt.Sprintf("%.1f KiB", float64(n)/(1<<10))
	}
	return fmt.Sprintf("%d B", n)
}

// ago says how long before now t was, in the largest sensible units.
func ago(now, t time.Time) string {
	d := now.Sub(t)
	if d < 0 {
		return t.UTC().Format(time.RFC3339)
	}
	switch {
	case d >= 48*time.Hour:
		return fmt.Sprintf("%dd ago (%s)", int(d.Hours()/24), t.UTC().Format(time.RFC3339))
	case d >= time.Hour:
		return fmt.Sprintf("%dh ago (%s)", int(d.Hours()), t.UTC().Format(time.RFC3339))
	case d >= time.Minute:
		return fmt.Sprintf("%dm ago (%s)", int(d.Minutes()), t.UTC().Format(time.RFC3339))
	}
	return fmt.Sprintf("%ds ago (%s)", int(d.Seconds()), t.UTC().Format(time.RFC3339))
}
