package testenv

import (
	"context"
	"strings"
	"testing"

	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/pgxpool"
	"github.com/redis/go-redis/v9"
)

// PGSchema is a test's own schema on the real PostgreSQL, dropped when the
// test ends. Admin is a superuser pool for writing fixtures.
type PGSchema struct {
	t     testing.TB
	Name  string
	Admin *pgxpool.Pool
}

// NewPGSchema creates a schema named after prefix for t (skipping or
// failing t as Need does when PostgreSQL is not there).
func NewPGSchema(t testing.TB, prefix string) *PGSchema {
	t.Helper()
	url := Need(t, Postgres)
	admin, err := pgxpool.New(context.Background(), url)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(admin.Close)
	s := &PGSchema{t: t, Name: UniqueName(prefix), Admin: admin}
	s.Exec(`CREATE SCHEMA {s}`)
	t.Cleanup(func() {
		_, _ = admin.Exec(context.Background(), "DROP SCHEMA "+pgx.Identifier{s.Name}.Sanitize()+" CASCADE")
	})
	return s
}

// Exec runs SQL (several statements allowed) with {s} standing for the
// quoted schema.
func (s *PGSchema) Exec(sql string) {
	s.t.Helper()
	sql = strings.ReplaceAll(sql, "{s}", pgx.Identifier{s.Name}.Sanitize())
	if _, err := s.Admin.Exec(context.Background(), sql); err != nil {
		s.t.Fatalf("%s: %v", sql, err)
	}
}

// Table is a table of the schema, quoted as a user would type it.
func (s *PGSchema) Table(name string) string {
	return pgx.Identifier{s.Name, name}.Sanitize()
}

// DeleteKeys removes every Redis key that starts with prefix (a test's
// clean-up), with SCAN.
func DeleteKeys(ctx context.Context, c redis.Cmdable, prefix string) {
	iter := c.Scan(ctx, 0, prefix+"*", 1000).Iterator()
	var keys []string
	for iter.Next(ctx) {
		keys = append(keys, iter.Val())
		if len(keys) == 1000 {
			c.Del(ctx, keys...)
			keys = keys[:0]
		}
	}
	if len(keys) > 0 {
		c.Del(ctx, keys...)
	}
}
