package audit

import (
	"context"
	"fmt"
	"io"
	"strings"
	"time"

	"github.com/dupctl/dupctl/internal/platform/english"

	"github.com/spf13/cobra"

	auditlogs "github.com/dupctl/dupctl/internal/audit/logs"
	"github.com/dupctl/dupctl/internal/cli/cmdutil"
	"github.com/dupctl/dupctl/internal/platform/exitcode"
	"github.com/dupctl/dupctl/internal/platform/iostreams"
	"github.com/dupctl/dupctl/internal/platform/report"
)

// LogsOptions are one `dupctl audit logs` run.
type LogsOptions struct {
	Factory   *cmdutil.Factory
	Args      []string
	Log       cmdutil.LogFlags
	ClockSkew time.Duration
	Incident  string
}

// NewCmdLogs is `dupctl audit logs FILES...`.
func NewCmdLogs(f *cmdutil.Factory, runF func(*LogsOptions) error) *cobra.Command {
	o := &LogsOptions{Factory: f}
	cmd := &cobra.Command{
		Use:   "logs FILE|DIR|GLOB|- ...",
		Short: "Find every business key whose side effect ran more than once in structured logs, and why",
		Long: `Audit logs reads structured (JSON-lines) worker logs - files, directories,
globs, .gz files or stdin, from any number of workers and in any order - and
rebuilds each business key's timeline. Every key whose side effect ran more
than once is reported with its cause and the log lines that prove it:

  DUP_EFFECT_REDELIVERY         redelivery after a crash before the ack
  DUP_EFFECT_LOCK_EXPIRY        the first holder still ran past its lock TTL
  DUP_EFFECT_LOCK_KEY_JOB_ID    several lock keys for one business key
  DUP_EFFECT_UNLOCK_NO_TOKEN    a release by a worker that did not hold the lock
  DUP_EFFECT_UNSTABLE_KEY       the idempotency key changed between attempts
  DUP_EFFECT_NON_ATOMIC_COMMIT  effect done, status not committed, then a crash
  DUP_EFFECT_STALE_CACHE        "already done?" answered by a lagging cache
  DUP_EFFECT_RACE_NO_LOCK       two messages for one key, no lock
  DUP_EFFECT_UNEXPLAINED        the evidence does not decide: dupctl does not guess

The same pass prints the seed's metrics: messages per job type, lock
acquisitions and failures, duplicates caught by idempotency, deliveries per
attempt, DLQ count, duration percentiles and errors per type.

Fields are found under their usual names (jobId, job_id, job.id; orderId or
businessKey; idempotencyKey; lockKey; lockToken; lockTtl; attempt;
consumerInstanceId; messaging.message.id; @timestamp, time, ts, ...), at the
top level or nested (logstash MDC, OpenTelemetry attributes, slog groups).
Map others with --field, --event or a --mapping file (docs/audit-logs.md).

Memory follows the number of distinct keys, not the size of the logs: a
first pass counts side effects per key, a second re-reads only the parts of
the input that hold duplicated keys (stdin is spooled to a temporary file).` + exitStatus,
		Example: `  dupctl audit logs /var/log/workers/
  dupctl audit logs 'logs/*.json.gz' --clock-skew 250ms
  kubectl logs -l app=worker --since=2h | dupctl audit logs -
  dupctl audit logs app.log --incident ord-1042
  dupctl audit logs app.log --field businessKey=payload.order.id --event side_effect='charged card'
  dupctl audit logs app.log -o json | jq '.data.duplicates[] | {key, cause}'`,
		Args: cobra.MinimumNArgs(1),
		RunE: func(cmd *cobra.Command, args []string) error {
			o.Args = args
			if o.ClockSkew < 0 {
				return exitcode.UsageErrorf("--clock-skew must not be negative, got %s", o.ClockSkew)
			}
			if runF != nil {
				return runF(o)
			}
			return runLogs(cmd.Context(), o)
		},
	}
	fs := cmd.Flags()
	o.Log.Register(fs)
	fs.DurationVar(&o.ClockSkew, "clock-skew", 0, "how far workers' clocks may disagree; closer orderings are not used as evidence")
	fs.StringVar(&o.Incident, "incident", "", "show this business key's timeline as lanes per worker (-v: every duplicate's)")
	return cmd
}

var exitStatus = cmdutil.ExitStatus(map[int]string{1: "findings at or above --fail-on (a duplicated side effect is an error)", 2: "usage or input error (unreadable file; a malformed line with --strict)", 3: "a runtime failure"})

func runLogs(ctx context.Context, o *LogsOptions) error {
	f := o.Factory
	m, err := o.Log.Compile()
	if err != nil {
		return err
	}
	srcs, err := f.LogSources(ctx, o.Args)
	if err != nil {
		return err
	}
	res, err := auditlogs.Run(ctx, srcs, auditlogs.Options{
		Mapping: m, Strict: o.Log.Strict, ClockSkew: o.ClockSkew,
		Incident: o.Incident, Timelines: f.Global.Verbose,
		Progress: f.IO.StartProgress("audit logs", "bytes"),
	})
	if err != nil {
		return cmdutil.LogError(err)
	}
	rep := res.Report("audit logs")
	return f.Emit(ctx, report.Document{Report: rep, Text: func(w io.Writer, th *report.Theme) error {
		return writeLogs(w, th, res, o)
	}})
}

func count(n int64) string { return iostreams.Count(n) }

func writeLogs(w io.Writer, th *report.Theme, r *auditlogs.Result, o *LogsOptions) error {
	in := r.Input
	fmt.Fprintf(w, "%s %s %s, %s lines (%s malformed), %s events\n", th.Strong("audit logs:"),
		count(int64(in.Sources)), english.Plural(in.Sources, "file", "files"), count(in.Lines), count(in.Malformed), count(in.Events))
	fmt.Fprintf(w, "%s keys, %s side effects, %s %s with a duplicated side effect\n",
		count(int64(r.Keys)), count(r.Effects), count(int64(len(r.Duplicates))), english.Plural(len(r.Duplicates), "key", "keys"))
	if len(r.Causes) > 0 {
		fmt.Fprintln(w)
		t := report.NewTable("CAUSE", "KEYS").AlignRight(1)
		for _, c := range r.Causes {
			t.Row(c.Cause, count(int64(c.Count)))
		}
		if err := t.Render(w); err != nil {
			return err
		}
	}
	if err := writeMetrics(w, th, &r.Metrics); err != nil {
		return err
	}
	if o.Incident != "" && !hasTimeline(r, o.Incident) {
		fmt.Fprintf(w, "\n%s\n", th.Faint(fmt.Sprintf("--incident %s: no line carries this key", o.Incident)))
	}
	for _, tl := range r.Timelines {
		if err := writeTimeline(w, th, &tl); err != nil {
			return err
		}
	}
	return nil
}

func hasTimeline(r *auditlogs.Result, key string) bool {
	for _, t := range r.Timelines {
		if t.Key == key {
			return true
		}
	}
	return false
}

func writeMetrics(w io.Writer, th *report.Theme, m *auditlogs.Metrics) error {
	if len(m.JobTypes) == 0 {
		return nil
	}
	fmt.Fprintf(w, "\n%s\n", th.Strong("Metrics"))
	t := report.NewTable("JOB TYPE", "MESSAGES", "LOCK OK", "LOCK BUSY", "EFFECTS", "CAUGHT", "RETRIES", "DLQ", "FAILURES", "P50", "P95", "P99", "MAX").AlignRight(1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11, 12)
	for _, jt := range m.JobTypes {
		p50, p95, p99, mx := "-", "-", "-", "-"
		if d := jt.Duration; d != nil {
			p50, p95, p99, mx = dur(d.P50), dur(d.P95), dur(d.P99), dur(d.Max)
		}
		t.Row(jt.JobType, count(jt.Messages), count(jt.LockAcquired), count(jt.LockFailed), count(jt.SideEffects), count(jt.Caught),
			count(jt.Retries), count(jt.DeadLettered), count(jt.Failures), p50, p95, p99, mx)
	}
	if err := t.Render(w); err != nil {
		return err
	}
	var att []string
	for i, n := range m.DeliveriesByAttempt {
		att = append(att, fmt.Sprintf("%d: %s", i+1, count(n)))
	}
	if len(att) > 0 {
		fmt.Fprintf(w, "Deliveries by attempt: %s\n", strings.Join(att, ", "))
	}
	fmt.Fprintf(w, "Duplicates caught by idempotency: %s; retries: %s; dead-lettered: %s; crashes: %s\n",
		count(m.DuplicatesCaught), count(m.Retries), count(m.DeadLettered), count(m.Crashes))
	if len(m.Errors) > 0 {
		var es []string
		for i, e := range m.Errors {
			if i == 8 {
				es = append(es, fmt.Sprintf("%d more", len(m.Errors)-i))
				break
			}
			es = append(es, fmt.Sprintf("%s %s (%.2f%%)", e.Type, count(e.Count), 100*e.Rate))
		}
		fmt.Fprintf(w, "Errors per delivery: %s\n", strings.Join(es, ", "))
	}
	return nil
}

func dur(d time.Duration) string {
	switch {
	case d >= time.Minute:
		return d.Round(time.Second).String()
	case d >= time.Second:
		return d.Round(10 * time.Millisecond).String()
	case d >= time.Millisecond:
		return d.Round(time.Millisecond).String()
	}
	return d.String()
}

// writeTimeline draws a key's events as one lane (column) per worker.
func writeTimeline(w io.Writer, th *report.Theme, tl *auditlogs.Timeline) error {
	fmt.Fprintf(w, "\n%s\n", th.Strong("Timeline of "+tl.Key))
	header := []string{"TIME"}
	header = append(header, tl.Workers...)
	header = append(header, "DETAIL", "WHERE")
	t := report.NewTable(header...)
	for _, r := range tl.Rows {
		cells := make([]string, len(header))
		cells[0] = fmt.Sprintf("+%.3fs", r.Offset.Seconds())
		label := r.Event
		if r.Repeat {
			label = th.Mark(label + " AGAIN")
		}
		cells[1+r.Lane] = label
		cells[len(cells)-2] = r.Detail
		cells[len(cells)-1] = r.Where
		t.Row(cells...)
	}
	if len(tl.Rows) > 0 {
		fmt.Fprintf(w, "%s\n", th.Faint("t0 = "+tl.Rows[0].Time.UTC().Format("2006-01-02T15:04:05.000Z")))
	}
	return t.Render(w)
}
