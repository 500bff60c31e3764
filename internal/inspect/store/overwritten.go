package store

import (
	"context"
	"fmt"
	"github.com/dupctl/dupctl/internal/idemtable"
	"github.com/dupctl/dupctl/internal/platform/english"
	"strings"
	"time"

	"github.com/dupctl/dupctl/internal/platform/problem"
	"github.com/jackc/pgx/v5"
)

// history is a status history table matched to the inspected table.
type history struct {
	table  *Table
	key    []Column
	status Column
	at     Column
	order  *Column // tie-breaker for equal times (id, seq)
}

// nonSuccessRoles are the statuses a SUCCEEDED record must never turn into.
var nonSuccessRoles = []Role{Processing, Failed, Retryable, Pending}

// overwritten looks for SUCCEEDED records that were overwritten, from
// every evidence available: a status history table (lag over time), and
// current-row columns only a success sets. It says which evidence it had.
func (in *inspector) overwritten(ctx context.Context) error {
	succ := in.o.Statuses.Values(Succeeded)
	if !in.requires(CheckOverwritten, in.needStatus(), need(len(succ) > 0, noSucceeded)) {
		return nil
	}
	h, note, err := in.findHistory(ctx)
	if err != nil {
		return err
	}
	res := &Overwritten{Evidence: []string{}, Samples: []OverwriteRow{}}
	in.res.Overwritten = res
	if note != "" {
		in.skip(CheckOverwritten+" (history)", note)
	}
	if h == nil && len(in.evidence) == 0 {
		in.rep.Check(RuleNoEvidence.Code)
		in.rep.Add(RuleNoEvidence.New(in.subject(), "no status history table and no column that only a success sets: "+
			"a SUCCEEDED overwritten by FAILED leaves no trace",
			"history tables looked for: "+idemtable.DisplayIdent(in.t.Name.Name+historySuffixes[0])+" and the suffixes "+
				strings.Join(historySuffixes[1:], ", ")+" (or {HistoryTable})",
			"success columns looked for: succeeded_at, response_code/status_code 2xx (or {EvidenceColumns})"))
		return nil
	}
	in.rep.Check(RuleOverwritten.Code)
	if h != nil {
		if err := in.historyRegressions(ctx, h, res); err != nil {
			return err
		}
	}
	if len(in.evidence) > 0 {
		if err := in.rowRegressions(ctx, res); err != nil {
			return err
		}
	}
	return nil
}

// findHistory resolves --history-table, or looks for <table>_history and
// the like beside the table. A found table that cannot be read as a
// history (no key or time column) is a note, not an error, unless named.
func (in *inspector) findHistory(ctx context.Context) (*history, string, error) {
	explicit := in.o.HistoryTable != ""
	var ht *Table
	if explicit {
		t, err := idemtable.ResolveTable(ctx, in.q, in.o.HistoryTable)
		if err != nil {
			return nil, "", err
		}
		ht = t
	} else {
		for _, suffix := range historySuffixes {
			n := Name{Schema: in.t.Name.Schema, Name: in.t.Name.Name + suffix}
			rows, err := idemtable.TableRows(ctx, in.q, `SELECT c.oid, n.nspname, c.relname, c.relkind::text, c.reltuples::bigint
FROM pg_catalog.pg_class c JOIN pg_catalog.pg_namespace n ON n.oid = c.relnamespace
WHERE n.nspname = $1 AND c.relname = $2 AND c.relkind IN ('r','p')`, n.Schema, n.Name)
			if err != nil {
				return nil, "", fmt.Errorf("look for a history table of %s: %w", in.t.Name, err)
			}
			if len(rows) == 1 {
				if ht, err = idemtable.LoadTable(ctx, in.q, n); err != nil {
					return nil, "", err
				}
				break
			}
		}
		if ht == nil {
			return nil, "", nil
		}
	}
	h, reason := matchHistory(ht, in.key, in.status)
	if h != nil {
		return h, "", nil
	}
	if explicit {
		return nil, "", problem.Inputf("HistoryTable", "%s", reason).WithRawValue(ht.Name.String()).
			WithHint("a history table needs the key columns, a status column and a timestamp column")
	}
	return nil, fmt.Sprintf("%s looks like a history table but %s", ht.Name, reason), nil
}

// matchHistory finds the key, status, time and order columns of a history
// table; the reason says what is missing.
func matchHistory(ht *Table, key []Column, status *Column) (*history, string) {
	h := &history{table: ht}
	for _, k := range key {
		c, ok := ht.Column(k.Name)
		if !ok {
			return nil, "has no key column " + idemtable.DisplayIdent(k.Name)
		}
		h.key = append(h.key, c)
	}
	c, ok := ht.Column(status.Name)
	if !ok {
		if c, ok = ht.ColumnByNames(append([]string{"newstatus", "tostatus", "newstate", "tostate"}, idemtable.StatusNames...), nil); !ok {
			return nil, "has no status column"
		}
	}
	h.status = c
	if h.at, ok = ht.ColumnByNames(historyTimeNames, idemtable.IsTimestamp); !ok {
		return nil, "has no timestamp column to order the transitions (changed_at, created_at, ...)"
	}
	if o, ok := ht.ColumnByNames(historyOrderNames, nil); ok {
		h.order = &o
	}
	return h, ""
}

// historyRegressions walks each key's transitions in time order with
// lag() and reports a SUCCEEDED followed by anything else.
func (in *inspector) historyRegressions(ctx context.Context, h *history, res *Overwritten) error {
	order := h.at.SQL()
	if h.order != nil {
		order += ", " + h.order.SQL()
	}
	desc := fmt.Sprintf("history table %s (lag over %s)", h.table.Name, idemtable.DisplayIdent(h.at.Name))
	res.Evidence = append(res.Evidence, desc)
	sql := "SELECT k, prev, cur, at FROM (SELECT " + textExpr(h.key) + " AS k, " + h.status.SQL() + "::text AS cur, lag(" +
		h.status.SQL() + "::text) OVER (PARTITION BY " + colList(h.key) + " ORDER BY " + order + ") AS prev, " +
		h.at.SQL() + "::timestamptz AS at FROM " + h.table.Name.SQL() + ") x " +
		"WHERE upper(prev) = ANY($1) AND (cur IS NULL OR NOT upper(cur) = ANY($1)) ORDER BY at, k"
	rows, err := in.q.Query(ctx, sql, in.o.Statuses.Values(Succeeded))
	if err != nil {
		return fmt.Errorf("read status history %s: %w", h.table.Name, err)
	}
	var key, prev string
	var cur *string
	var at time.Time
	var n int64
	var ev []string
	_, err = pgx.ForEachRow(rows, []any{&key, &prev, &cur, &at}, func() error {
		n++
		if len(ev) < in.o.Samples {
			to := "NULL"
			if cur != nil {
				to = *cur
			}
			e := fmt.Sprintf("%s then %s at %s", prev, to, at.UTC().Format(time.RFC3339))
			res.Samples = append(res.Samples, OverwriteRow{Key: key, Status: to, Evidence: "history: " + e})
			ev = append(ev, fmt.Sprintf("key %s: %s", quoteKey(key), e))
		}
		return nil
	})
	if err != nil {
		return fmt.Errorf("read status history %s: %w", h.table.Name, err)
	}
	res.Rows += n
	if n > 0 {
		in.rep.Add(RuleOverwritten.New(in.subject(), fmt.Sprintf("%d %s in %s: SUCCEEDED followed by another status", n,
			english.Plural(n, "transition", "transitions"), h.table.Name), ev...))
	}
	return nil
}

// rowRegressions reports rows whose status is not a success while a column
// only a success sets says it succeeded.
func (in *inspector) rowRegressions(ctx context.Context, res *Overwritten) error {
	var vals []string
	for _, r := range nonSuccessRoles {
		vals = append(vals, in.o.Statuses.Values(r)...)
	}
	preds := make([]string, len(in.evidence))
	shows := make([]string, len(in.evidence))
	for i, e := range in.evidence {
		res.Evidence = append(res.Evidence, "current row: "+e.label)
		preds[i] = "(" + e.pred + ")"
		shows[i] = "CASE WHEN " + e.pred + " THEN " + e.col.SQL() + "::text END"
	}
	n := in.roleRows(func(p profileRow) int64 { return p.evidence }, nonSuccessRoles...)
	if n == 0 {
		return nil
	}
	sql := "SELECT " + textExpr(in.key) + ", " + in.status.SQL() + "::text, " + strings.Join(shows, ", ") + " FROM " +
		in.t.Name.SQL() + " WHERE " + statusIn(in.status, 1) + " AND (" + strings.Join(preds, " OR ") + ") ORDER BY 1 LIMIT $2"
	rows, err := in.q.Query(ctx, sql, vals, in.o.Samples)
	if err != nil {
		return fmt.Errorf("overwritten check on %s: %w", in.t.Name, err)
	}
	var r OverwriteRow
	shown := make([]*string, len(in.evidence))
	dest := []any{&r.Key, &r.Status}
	for i := range shown {
		dest = append(dest, &shown[i])
	}
	var ev []string
	_, err = pgx.ForEachRow(rows, dest, func() error {
		var parts []string
		for i, v := range shown {
			if v != nil {
				parts = append(parts, idemtable.DisplayIdent(in.evidence[i].col.Name)+"="+*v)
			}
		}
		r.Evidence = strings.Join(parts, ", ")
		res.Samples = append(res.Samples, r)
		ev = append(ev, fmt.Sprintf("key %s: status %s but %s", quoteKey(r.Key), r.Status, r.Evidence))
		return nil
	})
	if err != nil {
		return fmt.Errorf("overwritten check on %s: %w", in.t.Name, err)
	}
	res.Rows += n
	labels := make([]string, len(in.evidence))
	for i, e := range in.evidence {
		labels[i] = e.label
	}
	in.rep.Add(RuleOverwritten.New(in.subject(), fmt.Sprintf("%d %s not SUCCEEDED although %s", n, english.Plural(n, "row is", "rows are"),
		strings.Join(labels, " or ")), ev...))
	return nil
}
