// Package dlq holds the `dupctl dlq` commands: stats, peek, export and
// replay of a RabbitMQ dead-letter queue. They turn flags into
// internal/replay options and render its results.
package dlq

import (
	"context"
	"fmt"
	"os"
	"strings"
	"time"

	"github.com/dupctl/dupctl/internal/replay/classify"
	"github.com/dupctl/dupctl/internal/replay/dlqread"

	"github.com/dupctl/dupctl/internal/cli/cmdutil"
	"github.com/dupctl/dupctl/internal/platform/connect"
	"github.com/dupctl/dupctl/internal/platform/exitcode"
	amqp "github.com/rabbitmq/amqp091-go"
	"github.com/spf13/cobra"
	"github.com/spf13/pflag"
)

// NewCmdDLQ is `dupctl dlq`.
func NewCmdDLQ(f *cmdutil.Factory) *cobra.Command {
	cmd := &cobra.Command{
		Use:   "dlq <command>",
		Short: "See what is dead-lettered and why; replay it with nothing lost and nothing doubled",
		Long: `The dlq commands read a RabbitMQ dead-letter queue and replay it under control.

  stats    what is in the DLQ, grouped by death reason, origin, job type and
           error, and which groups are retryable
  peek     the first messages in full: properties, typed headers, body
  export   every message to a lossless JSON Lines file (types survive)
  replay   republish to where each message came from: a dry run unless --yes

Reading is non-destructive: messages are consumed with a prefetch window,
held, and requeued together at the end. A read counts the queue at its start
(after an earlier reader's messages are back), reads that many, and ends only
when its own are back, so reads in a row count the same; when it cannot vouch
for its count it says so (DLQ_READ_INCOMPLETE). Reading still leaves a trace:
every message read is marked redelivered, and on a quorum queue each read
counts toward the delivery limit and moves the message behind the others
(see docs/dlq.md).` + replayExitStatus,
		Example: `  dupctl dlq stats --queue orders.dlq
  dupctl dlq peek --queue orders.dlq -n 3
  dupctl dlq export --queue orders.dlq --out orders-dlq.jsonl
  dupctl dlq replay --queue orders.dlq --group 3f2a9c1b
  dupctl dlq replay --queue orders.dlq --reason rejected --older-than 1h --yes`,
		RunE: cmdutil.GroupRunE,
	}
	cmd.AddCommand(NewCmdStats(f, nil), NewCmdPeek(f, nil), NewCmdExport(f, nil), NewCmdReplay(f, nil))
	// The analysis flags of stats, peek and replay.
	cmdutil.FieldFlags(cmd, map[string]string{"ErrorFields": "error-field", "JobTypeFields": "job-type-field",
		"IdempotencyKeys": "idempotency-key"})
	return cmd
}

// replayExitStatus is the group's and replay's EXIT STATUS block;
// readExitStatus that of the verbs that only read (stats, peek, export).
var (
	replayExitStatus = cmdutil.ExitStatus(map[int]string{
		1: "findings at or above --fail-on (replay: in doubt, returned, nacked,\n" +
			"its replays coming back; dry run: a destination missing)",
		2: "usage or input error: a bad flag, no such queue, a DLQ with consumers,\n" +
			"a destination that does not exist (--yes publishes nothing into it),\n" +
			"an export file that is malformed or was replayed before",
		3: "RabbitMQ or PostgreSQL could not be reached, or a connection was lost\n" +
			"(the summary is printed first; --resume continues)",
		130: "interrupted (a replay stops consuming, requeues what it holds, waits\n" +
			"for its confirms and prints its summary first)",
	})
	readExitStatus = cmdutil.ExitStatus(map[int]string{
		1:   "findings at or above --fail-on (export: fewer messages written than\nthe queue held at the start)",
		3:   "RabbitMQ could not be reached, or a connection was lost",
		130: "interrupted (what the read holds goes back to the queue)",
	})
)

// analysisFlags are how messages are read: which fields hold the error,
// job type and idempotency key, and extra classification rules.
type analysisFlags struct {
	errorFields, jobFields, idemFields []string
	rules                              string
}

func (a *analysisFlags) register(fs *pflag.FlagSet) {
	fs.StringArrayVar(&a.errorFields, "error-field", nil,
		"field holding the error message, tried in order (default: header.x-exception-message, header.error, ...)")
	fs.StringArrayVar(&a.jobFields, "job-type-field", nil, "field holding the job type (default: prop.type, header.job-type, body.type, ...)")
	fs.StringArrayVar(&a.idemFields, "idempotency-key", nil,
		"field holding the idempotency key (default: header.idempotency-key, body.idempotencyKey, ...)")
	fs.StringVar(&a.rules, "rules", "", "file of extra retryable/non-retryable rules, checked before the built-in ones (see docs/dlq.md)")
}

func (a *analysisFlags) analyzer() (*classify.Analyzer, []classify.Field, error) {
	an := &classify.Analyzer{}
	var err error
	if an.ErrorFields, err = classify.FieldsOf("ErrorFields", a.errorFields); err != nil {
		return nil, nil, err
	}
	if an.JobTypeFields, err = classify.FieldsOf("JobTypeFields", a.jobFields); err != nil {
		return nil, nil, err
	}
	idem, err := classify.FieldsOf("IdempotencyKeys", a.idemFields)
	if err != nil {
		return nil, nil, err
	}
	if idem == nil {
		idem = classify.DefaultIdempotencyFields
	}
	if a.rules != "" {
		fh, err := os.Open(a.rules)
		if err != nil {
			return nil, nil, exitcode.InputError(fmt.Errorf("--rules: %w", err), "give a readable rules file")
		}
		defer fh.Close()
		if an.Rules, err = classify.ParseRules(fh, a.rules); err != nil {
			return nil, nil, exitcode.InputError(err, "each line is CLASS FIELD REGEX, e.g. non-retryable error (?i)insufficient funds")
		}
	}
	return an, idem, nil
}

// conn is the RabbitMQ side every dlq command shares.
type conn struct {
	vhost string
	user  string
	dial  dlqread.Dialer
	// nodes is how many addresses the URL names; redial dials them with
	// the one at host:port lost tried last (a failover).
	nodes  int
	redial func(ctx context.Context, role, lost string) (*amqp.Connection, error)
}

// readDeps are a read verb's broker, clock and progress meter; with
// several addresses, a read that loses its node goes on through another.
func (c *conn) readDeps(f *cmdutil.Factory, command string, w failoverFlag) dlqread.Deps {
	d := dlqread.Deps{Dial: c.dial, Now: f.Now, Progress: f.IO.StartProgress(command, "messages")}
	if c.nodes > 1 {
		d.Failover = c.failover(w)
	}
	return d
}

// failover dials the URL's addresses again after a node is lost (reads
// and replays alike).
func (c *conn) failover(w failoverFlag) *dlqread.Failover {
	return &dlqread.Failover{Dial: c.redial, Nodes: c.nodes, Wait: w.FailoverWait}
}

// failoverFlag is --failover-wait, of the commands that go on through
// another address of --amqp-url when they lose a node.
type failoverFlag struct {
	FailoverWait time.Duration
}

func (w *failoverFlag) registerFailover(fs *pflag.FlagSet) {
	fs.DurationVar(&w.FailoverWait, "failover-wait", 30*time.Second,
		"with several --amqp-url addresses: how long to wait, once a node is lost, for another to answer for the queue")
}

func (w failoverFlag) checkFailover() error {
	if w.FailoverWait <= 0 {
		return exitcode.UsageErrorf("--failover-wait must be positive, got %s", w.FailoverWait)
	}
	return nil
}

// amqpConn reads the URL's vhost and user and returns a dialer whose
// connections are named "dupctl dlq <role> <tag>".
func amqpConn(f *cmdutil.Factory, tag string) (*conn, error) {
	raw := f.Global.AMQPURL
	c := &conn{vhost: "/", user: "guest", nodes: 1}
	if raw != "" {
		if t, err := connect.ParseAMQP(raw); err == nil {
			c.vhost, c.user, c.nodes = t.Vhost, t.User, len(t.Addrs)
		}
	}
	c.dial = func(ctx context.Context, role string) (*amqp.Connection, error) {
		return f.AMQP(connect.WithAMQPName(ctx, strings.TrimSpace("dlq "+role+" "+tag)))
	}
	c.redial = func(ctx context.Context, role, lost string) (*amqp.Connection, error) {
		return c.dial(connect.WithAMQPLast(ctx, lost), role)
	}
	return c, nil
}

// readLost is the error of a read whose connection was lost mid-read,
// whose read again after that came short, or whose count after a failover
// is not trusted (nil when none): exit 3, after the output, which says
// what it holds; shown says where that is. A count not trusted is never a
// pass, whatever --fail-on says (issue 39: 13,499 of 20,000 exited 0).
func readLost(r dlqread.Result, shown string) error {
	if r.Lost == "" && r.Untrusted() {
		err := fmt.Errorf("count not trusted: queue held %d messages when the read that lost RabbitMQ node %s began, "+
			"and showed only %d after the failover for as long as dupctl waited (--failover-wait): %d are in neither count",
			r.CountBefore, lastLost(r), r.AtStart.Messages, r.CountBefore-r.AtStart.Messages)
		return exitcode.KeepOutput(exitcode.UnavailableError(err, fmt.Sprintf("%s only the %d messages the queue showed (nothing was "+
			"removed from it); run the command again once the lost node is back", shown, r.AtStart.Messages)))
	}
	if r.Lost == "" && r.Repeats > 0 {
		err := fmt.Errorf("the read again after RabbitMQ node %s was lost was given %d of its %d messages twice, "+
			"so as many were not read (a quorum queue right after a leader change can do so)", lastLost(r), r.Repeats, r.Target)
		return exitcode.KeepOutput(exitcode.UnavailableError(err, shown+" each message once, without those not read (nothing "+
			"was removed from the queue); run the command again"))
	}
	if r.Lost == "" {
		return nil
	}
	err := fmt.Errorf("connection to RabbitMQ node %s lost after %d of the %d messages to read, %d not read: %s",
		r.LostNode, r.Read, r.Target, r.Target-r.Read, r.Lost)
	if r.NoFailover != "" {
		err = fmt.Errorf("%w; not read again through another node: %s", err, r.NoFailover)
	}
	return exitcode.KeepOutput(exitcode.UnavailableError(err, shown+" only the messages read before the loss (nothing was removed "+
		"from the queue); run the command again once a node answers"))
}

// lastLost is the last node a read lost ("" when none).
func lastLost(r dlqread.Result) string {
	if n := len(r.Failovers); n > 0 {
		return r.Failovers[n-1].Lost
	}
	return r.LostNode
}

// lostOr is a lost read's error, which outranks the findings' exit (the
// lost read is one of them), or else emitErr.
func lostOr(lost, emitErr error) error {
	if lost != nil && (emitErr == nil || exitcode.IsSilent(emitErr)) {
		return lost
	}
	return emitErr
}

// readFlags are the flags of the commands that read a whole DLQ (stats,
// export): how many messages, and how many to prefetch at once.
type readFlags struct {
	Limit    int
	Window   int
	WindowMB windowMiB
	failoverFlag
}

func (r *readFlags) registerRead(fs *pflag.FlagSet, limitUsage string) {
	fs.IntVar(&r.Limit, "limit", 0, limitUsage)
	fs.IntVar(&r.Window, "window", 500, "prefetch window while reading")
	r.WindowMB.register(fs)
	r.registerFailover(fs)
}

func (r readFlags) checkRead() error {
	if err := (dlqread.Options{Limit: r.Limit, Window: r.Window}).Validate(); err != nil {
		return err
	}
	if err := r.checkFailover(); err != nil {
		return err
	}
	return r.WindowMB.check()
}

// readOptions is what the capability reads with these flags.
func (r readFlags) readOptions(queue string) dlqread.Options {
	return dlqread.Options{Queue: queue, Limit: r.Limit, Window: r.Window, WindowBytes: r.WindowMB.bytes()}
}

// windowMiB is the --window-mib flag of every command that consumes a DLQ:
// the prefetch window counts messages, this bounds it in bytes.
type windowMiB int

func (w *windowMiB) register(fs *pflag.FlagSet) {
	fs.IntVar((*int)(w), "window-mib", dlqread.DefaultWindowBytes>>20,
		"keep at most about this many MiB of messages prefetched: lowers --window for large messages (0: no byte bound)")
}

func (w windowMiB) check() error {
	if w < 0 {
		return exitcode.UsageErrorf("--window-mib must not be negative")
	}
	return nil
}

// bytes is the capability's WindowBytes (negative: no bound).
func (w windowMiB) bytes() int64 {
	if w == 0 {
		return -1
	}
	return int64(w) << 20
}

// requireQueue takes the DLQ from the job of dupctl.yaml when --queue was
// not given, and says what is missing when neither gives one.
func requireQueue(f *cmdutil.Factory, cmd *cobra.Command, q *string) error {
	job, err := f.Job()
	if err != nil {
		return err
	}
	if job != nil {
		cmdutil.FromJob(cmd, "queue", q, job.DLQ)
	}
	if *q == "" {
		return f.NeedJobOr("queue", "dlq")
	}
	return nil
}
