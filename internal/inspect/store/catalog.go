package store

import (
	"context"
	"fmt"
	"slices"
	"strings"

	"github.com/jackc/pgx/v5"
)

// Coverage says how one unique index protects the key.
type Coverage string

const (
	// CoverFull: the index's columns are exactly the key columns, valid,
	// immediate, over every row: INSERT ... ON CONFLICT (key) arbitrates.
	CoverFull Coverage = "full"
	// CoverNarrower: unique on a subset of the key columns (no duplicate
	// key can exist, but two scopes cannot share a key).
	CoverNarrower Coverage = "narrower"
	// CoverGaps: the index touches the key but leaves a way for a
	// duplicate (partial, expression, extra columns, deferrable).
	CoverGaps Coverage = "gaps"
	// CoverInvalid: a failed CREATE INDEX CONCURRENTLY.
	CoverInvalid Coverage = "invalid"
	// CoverUnrelated: the index is about other columns.
	CoverUnrelated Coverage = "unrelated"
)

// Index is one unique index of the table and what it means for the key.
type Index struct {
	Name             string   `json:"name"`
	Kind             string   `json:"kind"` // primary key, unique constraint, unique index
	Columns          []string `json:"columns"`
	Predicate        string   `json:"predicate"`
	Valid            bool     `json:"valid"`
	Deferrable       bool     `json:"deferrable"`
	NullsNotDistinct bool     `json:"nulls_not_distinct"`
	Definition       string   `json:"definition"`
	Coverage         Coverage `json:"coverage"`
	// Gaps name what keeps a gapped index from protecting the key:
	// "partial", "expression", "extra columns", "deferrable".
	Gaps []string `json:"gaps"`
	// ExtraColumns are the non-key columns of the index.
	ExtraColumns []string `json:"extra_columns"`
	// UncoveredRows counts rows outside a partial index's predicate or
	// whose indexed expression is NULL (nil when not counted).
	UncoveredRows *int64 `json:"uncovered_rows"`

	attnums []int16 // 0 for an expression column
	exprs   []string
	refs    []int16 // every column the index references (pg_depend)
}

func (ix *Index) hasGap(g string) bool { return slices.Contains(ix.Gaps, g) }

const (
	gapPartial    = "partial"
	gapExpression = "expression"
	gapExtra      = "extra columns"
	gapDeferrable = "deferrable"
)

// loadIndexes reads every unique index on the table: key columns only
// (INCLUDE columns do not take part in uniqueness), predicate, validity,
// deferrability, NULLS NOT DISTINCT (PostgreSQL 15+).
func loadIndexes(ctx context.Context, q Querier, t *Table, serverVersion int) ([]Index, error) {
	nnd := "false"
	if serverVersion >= 150000 {
		nnd = "ix.indnullsnotdistinct"
	}
	sql := `SELECT ic.relname, coalesce(con.contype::text, ''), ix.indisprimary,
  ix.indisvalid AND ix.indisready, NOT ix.indimmediate OR coalesce(con.condeferrable, false), ` + nnd + `,
  coalesce(pg_catalog.pg_get_expr(ix.indpred, ix.indrelid), ''),
  (ix.indkey::int2[])[0:ix.indnkeyatts-1],
  ARRAY(SELECT pg_catalog.pg_get_indexdef(ix.indexrelid, k, true) FROM generate_series(1, ix.indnkeyatts) k ORDER BY k),
  ARRAY(SELECT DISTINCT d.refobjsubid::int2 FROM pg_catalog.pg_depend d
        WHERE d.classid = 'pg_catalog.pg_class'::regclass AND d.objid = ix.indexrelid
          AND d.refclassid = 'pg_catalog.pg_class'::regclass AND d.refobjid = ix.indrelid AND d.refobjsubid > 0),
  pg_catalog.pg_get_indexdef(ix.indexrelid)
FROM pg_catalog.pg_index ix JOIN pg_catalog.pg_class ic ON ic.oid = ix.indexrelid
LEFT JOIN pg_catalog.pg_constraint con ON con.conindid = ix.indexrelid AND con.conrelid = ix.indrelid AND con.contype IN ('p','u')
WHERE ix.indrelid = $1 AND ix.indisunique
ORDER BY ix.indisprimary DESC, ic.relname`
	rows, err := q.Query(ctx, sql, t.OID)
	if err != nil {
		return nil, fmt.Errorf("read unique indexes of %s: %w", t.Name, err)
	}
	return pgx.CollectRows(rows, func(row pgx.CollectableRow) (Index, error) {
		var ix Index
		var contype string
		var primary bool
		err := row.Scan(&ix.Name, &contype, &primary, &ix.Valid, &ix.Deferrable, &ix.NullsNotDistinct,
			&ix.Predicate, &ix.attnums, &ix.Columns, &ix.refs, &ix.Definition)
		switch {
		case primary || contype == "p":
			ix.Kind = "primary key"
		case contype == "u":
			ix.Kind = "unique constraint"
		default:
			ix.Kind = "unique index"
		}
		for i, n := range ix.attnums {
			if n == 0 && i < len(ix.Columns) {
				ix.exprs = append(ix.exprs, ix.Columns[i])
			}
		}
		return ix, err
	})
}

// classify decides an index's coverage of the key columns.
func classify(ix *Index, t *Table, key []Column) {
	ix.Gaps, ix.ExtraColumns = []string{}, []string{}
	isKey := func(n int16) bool { return slices.ContainsFunc(key, func(c Column) bool { return c.Num == n }) }
	var plain []int16
	for _, n := range ix.attnums {
		if n == 0 {
			continue
		}
		plain = append(plain, n)
		if !isKey(n) {
			ix.ExtraColumns = append(ix.ExtraColumns, columnName(t, n))
		}
	}
	relevant := slices.ContainsFunc(plain, isKey) || (len(ix.exprs) > 0 && slices.ContainsFunc(ix.refs, isKey))
	switch {
	case !relevant:
		ix.Coverage = CoverUnrelated
		return
	case !ix.Valid:
		ix.Coverage = CoverInvalid
		return
	}
	if ix.Predicate != "" {
		ix.Gaps = append(ix.Gaps, gapPartial)
	}
	if len(ix.exprs) > 0 {
		ix.Gaps = append(ix.Gaps, gapExpression)
	}
	if len(ix.ExtraColumns) > 0 {
		ix.Gaps = append(ix.Gaps, gapExtra)
	}
	if ix.Deferrable {
		ix.Gaps = append(ix.Gaps, gapDeferrable)
	}
	switch {
	case len(ix.Gaps) > 0:
		ix.Coverage = CoverGaps
	case len(plain) < len(key):
		ix.Coverage = CoverNarrower
	default:
		ix.Coverage = CoverFull
	}
}

func columnName(t *Table, n int16) string {
	for _, c := range t.Columns {
		if c.Num == n {
			return c.Name
		}
	}
	return fmt.Sprintf("#%d", n)
}

// uncoveredRows counts the rows a gapped index does not protect: outside
// its predicate, or with a NULL indexed expression. The predicate and
// expressions are the catalog's own text (pg_get_expr), never user text.
func uncoveredRows(ctx context.Context, q Querier, t *Table, ix *Index) (int64, error) {
	var conds []string
	if ix.Predicate != "" {
		conds = append(conds, "(("+ix.Predicate+") IS NOT TRUE)")
	}
	for _, e := range ix.exprs {
		conds = append(conds, "(("+e+") IS NULL)")
	}
	if len(conds) == 0 {
		return 0, nil
	}
	var n int64
	sql := "SELECT count(*) FILTER (WHERE " + strings.Join(conds, " OR ") + ") FROM " + t.Name.SQL()
	if err := q.QueryRow(ctx, sql).Scan(&n); err != nil {
		return 0, fmt.Errorf("count rows outside index %s: %w", ix.Name, err)
	}
	return n, nil
}
