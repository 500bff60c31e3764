package replay

import (
	"context"
	"fmt"
	"strings"

	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/pgxpool"
)

// PGIdempotency looks idempotency keys up in a PostgreSQL table, read-only:
//
//	SELECT key FROM table WHERE key = ANY($1) AND status = $2
//
// with the key compared in its column's own type, so an index on it is used.
type PGIdempotency struct {
	Pool      *pgxpool.Pool
	Table     string // [schema.]table
	KeyColumn string
	Status    string // status column
	Done      string // the status value that means done, e.g. SUCCEEDED

	query string
}

func (p *PGIdempotency) String() string {
	return fmt.Sprintf("%s.%s (%s = %q)", p.Table, p.KeyColumn, p.Status, p.Done)
}

// Prepare checks that the table and columns exist and builds the query.
func (p *PGIdempotency) Prepare(ctx context.Context) error {
	tbl := pgx.Identifier(strings.Split(p.Table, ".")).Sanitize()
	var keyType string
	err := p.Pool.QueryRow(ctx, `SELECT format_type(a.atttypid, a.atttypmod)
		FROM pg_attribute a WHERE a.attrelid = to_regclass($1) AND a.attname = $2 AND NOT a.attisdropped`,
		tbl, p.KeyColumn).Scan(&keyType)
	if err != nil {
		return fmt.Errorf("idempotency table %s has no column %s (or is not visible): %w", p.Table, p.KeyColumn, err)
	}
	var ok bool
	const hasColumn = `SELECT EXISTS (SELECT 1 FROM pg_attribute WHERE attrelid = to_regclass($1) AND attname = $2 AND NOT attisdropped)`
	if err := p.Pool.QueryRow(ctx, hasColumn,
		tbl, p.Status).Scan(&ok); err != nil || !ok {
		return fmt.Errorf("idempotency table %s has no status column %s", p.Table, p.Status)
	}
	p.query = fmt.Sprintf(`SELECT %[1]s::text FROM %[2]s WHERE %[1]s = ANY($1::%[3]s[]) AND %[4]s::text = $2`,
		pgx.Identifier{p.KeyColumn}.Sanitize(), tbl, keyType, pgx.Identifier{p.Status}.Sanitize())
	return nil
}

// Succeeded implements Idempotency.
func (p *PGIdempotency) Succeeded(ctx context.Context, keys []string) (map[string]bool, error) {
	if p.query == "" {
		if err := p.Prepare(ctx); err != nil {
			return nil, err
		}
	}
	rows, err := p.Pool.Query(ctx, p.query, keys, p.Done)
	if err != nil {
		return nil, err
	}
	out := map[string]bool{}
	for rows.Next() {
		var k string
		if err := rows.Scan(&k); err != nil {
			return nil, err
		}
		out[k] = true
	}
	return out, rows.Err()
}
