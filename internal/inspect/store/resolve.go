package store

import (
	"context"
	"fmt"
	"slices"
	"strings"

	"github.com/dupctl/dupctl/internal/platform/problem"
	"github.com/jackc/pgx/v5"
)

// Querier is the part of a pgx connection, pool or transaction the checks
// read through.
type Querier interface {
	Query(ctx context.Context, sql string, args ...any) (pgx.Rows, error)
	QueryRow(ctx context.Context, sql string, args ...any) pgx.Row
}

// Column is one column of a table, from pg_attribute.
type Column struct {
	Num      int16  `json:"-"`
	Name     string `json:"name"`
	Type     string `json:"type"` // format_type: valid SQL type syntax
	NotNull  bool   `json:"not_null"`
	Category string `json:"-"` // pg_type.typcategory: S string, N numeric, D date/time, ...
}

// SQL is the column quoted for a query.
func (c Column) SQL() string { return quote(c.Name) }

func (c Column) isText() bool { return c.Category == "S" }
func (c Column) isNumber() bool {
	return c.Category == "N"
}

// Table is a resolved table: its catalog identity and columns.
type Table struct {
	OID      uint32
	Name     Name
	Columns  []Column
	Estimate int64 // pg_class.reltuples; -1 when never analysed
}

// Column finds a column by its exact (catalog) name.
func (t *Table) Column(name string) (Column, bool) {
	for _, c := range t.Columns {
		if c.Name == name {
			return c, true
		}
	}
	return Column{}, false
}

// columnByNames returns the first column whose normalised name (lower
// case, no underscores) is in names, in the order of names, optionally
// only of a type category.
func (t *Table) columnByNames(names []string, ok func(Column) bool) (Column, bool) {
	for _, want := range names {
		for _, c := range t.Columns {
			if normName(c.Name) == want && (ok == nil || ok(c)) {
				return c, true
			}
		}
	}
	return Column{}, false
}

// DetectKey finds the idempotency key column by its name
// (idempotency_key, dedup_key, message_id, ...).
func (t *Table) DetectKey() (Column, bool) { return t.columnByNames(keyNames, nil) }

// DetectStatus finds the status column by its name (status, state, ...).
func (t *Table) DetectStatus() (Column, bool) { return t.columnByNames(statusNames, nil) }

// DetectTimes lists the timestamp columns that show a row is alive, most
// recent sign first (heartbeat_at, locked_at, updated_at, ..., created_at).
func (t *Table) DetectTimes() []Column {
	var out []Column
	for _, name := range timeNames {
		if c, ok := t.columnByNames([]string{name}, isTimestamp); ok {
			out = append(out, c)
		}
	}
	return out
}

// AnyOf is the SQL condition "column = ANY($n)" with $n a text array cast
// to the column's own type, so an index on the column serves it.
func (c Column) AnyOf(n int) string {
	return c.SQL() + " = ANY(" + param(n) + "::text[]::" + c.Type + "[])"
}

// normName is how column names are compared with the lists of likely
// names: IdempotencyKey, idempotency_key and IDEMPOTENCY_KEY are one name.
func normName(s string) string {
	return strings.ReplaceAll(strings.ToLower(s), "_", "")
}

// ResolveTable looks a user-given table name up in the catalog. The name's
// parts are query parameters, never SQL; the result carries the catalog's
// own names. An unqualified name is searched on the search_path first,
// then in every schema.
func ResolveTable(ctx context.Context, q Querier, raw string) (*Table, error) {
	n, err := ParseName(raw)
	if err != nil {
		return nil, problem.Inputf("Table", "%w", err).WithHint("give table or schema.table")
	}
	return LoadTable(ctx, q, n)
}

// LoadTable reads a parsed table name's catalog entry and columns.
func LoadTable(ctx context.Context, q Querier, n Name) (*Table, error) {
	var err error
	const base = `SELECT c.oid, n.nspname, c.relname, c.relkind::text, c.reltuples::bigint
FROM pg_catalog.pg_class c JOIN pg_catalog.pg_namespace n ON n.oid = c.relnamespace
WHERE `
	var rows []tableRow
	if n.Schema != "" {
		rows, err = tableRows(ctx, q, base+`n.nspname = $1 AND c.relname = $2`, n.Schema, n.Name)
	} else {
		rows, err = tableRows(ctx, q, base+`c.relname = $1 AND pg_catalog.pg_table_is_visible(c.oid)`, n.Name)
		if err == nil && len(rows) == 0 {
			rows, err = tableRows(ctx, q, base+`c.relname = $1 ORDER BY 2`, n.Name)
		}
	}
	if err != nil {
		return nil, fmt.Errorf("look up table %s: %w", n, err)
	}
	switch {
	case len(rows) == 0:
		return nil, notFound(ctx, q, n)
	case len(rows) > 1:
		var names []string
		for _, r := range rows {
			names = append(names, r.name.String())
		}
		return nil, problem.Inputf("", "table %s is ambiguous: %s", n, strings.Join(names, ", ")).WithHint("qualify it with its schema")
	}
	r := rows[0]
	switch r.kind {
	case "r", "p":
	case "v", "m":
		return nil, problem.Inputf("", "%s is a view, not a table", r.name).WithHint("inspect the table that holds the idempotency records")
	default:
		return nil, problem.Inputf("", "%s is not a table (relkind %s)", r.name, r.kind).WithHint("give the idempotency table")
	}
	t := &Table{OID: r.oid, Name: r.name, Estimate: r.estimate}
	if t.Columns, err = loadColumns(ctx, q, r.oid); err != nil {
		return nil, fmt.Errorf("read columns of %s: %w", r.name, err)
	}
	return t, nil
}

type tableRow struct {
	oid      uint32
	name     Name
	kind     string
	estimate int64
}

func tableRows(ctx context.Context, q Querier, sql string, args ...any) ([]tableRow, error) {
	rows, err := q.Query(ctx, sql, args...)
	if err != nil {
		return nil, err
	}
	return pgx.CollectRows(rows, func(row pgx.CollectableRow) (tableRow, error) {
		var r tableRow
		err := row.Scan(&r.oid, &r.name.Schema, &r.name.Name, &r.kind, &r.estimate)
		return r, err
	})
}

// notFound says a table does not exist, and suggests the spelling that
// does when only the case differs (an unquoted "Orders" reads as orders).
func notFound(ctx context.Context, q Querier, n Name) error {
	var cands []string
	rows, err := q.Query(ctx, `SELECT n.nspname, c.relname FROM pg_catalog.pg_class c
JOIN pg_catalog.pg_namespace n ON n.oid = c.relnamespace
WHERE lower(c.relname) = lower($1) AND ($2 = '' OR lower(n.nspname) = lower($2)) AND c.relkind IN ('r','p')
ORDER BY 1, 2 LIMIT 5`, n.Name, n.Schema)
	if err == nil {
		cands, _ = pgx.CollectRows(rows, func(row pgx.CollectableRow) (string, error) {
			var m Name
			err := row.Scan(&m.Schema, &m.Name)
			return m.String(), err
		})
	}
	hint := "check the name and the schema; without {Table} dupctl looks for likely idempotency tables"
	if len(cands) > 0 {
		hint = "did you mean " + strings.Join(cands, " or ") + "? quote mixed-case names: {Table} '" + cands[0] + "'"
	}
	return problem.Inputf("", "table %s not found", n).WithHint(hint)
}

func loadColumns(ctx context.Context, q Querier, oid uint32) ([]Column, error) {
	rows, err := q.Query(ctx, `SELECT a.attnum, a.attname, pg_catalog.format_type(a.atttypid, a.atttypmod), a.attnotnull, t.typcategory::text
FROM pg_catalog.pg_attribute a JOIN pg_catalog.pg_type t ON t.oid = a.atttypid
WHERE a.attrelid = $1 AND a.attnum > 0 AND NOT a.attisdropped ORDER BY a.attnum`, oid)
	if err != nil {
		return nil, err
	}
	return pgx.CollectRows(rows, func(row pgx.CollectableRow) (Column, error) {
		var c Column
		err := row.Scan(&c.Num, &c.Name, &c.Type, &c.NotNull, &c.Category)
		return c, err
	})
}

// ResolveColumns finds user-given column names ("tenant_id,key") in a
// table; field names the option they came from, for messages.
func (t *Table) ResolveColumns(field, raw string) ([]Column, error) {
	names, err := ParseIdentList(raw)
	if err != nil {
		return nil, problem.Inputf(field, "%w", err).WithHint("give column names separated by commas")
	}
	var out []Column
	for _, name := range names {
		c, ok := t.Column(name)
		if !ok {
			return nil, t.noColumn(field, name)
		}
		if slices.ContainsFunc(out, func(o Column) bool { return o.Num == c.Num }) {
			return nil, problem.Inputf(field, "column %s given twice", DisplayIdent(name)).WithHint("name each column once")
		}
		out = append(out, c)
	}
	return out, nil
}

func (t *Table) noColumn(field, name string) error {
	hint := "columns: "
	var names []string
	for _, c := range t.Columns {
		if strings.EqualFold(c.Name, name) {
			return problem.Inputf(field, "%s has no column %s", t.Name, DisplayIdent(name)).
				WithHint("did you mean " + DisplayIdent(c.Name) + "? quote mixed-case names: {" + field + "} '" + DisplayIdent(c.Name) + "'")
		}
		names = append(names, DisplayIdent(c.Name))
	}
	return problem.Inputf(field, "%s has no column %s", t.Name, DisplayIdent(name)).WithHint(hint + strings.Join(names, ", "))
}

// Names that mark the columns the checks need when no flag names them,
// normalised (lower case, no underscores).
var (
	keyNames = []string{"idempotencykey", "idemkey", "idempotencyid", "dedupkey", "dedupekey", "deduplicationkey",
		"deduplicationid", "dedupid", "jobkey", "uniquekey", "messageid", "msgid", "requestid", "eventid"}
	statusNames  = []string{"status", "state", "jobstatus", "jobstate", "processingstatus", "processingstate"}
	timeNames    = []string{"heartbeatat", "lastheartbeatat", "lockedat", "updatedat", "modifiedat", "lastrunat", "startedat", "createdat"}
	attemptNames = []string{"attempt", "attempts", "attemptcount", "attemptnumber", "retrycount", "retries", "tries", "trycount",
		"receivecount", "deliverycount", "redeliverycount", "failurecount", "failures", "errorcount"}
	// succeededAtNames are timestamps only a success sets.
	succeededAtNames = []string{"succeededat", "successat", "succeededon", "successfulat", "succeededtime"}
	// responseCodeNames hold an HTTP-like result code: 2xx means success.
	responseCodeNames = []string{"responsecode", "statuscode", "httpstatus", "responsestatus", "httpstatuscode"}
	// historySuffixes name the status history table of a table t: t_history, ...
	historySuffixes   = []string{"_history", "_status_history", "_audit", "_transitions", "_events", "_log"}
	historyTimeNames  = []string{"changedat", "transitionedat", "occurredat", "recordedat", "createdat", "insertedat", "at", "ts", "timestamp", "updatedat"}
	historyOrderNames = []string{"id", "seq", "sequence", "historyid", "eventid", "version"}
)

// volatileNames are columns whose value differs between two attempts of
// one operation: a unique index that includes one allows a duplicate per
// attempt.
var volatileNames = []string{"attempt", "attempts", "attemptcount", "attemptnumber", "retrycount", "retries", "tries",
	"status", "state", "id", "uuid", "jobid", "messageid", "deliverytag", "requestid", "runid", "executionid", "traceid",
	"createdat", "updatedat", "startedat", "lockedat", "insertedat", "timestamp", "ts", "lockedby", "locktoken", "workerid", "consumerid", "instanceid"}

func isVolatile(name string) bool { return slices.Contains(volatileNames, normName(name)) }

// Candidate is a table discovery found: it has a key-like column beside a
// status-like one.
type Candidate struct {
	Name   Name   `json:"-"`
	Table  string `json:"table"`
	Key    string `json:"key_column"`
	Status string `json:"status_column"`
}

// Discover lists likely idempotency tables the session may read: a column
// named like idempotency_key, dedup_key or message_id beside one named like
// status or state. schema limits the search ("" for all user schemas).
func Discover(ctx context.Context, q Querier, schema string) ([]Candidate, error) {
	rows, err := q.Query(ctx, `SELECT n.nspname, c.relname, k.attname, s.attname
FROM pg_catalog.pg_class c
JOIN pg_catalog.pg_namespace n ON n.oid = c.relnamespace
JOIN LATERAL (SELECT a.attname FROM pg_catalog.pg_attribute a
  WHERE a.attrelid = c.oid AND a.attnum > 0 AND NOT a.attisdropped
    AND replace(lower(a.attname), '_', '') = ANY($1)
  ORDER BY array_position($1, replace(lower(a.attname), '_', '')) LIMIT 1) k ON true
JOIN LATERAL (SELECT a.attname FROM pg_catalog.pg_attribute a
  WHERE a.attrelid = c.oid AND a.attnum > 0 AND NOT a.attisdropped
    AND replace(lower(a.attname), '_', '') = ANY($2)
  ORDER BY array_position($2, replace(lower(a.attname), '_', '')) LIMIT 1) s ON true
WHERE c.relkind IN ('r','p') AND NOT c.relispartition
  AND n.nspname NOT IN ('pg_catalog', 'information_schema') AND n.nspname NOT LIKE 'pg\_toast%' AND n.nspname NOT LIKE 'pg\_temp%'
  AND ($3 = '' OR n.nspname = $3)
  AND pg_catalog.has_table_privilege(c.oid, 'SELECT')
ORDER BY 1, 2`, keyNames, statusNames, schema)
	if err != nil {
		return nil, fmt.Errorf("discover idempotency tables: %w", err)
	}
	cands, err := pgx.CollectRows(rows, func(row pgx.CollectableRow) (Candidate, error) {
		var c Candidate
		err := row.Scan(&c.Name.Schema, &c.Name.Name, &c.Key, &c.Status)
		c.Table = c.Name.String()
		return c, err
	})
	if err != nil {
		return nil, fmt.Errorf("discover idempotency tables: %w", err)
	}
	// payments_history beside payments is the history of a table, not a
	// second idempotency table: the overwritten check reads it.
	all := slices.Clone(cands)
	return slices.DeleteFunc(cands, func(c Candidate) bool {
		return slices.ContainsFunc(all, func(o Candidate) bool {
			return o.Name.Schema == c.Name.Schema && slices.Contains(historySuffixes, strings.TrimPrefix(c.Name.Name, o.Name.Name))
		})
	}), nil
}
