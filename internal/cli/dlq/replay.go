package dlq

import (
	"context"
	"errors"
	"fmt"
	"io"
	"math"
	"os"
	"path/filepath"
	"runtime"
	"time"

	"github.com/dupctl/dupctl/internal/replay/classify"
	"github.com/dupctl/dupctl/internal/replay/journal"

	"github.com/dupctl/dupctl/internal/cli/cmdutil"
	"github.com/dupctl/dupctl/internal/logs"
	"github.com/dupctl/dupctl/internal/platform/connect"
	"github.com/dupctl/dupctl/internal/platform/exitcode"
	"github.com/dupctl/dupctl/internal/platform/redact"
	"github.com/dupctl/dupctl/internal/platform/report"
	"github.com/dupctl/dupctl/internal/replay"
	"github.com/spf13/cobra"
	"github.com/spf13/pflag"
)

// ReplayOptions are one `dlq replay` run.
type ReplayOptions struct {
	failoverFlag
	Factory  *cmdutil.Factory
	Queue    string
	FromFile string
	To       string
	Origin   string
	Where    []string
	Reasons  []string
	Groups   []string
	Older    string
	Max      int
	Window   int
	WindowMB windowMiB
	Rate     float64
	MaxRepl  int
	// MaxBounces and CreateDest are the loop guard's threshold and the
	// consent to declare a missing destination queue.
	MaxBounces int
	CreateDest bool
	Again      bool
	Park       string
	Reset      string
	Journal    string
	Resume     string
	RetryDbt   bool
	// CheckDest reads the destination queues of the publishes in doubt
	// before a resume decides them.
	CheckDest bool
	RunID     string
	Yes       bool
	Grace     time.Duration
	// Idempotency skip.
	SkipSucceeded bool
	IdemTable     string
	IdemColumn    string
	StatusColumn  string
	DoneValue     string
	Succeeded     string // leave or park
	analysisFlags

	args []string
}

// replayLong and replayExamples are replay's help.
const (
	replayLong = `Replay sends dead letters back to where they came from - the queue named in
x-death, through the default exchange, or (--origin exchange) the original
exchange and routing keys; for Spring's recoverer, x-original-exchange and
x-original-routingKey - or to --to EXCHANGE[:ROUTING-KEY].

Without --yes it is a dry run: it reads the messages (requeuing them), and
prints what would go where, how many, whether each destination exists, and
what would be parked or left.

With --yes, for each message: consume from the DLQ with a prefetch window;
publish on a separate connection with publisher confirms and mandatory; ack
the DLQ message only after the publish is confirmed and not returned. A
returned (unroutable) or nacked message stays in the DLQ and is reported.
If a connection is lost with publishes unconfirmed, those messages are in
doubt: they stay in the DLQ, the journal marks them, and they are never
retried silently (--resume JOURNAL --retry-in-doubt does, on purpose).
With several addresses in --amqp-url (a cluster), a node lost mid-run is
failed over: the run goes on through the next node that answers, as a
--resume of its own journal would, and the summary names the failover. It
counts the DLQ only once it shows what it must still hold, and ends only
when the DLQ's depth confirms it read everything it had to: messages still
there that it did not read are counted and exit 3. --check-destination
settles messages in doubt by reading their destination queue (one with no
consumer; every message there is requeued): found there, done; missing
while every confirmed one is there, replayed.

Headers: message id, correlation id and every property are kept; x-death
and the other broker death headers (and Spring's x-exception-*,
x-original-*) move into dupctl-death; dupctl-replay-count, dupctl-replay-run
and dupctl-replay-id are added; --reset-attempts HEADER zeroes your app's
own attempt counter. Messages are published persistent.

Loop guards: the run reads at most the count at its start; a message of
this run coming back is never replayed again by it; while it replays it
watches the DLQ's depth, and when the DLQ gains more messages than
--max-bounces (default 0) the run stops and exits 1 (new dead letters from
elsewhere count too: raise --max-bounces when the DLQ is being fed). Messages
replayed --max-replays times are parked in --park-queue. With
--skip-succeeded, messages whose idempotency key is already SUCCEEDED in your
database are not replayed (left, or parked with --succeeded park): a replay
must not cause the duplicate it recovers from.

Destinations: each is checked before its first publish. A missing one is not
published into: the run stops and exits 2, the messages stay in the DLQ
(--create-destination declares a missing queue; an exchange is never
created).

Every --yes run writes a journal (JSON Lines: start, each publish, each
outcome, end) to --journal PATH, by default to $XDG_STATE_HOME/dupctl/
(~/.local/state/dupctl/ when XDG_STATE_HOME is unset) as
dupctl-replay-RUN.journal; the summary prints where. --resume JOURNAL
continues an interrupted run. Each DLQ copy is its own item, so
byte-identical dead letters are each published once: a copy is acked
without republishing only where the journal proves a published copy of
that content is still in the DLQ; where it cannot tell (an ack sent just
before a crash), the copy is left in doubt and reported.
Ctrl-C stops consuming, requeues what was prefetched, waits for outstanding
confirms and prints the summary.`
	replayExamples = `  # what would happen (reads and requeues; publishes nothing)
  dupctl dlq replay --queue orders.dlq

  # one stats group, 20 msgs/s, journal in ./replay.journal
  dupctl dlq replay --queue orders.dlq --group 3f2a9c1b --rate 20 --journal replay.journal --yes

  # only rejected payments older than an hour, not already done
  dupctl dlq replay --queue orders.dlq --reason rejected --older-than 1h \
    --where body.type=payment --skip-succeeded --database-url $DATABASE_URL \
    --idempotency-table payments --yes

  # continue after Ctrl-C or a lost connection
  dupctl dlq replay --queue orders.dlq --resume replay.journal --yes

  # from an export file, to an explicit exchange and key
  dupctl dlq replay --from-file orders-dlq.jsonl --to orders:order.retry --yes`
)

// NewCmdReplay is `dupctl dlq replay`.
func NewCmdReplay(f *cmdutil.Factory, runF func(*ReplayOptions) error) *cobra.Command {
	o := &ReplayOptions{Factory: f}
	cmd := &cobra.Command{
		Use:     "replay --queue QUEUE | --from-file FILE",
		Short:   "Republish dead letters where they came from: dry run first, nothing lost, nothing doubled",
		Long:    replayLong + replayExitStatus,
		Example: replayExamples,
		Args:    cobra.NoArgs,
		RunE: func(cmd *cobra.Command, args []string) error {
			o.args = os.Args
			if !cmd.Flags().Changed("from-file") {
				if job, err := f.Job(); err != nil {
					return err
				} else if job != nil {
					cmdutil.FromJob(cmd, "queue", &o.Queue, job.DLQ)
				}
			}
			if runF != nil {
				if _, err := o.options(); err != nil {
					return err
				}
				return runF(o)
			}
			return runReplay(cmd.Context(), o)
		},
	}
	fs := cmd.Flags()
	o.registerFlags(fs)
	o.register(fs)
	cmdutil.FieldFlags(cmd, map[string]string{"Via": "origin", "ParkSucceeded": "succeeded", "Run": "run-id"})
	cmdutil.FieldFlags(cmd, map[string]string{"File": "from-file", "ParkQueue": "park-queue", "CreateDestination": "create-destination",
		"IdempotencyKeys": "idempotency-key", "Reasons": "reason", "Groups": "group"})
	return cmd
}

// registerFlags declares replay's own flags (the analysis flags are
// registered with them).
func (o *ReplayOptions) registerFlags(fs *pflag.FlagSet) {
	fs.StringVarP(&o.Queue, "queue", "q", "", "the dead-letter queue to replay")
	fs.StringVar(&o.FromFile, "from-file", "", "replay an export file (dlq export) instead of a queue")
	fs.StringVar(&o.To, "to", "",
		"send every message to EXCHANGE[:ROUTING-KEY] (no key: each message's original key; :QUEUE: straight to a queue)")
	fs.StringVar(&o.Origin, "origin", classify.ViaQueue,
		"origin routing: queue (the queue it died in, via the default exchange) or exchange (the original exchange and keys)")
	fs.StringArrayVar(&o.Where, "where", nil, "only messages where FIELD=VALUE, FIELD!=VALUE, FIELD~REGEX or FIELD (present); "+
		"FIELD is header.NAME, body.PATH or prop.NAME; repeat to AND")
	fs.StringSliceVar(&o.Reasons, "reason", nil,
		"only messages last dead-lettered for these reasons: rejected, expired, maxlen, delivery_limit, republished")
	fs.StringSliceVar(&o.Groups, "group", nil, "only these stats groups (ids from 'dlq stats')")
	fs.StringVar(&o.Older, "older-than", "", "only messages dead-lettered longer ago than this (90m, 36h, 3d)")
	fs.IntVar(&o.Max, "max", 0, "replay at most this many messages (0: no limit)")
	fs.IntVar(&o.Window, "window", 1000, "prefetch window and the most unconfirmed publishes at once (what a crash can leave in doubt)")
	o.WindowMB.register(fs)
	o.registerFailover(fs)
	fs.Float64Var(&o.Rate, "rate", 0, "publish at most this many messages per second (0: no limit)")
	fs.IntVar(&o.MaxRepl, "max-replays", 3, "park messages already replayed this many times (0: never park)")
	fs.IntVar(&o.MaxBounces, "max-bounces", 0, "stop once more than this many replayed messages come back to the DLQ during the run")
	fs.BoolVar(&o.CreateDest, "create-destination", false,
		"declare a destination queue that does not exist (durable) instead of refusing to replay into it")
	fs.StringVar(&o.Park, "park-queue", "", "parking queue (default QUEUE.parked, declared durable when missing)")
	fs.StringVar(&o.Reset, "reset-attempts", "", "set this header (your app's attempt counter, e.g. retry-count) to 0")
	fs.StringVar(&o.Journal, "journal", "",
		"journal file (default $XDG_STATE_HOME/dupctl/dupctl-replay-RUN.journal, or under ~/.local/state/dupctl/)")
	fs.StringVar(&o.Resume, "resume", "", "continue the run recorded in this journal (appends to it)")
	fs.BoolVar(&o.RetryDbt, "retry-in-doubt", false, "with --resume: replay messages the journal marks in doubt")
	fs.BoolVar(&o.CheckDest, "check-destination", false, "settle messages in doubt by reading their destination queue when it has "+
		"no consumer (every message there is requeued): found there is done, missing while every confirmed one is there is replayed")
	fs.StringVar(&o.RunID, "run-id", "",
		"name this run (default: time and random bits); goes into dupctl-replay-run and the connection names")
	fs.BoolVar(&o.Yes, "yes", false, "publish (without it: a dry run)")
	fs.BoolVar(&o.Again, "again", false, "with --from-file: replay a file that an earlier run (found by its journal) already replayed")
	fs.DurationVar(&o.Grace, "drain-grace", 30*time.Second, "how long to wait for outstanding confirms when stopping")
	fs.BoolVar(&o.SkipSucceeded, "skip-succeeded", false, "skip messages whose idempotency key is SUCCEEDED in --database-url")
	fs.StringVar(&o.IdemTable, "idempotency-table", "", "table holding idempotency keys ([schema.]table)")
	fs.StringVar(&o.IdemColumn, "key-column", "idempotency_key", "column of the idempotency key")
	fs.StringVar(&o.StatusColumn, "status-column", "status", "column of the status")
	fs.StringVar(&o.DoneValue, "succeeded-value", "SUCCEEDED", "status value that means the job is done")
	fs.StringVar(&o.Succeeded, "succeeded", "leave", "what to do with already-succeeded messages: leave (in the DLQ) or park")
}

// options validates the flags into the capability's options (no I/O).
func (o *ReplayOptions) options() (*replay.ReplayOptions, error) {
	ro := &replay.ReplayOptions{Queue: o.Queue, File: o.FromFile, Max: o.Max,
		Window: o.Window, WindowBytes: o.WindowMB.bytes(), Rate: o.Rate,
		MaxReplays: o.MaxRepl, ParkQueue: o.Park,
		RetryInDoubt: o.RetryDbt, CheckDestination: o.CheckDest, Yes: o.Yes, DrainGrace: o.Grace, DeclareParkQueue: true,
		MaxBounces: o.MaxBounces, CreateDestination: o.CreateDest,
		Router: classify.Router{Via: o.Origin}, Rewrite: replay.Rewrite{ResetAttempts: o.Reset}}
	if o.Resume != "" {
		// The journal is read as the run starts (runIdentity); until then
		// an empty state says a run is resumed.
		ro.Resume = &journal.State{}
	}
	if err := o.check(ro); err != nil {
		return nil, err
	}
	var err error
	if ro.ParkSucceeded, err = replay.ParseSucceeded(o.Succeeded); err != nil {
		return nil, err
	}
	if err := ro.Validate(); err != nil { // what is left: --retry-in-doubt
		return nil, err
	}
	if err := o.checkSources(); err != nil {
		return nil, err
	}
	if ro.Analyzer, ro.IdempotencyKeys, err = o.analyzer(); err != nil {
		return nil, err
	}
	if ro.ParkQueue == "" {
		ro.ParkQueue = o.Queue + ".parked"
		if o.Queue == "" {
			ro.ParkQueue = "dupctl.parked"
		}
	}
	if o.To != "" {
		t, keep, err := classify.ParseTo(o.To)
		if err != nil {
			return nil, err
		}
		ro.Router.To, ro.Router.KeepKey = t, keep
	}
	if ro.Filter, err = o.filter(); err != nil {
		return nil, err
	}
	return ro, nil
}

// check validates what only the command line has: the failover wait and
// the window in MiB (the capability's WindowBytes counts otherwise).
//
// ro's own checks (ReplayOptions.Validate) are asked in stages around
// them, so that of several bad flags the one said is the one the command
// always said first: the source and the numbers, --failover-wait, --rate,
// --window-mib, --origin (options goes on with --succeeded, then
// --retry-in-doubt).
func (o *ReplayOptions) check(ro *replay.ReplayOptions) error {
	stage := *ro
	stage.Router.Via, stage.RetryInDoubt = classify.ViaQueue, false
	if math.IsNaN(ro.Rate) || math.IsInf(ro.Rate, 1) {
		stage.Rate = 0 // said after --failover-wait
	}
	if err := stage.Validate(); err != nil {
		return err
	}
	if err := o.checkFailover(); err != nil {
		return err
	}
	stage.Rate = ro.Rate
	if err := stage.Validate(); err != nil {
		return err
	}
	if err := o.WindowMB.check(); err != nil {
		return err
	}
	stage.Router.Via = ro.Router.Via
	return stage.Validate()
}

// checkSources refuses flags that need or exclude each other where the
// command line alone holds them: a journal path, a resumed journal's
// path, a table to look keys up in.
func (o *ReplayOptions) checkSources() error {
	if o.Journal != "" && o.Resume != "" {
		return exitcode.UsageErrorf("--resume appends to its journal: do not give --journal too")
	}
	if o.SkipSucceeded && o.IdemTable == "" {
		return exitcode.UsageErrorf("--skip-succeeded needs --idempotency-table (and --database-url)")
	}
	return nil
}

// filter is which dead letters to replay: --where, --reason, --group and
// --older-than.
func (o *ReplayOptions) filter() (classify.Filter, error) {
	var f classify.Filter
	for _, w := range o.Where {
		c, err := classify.ParseWhere(w)
		if err != nil {
			return f, err
		}
		f.Where = append(f.Where, c)
	}
	f.Reasons, f.Groups = o.Reasons, o.Groups
	if err := f.Validate(); err != nil {
		return f, err
	}
	var err error
	f.OlderThan, err = classify.ParseAge(o.Older)
	return f, err
}

func runReplay(ctx context.Context, o *ReplayOptions) error {
	f := o.Factory
	ro, err := o.options()
	if err != nil {
		return err
	}
	deps := replay.ReplayDeps{Now: f.Now}
	ro.Args, ro.Version = redactArgs(o.args), f.BuildInfo().Version
	if err := o.runIdentity(ro); err != nil {
		return err
	}
	c, err := amqpConn(f, "run="+o.RunID)
	if err != nil {
		return err
	}
	ro.Vhost, ro.Rewrite.User, deps.Dial = c.vhost, c.user, c.dial
	if o.FromFile != "" {
		fh, err := logs.OpenFile(ctx, o.FromFile)
		if ctx.Err() != nil {
			return ctx.Err()
		}
		if err != nil {
			return exitcode.InputError(fmt.Errorf("--from-file: %w", err), "give an export file written by 'dupctl dlq export'")
		}
		defer fh.Close()
		if ro.FileDigest, err = fileOnce(ctx, o, fh); err != nil {
			return err
		}
		// Reading ends with --timeout and Ctrl-C (issue 27: a replay of
		// /dev/zero or an idle FIFO ran forever and ignored SIGINT).
		deps.Records = logs.ContextReader(ctx, fh)
	}
	if deps.Idempotency, err = o.idempotency(ctx); err != nil {
		return err
	}
	journalPath := ""
	if o.Yes {
		jf, path, err := openJournal(o)
		if err != nil {
			return err
		}
		defer jf.Close()
		journalPath = path
		deps.Journal = journal.New(jf, o.RunID, time.Now)
		if c.nodes > 1 && o.Queue != "" {
			// A lost node: go on through another, as --resume would.
			deps.Failover = &replay.Failover{Failover: *c.failover(o.failoverFlag),
				Journal: func() (*journal.State, error) { return readJournal(path) }}
		}
	}
	deps.Progress = f.IO.StartProgress("dlq replay", "messages")
	defer oneProc(f.Getenv)()
	return o.replay(ctx, deps, ro, journalPath)
}

// runIdentity names the run: the resumed journal's run (checked against
// --queue, --from-file and --run-id), --run-id, or a new id.
func (o *ReplayOptions) runIdentity(ro *replay.ReplayOptions) error {
	if o.Resume != "" {
		st, err := readJournal(o.Resume)
		if err != nil {
			return err
		}
		if (st.Queue != "" && st.Queue != o.Queue) || (st.File != "" && st.File != o.FromFile) {
			return exitcode.UsageErrorf("--resume %s is a run over %s%s, not this one", o.Resume, st.Queue, st.File)
		}
		if o.RunID != "" && o.RunID != st.Run {
			return exitcode.UsageErrorf("--run-id %s differs from the journal's run %s", o.RunID, st.Run)
		}
		ro.Resume, o.RunID = st, st.Run
	}
	if o.RunID == "" {
		o.RunID = replay.NewRunID()
	}
	if err := replay.CheckRunID(o.RunID); err != nil {
		return err
	}
	ro.Rewrite.Run = o.RunID
	return nil
}

// idempotency is the --skip-succeeded look-up (nil without it).
func (o *ReplayOptions) idempotency(ctx context.Context) (replay.Idempotency, error) {
	if !o.SkipSucceeded {
		return nil, nil
	}
	pool, err := o.Factory.Postgres(ctx, connect.PostgresOptions{ReadOnly: true, StatementTimeout: 30 * time.Second, MaxConns: 2})
	if err != nil {
		return nil, err
	}
	pg := &replay.PGIdempotency{Pool: pool, Table: o.IdemTable, KeyColumn: o.IdemColumn, Status: o.StatusColumn, Done: o.DoneValue}
	if err := pg.Prepare(ctx); err != nil {
		return nil, exitcode.InputError(err, "check --idempotency-table, --key-column and --status-column")
	}
	return pg, nil
}

// replay runs the replay and prints its summary, then says how it ended.
func (o *ReplayOptions) replay(ctx context.Context, deps replay.ReplayDeps, ro *replay.ReplayOptions, journalPath string) error {
	res, err := replay.Replay(ctx, deps, *ro)
	if err != nil && res == nil {
		if journalPath != "" && o.Resume == "" {
			removeIfEmpty(journalPath) // nothing started: it must not block the rerun
		}
		return err
	}
	emitErr := o.Factory.Emit(ctx, report.Document{Report: res.Report(), Text: func(w io.Writer, th *report.Theme) error {
		return writeReplay(w, th, res, journalPath)
	}, HTML: func(w io.Writer) error { return writeReplayHTML(w, res, journalPath) }})
	// The summary stands on every exit (issue 27: a replay that stopped on
	// a lost connection, a refused publish or a malformed line printed
	// nothing; its counts were only in the journal).
	switch {
	case ctx.Err() != nil:
		return ctx.Err()
	case err != nil:
		return exitcode.KeepOutput(err)
	case res.Lost != "":
		hint := "nothing was lost: run again with --resume " + journalPath
		if n := len(res.Failovers); n > 0 && res.Failovers[n-1].GaveUp != "" {
			hint = "no failover (" + res.Failovers[n-1].GaveUp + "); nothing was lost: run again with --resume " + journalPath
		}
		return exitcode.KeepOutput(exitcode.UnavailableError(fmt.Errorf("connection lost during the replay: %s", res.Lost), hint))
	case res.Counts.Unaccounted > 0 || res.EndUnchecked != "":
		// Never a pass (issue 39: a failover read 0 and exited 0 with
		// 18,352 still in the DLQ).
		why := fmt.Sprintf("%d messages are still in the DLQ that this run did not read after the failover", res.Counts.Unaccounted)
		if res.Counts.Unaccounted == 0 {
			why = res.EndUnchecked
		}
		return exitcode.KeepOutput(exitcode.UnavailableError(errors.New(why),
			"nothing was lost: run again with --resume "+journalPath+" once the lost node is back"))
	}
	return emitErr
}

// oneProc runs the replay on one Go processor unless the user set
// GOMAXPROCS, and returns what puts the previous setting back. The mover
// is one decision loop fed by two socket readers: with more processors,
// each hand-off between them wakes another OS thread, which on a broker's
// own host takes CPU from the broker (docs/benchmarks.md, "one processor").
func oneProc(getenv func(string) string) (restore func()) {
	if getenv("GOMAXPROCS") != "" {
		return func() {}
	}
	prev := runtime.GOMAXPROCS(1)
	return func() { runtime.GOMAXPROCS(prev) }
}

func readJournal(path string) (*journal.State, error) {
	fh, err := os.Open(path)
	if err != nil {
		return nil, exitcode.InputError(fmt.Errorf("--resume: %w", err), "give the journal file of the interrupted run")
	}
	defer fh.Close()
	st, err := journal.Read(fh)
	if err != nil {
		return nil, exitcode.InputError(fmt.Errorf("--resume %s: %w", path, err), "give the journal file of the interrupted run")
	}
	return st, nil
}

// fileOnce reads an export file's digest and, for a replay under a new
// journal, refuses a file an earlier run replayed (unless --again): it
// would publish every message a second time. It looks for that run's
// journal in the current directory, the --journal directory and the state
// directory where journals go by default. It leaves fh at its start.
func fileOnce(ctx context.Context, o *ReplayOptions, fh *os.File) (string, error) {
	if st, err := fh.Stat(); err == nil && !st.Mode().IsRegular() {
		// A FIFO or a device cannot be read twice: no digest, so no
		// "replayed before" check (docs/dlq.md).
		return "", nil
	}
	digest, err := journal.FileDigest(logs.ContextReader(ctx, fh))
	if err == nil {
		_, err = fh.Seek(0, io.SeekStart)
	}
	if ctx.Err() != nil {
		return "", ctx.Err()
	}
	if err != nil {
		return "", exitcode.InputError(fmt.Errorf("--from-file: %w", err), "give a readable export file")
	}
	if !o.Yes || o.Resume != "" || o.Again {
		return digest, nil
	}
	dirs := []string{".", filepath.Dir(o.Journal)}
	if dir := stateDir(o.Factory.Getenv); dir != "" {
		dirs = append(dirs, dir)
	}
	if earlier := journal.Find(dirs, digest); len(earlier) > 0 {
		return "", exitcode.InputError(fmt.Errorf(
			"--from-file %s was replayed before (journal %s): replaying it under a new journal publishes every message again",
			o.FromFile, earlier[0]),
			"--resume "+earlier[0]+" continues that run; --again replays the file anew")
	}
	return digest, nil
}

// removeIfEmpty removes a file this run created and wrote nothing to.
func removeIfEmpty(path string) {
	if st, err := os.Stat(path); err == nil && st.Size() == 0 {
		_ = os.Remove(path)
	}
}

func openJournal(o *ReplayOptions) (*os.File, string, error) {
	if o.Resume != "" {
		fh, err := os.OpenFile(o.Resume, os.O_RDWR|os.O_APPEND, 0)
		if err != nil {
			return nil, "", exitcode.InputError(fmt.Errorf("--resume: %w", err), "the journal must be writable")
		}
		// A kill can leave a torn last line; appending after it would
		// glue this run's first record to it.
		if err := journal.TrimTornLine(fh); err != nil {
			fh.Close()
			return nil, "", exitcode.InputError(fmt.Errorf("--resume %s: %w", o.Resume, err), "the journal must be writable")
		}
		return fh, o.Resume, nil
	}
	path := o.Journal
	if path == "" {
		dir, err := journalDir(o.Factory.Getenv)
		if err != nil {
			return nil, "", err
		}
		path = filepath.Join(dir, "dupctl-replay-"+o.RunID+".journal")
	}
	fh, err := os.OpenFile(path, os.O_WRONLY|os.O_CREATE|os.O_EXCL|os.O_APPEND, 0o600)
	if errors.Is(err, os.ErrExist) {
		return nil, "", exitcode.InputError(fmt.Errorf("--journal %s exists", path), "use --resume to continue that run, or choose another file")
	}
	if err != nil {
		return nil, "", exitcode.InputError(fmt.Errorf("--journal: %w", err), "check the path")
	}
	return fh, filepath.Clean(path), nil
}

// stateDir is where replay journals go unless --journal says otherwise:
// $XDG_STATE_HOME/dupctl, or ~/.local/state/dupctl when XDG_STATE_HOME is
// unset or not absolute (the XDG base directory rules); "" when there is
// no home either.
func stateDir(getenv func(string) string) string {
	if d := getenv("XDG_STATE_HOME"); filepath.IsAbs(d) {
		return filepath.Join(d, "dupctl")
	}
	home := getenv("HOME")
	if home == "" {
		home, _ = os.UserHomeDir()
	}
	if home == "" {
		return ""
	}
	return filepath.Join(home, ".local", "state", "dupctl")
}

// journalDir is the state directory, created (0700: a journal names
// queues and message ids) when it does not exist yet.
func journalDir(getenv func(string) string) (string, error) {
	dir := stateDir(getenv)
	if dir == "" {
		return "", exitcode.InputError(fmt.Errorf("no directory for the journal: neither XDG_STATE_HOME nor HOME is set"), "give --journal PATH")
	}
	if err := os.MkdirAll(dir, 0o700); err != nil {
		return "", exitcode.InputError(fmt.Errorf("journal directory: %w", err), "give --journal PATH")
	}
	return dir, nil
}

// redactArgs keeps URLs' passwords out of the journal.
func redactArgs(args []string) []string {
	out := make([]string, len(args))
	for i, a := range args {
		out[i] = redact.String(a)
	}
	return out
}
