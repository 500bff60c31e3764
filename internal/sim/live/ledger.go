package live

import (
	"context"
	"embed"
	"errors"
	"fmt"
	"strings"

	"github.com/dupctl/dupctl/internal/worker"
	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/pgxpool"
)

//go:embed sql/*.sql
var sqlFiles embed.FS

// Ledger is the idempotency ledger and the side-effect sink in PostgreSQL,
// in a schema of its own.
type Ledger struct {
	Pool   *pgxpool.Pool
	Schema string // unquoted name; always dupctl-generated
	sql    map[string]string
}

// NewLedger loads the SQL for a schema name. The name is quoted with
// pgx.Identifier: no SQL is built from user text.
func NewLedger(pool *pgxpool.Pool, schema string) (*Ledger, error) {
	l := &Ledger{Pool: pool, Schema: schema, sql: map[string]string{}}
	quoted := pgx.Identifier{schema}.Sanitize()
	entries, err := sqlFiles.ReadDir("sql")
	if err != nil {
		return nil, err
	}
	for _, e := range entries {
		b, err := sqlFiles.ReadFile("sql/" + e.Name())
		if err != nil {
			return nil, err
		}
		l.sql[strings.TrimSuffix(e.Name(), ".sql")] = strings.ReplaceAll(string(b), "{{schema}}", quoted)
	}
	return l, nil
}

// Create makes the schema and its tables.
func (l *Ledger) Create(ctx context.Context) error {
	if _, err := l.Pool.Exec(ctx, l.sql["schema"]); err != nil {
		return fmt.Errorf("create schema %s: %w", l.Schema, err)
	}
	return nil
}

// Drop removes the schema and everything in it.
func (l *Ledger) Drop(ctx context.Context) error {
	_, err := l.Pool.Exec(ctx, "DROP SCHEMA IF EXISTS "+pgx.Identifier{l.Schema}.Sanitize()+" CASCADE")
	if err != nil {
		return fmt.Errorf("drop schema %s: %w", l.Schema, err)
	}
	return nil
}

// Status reads a key's status.
func (l *Ledger) Status(ctx context.Context, key string) (worker.Status, error) {
	var st string
	err := l.Pool.QueryRow(ctx, l.sql["status"], key).Scan(&st)
	if errors.Is(err, pgx.ErrNoRows) {
		return worker.StatusAbsent, nil
	}
	return worker.Status(st), wrapSQL("read status", err)
}

// Claim is the atomic INSERT ... ON CONFLICT DO NOTHING RETURNING reserve.
func (l *Ledger) Claim(ctx context.Context, key string) (bool, error) {
	return l.returning(ctx, l.Pool, "claim", key)
}

// Commit records SUCCEEDED.
func (l *Ledger) Commit(ctx context.Context, key string) error {
	_, err := l.Pool.Exec(ctx, l.sql["commit"], key)
	return wrapSQL("commit status", err)
}

// MarkFailed records a failure; guarded never regresses SUCCEEDED.
func (l *Ledger) MarkFailed(ctx context.Context, key string, guarded bool, reason string) error {
	q := l.sql["mark_failed_overwrite"]
	if guarded {
		q = l.sql["mark_failed_guarded"]
	}
	_, err := l.Pool.Exec(ctx, q, key, reason)
	return wrapSQL("mark failed", err)
}

// Effect writes the side effect to the audit trail, after the fencing
// check when a token is given; both in one transaction.
func (l *Ledger) Effect(ctx context.Context, e worker.Effect) (bool, error) {
	return l.inTx(ctx, func(tx pgx.Tx) (bool, error) {
		return l.effectIn(ctx, tx, e)
	})
}

// EffectTxn performs the effect and records SUCCEEDED in one transaction:
// if the key is SUCCEEDED already, nothing happens.
func (l *Ledger) EffectTxn(ctx context.Context, e worker.Effect) (bool, error) {
	return l.inTx(ctx, func(tx pgx.Tx) (bool, error) {
		ok, err := l.returning(ctx, tx, "claim_succeeded", e.IdempotencyKey)
		if err != nil || !ok {
			return false, err
		}
		return l.effectIn(ctx, tx, e)
	})
}

func (l *Ledger) effectIn(ctx context.Context, tx pgx.Tx, e worker.Effect) (bool, error) {
	if e.Fence > 0 {
		ok, err := l.returning(ctx, tx, "fence", e.BusinessKey, e.Fence)
		if err != nil || !ok {
			return false, err
		}
	}
	_, err := tx.Exec(ctx, l.sql["effect"], e.BusinessKey, e.IdempotencyKey, e.Worker, e.Attempt, e.Fence)
	return err == nil, wrapSQL("record effect", err)
}

type rowQuerier interface {
	Query(ctx context.Context, sql string, args ...any) (pgx.Rows, error)
}

// returning runs a statement with RETURNING and reports whether it
// returned a row.
func (l *Ledger) returning(ctx context.Context, q rowQuerier, name string, args ...any) (bool, error) {
	rows, err := q.Query(ctx, l.sql[name], args...)
	if err != nil {
		return false, wrapSQL(name, err)
	}
	defer rows.Close()
	got := rows.Next()
	rows.Close()
	return got, wrapSQL(name, rows.Err())
}

func (l *Ledger) inTx(ctx context.Context, fn func(pgx.Tx) (bool, error)) (bool, error) {
	var ok bool
	err := pgx.BeginFunc(ctx, l.Pool, func(tx pgx.Tx) error {
		var err error
		ok, err = fn(tx)
		if err == nil && !ok {
			return errRollback
		}
		return err
	})
	if errors.Is(err, errRollback) {
		return false, nil
	}
	return ok, err
}

var errRollback = errors.New("rollback")

// EffectsPerKey counts side effects per business key.
func (l *Ledger) EffectsPerKey(ctx context.Context) (map[string]int, error) {
	rows, err := l.Pool.Query(ctx, l.sql["effects_per_key"])
	if err != nil {
		return nil, wrapSQL("count effects", err)
	}
	out := map[string]int{}
	for rows.Next() {
		var k string
		var n int
		if err := rows.Scan(&k, &n); err != nil {
			return nil, err
		}
		out[k] = n
	}
	return out, wrapSQL("count effects", rows.Err())
}

func wrapSQL(what string, err error) error {
	if err == nil {
		return nil
	}
	return fmt.Errorf("%s: %w", what, err)
}
