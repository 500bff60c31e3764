package chaos

import (
	"context"
	"errors"
	"fmt"
	"math"
	"slices"
	"strconv"

	"github.com/dupctl/dupctl/internal/platform/connect"
	"github.com/dupctl/dupctl/internal/platform/problem"
	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/pgconn"
	"github.com/jackc/pgx/v5/pgxpool"
)

// The effects query counts a run's side effects per business key once
// the run settled, read-only, in what the workers wrote.

type effectRow struct {
	n    int
	idem *int
}

// checkEffectsSQL runs the effects query once, read-only, before anything
// starts: a typo fails now, not after the workers ran.
func checkEffectsSQL(ctx context.Context, pool *pgxpool.Pool, sql string) error {
	_, err := queryEffects(ctx, pool, sql, nil)
	return err
}

func countEffects(ctx context.Context, pool *pgxpool.Pool, sql string, keys []string) (map[string]effectRow, error) {
	return queryEffects(ctx, pool, sql, keys)
}

// queryEffects runs the user's query in a read-only transaction and keeps
// the rows of the given keys.
func queryEffects(ctx context.Context, pool *pgxpool.Pool, sql string, keys []string) (map[string]effectRow, error) {
	tx, err := pool.BeginTx(ctx, pgx.TxOptions{AccessMode: pgx.ReadOnly})
	if err != nil {
		return nil, problem.System(fmt.Errorf("effects query: %w", err), "")
	}
	defer tx.Rollback(ctx)
	rows, err := tx.Query(ctx, sql)
	if err != nil {
		return nil, sqlError(err)
	}
	defer rows.Close()
	if n := len(rows.FieldDescriptions()); n < 2 {
		// A statement that writes has no columns, and the read-only
		// transaction's refusal arrives with the rows' end (issue 31: it
		// was reported as "returns 0 column(s)").
		rows.Close()
		if err := rows.Err(); err != nil {
			return nil, sqlError(err)
		}
		return nil, problem.Inputf("EffectsSQL", "returns %d column(s): want the business key, the number of effects and, "+
			"optionally, the number of distinct idempotency keys", n)
	}
	out := map[string]effectRow{}
	for rows.Next() {
		vals, err := rows.Values()
		if err != nil {
			return nil, sqlError(err)
		}
		key := fmt.Sprint(vals[0])
		if !slices.Contains(keys, key) {
			continue
		}
		n, err := toInt(vals[1])
		if err != nil {
			return nil, problem.Inputf("EffectsSQL", "second column: %w", err)
		}
		row := out[key]
		row.n += n
		if len(vals) > 2 {
			m, err := toInt(vals[2])
			if err != nil {
				return nil, problem.Inputf("EffectsSQL", "third column: %w", err)
			}
			if row.idem != nil {
				m += *row.idem
			}
			row.idem = &m
		}
		out[key] = row
	}
	if err := rows.Err(); err != nil {
		return nil, sqlError(err)
	}
	return out, nil
}

// sqlError: the query's own mistakes (syntax, unknown table, a write in a
// read-only transaction) are bad input; anything else is the server's.
func sqlError(err error) error {
	if connect.PGErrorKind(err) == connect.PGReadOnly {
		return problem.Inputf("EffectsSQL", "must be read-only: it counts the effects, it must not change them (%s)", pgMessage(err))
	}
	if k := connect.PGErrorKind(err); k == connect.PGBadQuery {
		var pe *pgconn.PgError
		errors.As(err, &pe)
		return problem.Inputf("EffectsSQL", "%s (SQLSTATE %s)", pe.Message, pe.Code)
	}
	return problem.System(fmt.Errorf("effects query: %w", err), "")
}

func pgMessage(err error) string {
	var pe *pgconn.PgError
	if errors.As(err, &pe) {
		return pe.Message
	}
	return err.Error()
}

func toInt(v any) (int, error) {
	switch x := v.(type) {
	case int64:
		return int(x), nil
	case int32:
		return int(x), nil
	case int16:
		return int(x), nil
	case int:
		return x, nil
	case float64:
		if x == math.Trunc(x) {
			return int(x), nil
		}
	case nil:
		return 0, nil
	case string:
		return strconv.Atoi(x)
	}
	if s := fmt.Sprint(v); s != "" {
		if n, err := strconv.Atoi(s); err == nil {
			return n, nil
		}
	}
	return 0, fmt.Errorf("%v (%T) is not a count", v, v)
}
