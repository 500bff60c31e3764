package dlq

import (
	"context"
	"io"

	"github.com/dupctl/dupctl/internal/replay/dlqread"

	"github.com/dupctl/dupctl/internal/cli/cmdutil"
	"github.com/dupctl/dupctl/internal/platform/exitcode"
	"github.com/dupctl/dupctl/internal/platform/report"
	"github.com/spf13/cobra"
)

// PeekOptions are one `dlq peek` run.
type PeekOptions struct {
	Factory *cmdutil.Factory
	Queue   string
	N       int
	Body    int // bytes of body shown in the table view
	analysisFlags
	failoverFlag
}

// NewCmdPeek is `dupctl dlq peek`.
func NewCmdPeek(f *cmdutil.Factory, runF func(*PeekOptions) error) *cobra.Command {
	o := &PeekOptions{Factory: f}
	cmd := &cobra.Command{
		Use:   "peek --queue QUEUE [-n N]",
		Short: "Show the first dead letters in full: properties, typed headers, death history, body",
		Long: `Peek reads the first N messages of the DLQ and requeues them. Each message
shows its death history (x-death), error, class, stats group and where a
replay would send it, then its properties and headers with their AMQP
types, and its body (text when UTF-8, base64 otherwise). -o json gives each
message's lossless export record.

Reading is not free: every message read is marked redelivered; on a quorum
queue it also counts toward the delivery limit (x-delivery-count) and moves
behind the others, so repeated peeks can push a message past the limit.` + readExitStatus,
		Example: `  dupctl dlq peek --queue orders.dlq
  dupctl dlq peek --queue orders.dlq -n 20 -o json | jq '.data.messages[].error'`,
		Args: cobra.NoArgs,
		RunE: func(cmd *cobra.Command, args []string) error {
			if err := requireQueue(f, cmd, &o.Queue); err != nil {
				return err
			}
			if o.N < 1 {
				return exitcode.UsageErrorf("-n must be at least 1, got %d", o.N)
			}
			if err := o.checkFailover(); err != nil {
				return err
			}
			if runF != nil {
				return runF(o)
			}
			return runPeek(cmd.Context(), o)
		},
	}
	fs := cmd.Flags()
	fs.StringVarP(&o.Queue, "queue", "q", "", "the dead-letter queue")
	fs.IntVarP(&o.N, "count", "n", 5, "how many messages to show")
	fs.IntVar(&o.Body, "body-bytes", 512, "show at most this much of each body in the table view (-v: all)")
	o.register(fs)
	o.registerFailover(fs)
	return cmd
}

func runPeek(ctx context.Context, o *PeekOptions) error {
	f := o.Factory
	an, _, err := o.analyzer()
	if err != nil {
		return err
	}
	c, err := amqpConn(f, "peek")
	if err != nil {
		return err
	}
	data, err := dlqread.Peek(ctx, c.readDeps(f, "dlq peek", o.failoverFlag), dlqread.PeekOptions{
		Read:  dlqread.Options{Queue: o.Queue, Limit: o.N, Window: o.N},
		Vhost: c.vhost, Analyzer: an,
	})
	if err != nil {
		return err
	}
	now, verbose := f.Now(), f.Global.Verbose
	emitErr := f.Emit(ctx, report.Document{Report: data.Report(), Text: func(w io.Writer, th *report.Theme) error {
		return writePeek(w, th, data, now, o.Body, verbose)
	}})
	return lostOr(readLost(data.Read, "the messages shown are"), emitErr)
}
