package inspect

import (
	"context"
	"fmt"
	"io"
	"strings"

	"github.com/spf13/cobra"

	"github.com/dupctl/dupctl/internal/cli/cmdutil"
	"github.com/dupctl/dupctl/internal/idemtable"
	"github.com/dupctl/dupctl/internal/inspect/store"
	"github.com/dupctl/dupctl/internal/platform/connect"
	"github.com/dupctl/dupctl/internal/platform/report"
)

// StoreOptions are one `dupctl inspect store` run.
type StoreOptions struct {
	Factory    *cmdutil.Factory
	Store      store.Options
	Postgres   cmdutil.PostgresFlags
	ReplicaURL string // a standby to compare with
}

// NewCmdStore is `dupctl inspect store`.
func NewCmdStore(f *cmdutil.Factory, runF func(*StoreOptions) error) *cobra.Command {
	opts := &StoreOptions{Factory: f}
	o := &opts.Store
	var statuses, checks []string
	cmd := &cobra.Command{
		Use:     "store",
		Short:   "Check a PostgreSQL idempotency table: unique key, duplicates, stuck and overwritten statuses",
		Long:    storeLong + storeExitStatus,
		Example: storeExample,
		Args:    cobra.NoArgs,
		RunE: func(cmd *cobra.Command, args []string) error {
			if err := storeFromJob(f, cmd, o); err != nil {
				return err
			}
			if err := validateStore(cmd, o, statuses, checks); err != nil {
				return err
			}
			if runF != nil {
				return runF(opts)
			}
			return runStore(cmd.Context(), opts)
		},
	}
	addStoreFlags(cmd, opts, &statuses, &checks)
	return cmd
}

// storeFromJob fills in the --job's idempotency table where no flag named
// one (--schema asks for discovery instead), as doctor does:
// store.Options.Configure.
func storeFromJob(f *cmdutil.Factory, cmd *cobra.Command, o *store.Options) error {
	job, err := f.Job()
	if err != nil {
		return err
	}
	o.Configure(job, cmdutil.Given(cmd))
	return nil
}

// validateStore parses --status into o and has the capability check the
// options (store.Options.Validate); flags given empty are the command
// line's own.
func validateStore(cmd *cobra.Command, o *store.Options, statuses, checks []string) error {
	var err error
	if o.Statuses, err = idemtable.ParseStatuses(statuses); err != nil {
		return err
	}
	o.Checks = checks
	// A table beside a schema is checked after the empty flags, as the
	// command line always did: Validate's other checks come first.
	withSchema := *o
	withSchema.Schema = ""
	if err := withSchema.Validate(); err != nil {
		return err
	}
	if err := cmdutil.NonEmpty(cmd, "table", "schema", "key-column", "status-column", "business-column", "time-column", "attempt-column",
		"success-evidence", "history-table", "replica-url"); err != nil {
		return err
	}
	return o.Validate()
}

// addStoreFlags registers inspect store's flags; --status and --checks
// are read raw into statuses and checks, for validateStore to parse.
func addStoreFlags(cmd *cobra.Command, opts *StoreOptions, statuses, checks *[]string) {
	o := &opts.Store
	fs := cmd.Flags()
	d := store.Defaults()
	fs.StringVar(&o.Table, "table", "", "the idempotency table: name, schema.name or \"Quoted\" (default: look for likely tables)")
	fs.StringVar(&o.Schema, "schema", "", "look for likely tables only in this schema")
	fs.StringVar(&o.KeyColumns, "key-column", "",
		"idempotency key column(s), comma-separated for a composite key (default: idempotency_key, dedup_key, message_id, ...)")
	fs.StringVar(&o.StatusColumn, "status-column", "", "status column (default: status or state)")
	fs.StringVar(&o.BusinessColumns, "business-column", "", "business key column(s), e.g. order_id: finds several SUCCEEDED per business key")
	fs.StringVar(&o.TimeColumns, "time-column", "", "timestamp column(s) that show a row is alive, first non-NULL wins "+
		"(default: heartbeat_at, locked_at, updated_at, started_at, created_at)")
	fs.StringVar(&o.AttemptColumn, "attempt-column", "", "attempt counter column (default: attempt, attempts, retry_count, ...)")
	fs.StringVar(&o.EvidenceColumns, "success-evidence", "",
		"column(s) that only a success sets, e.g. charge_id (succeeded_at and a 2xx response_code are found by name)")
	fs.StringVar(&o.HistoryTable, "history-table", "", "status history table with the key, status and a timestamp "+
		"(default: <table>_history, _audit, _transitions, _events, _log)")
	fs.StringArrayVar(statuses, "status", nil, "status values of a role, ROLE=V1,V2 "+
		"(roles: processing, succeeded, failed, retryable, pending; default: PROCESSING, SUCCEEDED, FAILED, RETRYABLE)")
	fs.DurationVar(&o.StuckAfter, "stuck-after", d.StuckAfter, "a PROCESSING row with no sign of life for this long is stuck")
	fs.IntVar(&o.Samples, "samples", d.Samples, "examples shown per finding")
	fs.StringSliceVar(checks, "checks", nil, "run only these checks: "+strings.Join(store.CheckGroups, ", "))
	fs.StringVar(&opts.ReplicaURL, "replica-url", "",
		"a streaming standby or read replica of the database: records missing or stale there (the replica check)")
	fs.IntVar(&o.ReplicaRows, "replica-rows", d.ReplicaRows,
		"how many of the primary's most recent records the replica check looks up")
	opts.Postgres.Register(fs)
	cmdutil.FieldFlags(cmd, map[string]string{"KeyColumns": "key-column", "TimeColumns": "time-column",
		"BusinessColumns": "business-column", "EvidenceColumns": "success-evidence", "Statuses": "status", "Replica": "replica-url"})
	_ = cmd.RegisterFlagCompletionFunc("checks", func(*cobra.Command, []string, string) ([]string, cobra.ShellCompDirective) {
		return store.CheckGroups, cobra.ShellCompDirectiveNoFileComp
	})
}

const storeLong = `Store checks the table that is supposed to make a job idempotent, read-only.

From the catalog (pg_index, pg_constraint, pg_attribute): is the key covered
by a PRIMARY KEY or UNIQUE constraint or index, or is the only one partial,
on an expression, INVALID (a failed CREATE UNIQUE INDEX CONCURRENTLY), wider
than the key (key, attempt), or DEFERRABLE; are key columns nullable. On a
partitioned table: does the partition key, at every level, read only key
columns (HASH (idempotency_key)), or can one key land in two partitions
(RANGE (created_at)), where a unique index holds one partition at a time.

From the data: duplicate keys (also after lower(btrim())), several SUCCEEDED
rows for one business key under different keys (--business-column), rows
stuck in PROCESSING longer than --stuck-after, statuses outside the expected
set, SUCCEEDED overwritten by FAILED or PROCESSING (from a status history
table, or from columns only a success sets, such as succeeded_at), and FAILED
used as final with no attempt counter.

With --replica-url (a streaming standby, or a read replica, of the same
database): the primary's most recent records (by the time columns, up to
--replica-rows) are looked up on the replica, in snapshots taken as close
together as the two servers allow; records missing there, or with another
status, are what an idempotency check routed to the replica would read,
with the replay figures (pg_wal_lsn_diff against the primary's position,
a paused replay, the last replayed commit, how long the replica took to
catch up). A standby that had replayed past the primary's snapshot is not
compared: nothing can differ.

Without --table it looks for likely idempotency tables: a column like
idempotency_key, dedup_key or message_id beside a status column.

It runs in one REPEATABLE READ READ ONLY transaction of a session with
default_transaction_read_only, a statement_timeout and a lock_timeout, so a
role granted SELECT only is enough. Names are looked up in the catalog and
quoted; no SQL is built from the text you give.`

const storeExample = `  dupctl inspect store --table payments
  dupctl inspect store --table billing.payments --key-column tenant_id,idempotency_key --business-column order_id
  dupctl inspect store --table '"Payments"' --status succeeded=DONE,COMPLETED --stuck-after 30m
  dupctl inspect store --schema billing -o json
  dupctl inspect store --table payments --checks catalog --fail-on warn
  dupctl inspect store --table payments --replica-url postgres://reader@replica:5432/app --checks catalog,replica`

var storeExitStatus = cmdutil.ExitStatus(map[int]string{
	2: "usage or input error (unknown table or column, malformed name)",
	3: "PostgreSQL could not be reached, or a query failed or timed out",
})

func runStore(ctx context.Context, opts *StoreOptions) error {
	f := opts.Factory
	pool, err := f.Postgres(ctx, opts.Postgres.ReadOnly())
	if err != nil {
		return err
	}
	o := opts.Store
	if opts.ReplicaURL != "" {
		replica, err := connect.Postgres(ctx, opts.ReplicaURL, opts.Postgres.ReadOnly())
		if err != nil {
			return fmt.Errorf("replica (--replica-url): %w", err)
		}
		f.AddCleanup(replica.Close)
		o.Replica = replica
	}
	o.Now = f.Now()
	o.Progress = f.IO.StartProgress("inspect store", "checks")
	res, err := store.Run(ctx, pool, o)
	if err != nil {
		return err
	}
	return f.Emit(ctx, report.Document{Report: res.Report(), Text: func(w io.Writer, th *report.Theme) error {
		return writeStore(w, th, res)
	}})
}
