package testenv_test

import (
	"context"
	"testing"
	"time"

	"github.com/dupctl/dupctl/internal/testenv"
)

// TestPGStandby: the standby streams the primary's writes, a paused replay
// holds them back while WAL keeps arriving, and a resumed one catches up.
func TestPGStandby(t *testing.T) {
	start := time.Now()
	sb := testenv.PGStandby(t)
	t.Logf("standby on :%d streaming after %s", sb.Port, time.Since(start).Round(time.Millisecond))
	schema := testenv.NewPGSchema(t, "standby")
	ctx := context.Background()
	count := func() int {
		t.Helper()
		var n int
		err := sb.Standby.QueryRow(ctx, "SELECT count(*) FROM "+schema.Table("t")).Scan(&n)
		if err != nil {
			t.Fatal(err)
		}
		return n
	}
	schema.Exec(`CREATE TABLE {s}.t (k text PRIMARY KEY); INSERT INTO {s}.t VALUES ('a')`)
	sb.CatchUp()
	if n := count(); n != 1 {
		t.Fatalf("standby has %d rows, want 1", n)
	}
	var inRecovery bool
	if err := sb.Standby.QueryRow(ctx, "SELECT pg_is_in_recovery()").Scan(&inRecovery); err != nil || !inRecovery {
		t.Fatalf("the standby is not in recovery: %v %v", inRecovery, err)
	}

	sb.PauseReplay()
	schema.Exec(`INSERT INTO {s}.t VALUES ('b')`)
	var primaryLSN string
	if err := sb.Primary.QueryRow(ctx, "SELECT pg_current_wal_lsn()::text").Scan(&primaryLSN); err != nil {
		t.Fatal(err)
	}
	// The WAL arrives; it is not applied.
	deadline := time.Now().Add(30 * time.Second)
	for {
		var received bool
		if err := sb.Standby.QueryRow(ctx, "SELECT pg_last_wal_receive_lsn() >= $1::pg_lsn", primaryLSN).Scan(&received); err != nil {
			t.Fatal(err)
		}
		if received {
			break
		}
		if time.Now().After(deadline) {
			t.Fatal("the paused standby did not receive the WAL")
		}
		time.Sleep(20 * time.Millisecond)
	}
	var behind int64
	err := sb.Standby.QueryRow(ctx, "SELECT pg_wal_lsn_diff($1::pg_lsn, pg_last_wal_replay_lsn())::bigint", primaryLSN).Scan(&behind)
	if err != nil {
		t.Fatal(err)
	}
	if n := count(); n != 1 || behind <= 0 {
		t.Fatalf("paused standby: %d rows (want 1), %d bytes behind", n, behind)
	}
	t.Logf("paused: received the insert, replay %d bytes behind", behind)

	sb.ResumeReplay()
	sb.CatchUp()
	if n := count(); n != 2 {
		t.Fatalf("resumed standby has %d rows, want 2", n)
	}
}
