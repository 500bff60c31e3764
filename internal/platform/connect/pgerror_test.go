package connect

import (
	"context"
	"errors"
	"fmt"
	"testing"

	"github.com/dupctl/dupctl/internal/testenv"
)

// TestPGErrorKind provokes each SQLSTATE on the real server and checks
// the kind, wrapped as commands wrap it.
func TestPGErrorKind(t *testing.T) {
	s := testenv.NewPGSchema(t, "pgkind")
	s.Exec(`CREATE TABLE {s}.t (id int)`)
	ctx := context.Background()
	tbl := s.Table("t")

	// The lock: another session holds the table exclusively.
	holder, err := s.Admin.Begin(ctx)
	if err != nil {
		t.Fatal(err)
	}
	defer holder.Rollback(ctx) //nolint:errcheck
	if _, err := holder.Exec(ctx, "LOCK TABLE "+tbl+" IN ACCESS EXCLUSIVE MODE"); err != nil {
		t.Fatal(err)
	}
	for _, c := range []struct {
		name string
		sql  []string // run in one transaction; the last one fails
		want PGKind
	}{
		{"statement timeout", []string{"SET LOCAL statement_timeout = '20ms'", "SELECT pg_sleep(1)"}, PGStatementTimeout},
		{"lock timeout", []string{"SET LOCAL lock_timeout = '20ms'", "SELECT * FROM " + tbl}, PGLockTimeout},
		{"permission", []string{"SET LOCAL ROLE pg_monitor", "SELECT * FROM " + tbl}, PGPermission},
		{"read only", []string{"SET TRANSACTION READ ONLY", "CREATE TABLE " + s.Table("w") + " (x int)"}, PGReadOnly},
		{"syntax", []string{"SELEC 1"}, PGBadQuery},
		{"undefined column", []string{"SELECT nosuch FROM pg_class"}, PGBadQuery},
		{"division by zero", []string{"SELECT 1/0"}, PGBadQuery},
		{"raised", []string{"DO $$ BEGIN RAISE EXCEPTION 'boom' USING ERRCODE = 'P0001'; END $$"}, PGOther},
	} {
		t.Run(c.name, func(t *testing.T) {
			tx, err := s.Admin.Begin(ctx)
			if err != nil {
				t.Fatal(err)
			}
			defer tx.Rollback(ctx) //nolint:errcheck
			for i, q := range c.sql {
				_, err = tx.Exec(ctx, q)
				if i < len(c.sql)-1 && err != nil {
					t.Fatalf("%s: %v", q, err)
				}
			}
			if err == nil {
				t.Fatalf("%s did not fail", c.sql[len(c.sql)-1])
			}
			if got := PGErrorKind(fmt.Errorf("query: %w", err)); got != c.want {
				t.Errorf("kind %d, want %d (%v)", got, c.want, err)
			}
		})
	}
	if got := PGErrorKind(errors.New("dial tcp: refused")); got != PGNone {
		t.Errorf("a client error is kind %d, want PGNone", got)
	}
}
