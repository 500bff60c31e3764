package dlq

import (
	"context"
	"io"
	"time"

	"github.com/dupctl/dupctl/internal/replay/dlqread"

	"github.com/dupctl/dupctl/internal/cli/cmdutil"
	"github.com/dupctl/dupctl/internal/platform/report"
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
			if err := requireQueue(f, cmd, &o.Queue); err != nil {
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
	read := o.readOptions(o.Queue)
	read.Idle = o.Idle
	s, err := dlqread.Stats(ctx, c.readDeps(f, "dlq stats", o.failoverFlag), dlqread.StatsOptions{
		Read: read, Vhost: c.vhost, Analyzer: an, IdempotencyKeys: idem,
	})
	if err != nil {
		return err
	}
	now := f.Now()
	emitErr := f.Emit(ctx, report.Document{Report: s.Report(), Text: func(w io.Writer, th *report.Theme) error {
		return writeStats(w, th, s, now, f.Global.Verbose)
	}})
	return lostOr(readLost(s.Read, "the figures count"), emitErr)
}
