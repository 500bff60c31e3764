package inspect

import (
	"context"
	"time"

	"github.com/dupctl/dupctl/internal/cli/cmdutil"
	"github.com/dupctl/dupctl/internal/inspect/lock"
	"github.com/dupctl/dupctl/internal/platform/config"
	"github.com/dupctl/dupctl/internal/platform/exitcode"
	"github.com/dupctl/dupctl/internal/platform/problem"
	"github.com/dupctl/dupctl/internal/platform/redact"
	"github.com/spf13/cobra"
)

// LockOptions are one `dupctl inspect lock` run.
type LockOptions struct {
	Factory *cmdutil.Factory
	Lock    lock.Options
}

// NewCmdLock is `dupctl inspect lock`.
func NewCmdLock(f *cmdutil.Factory, runF func(*LockOptions) error) *cobra.Command {
	opts := &LockOptions{Factory: f}
	o := &opts.Lock
	cmd := &cobra.Command{
		Use:     "lock",
		Short:   "Every lock in Redis, found by its shape - TTL, owner, maker - and what is wrong with it, read-only",
		Long:    lockLong + exitStatus,
		Example: lockExample,
		Args:    cobra.NoArgs,
		RunE: func(cmd *cobra.Command, args []string) error {
			if err := lockFromConfig(f, cmd, o); err != nil {
				return err
			}
			if err := validateLock(cmd, o); err != nil {
				return err
			}
			if runF != nil {
				return runF(opts)
			}
			return runLock(cmd.Context(), opts)
		},
	}
	addLockFlags(cmd, o)
	return cmd
}

// lockFromConfig fills in what the --job and dupctl.yaml say (the job's
// lock pattern and TTL where no flag gave them, the configured lock
// patterns and libraries), as doctor does: lock.Options.Configure.
func lockFromConfig(f *cmdutil.Factory, cmd *cobra.Command, o *lock.Options) error {
	job, err := f.Job()
	if err != nil {
		return err
	}
	var locks config.Locks
	if f.Config != nil {
		locks = f.Config.Locks
	}
	o.Configure(locks, job, cmdutil.Given(cmd))
	return nil
}

// addLockFlags registers inspect lock's flags on o, and the flags its
// Options fields are worded as.
func addLockFlags(cmd *cobra.Command, o *lock.Options) {
	fs := cmd.Flags()
	d := lock.Defaults()
	fs.StringArrayVar(&o.Patterns, "pattern", nil, "consider only keys matching this Redis glob (repeat for several; default: every key)")
	fs.StringArrayVar(&o.LockPatterns, "lock-pattern", nil, "keys matching this Redis glob are locks, whatever their shape "+
		"(repeat for several; also locks.patterns in dupctl.yaml)")
	fs.BoolVar(&o.All, "all", false, "consider every key (the default; locks are found by shape either way)")
	fs.StringVar(&o.Key, "key", "", "inspect this one key in full instead of scanning")
	fs.Int64Var(&o.Count, "count", d.Count, "SCAN COUNT: keys per page and pipeline")
	fs.IntVar(&o.Top, "top", d.Top, "keys in the per-key table (-v) and JSON, problems first")
	fs.IntVar(&o.Observe, "observe", d.Observe, "observations; 2 or more enable the orphan check")
	fs.DurationVar(&o.Interval, "interval", d.Interval, "time between observations")
	fs.DurationVar(&o.IdleAfter, "idle", d.IdleAfter, "idle time after which an untouched lock is an orphan (with --observe)")
	fs.DurationVar(&o.MaxTTL, "max-ttl", d.MaxTTL, "TTL above which a lock family is reported as long (LOCK_TTL_LONG)")
	fs.DurationVar(&o.FailoverWait, "failover-wait", d.FailoverWait,
		"how long the scan of a master that fails (cluster or Sentinel) waits for a master to serve its keys again before reporting them unread")
	fs.DurationVar(&o.Learn, "learn", 0, "watch the server's commands (MONITOR) this long before the scan: keys seen taken with SET NX "+
		"or released by compare-and-delete are certain locks, keys written without NX data (staging: costs the server throughput; "+
		"needs +monitor)")
	fs.BoolVar(&o.NoValues, "no-values", false,
		"read names, types, TTLs and idle times only: locks found by name and TTL, no owner or maker")
	fs.Float64Var(&o.MinConfidence, "min-confidence", d.MinConfidence,
		"confidence (0.5-1) a lock family needs for warn and error findings")
	cmdutil.FieldFlags(cmd, map[string]string{
		"Patterns": "pattern", "IdleAfter": "idle", "LockPatterns": "lock-pattern", "Libraries": "config",
	})
}

const lockLong = `Inspect lock walks a Redis server or every master of a Redis Cluster with
SCAN (never KEYS), reads every key's type, TTL, idle time and value - the
first 1 KiB of a string, the first HSCAN page of a hash - in one pipelined
round trip per batch, and finds the locks among them by their shape, not
their name:

  - confirmed locks: keys laid out as a lock library writes them (a
    catalogue of 44 libraries in 7 languages - Redisson, ShedLock, redsync,
    BullMQ, sidekiq-unique-jobs, python-redis-lock, Laravel, Symfony Lock,
    Hangfire, ... - each entry citing the library's source), keys of your
    own libraries (locks.libraries in dupctl.yaml), and keys you name with
    --lock-pattern;
  - likely locks: a lock word in the name (lock, mutex, lease, semaphore),
    a token-shaped value and a TTL; or, whatever the name, a family whose
    keys behave as locks do together - random owner tokens, one granted
    TTL (PTTL + idle time), a lease;
  - possible locks: the shape only (a random token under a lease-like
    TTL): one info line per family, naming the --lock-pattern that would
    confirm it and how many keys it matches, with its defects that do not
    depend on what wrote it (no TTL, a TTL outlier, a constant value) at
    info beside it. Warn and error findings are only about confirmed and
    likely locks.
  - with --learn D (staging): the server's commands watched for D before
    the scan (MONITOR); keys seen taken with SET NX or released by
    compare-and-delete are confirmed locks, keys written without NX data.
  - the keys that are not locks - sessions, carts, presence, caches of
    ids, counters, rate limits, serialised documents, the job libraries'
    queues and other libraries' own data (rate limiters' counters,
    heartbeats) - are counted per family with why (-v lists them with a
    real example each).

For the locks, per key family (the key with its varying parts replaced by
their shape, e.g. lock:payment:order:{uuid}):

  - which library made them and what role each key plays;
  - whether the key is built from a business key or from a per-run id;
  - whether the owner value is a real token, or a constant, a hostname,
    a timestamp, a short value, or the same value on many locks;
  - locks with no TTL, TTLs far from their siblings', fencing counters;
  - idle locks untouched across observations (--observe 2 --interval 30s:
    never judged from one snapshot);
  - Redis settings that lose locks (eviction policy, evicted keys, a
    replica, no AOF), from INFO and, where the ACL allows, CONFIG GET.

It only reads: SCAN, TYPE, PTTL, OBJECT IDLETIME, GETRANGE, HSCAN, EXISTS,
INFO and CONFIG GET (and MONITOR with --learn), so it runs as a read-only ACL user (-@all +@read is
enough; without INFO the settings checks say "not checked"). On Redis 7.2+
it reads with CLIENT NO-TOUCH so idle times stay as they were; on older
servers it reads each idle time before the value, and reading the value
resets it (--no-values avoids that). Memory stays flat however many keys
there are.

On a Redis Cluster, or behind Sentinels, a master that fails mid-scan is
followed to the replica promoted in its place (waiting up to
--failover-wait), and the scan goes on there; keys that nobody serves in
time are a LOCK_SCAN_INCOMPLETE error naming them (the slots, or the
master), never silently left out.`

const lockExample = `  # every key considered; locks found by shape
  dupctl inspect lock --redis-url redis://127.0.0.1:6379/0

  # only some keys, every lock listed, and what was skipped
  dupctl inspect lock --pattern 'payment:*' -v

  # a cluster: give several seed nodes (or ?cluster=true)
  dupctl inspect lock --redis-url redis://10.0.0.1:7000,10.0.0.2:7000

  # the master three Sentinels name "mymaster" (after a failover, the new one)
  dupctl inspect lock --redis-url redis+sentinel://10.0.0.1:26379,10.0.0.2:26379,10.0.0.3:26379/mymaster

  # orphans: two looks 30s apart, locks idle over 10m and untouched
  dupctl inspect lock --observe 2 --interval 30s --idle 10m

  # one key in full
  dupctl inspect lock --key lock:payment:order:42

  # CI: fail on warnings, JUnit for the test reporter
  dupctl inspect lock --fail-on warn -o junit > locks.xml`

// validateLock checks what only the command line knows (which flags were
// given), then the options themselves.
func validateLock(cmd *cobra.Command, o *lock.Options) error {
	fs := cmd.Flags()
	switch {
	case fs.Changed("key") && o.Key == "":
		return problem.Inputf("Key", "must not be empty")
	case fs.Changed("failover-wait") && o.FailoverWait < time.Second:
		return problem.Inputf("FailoverWait", "must be at least 1s, got %s", o.FailoverWait)
	case (fs.Changed("interval") || fs.Changed("idle")) && o.Observe < 2:
		return &problem.Input{Why: "{Interval} and {IdleAfter} need {Observe} 2 or more: an orphan is never judged from one snapshot"}
	}
	return o.Validate()
}

func runLock(ctx context.Context, opts *LockOptions) error {
	f := opts.Factory
	client, err := f.Redis(ctx)
	if err != nil {
		return err
	}
	o := opts.Lock
	o.URL = redact.URL(f.Global.RedisURL)
	o.Now = f.Now
	o.Progress = f.IO.StartProgress("inspect lock", "keys")
	res, err := lock.Run(ctx, client, o)
	if err != nil {
		return err
	}
	err = f.Emit(ctx, lockDocument(res.Report(), &res.Data, f.Global.Verbose))
	if inc := res.Incomplete(); inc != nil && (err == nil || exitcode.IsSilent(err)) {
		// Slots left unread fail the run whatever --fail-on says; the
		// report, which names them, stands.
		return exitcode.KeepOutput(inc)
	}
	return err
}
