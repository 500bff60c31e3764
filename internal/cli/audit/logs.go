package audit

import (
	"context"
	"fmt"
	"io"
	"os"
	"strings"
	"time"

	"github.com/spf13/cobra"

	auditlogs "github.com/dupctl/dupctl/internal/audit/logs"
	"github.com/dupctl/dupctl/internal/cli/cmdutil"
	"github.com/dupctl/dupctl/internal/logs"
	"github.com/dupctl/dupctl/internal/platform/exitcode"
	"github.com/dupctl/dupctl/internal/platform/report"
)

// LogsOptions are one `dupctl audit logs` run.
type LogsOptions struct {
	Factory   *cmdutil.Factory
	Args      []string
	Log       cmdutil.LogFlags
	ClockSkew time.Duration
	Incident  string
	// ExplainMapping is a log file to explain the mapping on instead of
	// auditing.
	ExplainMapping string
	// LearnTo is where --learn writes the mapping learned from the logs
	// instead of auditing them ("-": stdout).
	LearnTo string
	// Follow reads the sources as streams that do not end (logsfollow.go),
	// keeping keys for Window.
	Follow      bool
	Window      time.Duration
	windowGiven bool
}

// NewCmdLogs is `dupctl audit logs FILES...`.
func NewCmdLogs(f *cmdutil.Factory, runF func(*LogsOptions) error) *cobra.Command {
	o := &LogsOptions{Factory: f}
	cmd := &cobra.Command{
		Use:     "logs FILE|DIR|GLOB|- ...",
		Short:   "Find every business key whose side effect ran more than once in structured logs, and why",
		Long:    logsLong + exitStatus,
		Example: logsExample,
		RunE: func(cmd *cobra.Command, args []string) error {
			o.Args = args
			o.windowGiven = cmd.Flags().Changed("window")
			if err := cmdutil.JobLogs(f, cmd, &o.Args, &o.Log); err != nil {
				return err
			}
			if err := validateLogs(o); err != nil {
				return err
			}
			if runF != nil {
				return runF(o)
			}
			return runLogs(cmd.Context(), o)
		},
	}
	addLogsFlags(cmd, o)
	return cmd
}

// addLogsFlags registers the mapping flags (cmdutil.LogFlags) and the
// audit's own.
func addLogsFlags(cmd *cobra.Command, o *LogsOptions) {
	fs := cmd.Flags()
	o.Log.Register(cmd)
	fs.DurationVar(&o.ClockSkew, "clock-skew", 0, "how far workers' clocks may disagree; closer orderings are not used as evidence")
	fs.StringVar(&o.Incident, "incident", "", "show this business key's timeline as lanes per worker (-v: every duplicate's)")
	fs.StringVar(&o.ExplainMapping, "explain-mapping", "", "instead of auditing, show how `FILE` is read: each field's path, "+
		"which lines became which event and by what, and the message templates that matched nothing")
	fs.StringVar(&o.LearnTo, "learn", "", "instead of auditing, learn from the logs which field is what and which sentence is "+
		"which step, and write it to `FILE` (- for stdout) as a dupctl.yaml job to review and commit")
	fs.BoolVar(&o.Follow, "follow", false, "read logs that do not end (stdin from kubectl logs -f, files as they grow, "+
		"rotated or truncated) and report each duplicate as soon as its second side effect is read; Ctrl-C or SIGTERM prints the summary")
	fs.DurationVar(&o.Window, "window", time.Hour, "with --follow: how long a key's lines are kept after its last one, "+
		"by the logs' own times (memory follows the lines of one window)")
}

// validateLogs checks the arguments once the job's settings are in.
func validateLogs(o *LogsOptions) error {
	if len(o.Args) == 0 && o.ExplainMapping == "" {
		return exitcode.UsageErrorf("give log files, directories, globs or - for stdin")
	}
	if o.ClockSkew < 0 {
		return exitcode.UsageErrorf("--clock-skew must not be negative, got %s", o.ClockSkew)
	}
	return validateFollow(o)
}

const logsLong = `Audit logs reads worker logs - files, directories, globs, .gz files or
stdin, from any number of workers and in any order, in any common format - and
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
  DUP_EFFECT_UNDETERMINED       the lines fit two causes: both are named, with
                                the log line that would decide
  DUP_EFFECT_UNEXPLAINED        no known cause fits: dupctl does not guess

The same pass prints the metrics a duplicate-safe worker should export: messages per job type, lock
acquisitions and failures, duplicates caught by idempotency, deliveries per
attempt, DLQ count, duration percentiles and errors per type.

Fields are found under their usual names (jobId, job_id, job.id; orderId or
businessKey; idempotencyKey; lockKey; lockToken; lockTtl; attempt;
consumerInstanceId; messaging.message.id; @timestamp, time, ts, ...), at the
top level or nested (logstash MDC, OpenTelemetry attributes, slog groups).
A line without an event field is read by its message ("lock acquired",
"Charged card for order 42", "cache miss for payment:42"): a built-in
vocabulary covers how slog, zap, logback, pino and structlog services and
celery, sidekiq, asynq, Spring AMQP and ShedLock word the steps. Map other
fields with --field, other words with --event KIND=PHRASE (or logs.events
in dupctl.yaml), or both with a --mapping file; --explain-mapping FILE shows
which line became which event and which matched nothing (docs/audit-logs.md).

Each file is read in the format its first lines show: JSON lines (slog, zap,
logstash, ECS, pino, python-json-logger, ...), Serilog CLEF, GELF, OTLP/JSON,
logfmt (logrus, go-kit), the console layouts of Spring Boot, logback, log4j2,
Python logging, Ruby's Logger and Sidekiq, and Docker, CRI (Kubernetes) or
journald files wrapping any of them; --format forces one. In text, ids come
from key=value and key: value in the sentence. An input in which no line is
a side effect, or most lines could not be read, is an input error (exit 2)
naming the format read, an unread line and what would read it: never a pass.

Memory follows the number of distinct keys, not the size of the logs: a
first pass counts side effects per key, a second re-reads only the parts of
the input that hold duplicated keys (stdin is spooled to a temporary file).
A line longer than --max-line is an input error naming where it starts.

--follow reads logs that never end - stdin from kubectl logs -f, docker
compose logs -f or journalctl -f, files as they grow (truncated or renamed
and created anew, as tail -F follows them) - and reports each duplicate as
soon as its second side effect is read: a line on the terminal, one JSON
object a line with -o json. Keys are kept for --window after their last line,
by the logs' own times, so memory stays flat over days. Ctrl-C, SIGTERM or
--timeout ends it with the summary; the exit code says what was found.`

const logsExample = `  dupctl audit logs /var/log/workers/
  dupctl audit logs 'logs/*.json.gz' --clock-skew 250ms
  kubectl logs -l app=worker --since=2h | dupctl audit logs -
  dupctl audit logs app.log --incident ord-1042
  dupctl audit logs app.log --field businessKey=payload.order.id --event side_effect='charged card'
  dupctl audit logs --explain-mapping app.log
  dupctl audit logs app.log -o json | jq '.data.duplicates[] | {key, cause}'
  kubectl logs -f -l app=worker --max-log-requests 20 | dupctl audit logs - --follow --window 30m
  dupctl audit logs --follow /var/log/worker.log -o json | jq -c 'select(.type == "duplicate")'`

var exitStatus = cmdutil.ExitStatus(map[int]string{
	1: "findings at or above --fail-on (a duplicated side effect is an error)",
	2: "usage or input error (unreadable file; a malformed line with --strict; a --field or --event that leaves no side effect)",
	3: "a runtime failure",
})

func runLogs(ctx context.Context, o *LogsOptions) error {
	f := o.Factory
	m, err := o.Log.Compile(f.Config)
	if err != nil {
		return err
	}
	if o.ExplainMapping != "" {
		return runExplain(ctx, o, m)
	}
	if o.LearnTo != "" {
		return runLearn(ctx, o, m)
	}
	if o.Follow {
		return runFollow(ctx, o, m)
	}
	format, tz, err := o.Log.Reading()
	if err != nil {
		return err
	}
	srcs, err := f.SpooledLogSources(ctx, o.Args, o.Log.MaxLine)
	if err != nil {
		return err
	}
	res, err := auditlogs.Run(ctx, srcs, auditlogs.Options{
		Mapping: m, Strict: o.Log.Strict, ClockSkew: o.ClockSkew, Format: format, TZ: tz, MaxLine: o.Log.MaxLine,
		Incident: o.Incident, Timelines: f.Global.Verbose || o.Incident == "" && f.WantsHTML(),
		Progress: f.IO.StartProgress("audit logs", "bytes"),
	})
	if err != nil {
		return cmdutil.LogError(err)
	}
	rep := res.Report()
	return f.Emit(ctx, report.Document{Report: rep,
		Text: func(w io.Writer, th *report.Theme) error { return writeLogs(w, th, res, o) },
		HTML: func(w io.Writer) error { return writeLogsHTML(w, res, o.Incident) },
	})
}

// runLearn is --learn FILE: what a sample of the logs teaches, written as
// a dupctl.yaml job.
func runLearn(ctx context.Context, o *LogsOptions, m *logs.Mapping) error {
	f := o.Factory
	format, tz, err := o.Log.Reading()
	if err != nil {
		return err
	}
	lo, err := o.Log.LearnOptions()
	if err != nil {
		return err
	}
	srcs, err := f.SpooledLogSources(ctx, o.Args, o.Log.MaxLine)
	if err != nil {
		return err
	}
	lo.Mapping, lo.Format, lo.TZ = m.Unlearned(), format, tz
	l, err := logs.Learn(ctx, srcs, lo)
	if err != nil {
		return cmdutil.LogError(err)
	}
	// A mapping learned from nothing, or one that names no side effect,
	// would read no duplicate: refused, saying what would (never a file
	// that looks like an answer).
	if l.Lines == 0 {
		return exitcode.UsageErrorf("--learn: no line of %s could be read: nothing was learned", strings.Join(o.Args, ", "))
	}
	if phrase, example := l.Suggest(logs.KindSideEffect); len(l.Missing) > 0 {
		hint := "no message template was told apart as one"
		if phrase != "" {
			hint = fmt.Sprintf("the likeliest is %q (e.g. %q): name it with --event side_effect='%s' and learn again", phrase, example, phrase)
		}
		return exitcode.UsageErrorf("--learn: no step of %d sample lines is confidently the side effect, so the mapping would find "+
			"no duplicate; %s", l.Lines, hint)
	}
	if o.LearnTo == "-" {
		return writeLearnedMapping(f.IO.Out, l, o.Args)
	}
	fh, err := os.Create(o.LearnTo)
	if err != nil {
		return exitcode.UsageErrorf("--learn: %v", err)
	}
	if err := writeLearnedMapping(fh, l, o.Args); err != nil {
		fh.Close()
		return err
	}
	if err := fh.Close(); err != nil {
		return fmt.Errorf("--learn: %w", err)
	}
	fmt.Fprintf(f.IO.ErrOut, "wrote the mapping learned from %d sample lines to %s\n", l.Lines, o.LearnTo)
	return nil
}

// runExplain is --explain-mapping: how the mapping reads the file.
func runExplain(ctx context.Context, o *LogsOptions, m *logs.Mapping) error {
	f := o.Factory
	format, tz, err := o.Log.Reading()
	if err != nil {
		return err
	}
	srcs, err := f.SpooledLogSources(ctx, append([]string{o.ExplainMapping}, o.Args...), o.Log.MaxLine)
	if err != nil {
		return err
	}
	x, err := logs.Explain(ctx, srcs, logs.Options{
		Mapping: m, Format: format, TZ: tz, MaxLine: o.Log.MaxLine, Progress: f.IO.StartProgress("explain mapping", "bytes"),
	}, 0)
	if err != nil {
		return cmdutil.LogError(err)
	}
	return f.Emit(ctx, report.Document{Report: x.Report(), Text: func(w io.Writer, th *report.Theme) error {
		return writeExplain(w, th, x)
	}})
}
