// Package idemtable is an idempotency table as dupctl reads it: the
// PostgreSQL table a consumer records its keys and statuses in - its name
// as a user writes it, its catalog identity and columns, the usual names
// of its key, status and time columns, and the roles of its status
// values. inspect store judges the table; audit cache compares a status
// cache with it; doctor runs both on dupctl.yaml's idempotency settings.
package idemtable

import (
	"context"
	"fmt"
	"slices"
	"strings"

	"strconv"

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
func (c Column) SQL() string { return Quote(c.Name) }

// IsText reports a column of a string type.
func (c Column) IsText() bool { return c.Category == "S" }

// IsNumber reports a column of a numeric type.
func (c Column) IsNumber() bool { return c.Category == "N" }

// IsTimestamp reports a column of a date or timestamp type.
func IsTimestamp(c Column) bool {
	return strings.HasPrefix(c.Type, "timestamp") || c.Type == "date"
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

// ColumnByNames returns the first column whose normalised name (lower
// case, no underscores) is in names, in the order of names, optionally
// only of a type category.
func (t *Table) ColumnByNames(names []string, ok func(Column) bool) (Column, bool) {
	for _, want := range names {
		for _, c := range t.Columns {
			if NormName(c.Name) == want && (ok == nil || ok(c)) {
				return c, true
			}
		}
	}
	return Column{}, false
}

// DetectKey finds the idempotency key column by its name
// (idempotency_key, dedup_key, message_id, ...).
func (t *Table) DetectKey() (Column, bool) { return t.ColumnByNames(KeyNames, nil) }

// DetectStatus finds the status column by its name (status, state, ...).
func (t *Table) DetectStatus() (Column, bool) { return t.ColumnByNames(StatusNames, nil) }

// DetectTimes lists the timestamp columns that show a row is alive, most
// recent sign first (heartbeat_at, locked_at, updated_at, ..., created_at).
func (t *Table) DetectTimes() []Column {
	var out []Column
	for _, name := range TimeNames {
		if c, ok := t.ColumnByNames([]string{name}, IsTimestamp); ok {
			out = append(out, c)
		}
	}
	return out
}

// AnyOf is the SQL condition "column = ANY($n)" with $n a text array cast
// to the column's own type, so an index on the column serves it.
func (c Column) AnyOf(n int) string {
	return c.SQL() + " = ANY($" + strconv.Itoa(n) + "::text[]::" + c.Type + "[])"
}

// NormName is how column names are compared with the lists of likely
// names: IdempotencyKey, idempotency_key and IDEMPOTENCY_KEY are one name.
func NormName(s string) string {
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
	var rows []TableRow
	if n.Schema != "" {
		rows, err = TableRows(ctx, q, base+`n.nspname = $1 AND c.relname = $2`, n.Schema, n.Name)
	} else {
		rows, err = TableRows(ctx, q, base+`c.relname = $1 AND pg_catalog.pg_table_is_visible(c.oid)`, n.Name)
		if err == nil && len(rows) == 0 {
			rows, err = TableRows(ctx, q, base+`c.relname = $1 ORDER BY 2`, n.Name)
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
			names = append(names, r.Name.String())
		}
		return nil, problem.Inputf("", "table %s is ambiguous: %s", n, strings.Join(names, ", ")).WithHint("qualify it with its schema")
	}
	r := rows[0]
	switch r.Kind {
	case "r", "p":
	case "v", "m":
		return nil, problem.Inputf("", "%s is a view, not a table", r.Name).WithHint("inspect the table that holds the idempotency records")
	default:
		return nil, problem.Inputf("", "%s is not a table (relkind %s)", r.Name, r.Kind).WithHint("give the idempotency table")
	}
	t := &Table{OID: r.OID, Name: r.Name, Estimate: r.Estimate}
	if t.Columns, err = loadColumns(ctx, q, r.OID); err != nil {
		return nil, fmt.Errorf("read columns of %s: %w", r.Name, err)
	}
	return t, nil
}

// TableRow is one pg_class row LoadTable reads: a relation's identity.
type TableRow struct {
	OID      uint32
	Name     Name
	Kind     string
	Estimate int64
}

// TableRows runs a query of oid, schema, name, relkind and reltuples.
func TableRows(ctx context.Context, q Querier, sql string, args ...any) ([]TableRow, error) {
	rows, err := q.Query(ctx, sql, args...)
	if err != nil {
		return nil, err
	}
	return pgx.CollectRows(rows, func(row pgx.CollectableRow) (TableRow, error) {
		var r TableRow
		err := row.Scan(&r.OID, &r.Name.Schema, &r.Name.Name, &r.Kind, &r.Estimate)
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

// The usual names of the columns the checks need when no option names
// them, normalised (NormName), most telling first.
var (
	KeyNames = []string{"idempotencykey", "idemkey", "idempotencyid", "dedupkey", "dedupekey", "deduplicationkey",
		"deduplicationid", "dedupid", "jobkey", "uniquekey", "messageid", "msgid", "requestid", "eventid"}
	StatusNames = []string{"status", "state", "jobstatus", "jobstate", "processingstatus", "processingstate"}
	TimeNames   = []string{"heartbeatat", "lastheartbeatat", "lockedat", "updatedat", "modifiedat", "lastrunat", "startedat", "createdat"}
)
