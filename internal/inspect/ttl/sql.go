package ttl

import (
	"context"
	"fmt"
	"strconv"
	"time"

	"github.com/dupctl/dupctl/internal/platform/progress"
	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/pgtype"
)

// Querier opens transactions; a *pgxpool.Pool is one.
type Querier interface {
	BeginTx(ctx context.Context, o pgx.TxOptions) (pgx.Tx, error)
}

// Query runs the user's query in a read-only transaction (on top of the
// read-only session the caller opened) and reads its rows like a CSV
// table: columns named as KnownColumns lists, or job type, duration and
// queue wait by position. Intervals, numbers (in the unit), timestamps and
// text all work. Nothing is ever interpolated into the query.
func Query(ctx context.Context, db Querier, query string, o TableOptions, c *Collector, meter progress.Meter) error {
	meter = progress.Or(meter)
	c.Source("query")
	tx, err := db.BeginTx(ctx, pgx.TxOptions{AccessMode: pgx.ReadOnly})
	if err != nil {
		return fmt.Errorf("begin a read-only transaction: %w", err)
	}
	defer tx.Rollback(context.WithoutCancel(ctx)) //nolint:errcheck // read-only: nothing to keep or lose
	rows, err := tx.Query(ctx, query)
	if err != nil {
		return fmt.Errorf("query: %w", err)
	}
	defer rows.Close()
	fds := rows.FieldDescriptions()
	names := make([]string, len(fds))
	for i, fd := range fds {
		names[i] = fd.Name
	}
	cols, ok := byName(names)
	if !ok {
		cols = byPosition(len(names))
	}
	if err := cols.check(c.opts.IncludeWait); err != nil {
		return fmt.Errorf("query result (columns %v): %w", names, err)
	}
	var row int64
	cells := make([][]byte, len(fds))
	for rows.Next() {
		row++
		vals, err := rows.Values()
		if err != nil {
			c.Skip(fmt.Sprintf("row %d: %v", row, err))
			continue
		}
		for i, v := range vals {
			cells[i] = appendText(cells[i][:0], v)
		}
		typ, run, err := cols.decode(cells, o.unit())
		if err != nil {
			c.Skip(fmt.Sprintf("row %d: %v", row, err))
			continue
		}
		name := o.defaultType()
		if typ != nil {
			name = string(typ)
		}
		if why := c.add(c.series(name), run); why != "" {
			c.Skip(fmt.Sprintf("row %d: %s", row, why))
		}
		if row&0x3ff == 0 {
			meter.Add(0x400)
		}
	}
	if err := rows.Err(); err != nil {
		return fmt.Errorf("query: %w", err)
	}
	return nil
}

// appendText writes a column value as the text a CSV would hold, so one
// decoder reads both.
func appendText(dst []byte, v any) []byte {
	switch x := v.(type) {
	case nil:
		return dst
	case string:
		return append(dst, x...)
	case []byte:
		return append(dst, x...)
	case int64:
		return strconv.AppendInt(dst, x, 10)
	case int32:
		return strconv.AppendInt(dst, int64(x), 10)
	case int16:
		return strconv.AppendInt(dst, int64(x), 10)
	case float64:
		return strconv.AppendFloat(dst, x, 'f', -1, 64)
	case float32:
		return strconv.AppendFloat(dst, float64(x), 'f', -1, 32)
	case pgtype.Numeric:
		f, err := x.Float64Value()
		if err != nil || !f.Valid {
			return dst
		}
		return strconv.AppendFloat(dst, f.Float64, 'f', -1, 64)
	case time.Time:
		return x.AppendFormat(dst, time.RFC3339Nano)
	case pgtype.Interval:
		if !x.Valid {
			return dst
		}
		// A month has no fixed length; count it as 30 days, as
		// PostgreSQL's own justify_days does.
		d := time.Duration(x.Microseconds)*time.Microsecond + time.Duration(int64(x.Days)+30*int64(x.Months))*24*time.Hour
		return append(strconv.AppendInt(dst, int64(d), 10), "ns"...)
	case time.Duration:
		return append(strconv.AppendInt(dst, int64(x), 10), "ns"...)
	}
	return fmt.Append(dst, v)
}
