package cache

import (
	"context"
	"fmt"
	"github.com/dupctl/dupctl/internal/idemtable"
	"math"
	"strings"
	"sync/atomic"
	"time"

	"github.com/dupctl/dupctl/internal/platform/problem"
	"github.com/redis/go-redis/v9"
)

// How the database side is read (--lookup).
const (
	LookupAuto  = "auto"  // scan when the cache may cover much of a small table, else batch
	LookupBatch = "batch" // one indexed query per SCAN page
	LookupScan  = "scan"  // read the table's keys and statuses once, match in memory
)

// scanMaxRows bounds the table size read into memory by --lookup auto
// (about 100 bytes a row).
const scanMaxRows = 2_000_000

// dbRow is what the database says about one key, without pointers: a
// preloaded table is a map of a million of them, and the garbage collector
// would scan every pointer.
type dbRow struct {
	status  int32 // index into auditor.statusTexts; -1 for NULL
	updated int64 // Unix nanoseconds; math.MinInt64 for NULL
}

const noTime = math.MinInt64

// statusIndex interns a status text (there are a handful).
func (a *auditor) statusIndex(s *string) int32 {
	if s == nil {
		return -1
	}
	a.statusMu.Lock()
	defer a.statusMu.Unlock()
	if i, ok := a.statusIdx[*s]; ok {
		return i
	}
	i := int32(len(a.statusTexts))
	a.statusTexts = append(a.statusTexts, *s)
	a.statusIdx[*s] = i
	return i
}

func (a *auditor) statusText(i int32) (string, bool) {
	if i < 0 {
		return "", false
	}
	a.statusMu.Lock()
	defer a.statusMu.Unlock()
	return a.statusTexts[i], true
}

// chooseLookup decides between batched lookups and one scan of the table.
// One scan costs a sequential read of the table; batches cost an index
// descent per cache key, several times more per row once the cache holds a
// good share of the table. Only a text key can be matched in memory: other
// types compare by value (007 = 7 for a bigint), which only the database
// does right.
func (a *auditor) chooseLookup(ctx context.Context) (string, error) {
	textKey := a.key.Category == "S"
	switch a.o.Lookup {
	case LookupBatch:
		return LookupBatch, nil
	case LookupScan:
		if !textKey {
			return "", problem.Inputf("Lookup", "scan matches keys as text: %s is %s, compared by value (007 = 7); use {Lookup} batch",
				idemtable.DisplayIdent(a.key.Name), a.key.Type)
		}
		return LookupScan, nil
	}
	rows := a.table.Estimate
	if !textKey {
		return LookupBatch, nil
	}
	if rows < 0 || rows > scanMaxRows {
		return LookupBatch, nil // never analysed, or too big to hold
	}
	keys, err := a.cacheSize(ctx)
	if err != nil {
		return "", fmt.Errorf("size the cache: %w", err)
	}
	if 2*keys >= rows {
		return LookupScan, nil
	}
	return LookupBatch, nil
}

// cacheSize is DBSIZE (summed over a cluster's masters): an upper bound on
// the keys the pattern can match.
func (a *auditor) cacheSize(ctx context.Context) (int64, error) {
	type sizer interface {
		DBSize(ctx context.Context) *redis.IntCmd
	}
	if c, ok := a.cache.(cluster); ok {
		var total atomic.Int64 // masters answer concurrently
		err := c.ForEachMaster(ctx, func(ctx context.Context, n *redis.Client) error {
			v, err := n.DBSize(ctx).Result()
			total.Add(v)
			return err
		})
		return total.Load(), err
	}
	if s, ok := a.cache.(sizer); ok {
		return s.DBSize(ctx).Result()
	}
	return 0, nil
}

// preload reads every key and status of the table once.
func (a *auditor) preload(ctx context.Context) error {
	r, err := a.db.Query(ctx, a.selectRows(""))
	if err != nil {
		return fmt.Errorf("read %s: %w", a.table.Name, err)
	}
	rows := make(map[string]dbRow, max(a.table.Estimate, 0))
	if err := a.collect(r, rows); err != nil {
		return err
	}
	a.rows = rows
	return nil
}

func (a *auditor) selectRows(where string) string {
	at := "NULL::timestamptz"
	if a.at != nil {
		at = a.at.SQL() + "::timestamptz"
	}
	sql := "SELECT " + a.key.SQL() + "::text, " + a.status.SQL() + "::text, " + at + " FROM " + a.table.Name.SQL()
	if where != "" {
		sql += " WHERE " + where
	}
	return sql
}

// collect reads (key, status, time) rows into m. Of several rows with one
// key (a table without a unique key), the one that says SUCCEEDED wins: the
// database did the work.
func (a *auditor) collect(r interface {
	Next() bool
	Scan(...any) error
	Err() error
	Close()
}, m map[string]dbRow) error {
	defer r.Close()
	var id string
	var status *string
	var updated *time.Time
	for r.Next() {
		if err := r.Scan(&id, &status, &updated); err != nil {
			return fmt.Errorf("read %s: %w", a.table.Name, err)
		}
		if prev, dup := m[id]; dup && a.succeeded(prev) {
			continue
		}
		row := dbRow{status: a.statusIndex(status), updated: noTime}
		if updated != nil {
			row.updated = updated.UnixNano()
		}
		m[id] = row
	}
	if err := r.Err(); err != nil {
		return fmt.Errorf("read %s: %w", a.table.Name, err)
	}
	return nil
}

func (a *auditor) succeeded(r dbRow) bool {
	s, ok := a.statusText(r.status)
	if !ok {
		return false
	}
	role, ok := a.o.Statuses.RoleOf(s)
	return ok && role == idemtable.Succeeded
}

// lookup fills the database side of entries: from the preloaded table, or
// with one query by key, cast to the column's type so its index serves it
// (always a query when fresh, for the re-read). Keys that cannot be a
// value of that type (abc for a bigint key) have no row.
func (a *auditor) lookup(ctx context.Context, entries []Entry, fresh bool) error {
	rows := a.rows
	if rows == nil || fresh {
		ids := make([]string, 0, len(entries))
		for _, e := range entries {
			if e.Problem == "" && validFor(a.key.Type, e.ID) {
				ids = append(ids, e.ID)
			}
		}
		rows = make(map[string]dbRow, len(ids))
		if len(ids) > 0 {
			r, err := a.db.Query(ctx, a.selectRows(a.key.AnyOf(1)), ids)
			if err != nil {
				return fmt.Errorf("look up %d keys in %s: %w", len(ids), a.table.Name, err)
			}
			if err := a.collect(r, rows); err != nil {
				return err
			}
		}
	}
	for i := range entries {
		e := &entries[i]
		row, ok := rows[e.ID]
		e.found, e.Database = ok, "no row"
		if !ok {
			continue
		}
		if row.updated != noTime {
			e.updated = row.updated
		}
		e.Database = "NULL"
		if s, ok := a.statusText(row.status); ok {
			e.Database = s
			e.dbRole, e.dbKnown = a.o.Statuses.RoleOf(s)
		}
	}
	return nil
}

// validFor reports whether id can be a value of the key column's type,
// so one odd cache key cannot fail a whole batch's cast.
func validFor(typ, id string) bool {
	switch {
	case typ == "smallint" || typ == "integer" || typ == "bigint":
		if id == "" {
			return false
		}
		for i, c := range id {
			if !(c >= '0' && c <= '9') && !(i == 0 && c == '-' && len(id) > 1) {
				return false
			}
		}
		return len(id) <= 20
	case typ == "uuid":
		return isUUID(id)
	}
	return !strings.ContainsRune(id, 0)
}

func isUUID(s string) bool {
	s = strings.TrimSuffix(strings.TrimPrefix(s, "{"), "}")
	hex := strings.ReplaceAll(s, "-", "")
	if len(hex) != 32 {
		return false
	}
	for _, c := range hex {
		if !strings.ContainsRune("0123456789abcdefABCDEF", c) {
			return false
		}
	}
	return true
}
