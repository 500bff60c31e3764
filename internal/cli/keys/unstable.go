package keys

import (
	"context"
	"errors"
	"io"
	"time"

	"github.com/dupctl/dupctl/internal/cli/cmdutil"
	"github.com/dupctl/dupctl/internal/keys"
	"github.com/dupctl/dupctl/internal/logs"
	"github.com/dupctl/dupctl/internal/platform/connect"
	"github.com/dupctl/dupctl/internal/platform/exitcode"
	"github.com/dupctl/dupctl/internal/platform/report"
	"github.com/spf13/cobra"
)

// UnstableOptions are one `dupctl keys unstable` run.
type UnstableOptions struct {
	Factory *cmdutil.Factory
	Args    []string
	Log     cmdutil.LogFlags
	Query   string
}

// NewCmdUnstable is `dupctl keys unstable [FILES...] [--query SQL]`.
func NewCmdUnstable(f *cmdutil.Factory, runF func(*UnstableOptions) error) *cobra.Command {
	o := &UnstableOptions{Factory: f}
	cmd := &cobra.Command{
		Use:   "unstable [FILE|DIR|GLOB|- ...] [--query SQL]",
		Short: "Find idempotency keys that change between retries of one operation, and what part changes",
		Long: `Keys unstable groups the idempotency keys seen in structured logs, a
'dupctl dlq export' file (the keys in each message's body and headers), a
JSON or CSV export (a table export) or the rows of a SQL query by business
key, confirms that several keys belong to retries of one
operation (same job or message id, attempt > 1, redelivered), and says
which part of the key changes and what it is:

  KEY_UNSTABLE_ATTEMPT     the attempt counter
  KEY_UNSTABLE_UUID        a random UUID v4 made per attempt
  KEY_UNSTABLE_TIME_ID     a UUID v1/v6/v7, ULID or ObjectId minted at the attempt
  KEY_UNSTABLE_TIMESTAMP   a unix or formatted timestamp of the attempt
  KEY_UNSTABLE_DELIVERY    a delivery tag or per-delivery message id
  KEY_UNSTABLE_INSTANCE    the consumer instance
  KEY_UNSTABLE_HASH        a digest of something volatile
  KEY_UNSTABLE_RANDOM      a random token
  KEY_UNSTABLE_OTHER       something else (the values are shown)

with the key's template (payment:{businessKey}:{attempt}) and the stable
key to use. It also reports keys reused across business keys or payloads
(KEY_REUSED), side effects without a key (KEY_MISSING) and keys that differ
only by case (KEY_CASE_VARIANT).

Columns and fields are found under their usual names (order_id or orderId,
idempotency_key, attempt, job_id, message_id, created_at); map others with
--field. --query runs in a read-only session.` + exitStatus,
		Example: `  dupctl keys unstable /var/log/workers/
  dupctl dlq export --queue payments.dlq --out dlq.jsonl && dupctl keys unstable dlq.jsonl
  dupctl keys unstable --query "SELECT order_id, idempotency_key, attempt, job_id, created_at FROM payments ` +
			`WHERE created_at > now() - interval '1 day'"
  dupctl keys unstable app.log --field businessKey=payload.account -o json`,
		RunE: func(cmd *cobra.Command, args []string) error {
			o.Args = args
			if o.Query == "" {
				if err := cmdutil.JobLogs(f, cmd, &o.Args, &o.Log); err != nil {
					return err
				}
			}
			if len(o.Args) == 0 && o.Query == "" {
				return exitcode.UsageErrorf("give log or export files (- for stdin) or --query SQL")
			}
			if runF != nil {
				return runF(o)
			}
			return runUnstable(cmd.Context(), o)
		},
	}
	fs := cmd.Flags()
	o.Log.Register(cmd)
	fs.StringVar(&o.Query, "query", "", "read keys from the rows of this SQL query (read-only session; --database-url)")
	return cmd
}

var exitStatus = cmdutil.ExitStatus(map[int]string{
	1: "findings at or above --fail-on (an unstable key whose side effect ran twice is an error)",
	3: "PostgreSQL could not be reached, or the query failed",
})

func runUnstable(ctx context.Context, o *UnstableOptions) error {
	f := o.Factory
	m, err := o.Log.Compile(f.Config)
	if err != nil {
		return err
	}
	var srcs []logs.Source
	if len(o.Args) > 0 {
		// One pass: stdin is read as it comes, never spooled.
		if srcs, err = f.LogStreams(o.Args); err != nil {
			return err
		}
	}
	if o.Query != "" {
		pool, err := f.Postgres(ctx, connect.PostgresOptions{ReadOnly: true, StatementTimeout: 5 * time.Minute, MaxConns: 2})
		if err != nil {
			return err
		}
		srcs = append(srcs, keys.QuerySource(pool, o.Query))
	}
	format, tz, err := o.Log.Reading()
	if err != nil {
		return err
	}
	res, err := keys.Run(ctx, srcs, keys.Options{Mapping: m, Strict: o.Log.Strict, Format: format, TZ: tz, MaxLine: o.Log.MaxLine,
		Progress: f.IO.StartProgress("keys unstable", "bytes")})
	if err != nil {
		var qe *keys.QueryError
		if errors.As(err, &qe) {
			return exitcode.UnavailableError(qe, "check the SQL and that the role may read the table")
		}
		return cmdutil.LogError(err)
	}
	return f.Emit(ctx, report.Document{Report: res.Report(), Text: func(w io.Writer, th *report.Theme) error {
		return writeUnstable(w, th, res, f.Global.Verbose)
	}})
}
