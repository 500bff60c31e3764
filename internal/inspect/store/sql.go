package store

import (
	"slices"
	"strconv"
	"strings"
)

// SQL fragments over catalog columns. Every name is quoted with
// pgx.Identifier (Column.SQL); nothing here sees user text.

// colList is "a", "b".
func colList(cols []Column) string {
	parts := make([]string, len(cols))
	for i, c := range cols {
		parts[i] = c.SQL()
	}
	return strings.Join(parts, ", ")
}

// rowExpr is the columns as one value: the column itself, or ROW(a, b).
func rowExpr(cols []Column) string {
	if len(cols) == 1 {
		return cols[0].SQL()
	}
	return "ROW(" + colList(cols) + ")"
}

// textExpr is the columns as one text: a::text, or ROW(a, b)::text,
// which reads (a,b) with PostgreSQL's own quoting.
func textExpr(cols []Column) string {
	return rowExpr(cols) + "::text"
}

// eachText is a::text, b::text: one text column per key column.
func eachText(cols []Column) string {
	parts := make([]string, len(cols))
	for i, c := range cols {
		parts[i] = c.SQL() + "::text"
	}
	return strings.Join(parts, ", ")
}

// allNotNull is "a IS NOT NULL AND b IS NOT NULL".
func allNotNull(cols []Column) string {
	parts := make([]string, len(cols))
	for i, c := range cols {
		parts[i] = c.SQL() + " IS NOT NULL"
	}
	return strings.Join(parts, " AND ")
}

// anyNull is "a IS NULL OR b IS NULL".
func anyNull(cols []Column) string {
	parts := make([]string, len(cols))
	for i, c := range cols {
		parts[i] = c.SQL() + " IS NULL"
	}
	return "(" + strings.Join(parts, " OR ") + ")"
}

// coalesceExpr is coalesce(a, b): the latest sign of life of a row from
// its time columns, in the order given.
func coalesceExpr(cols []Column) string {
	if len(cols) == 1 {
		return cols[0].SQL()
	}
	return "coalesce(" + colList(cols) + ")"
}

// keyIn matches rows whose key columns equal one of the given tuples,
// passed as one text array per column ($first, $first+1, ...) and cast to
// the column's catalog type, so an index on the key can serve it.
func keyIn(cols []Column, first int) string {
	if len(cols) == 1 {
		return cols[0].AnyOf(first)
	}
	arrays := make([]string, len(cols))
	for i, c := range cols {
		arrays[i] = param(first+i) + "::text[]::" + c.Type + "[]"
	}
	return "(" + colList(cols) + ") IN (SELECT * FROM unnest(" + strings.Join(arrays, ", ") + "))"
}

// keyArgs transposes sample keys into one text array per column, the
// arguments of keyIn.
func keyArgs(groups []Group, ncols int) []any {
	args := make([]any, ncols)
	for i := range ncols {
		col := make([]string, 0, len(groups))
		for _, g := range groups {
			col = append(col, g.parts[i])
		}
		args[i] = col
	}
	return args
}

// statusIn is upper(status::text) = ANY($n): statuses compare
// case-insensitively, whatever their type.
func statusIn(c *Column, n int) string {
	return "upper(" + c.SQL() + "::text) = ANY(" + param(n) + ")"
}

func param(n int) string { return "$" + strconv.Itoa(n) }

// topN keeps the largest groups (most rows first, then by key) seen in a
// stream, with the totals.
type topN struct {
	n      int
	groups int64
	rows   int64
	items  []Group
}

func (t *topN) add(g Group) {
	t.groups++
	t.rows += g.Rows
	i, _ := slices.BinarySearchFunc(t.items, g, func(a, b Group) int {
		if a.Rows != b.Rows {
			if a.Rows > b.Rows {
				return -1
			}
			return 1
		}
		return strings.Compare(a.Key, b.Key)
	})
	if i >= t.n {
		return
	}
	t.items = slices.Insert(t.items, i, g)
	if len(t.items) > t.n {
		t.items = t.items[:t.n]
	}
}

func (t *topN) result() *Groups {
	items := t.items
	if items == nil {
		items = []Group{}
	}
	return &Groups{Groups: t.groups, Rows: t.rows, Samples: items}
}

// evidence is one line per sample group.
func (g *Groups) evidence(line func(Group) string) []string {
	out := make([]string, 0, len(g.Samples))
	for _, s := range g.Samples {
		out = append(out, line(s))
	}
	return out
}
