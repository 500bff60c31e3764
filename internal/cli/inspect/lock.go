package inspect

import (
	"context"
	"time"

	"github.com/dupctl/dupctl/internal/cli/cmdutil"
	"github.com/dupctl/dupctl/internal/inspect/lock"
	"github.com/dupctl/dupctl/internal/platform/exitcode"
	"github.com/dupctl/dupctl/internal/platform/redact"
	"github.com/dupctl/dupctl/internal/platform/report"
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
		Use:   "lock",
		Short: "Every lock in Redis - TTL, owner, maker - and what is wrong with it, read-only",
		Long: `Inspect lock walks a Redis server or every master of a Redis Cluster with
SCAN (never KEYS), reads each matching key's TTL, idle time and value in
pipelines, and reports per key family (the key with its varying parts
replaced by their shape, e.g. lock:payment:order:{uuid}):

  - which library made the locks (redsync, bsm/redislock, Redisson, Spring
    Integration, ShedLock, BullMQ, sidekiq-unique-jobs, asynq, the plain
    SET key <token> NX PX pattern) and what role each key plays;
  - whether the key is built from a business key or from a per-run id
    (a UUID v4, a ULID minted with the lock, a JID, a job counter);
  - whether the owner value is a real token, or a constant, a hostname,
    a timestamp, a short value, or the same value on many locks;
  - locks with no TTL, TTLs far from their siblings', fencing counters;
  - idle locks untouched across observations (--observe 2 --interval 30s:
    never judged from one snapshot);
  - Redis settings that lose locks (eviction policy, evicted keys, a
    replica, no AOF), from INFO and, where the ACL allows, CONFIG GET.

It only reads: SCAN, PTTL, OBJECT IDLETIME, GETRANGE, TYPE, HLEN, HSCAN,
EXISTS, INFO and CONFIG GET, so it runs as a read-only ACL user. On Redis
7.2+ it reads with CLIENT NO-TOUCH so idle times stay as they were; on older
servers it reads each idle time before the value, and reading the value
resets it (--no-values avoids that). Memory stays flat however many keys
there are.` + exitStatus,
		Example: `  # the default lock patterns (lock, mutex, fence in any case; uniquejobs:*; asynq unique keys)
  dupctl inspect lock --redis-url redis://127.0.0.1:6379/0

  # one family, every key listed
  dupctl inspect lock --pattern 'lock:payment:*' -v

  # a cluster: give several seed nodes (or ?cluster=true)
  dupctl inspect lock --redis-url redis://10.0.0.1:7000,10.0.0.2:7000

  # orphans: two looks 30s apart, locks idle over 10m and untouched
  dupctl inspect lock --observe 2 --interval 30s --idle 10m

  # one key in full
  dupctl inspect lock --key lock:payment:order:42

  # CI: fail on warnings, JUnit for the test reporter
  dupctl inspect lock --fail-on warn -o junit > locks.xml`,
		Args: cobra.NoArgs,
		RunE: func(cmd *cobra.Command, args []string) error {
			if err := validateLock(cmd, o); err != nil {
				return err
			}
			if runF != nil {
				return runF(opts)
			}
			return runLock(cmd.Context(), opts)
		},
	}
	fs := cmd.Flags()
	fs.StringArrayVar(&o.Patterns, "pattern", nil, "key pattern (Redis glob; repeat for several; default: the common lock patterns)")
	fs.BoolVar(&o.All, "all", false, "inspect every key, not only lock-like names")
	fs.StringVar(&o.Key, "key", "", "inspect this one key in full instead of scanning")
	fs.Int64Var(&o.Count, "count", 1000, "SCAN COUNT: keys per page and pipeline")
	fs.IntVar(&o.Top, "top", 20, "keys in the per-key table (-v) and JSON, problems first")
	fs.IntVar(&o.Observe, "observe", 1, "observations; 2 or more enable the orphan check")
	fs.DurationVar(&o.Interval, "interval", 30*time.Second, "time between observations")
	fs.DurationVar(&o.IdleAfter, "idle", 5*time.Minute, "idle time after which an untouched lock is an orphan (with --observe)")
	fs.DurationVar(&o.MaxTTL, "max-ttl", time.Hour, "TTL above which a lock family is reported as long (LOCK_TTL_LONG)")
	fs.BoolVar(&o.NoValues, "no-values", false, "read names, types, TTLs and idle times only: no owner or maker from values")
	return cmd
}

func validateLock(cmd *cobra.Command, o *lock.Options) error {
	fs := cmd.Flags()
	for _, p := range o.Patterns {
		if p == "" {
			return exitcode.UsageErrorf("--pattern must not be empty")
		}
	}
	switch {
	case o.All && len(o.Patterns) > 0:
		return exitcode.UsageErrorf("--all and --pattern exclude each other: --all already inspects every key")
	case fs.Changed("key") && o.Key == "":
		return exitcode.UsageErrorf("--key must not be empty")
	case o.Key != "" && (o.All || len(o.Patterns) > 0 || o.Observe > 1):
		return exitcode.UsageErrorf("--key inspects one key: drop --all, --pattern and --observe")
	case o.Count < 1 || o.Count > 100_000:
		return exitcode.UsageErrorf("--count must be 1..100000, got %d", o.Count)
	case o.Top < 0 || o.Top > 100_000:
		return exitcode.UsageErrorf("--top must be 0..100000, got %d", o.Top)
	case o.Observe < 1 || o.Observe > 10:
		return exitcode.UsageErrorf("--observe must be 1..10, got %d", o.Observe)
	case o.Observe > 1 && o.Interval < time.Second:
		return exitcode.UsageErrorf("--interval must be at least 1s with --observe (Redis counts idle time in seconds), got %s", o.Interval)
	case o.IdleAfter < 0 || o.MaxTTL < 0:
		return exitcode.UsageErrorf("--idle and --max-ttl must not be negative")
	case (fs.Changed("interval") || fs.Changed("idle")) && o.Observe < 2:
		return exitcode.UsageErrorf("--interval and --idle need --observe 2 or more: an orphan is never judged from one snapshot")
	}
	return nil
}

func runLock(ctx context.Context, opts *LockOptions) error {
	f := opts.Factory
	client, err := f.Redis(ctx)
	if err != nil {
		return err
	}
	o := opts.Lock
	o.URL = redact.URL(f.Global.RedisURL)
	o.Progress = f.IO.StartProgress("inspect lock", "keys")
	rep, err := lock.Inspect(ctx, client, o)
	if err != nil {
		return err
	}
	data := rep.Data.(*lock.Data)
	return f.Emit(ctx, report.Document{Report: rep, Text: lockView(data, f.Global.Verbose)})
}
