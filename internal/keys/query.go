package keys

import (
	"context"
	"encoding/hex"
	"encoding/json"
	"fmt"
	"io"
	"time"

	"github.com/dupctl/dupctl/internal/logs"
	"github.com/jackc/pgx/v5"
)

// Querier runs a read-only SQL query (a pgx pool or connection).
type Querier interface {
	Query(ctx context.Context, sql string, args ...any) (pgx.Rows, error)
}

// QueryError is a failed query: the server answered, the SQL or the
// role was wrong.
type QueryError struct{ Err error }

func (e *QueryError) Error() string { return "query: " + e.Err.Error() }
func (e *QueryError) Unwrap() error { return e.Err }

// QuerySource turns the rows of a SQL query into a log source: one JSON
// object per row, keyed by column name, so that the usual field aliases
// (order_id, idempotency_key, attempt, job_id, created_at) apply.
func QuerySource(q Querier, sql string) logs.Source { return &querySource{q: q, sql: sql} }

type querySource struct {
	q   Querier
	sql string
}

func (s *querySource) Name() string     { return "query" }
func (s *querySource) Size() int64      { return -1 }
func (s *querySource) Rewindable() bool { return true }

func (s *querySource) Open(ctx context.Context) (io.ReadCloser, error) {
	rows, err := s.q.Query(ctx, s.sql)
	if err != nil {
		return nil, &QueryError{err}
	}
	pr, pw := io.Pipe()
	go func() {
		defer rows.Close()
		fields := rows.FieldDescriptions()
		for rows.Next() {
			vals, err := rows.Values()
			if err != nil {
				pw.CloseWithError(&QueryError{err})
				return
			}
			obj := make(map[string]any, len(vals))
			for i, v := range vals {
				if v = jsonValue(v); v != nil && i < len(fields) {
					obj[fields[i].Name] = v
				}
			}
			b, err := json.Marshal(obj)
			if err != nil {
				pw.CloseWithError(fmt.Errorf("query row: %w", err))
				return
			}
			if _, err := pw.Write(append(b, '\n')); err != nil {
				return // the reader stopped
			}
		}
		if err := rows.Err(); err != nil {
			pw.CloseWithError(&QueryError{err})
			return
		}
		pw.Close()
	}()
	return pr, nil
}

// jsonValue makes a column value JSON-friendly: UUIDs as text, times as
// RFC 3339, bytes as text.
func jsonValue(v any) any {
	switch x := v.(type) {
	case nil:
		return nil
	case [16]byte:
		h := hex.EncodeToString(x[:])
		return h[:8] + "-" + h[8:12] + "-" + h[12:16] + "-" + h[16:20] + "-" + h[20:]
	case []byte:
		return string(x)
	case time.Time:
		return x.UTC().Format(time.RFC3339Nano)
	case string, bool, int, int8, int16, int32, int64, uint8, uint16, uint32, uint64, float32, float64:
		return x
	case json.Marshaler:
		return x
	case fmt.Stringer:
		return x.String()
	}
	return fmt.Sprint(v)
}
