package store_test

import (
	"context"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/dupctl/dupctl/internal/idemtable"
	"github.com/dupctl/dupctl/internal/inspect/store"
	"github.com/dupctl/dupctl/internal/platform/connect"
	"github.com/dupctl/dupctl/internal/testenv"
)

// TestReplica compares the primary with a real streaming standby whose
// replay is paused: the records written since are missing or stale there,
// which is what an idempotency check routed to the standby would read.
func TestReplica(t *testing.T) {
	sb := testenv.PGStandby(t)
	fx := newFixture(t)
	ro := connect.PostgresOptions{ReadOnly: true, StatementTimeout: time.Minute, MaxConns: 2}
	replica, err := connect.Postgres(context.Background(), sb.URL, ro)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(replica.Close)
	fx.exec(`CREATE TABLE {s}.jobs (idempotency_key text PRIMARY KEY, status text NOT NULL, updated_at timestamptz NOT NULL);
		INSERT INTO {s}.jobs VALUES ('pay:1', 'SUCCEEDED', '2026-12-01T11:00:00Z'), ('pay:2', 'PROCESSING', '2026-12-01T11:01:00Z');
		CREATE TABLE {s}.quiet (idempotency_key text PRIMARY KEY, status text NOT NULL);
		INSERT INTO {s}.quiet VALUES ('q:1', 'SUCCEEDED')`)
	sb.CatchUp()
	only := []string{store.CheckReplica}

	// Replayed: nothing differs.
	rep, res := fx.inspect(store.Options{Table: fx.table("jobs"), Checks: only, Replica: replica})
	if slices.Contains(codes(rep), "error STORE_REPLICA_STALE") {
		t.Errorf("caught-up standby: %v", rep.Findings)
	}
	if st := res.Replica; st == nil || !st.InRecovery || st.Paused {
		t.Fatalf("replica state %+v", st)
	}
	if rc := res.Tables[0].Replica; rc == nil || rc.Missing+rc.Stale != 0 {
		t.Errorf("caught-up comparison %+v", rc)
	}

	// Replay paused, then a status moves to SUCCEEDED and two records are
	// written, one in a table the standby does not know yet.
	sb.PauseReplay()
	fx.exec(`UPDATE {s}.jobs SET status = 'SUCCEEDED', updated_at = '2026-12-01T11:05:00Z' WHERE idempotency_key = 'pay:2';
		INSERT INTO {s}.jobs VALUES ('pay:3', 'SUCCEEDED', '2026-12-01T11:06:00Z'), ('pay:4', 'PROCESSING', '2026-12-01T11:07:00Z');
		CREATE TABLE {s}.fresh (idempotency_key text PRIMARY KEY, status text NOT NULL);
		INSERT INTO {s}.fresh VALUES ('f:1', 'SUCCEEDED')`)
	start := time.Now()
	rep, res = fx.inspect(store.Options{Table: fx.table("jobs"), Checks: only, Replica: replica})
	t.Logf("compared with the paused standby in %s", time.Since(start).Round(time.Millisecond))
	if got, want := codes(rep), []string{"error STORE_REPLICA_STALE"}; !slices.Equal(got, want) {
		t.Fatalf("paused standby: %v, want %v", got, want)
	}
	st, rc := res.Replica, res.Tables[0].Replica
	if !st.Paused || st.BehindBytes == nil || *st.BehindBytes <= 0 || st.CatchUpMs != nil || st.ReplayLSN == nil {
		t.Errorf("replica state %+v", st)
	}
	t.Logf("paused standby: %d bytes behind, last replayed commit %s before its clock", *st.BehindBytes, st.Lag)
	if rc.Compared != 4 || rc.Missing != 2 || rc.Stale != 1 || rc.NotDone != 2 || rc.Order != "most recent by updated_at" {
		t.Errorf("comparison %+v", rc)
	}
	wantRows := []store.ReplicaRow{{Key: "pay:4", Primary: "PROCESSING", Replica: "missing"},
		{Key: "pay:3", Primary: "SUCCEEDED", Replica: "missing"}, {Key: "pay:2", Primary: "SUCCEEDED", Replica: "PROCESSING"}}
	if !slices.Equal(rc.Samples, wantRows) {
		t.Errorf("samples %+v, want %+v", rc.Samples, wantRows)
	}
	f := finding(t, rep, "STORE_REPLICA_STALE")
	if f.Message != "3 of 4 records (most recent by updated_at) are missing or stale on the replica "+
		"(2 done on the primary and not on the replica): an idempotency check routed to the replica says not done, "+
		"and the side effect runs again" {
		t.Errorf("message %s", f.Message)
	}
	ev := strings.Join(f.Evidence, "\n")
	for _, want := range []string{"bytes behind the primary's", "(pg_wal_lsn_diff)",
		"WAL replay is paused (pg_wal_replay_pause()); WAL received up to ",
		"read behind the primary, it had not replayed the primary's position 1s later",
		`key "pay:2": SUCCEEDED on the primary, PROCESSING on the replica`} {
		if !strings.Contains(ev, want) {
			t.Errorf("evidence lacks %q:\n%s", want, ev)
		}
	}

	// A table created after the pause: every record is missing there.
	rep, res = fx.inspect(store.Options{Table: fx.table("fresh"), Checks: only, Replica: replica})
	if rc := res.Tables[0].Replica; !rc.TableMissing || rc.Missing != 1 || rc.NotDone != 1 {
		t.Errorf("fresh table: %+v", rc)
	}
	if f := finding(t, rep, "STORE_REPLICA_STALE"); !slices.Contains(f.Evidence, "the table does not exist on the replica yet") {
		t.Errorf("fresh table evidence %q", f.Evidence)
	}
	// A table with nothing new: no record differs, but a paused replay is
	// a warning.
	rep, _ = fx.inspect(store.Options{Table: fx.table("quiet"), Checks: only, Replica: replica})
	if got := codes(rep); !slices.Equal(got, []string{"warn STORE_REPLICA_LAG"}) {
		t.Errorf("quiet table on a paused standby: %v", got)
	}

	// Resumed and replayed: the same records agree again.
	sb.ResumeReplay()
	sb.CatchUp()
	rep, res = fx.inspect(store.Options{Table: fx.table("jobs"), Checks: only, Replica: replica})
	if slices.Contains(codes(rep), "error STORE_REPLICA_STALE") || res.Replica.Paused {
		t.Errorf("resumed standby: %v %+v", codes(rep), res.Replica)
	}

	// Not a standby (here the primary itself): compared without replay
	// figures, and said so.
	_, res = fx.inspect(store.Options{Table: fx.table("jobs"), Checks: only, Replica: fx.ro})
	if st, rc := res.Replica, res.Tables[0].Replica; st.InRecovery || st.BehindBytes != nil || rc.Compared != 4 || rc.Missing+rc.Stale != 0 {
		t.Errorf("a primary as the replica: %+v %+v", st, rc)
	}

	// Without a replica, --checks replica says why it did not run.
	_, res = fx.inspect(store.Options{Table: fx.table("jobs"), Checks: only})
	if sk := res.Tables[0].Skipped; len(sk) != 1 || sk[0].Check != "replica" || res.Replica != nil {
		t.Errorf("no replica: %+v", sk)
	}
}

// BenchmarkReplicaCompare: the replica check on a 1,000,000-row table whose
// standby paused replay before 5,000 records moved to SUCCEEDED and 5,000
// were written: the primary's 10,000 most recent records looked up on the
// standby (go test ./internal/inspect/store -run XXX -bench ReplicaCompare).
func BenchmarkReplicaCompare(b *testing.B) {
	sb := testenv.PGStandby(b)
	s := testenv.NewPGSchema(b, "bench")
	ro, err := connect.Postgres(context.Background(), testenv.Postgres.ConnURL(), connect.PostgresOptions{ReadOnly: true})
	if err != nil {
		b.Fatal(err)
	}
	b.Cleanup(ro.Close)
	replica, err := connect.Postgres(context.Background(), sb.URL, connect.PostgresOptions{ReadOnly: true, MaxConns: 2})
	if err != nil {
		b.Fatal(err)
	}
	b.Cleanup(replica.Close)
	s.Exec(`CREATE TABLE {s}.jobs (idempotency_key text PRIMARY KEY, status text NOT NULL, updated_at timestamptz NOT NULL);
		INSERT INTO {s}.jobs SELECT 'pay:' || i, CASE WHEN i > 995000 THEN 'PROCESSING' ELSE 'SUCCEEDED' END,
		  timestamptz '2026-12-01T00:00:00Z' + make_interval(secs => i / 100.0) FROM generate_series(1, 1000000) i;
		CREATE INDEX ON {s}.jobs (updated_at); ANALYZE {s}.jobs`)
	sb.CatchUp()
	sb.PauseReplay()
	s.Exec(`UPDATE {s}.jobs SET status = 'SUCCEEDED', updated_at = updated_at + interval '1 day' WHERE status = 'PROCESSING';
		INSERT INTO {s}.jobs SELECT 'new:' || i, 'SUCCEEDED', timestamptz '2026-12-03T00:00:00Z' + make_interval(secs => i)
		  FROM generate_series(1, 5000) i`)
	o := store.Options{Table: s.Table("jobs"), Checks: []string{store.CheckReplica}, Replica: replica,
		Statuses: idemtable.DefaultStatuses(), StuckAfter: time.Hour, Now: now}
	var rc *store.ReplicaCompare
	b.ResetTimer()
	for range b.N {
		res, err := store.Run(context.Background(), ro, o)
		if err != nil {
			b.Fatal(err)
		}
		rc = res.Tables[0].Replica
	}
	b.StopTimer()
	b.ReportMetric(float64(rc.Missing), "missing")
	b.ReportMetric(float64(rc.Stale), "stale")
	b.ReportMetric(float64(rc.Compared), "compared")
}
