// Package store inspects a PostgreSQL idempotency table, read-only: is the
// key really unique (the catalog: pg_index, pg_constraint, pg_attribute),
// and what does the data say (duplicate keys, several successes for one
// business key, rows stuck in PROCESSING, unknown statuses, SUCCEEDED
// overwritten, FAILED without attempts).
//
// Every check runs in one REPEATABLE READ READ ONLY transaction, so all of
// them see the same snapshot. User text never becomes SQL: table and column
// names are looked up in the catalog as query parameters and the queries
// use the catalog's names quoted with pgx.Identifier; values are
// parameters. The only other text spliced into SQL is the catalog's own
// (an index predicate from pg_get_expr, a type from format_type).
package store

import (
	"context"
	"errors"
	"fmt"
	"slices"
	"strings"
	"time"

	"github.com/dupctl/dupctl/internal/idemtable"

	"github.com/dupctl/dupctl/internal/platform/connect"
	"github.com/dupctl/dupctl/internal/platform/findings"
	"github.com/dupctl/dupctl/internal/platform/problem"
	"github.com/dupctl/dupctl/internal/platform/progress"
	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/pgconn"
)

// DB opens the snapshot the checks read (a pgxpool.Pool or pgx.Conn).
type DB interface {
	BeginTx(ctx context.Context, o pgx.TxOptions) (pgx.Tx, error)
}

// The check groups --checks selects.
const (
	CheckCatalog     = "catalog"     // unique indexes, nullable key
	CheckDuplicates  = "duplicates"  // exact duplicate keys
	CheckNormalized  = "normalized"  // keys equal after lower(btrim())
	CheckBusiness    = "business"    // several SUCCEEDED per business key
	CheckStuck       = "stuck"       // PROCESSING longer than --stuck-after
	CheckStatuses    = "statuses"    // values outside the expected set
	CheckOverwritten = "overwritten" // SUCCEEDED overwritten
	CheckAttempts    = "attempts"    // FAILED final without attempts
	CheckReplica     = "replica"     // records missing or stale on a replica (with Options.Replica)
)

// CheckGroups lists every group in the order the checks run.
var CheckGroups = []string{CheckCatalog, CheckDuplicates, CheckNormalized, CheckBusiness, CheckStuck, CheckStatuses,
	CheckOverwritten, CheckAttempts, CheckReplica}

// DefaultStuckAfter is how long a PROCESSING row may go without a sign of
// life before it counts as stuck: the one threshold inspect store and
// doctor share.
const DefaultStuckAfter = 15 * time.Minute

// Options are one inspection. Column and table options are raw user text
// (parsed as SQL identifiers and looked up in the catalog); empty means
// "detect".
type Options struct {
	Table           string // "" discovers likely idempotency tables
	Schema          string // limits discovery
	KeyColumns      string
	StatusColumn    string
	BusinessColumns string // "" skips the several-SUCCEEDED check
	TimeColumns     string
	AttemptColumn   string
	EvidenceColumns string // columns whose non-NULL value proves the effect ran
	HistoryTable    string
	Statuses        Statuses
	StuckAfter      time.Duration
	Samples         int
	Checks          []string // nil: every group
	Now             time.Time
	Progress        progress.Meter
	// Replica is a streaming standby (or another replica) of the
	// database, read-only like it, to compare recent records with; nil:
	// none. ReplicaRows bounds how many of the primary's most recent
	// records are looked up there (0: DefaultReplicaRows).
	Replica     DB
	ReplicaRows int
}

func (o *Options) runs(group string) bool { return o.Checks == nil || slices.Contains(o.Checks, group) }

// Result is the JSON data of `dupctl inspect store`.
type Result struct {
	// Discovered lists the tables found without --table (empty with it).
	Discovered []Candidate    `json:"discovered"`
	Tables     []*TableResult `json:"tables"`
	// Replica is where the replica's replay stood (null without one).
	Replica *ReplicaState `json:"replica"`

	report *findings.Report
}

// TableResult is what was learned about one table.
type TableResult struct {
	Table           string   `json:"table"`
	RowsEstimate    int64    `json:"rows_estimate"`
	Rows            *int64   `json:"rows"`
	KeyColumns      []string `json:"key_columns"`
	KeySource       string   `json:"key_source"` // flag, column name
	StatusColumn    string   `json:"status_column"`
	TimeColumns     []string `json:"time_columns"`
	AttemptColumn   string   `json:"attempt_column"`
	BusinessColumns []string `json:"business_columns"`
	StatusRoles     string   `json:"status_roles"`
	// Coverage is the one-line verdict on the key's uniqueness.
	Coverage             string        `json:"coverage"`
	Indexes              []Index       `json:"unique_indexes"`
	Statuses             []StatusCount `json:"statuses"`
	Duplicates           *Groups       `json:"duplicates"`
	NormalizedDuplicates *Groups       `json:"normalized_duplicates"`
	MultipleSucceeded    *Groups       `json:"multiple_succeeded"`
	Stuck                *Stuck        `json:"stuck"`
	Overwritten          *Overwritten  `json:"overwritten"`
	Skipped              []Skip        `json:"skipped"`
	// Partitioning is set for a partitioned table or a partition.
	Partitioning *Partitioning `json:"partitioning"`
	// Replica is the comparison with the replica (null without one).
	Replica *ReplicaCompare `json:"replica"`
}

// StatusCount is one status value's row count and role.
type StatusCount struct {
	Value *string `json:"value"` // nil for NULL
	Role  string  `json:"role"`  // "" when outside the expected set
	Rows  int64   `json:"rows"`
}

// Display is the value as shown: NULL for a NULL status.
func (s StatusCount) Display() string {
	if s.Value == nil {
		return "NULL"
	}
	return *s.Value
}

// Groups summarises a grouping check: how many groups, how many rows in
// them, the largest few.
type Groups struct {
	Groups  int64   `json:"groups"`
	Rows    int64   `json:"rows"`
	Samples []Group `json:"samples"`
	// AcrossPartitions counts the duplicate keys whose rows sit in more
	// than one partition (duplicates of a partitioned table only).
	AcrossPartitions *int64 `json:"across_partitions,omitempty"`

	acrossSamples []Group // the largest of them, Detail naming two partitions
}

// Group is one sample: a key (or business key), its row count, and what
// the rows say.
type Group struct {
	Key    string `json:"key"`
	Rows   int64  `json:"rows"`
	Detail string `json:"detail"`

	parts []string // the key's columns as text, for the detail query
}

// Stuck summarises rows stuck in PROCESSING.
type Stuck struct {
	After   string     `json:"after"`
	Since   string     `json:"since_column"` // the time expression used
	Rows    int64      `json:"rows"`
	Samples []StuckRow `json:"samples"`
}

// StuckRow is one stuck reservation.
type StuckRow struct {
	Key     string    `json:"key"`
	Status  string    `json:"status"`
	Since   time.Time `json:"since"`
	Age     string    `json:"age"`
	Attempt *string   `json:"attempt"`
}

// Overwritten summarises SUCCEEDED records overwritten, and which
// evidence could show them.
type Overwritten struct {
	// Evidence lists what was available: "history table X (lag over T)",
	// "succeeded_at set", "response_code 2xx", "<col> set".
	Evidence []string       `json:"evidence"`
	Rows     int64          `json:"rows"`
	Samples  []OverwriteRow `json:"samples"`
}

// OverwriteRow is one overwritten record.
type OverwriteRow struct {
	Key      string `json:"key"`
	Status   string `json:"status"`
	Evidence string `json:"evidence"`
}

// Skip is a check that did not run, and why.
type Skip struct {
	Check  string `json:"check"`
	Reason string `json:"reason"`
}

// Run checks one table (o.Table) or every likely idempotency table it
// finds, in one read-only snapshot.
func Run(ctx context.Context, db DB, o Options) (*Result, error) {
	res, err := inspect(ctx, db, o)
	if err != nil {
		return nil, explainError(err)
	}
	return res, nil
}

// Report is the run's findings, with the result as its data.
func (r *Result) Report() *findings.Report { return r.report }

func inspect(ctx context.Context, db DB, o Options) (*Result, error) {
	if o.Samples <= 0 {
		o.Samples = 5
	}
	if o.ReplicaRows <= 0 {
		o.ReplicaRows = DefaultReplicaRows
	}
	if o.Now.IsZero() {
		o.Now = time.Now()
	}
	if err := o.Validate(); err != nil {
		return nil, err
	}
	o.Progress = progress.Or(o.Progress)
	defer o.Progress.Done()
	if err := o.Statuses.Validate(); err != nil {
		return nil, err
	}
	tx, err := db.BeginTx(ctx, pgx.TxOptions{IsoLevel: pgx.RepeatableRead, AccessMode: pgx.ReadOnly})
	if err != nil {
		return nil, fmt.Errorf("begin read-only snapshot: %w", err)
	}
	defer tx.Rollback(context.WithoutCancel(ctx))
	// Times read as UTC: a timestamp without time zone is compared as UTC
	// (what most applications store), and output does not depend on the
	// server's TimeZone.
	if _, err := tx.Exec(ctx, "SET LOCAL TimeZone = 'UTC'"); err != nil {
		return nil, fmt.Errorf("set time zone: %w", err)
	}

	var version int
	if err := tx.QueryRow(ctx, "SELECT current_setting('server_version_num')::int").Scan(&version); err != nil {
		return nil, fmt.Errorf("read server version: %w", err)
	}
	res := &Result{Discovered: []Candidate{}, Tables: []*TableResult{}}
	rep := &findings.Report{Command: "inspect store", Data: res}
	res.report = rep
	var replica *replicaSession
	if o.Replica != nil && o.runs(CheckReplica) {
		if replica, err = newReplicaSession(ctx, tx, o.Replica, res); err != nil {
			return nil, err
		}
		defer replica.close(ctx)
	}
	targets, err := resolveTargets(ctx, tx, o, res)
	if err != nil {
		return nil, err
	}
	for _, tg := range targets {
		in, err := newInspector(tx, &o, tg, version, rep)
		if err != nil {
			return nil, err
		}
		in.replica = replica
		res.Tables = append(res.Tables, in.res)
		if err := in.run(ctx); err != nil {
			return nil, err
		}
	}
	return res, nil
}

// resolveTargets is the table named by o.Table, or every likely
// idempotency table discovery finds (recorded in res.Discovered).
func resolveTargets(ctx context.Context, tx pgx.Tx, o Options, res *Result) ([]target, error) {
	if o.Table != "" {
		t, err := idemtable.ResolveTable(ctx, tx, o.Table)
		if err != nil {
			return nil, err
		}
		return []target{{table: t}}, nil
	}
	schema := ""
	if o.Schema != "" {
		ids, err := idemtable.ParseIdentList(o.Schema)
		if err != nil || len(ids) != 1 {
			return nil, problem.Inputf("Schema", "want one schema name").WithValue(o.Schema)
		}
		schema = ids[0]
	}
	cands, err := Discover(ctx, tx, schema)
	if err != nil {
		return nil, err
	}
	if len(cands) == 0 {
		where := "any schema this role can read"
		if schema != "" {
			where = "schema " + idemtable.DisplayIdent(schema)
		}
		return nil, problem.Inputf("",
			"no likely idempotency table in %s (a column like idempotency_key, dedup_key or message_id beside a status column)",
			where).WithHint("name it with {Table}")
	}
	res.Discovered = cands
	targets := make([]target, 0, len(cands))
	for _, c := range cands {
		t, err := idemtable.LoadTable(ctx, tx, c.Name)
		if err != nil {
			return nil, err
		}
		targets = append(targets, target{table: t, key: c.Key, status: c.Status})
	}
	return targets, nil
}

// target is one table to inspect, with the columns discovery chose.
type target struct {
	table       *Table
	key, status string
}

// explainError adds what to do to the server errors a careful read-only
// session can meet.
func explainError(err error) error {
	switch connect.PGErrorKind(err) {
	case connect.PGStatementTimeout:
		return problem.System(err, "raise {StatementTimeout}, or leave the data checks out with {Checks} catalog")
	case connect.PGLockTimeout:
		return problem.System(err, "a migration or other DDL holds a lock on the table: retry later or raise {LockTimeout}")
	case connect.PGPermission:
		return problem.System(err, "the role needs SELECT on the tables it inspects")
	}
	// A hot standby cancels a read that holds back WAL replay for longer
	// than max_standby_streaming_delay (SQLSTATE 40001).
	if pe := (*pgconn.PgError)(nil); errors.As(err, &pe) && pe.Code == "40001" && strings.Contains(pe.Message, "conflict with recovery") {
		return problem.System(err, "the standby cancelled the read to replay WAL (max_standby_streaming_delay): "+
			"compare one {Table} at a time, or raise it on the standby")
	}
	return err
}

// inspector runs the checks on one table.
type inspector struct {
	q        Querier
	o        *Options
	t        *Table
	version  int
	key      []Column
	status   *Column
	times    []Column
	attempt  *Column
	business []Column
	evidence []evidenceCol // current-row signs of success
	prof     []profileRow  // nil until the profile scan ran
	part     *Partitioning // nil for a plain table
	replica  *replicaSession
	res      *TableResult
	rep      *findings.Report
}

func newInspector(q Querier, o *Options, tg target, version int, rep *findings.Report) (*inspector, error) {
	t := tg.table
	in := &inspector{q: q, o: o, t: t, version: version, rep: rep, res: &TableResult{
		Table: t.Name.String(), RowsEstimate: t.Estimate, KeySource: "flag",
		TimeColumns: []string{}, BusinessColumns: []string{}, Indexes: []Index{}, Statuses: []StatusCount{}, Skipped: []Skip{},
		StatusRoles: o.Statuses.Describe(),
	}}
	var err error
	switch {
	case o.KeyColumns != "":
		if in.key, err = t.ResolveColumns("KeyColumns", o.KeyColumns); err != nil {
			return nil, err
		}
	case tg.key != "":
		c, _ := t.Column(tg.key)
		in.key, in.res.KeySource = []Column{c}, "column name"
	default:
		c, ok := t.DetectKey()
		if !ok {
			return nil, problem.Inputf("", "cannot tell which column of %s holds the idempotency key", t.Name).
				WithHint("name it with {KeyColumns} (several columns for a composite key: {KeyColumns} tenant_id,idempotency_key)")
		}
		in.key, in.res.KeySource = []Column{c}, "column name"
	}
	if in.status, err = in.optionalColumn("StatusColumn", o.StatusColumn, tg.status, idemtable.StatusNames, nil); err != nil {
		return nil, err
	}
	if in.attempt, err = in.optionalColumn("AttemptColumn", o.AttemptColumn, "", attemptNames, nil); err != nil {
		return nil, err
	}
	if o.TimeColumns != "" {
		if in.times, err = t.ResolveColumns("TimeColumns", o.TimeColumns); err != nil {
			return nil, err
		}
		for _, c := range in.times {
			if !idemtable.IsTimestamp(c) {
				return nil, problem.Inputf("TimeColumns", "%s is %s, not a timestamp", idemtable.DisplayIdent(c.Name), c.Type).
					WithHint("give timestamp columns")
			}
		}
	} else {
		in.times = t.DetectTimes()
	}
	if o.BusinessColumns != "" {
		if in.business, err = t.ResolveColumns("BusinessColumns", o.BusinessColumns); err != nil {
			return nil, err
		}
	}
	for _, c := range in.key {
		in.res.KeyColumns = append(in.res.KeyColumns, c.Name)
	}
	if in.status != nil {
		in.res.StatusColumn = in.status.Name
	}
	if in.attempt != nil {
		in.res.AttemptColumn = in.attempt.Name
	}
	for _, c := range in.times {
		in.res.TimeColumns = append(in.res.TimeColumns, c.Name)
	}
	for _, c := range in.business {
		in.res.BusinessColumns = append(in.res.BusinessColumns, c.Name)
	}
	return in, nil
}

// optionalColumn resolves a column given by the user (field names the
// option), or chosen by discovery, or detected by name; nil when there is
// none.
func (in *inspector) optionalColumn(field, raw, chosen string, names []string, ok func(Column) bool) (*Column, error) {
	if raw != "" {
		cols, err := in.t.ResolveColumns(field, raw)
		if err != nil {
			return nil, err
		}
		if len(cols) != 1 {
			return nil, problem.Inputf(field, "give one column")
		}
		return &cols[0], nil
	}
	if chosen != "" {
		c, _ := in.t.Column(chosen)
		return &c, nil
	}
	if c, found := in.t.ColumnByNames(names, ok); found {
		return &c, nil
	}
	return nil, nil
}

func (in *inspector) skip(check, reason string) {
	in.res.Skipped = append(in.res.Skipped, Skip{Check: check, Reason: reason})
}

// requirement is what a check needs, and what to say when it is missing.
type requirement struct {
	ok  bool
	why string
}

func need(ok bool, why string) requirement { return requirement{ok, why} }

func (in *inspector) needStatus() requirement { return need(in.status != nil, "no status column") }

const noSucceeded = "no succeeded status value ({Statuses} succeeded=...)"

// requires reports whether a check can run, recording why not when it
// cannot.
func (in *inspector) requires(check string, reqs ...requirement) bool {
	for _, r := range reqs {
		if !r.ok {
			in.skip(check, r.why)
			return false
		}
	}
	return true
}

// subject is every finding's subject: the table.
func (in *inspector) subject() string { return in.res.Table }

func (in *inspector) run(ctx context.Context) error {
	steps := []struct {
		group string
		run   func(context.Context) error
	}{
		{"", in.loadPartitioning}, // for catalog and duplicates
		{CheckCatalog, in.loadCatalog},
		// First among the data checks: the replica is read as close as
		// can be to the primary's snapshot.
		{CheckReplica, in.replicaCompare},
		{"", in.profile}, // one scan feeding nullable, stuck, statuses, overwritten, attempts
		{CheckCatalog, in.catalogFindings},
		{CheckDuplicates, in.duplicates},
		{CheckCatalog, in.partitionFindings}, // after duplicates: cites keys found in two partitions
		{CheckNormalized, in.normalized},
		{CheckBusiness, in.multipleSucceeded},
		{CheckStuck, in.stuck},
		{CheckStatuses, in.unknownStatuses},
		{CheckOverwritten, in.overwritten},
		{CheckAttempts, in.failedNoAttempts},
	}
	for _, s := range steps {
		if s.group != "" && !in.o.runs(s.group) {
			continue
		}
		if err := s.run(ctx); err != nil {
			return err
		}
		in.o.Progress.Add(1)
	}
	return nil
}
