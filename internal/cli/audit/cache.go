package audit

import (
	"context"
	"fmt"
	"github.com/dupctl/dupctl/internal/idemtable"
	"io"
	"os"

	"github.com/spf13/cobra"
	"github.com/spf13/pflag"

	auditcache "github.com/dupctl/dupctl/internal/audit/cache"
	"github.com/dupctl/dupctl/internal/cli/cmdutil"
	"github.com/dupctl/dupctl/internal/platform/connect"
	"github.com/dupctl/dupctl/internal/platform/exitcode"
	"github.com/dupctl/dupctl/internal/platform/report"
)

// CacheOptions are one `dupctl audit cache` run.
type CacheOptions struct {
	Factory    *cmdutil.Factory
	Audit      auditcache.Options
	Postgres   cmdutil.PostgresFlags
	ReplicaURL string // a standby of the database to compare with

	// the flags parsed into Audit by check
	pattern, value, liveKeys string
	statuses                 []string
}

// cacheLong and cacheExamples are cache's help.
const (
	cacheLong = `Cache compares a Redis job-status cache with the database table that is the
source of truth (the cache must never decide "not done").

It streams the keys of --cache-pattern with SCAN (never KEYS), reads each
value and TTL in pipelines, looks the keys up in --table in batches, reads
every disagreement again after --recheck (an update in flight is not a
finding) and reports:

  - the cache says not done while the database has SUCCEEDED: the next
    message for that key runs the side effect again. An error when a message
    for the key is known to be live, a warning when that is unknown, info
    when it is known not to be;
  - a key with a live message missing from the cache while the database has
    SUCCEEDED (with --live-keys);
  - the cache says done while the database does not;
  - stale non-final statuses, entries with no database row, entries without
    a TTL, values that do not decode or are not a known status.

Whether a message is still live cannot be read from RabbitMQ without
touching it (a peek requeues the message and marks it redelivered), so it
comes from you: --live-keys FILE lists the keys of messages still queued or
in flight (one per line, e.g. from 'dupctl dlq export' or the application's
outbox), --assume-live says any key may be redelivered. Without either, the
audit says it does not know.

With --replica-url (a streaming standby, or a read replica, of the
database): the keys the audit met (up to --replica-keys, the most recently
updated) are read again in a snapshot of the primary and one of the
replica taken right after; keys with no row or another status on the
replica are what a worker whose idempotency check or status read is routed
there would see - the stale cache with another name - with the replay
figures as evidence (pg_wal_lsn_diff against the primary's
pg_current_wal_lsn, a paused replay, pg_last_xact_replay_timestamp). A
replica that is not a standby is compared and said so; one that cannot be
read is noted and the cache audit stands.

Values are decoded by --value: string (the value is the status), json:PATH
(a JSON document, PATH like status or data.state) or hash:FIELD.

Read-only on both sides: SCAN, MGET/GET/HGET, PTTL, EXISTS and DBSIZE on
Redis; read-only PostgreSQL sessions (the replica's too) with a statement_timeout and a
lock_timeout.`
	cacheExamples = `  dupctl audit cache --cache-pattern 'job:status:{key}' --table jobs
  dupctl audit cache --cache-pattern 'job:{key}' --value json:status --table payments --key-column idempotency_key
  dupctl audit cache --cache-pattern 'job:{key}:state' --value hash:status --table jobs --live-keys queued.txt
  dupctl audit cache --cache-pattern 'job:status:{key}' --table jobs --assume-live --fail-on warn -o junit
  dupctl audit cache --cache-pattern 'job:status:{key}' --table jobs --replica-url postgres://reader@replica:5432/app`
)

// NewCmdCache is `dupctl audit cache`.
func NewCmdCache(f *cmdutil.Factory, runF func(*CacheOptions) error) *cobra.Command {
	opts := &CacheOptions{Factory: f}
	cmd := &cobra.Command{
		Use:     "cache",
		Short:   "Find where the Redis status cache disagrees with the PostgreSQL table",
		Long:    cacheLong + cacheExitStatus,
		Example: cacheExamples,
		Args:    cobra.NoArgs,
		RunE: func(cmd *cobra.Command, args []string) error {
			if err := cmdutil.NonEmpty(cmd, "key-column", "status-column", "live-keys", "replica-url"); err != nil {
				return err
			}
			job, err := f.Job()
			if err != nil {
				return err
			}
			// The job's settings, as doctor takes them.
			if err := opts.Audit.Configure(job, cmdutil.Given(cmd)); err != nil {
				return err
			}
			if err := opts.check(); err != nil {
				return err
			}
			if runF != nil {
				return runF(opts)
			}
			return runCache(cmd.Context(), opts)
		},
	}
	opts.registerFlags(cmd.Flags())
	cmdutil.FieldFlags(cmd, map[string]string{"Statuses": "status", "Pattern": "cache-pattern", "Decoder": "value",
		"Replica": "replica-url"})
	return cmd
}

// registerFlags binds the flags to the options.
func (opts *CacheOptions) registerFlags(fs *pflag.FlagSet) {
	o := &opts.Audit
	d := auditcache.Defaults()
	fs.StringVar(&opts.pattern, "cache-pattern", "", "cache key pattern with {key} where the database key goes, e.g. job:status:{key}")
	fs.StringVar(&o.Table, "table", "", "the table that is the source of truth: name, schema.name or \"Quoted\"")
	fs.StringVar(&o.KeyColumn, "key-column", "", "the column {key} is (default: idempotency_key, dedup_key, message_id, ...)")
	fs.StringVar(&o.StatusColumn, "status-column", "", "status column (default: status or state)")
	fs.StringVar(&opts.value, "value", "string", "how to read a cache value: string, json:PATH or hash:FIELD")
	fs.StringArrayVar(&opts.statuses, "status", nil,
		"status values of a role, ROLE=V1,V2 (roles: processing, succeeded, failed, retryable, pending)")
	fs.StringVar(&opts.liveKeys, "live-keys", "", "file of keys whose message is still queued or in flight, one per line ('-' for stdin)")
	fs.BoolVar(&o.AssumeLive, "assume-live", false, "treat every key as having a live message (a redelivery can always come)")
	fs.BoolVar(&o.CacheAuthoritative, "cache-authoritative", false,
		"workers read a cache miss as 'not done' (no database fallback): a miss for a live key is an error")
	fs.IntVar(&o.Batch, "batch", d.Batch, "keys per SCAN page, pipeline and database query")
	fs.StringVar(&o.Lookup, "lookup", d.Lookup, "how to read the table: batch (an indexed query per SCAN page), "+
		"scan (the table once, matched in memory; text keys), auto (scan when the cache may hold half of a table of at most 2M rows)")
	fs.DurationVar(&o.Recheck, "recheck", d.Recheck,
		"read disagreements again after this long; those gone were updates in flight (0: no re-read)")
	fs.IntVar(&o.Samples, "samples", d.Samples, "examples shown per finding")
	fs.StringVar(&opts.ReplicaURL, "replica-url", "",
		"a streaming standby or read replica of the database: keys whose status differs there from the primary's")
	fs.IntVar(&o.ReplicaKeys, "replica-keys", d.ReplicaKeys,
		"how many of the keys met (the most recently updated) are looked up on the replica")
	opts.Postgres.Register(fs)
}

// check parses the raw flags into the audit's options and checks them,
// before anything is dialled.
func (opts *CacheOptions) check() error {
	o := &opts.Audit
	if opts.pattern != "" {
		o.Pattern = auditcache.Pattern{Raw: opts.pattern} // parsed once Validate has read it
	}
	// The pattern and table first, then --value and --status, then the
	// numbers, as the command line always said them: Validate is asked
	// about the numbers once the values parse.
	first := *o
	d := auditcache.Defaults()
	first.Batch, first.Recheck, first.Samples, first.Lookup, first.ReplicaKeys = d.Batch, d.Recheck, d.Samples, d.Lookup, d.ReplicaKeys
	if err := first.Validate(); err != nil {
		return err
	}
	var err error
	if o.Pattern, err = auditcache.ParsePattern(o.Pattern.Raw); err != nil {
		return err
	}
	if o.Decoder, err = auditcache.ParseDecoder(opts.value); err != nil {
		return err
	}
	if o.Statuses, err = idemtable.ParseStatuses(opts.statuses); err != nil {
		return err
	}
	if err := o.Validate(); err != nil {
		return err
	}
	// Purely the command line's: a file of keys, or none assumed.
	if opts.liveKeys != "" && o.AssumeLive {
		return exitcode.UsageErrorf("--live-keys and --assume-live exclude each other: give the keys, or assume every key is live")
	}
	if opts.liveKeys != "" {
		if o.LiveKeys, err = readLiveKeys(opts.Factory, opts.liveKeys); err != nil {
			return err
		}
		o.LiveSource = "--live-keys " + opts.liveKeys
	}
	return nil
}

var cacheExitStatus = cmdutil.ExitStatus(map[int]string{
	2: "usage or input error (bad pattern or --value, unknown table or column)",
	3: "Redis or PostgreSQL could not be reached, or a read failed",
})

func readLiveKeys(f *cmdutil.Factory, path string) ([]string, error) {
	var r io.Reader = f.IO.In
	if path != "-" {
		file, err := os.Open(path)
		if err != nil {
			return nil, exitcode.InputError(fmt.Errorf("--live-keys: %w", err), "give a file of keys, one per line")
		}
		defer file.Close()
		r = file
	}
	keys, err := auditcache.ReadLiveKeys(r)
	if err != nil {
		return nil, exitcode.InputError(fmt.Errorf("--live-keys %s: %w", path, err), "give a file of keys, one per line")
	}
	return keys, nil
}

func runCache(ctx context.Context, opts *CacheOptions) error {
	f := opts.Factory
	rdb, err := f.Redis(ctx)
	if err != nil {
		return err
	}
	pool, err := f.Postgres(ctx, opts.Postgres.ReadOnly())
	if err != nil {
		return err
	}
	deps := auditcache.Deps{Cache: rdb, DB: pool}
	if opts.ReplicaURL != "" {
		replica, err := connect.Postgres(ctx, opts.ReplicaURL, opts.Postgres.ReadOnly())
		if err != nil {
			return fmt.Errorf("replica (--replica-url): %w", err)
		}
		f.AddCleanup(replica.Close)
		deps.Replica = replica
	}
	o := opts.Audit
	o.Progress = f.IO.StartProgress("audit cache", "keys")
	res, err := auditcache.Run(ctx, deps, o)
	if err != nil {
		return err
	}
	err = f.Emit(ctx, report.Document{Report: res.Report(), Text: func(w io.Writer, th *report.Theme) error {
		return writeCache(w, th, res)
	}})
	if inc := res.Incomplete(); inc != nil && (err == nil || exitcode.IsSilent(err)) {
		return exitcode.KeepOutput(inc) // the report stands; the replica was not compared
	}
	return err
}
