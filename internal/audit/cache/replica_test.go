package cache_test

import (
	"context"
	"slices"
	"strings"
	"testing"
	"time"

	auditcache "github.com/dupctl/dupctl/internal/audit/cache"
	"github.com/dupctl/dupctl/internal/idemtable/replica"
	"github.com/dupctl/dupctl/internal/platform/connect"
	"github.com/dupctl/dupctl/internal/platform/findings"
	"github.com/dupctl/dupctl/internal/testenv"
)

// auditReplica runs the audit with a replica to compare with.
func (fx *fixture) auditReplica(o auditcache.Options, db replica.DB) (*findings.Report, *auditcache.Result) {
	fx.t.Helper()
	res, err := auditcache.Run(context.Background(), auditcache.Deps{Cache: fx.redis, DB: fx.ro, Replica: db}, o)
	if err != nil {
		fx.t.Fatal(err)
	}
	return res.Report(), res
}

// replicaCodes are the replica findings, "severity CODE".
func replicaCodes(rep *findings.Report) []string {
	out := []string{}
	for _, f := range rep.Findings {
		if strings.HasPrefix(f.Code, "CACHE_REPLICA_") {
			out = append(out, f.Severity.String()+" "+f.Code)
		}
	}
	return out
}

func replicaFinding(t *testing.T, rep *findings.Report, code string) findings.Finding {
	t.Helper()
	for _, f := range rep.Findings {
		if f.Code == code {
			return f
		}
	}
	t.Fatalf("no %s in %v", code, rep.Findings)
	return findings.Finding{}
}

// TestReplica audits a cache that agrees with the primary while a real
// streaming standby, its WAL replay paused, still has the old statuses: a
// worker whose status read is routed to the standby redoes the effect.
func TestReplica(t *testing.T) {
	sb := testenv.PGStandby(t)
	fx := newFixture(t)
	standby, err := connect.Postgres(context.Background(), sb.URL, connect.PostgresOptions{ReadOnly: true, MaxConns: 2})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(standby.Close)
	fx.exec(`CREATE TABLE {s}.jobs (idempotency_key text PRIMARY KEY, status text NOT NULL, updated_at timestamptz NOT NULL);
		INSERT INTO {s}.jobs VALUES ('1', 'SUCCEEDED', '2026-12-01T11:00:00Z'), ('2', 'PROCESSING', '2026-12-01T11:01:00Z');
		CREATE TABLE {s}.quiet (idempotency_key text PRIMARY KEY, status text NOT NULL, updated_at timestamptz NOT NULL);
		INSERT INTO {s}.quiet VALUES ('q1', 'SUCCEEDED', '2026-12-01T11:00:00Z')`)
	fx.set(time.Hour, "1", "SUCCEEDED", "2", "PROCESSING")
	sb.CatchUp()
	o := fx.options("jobs")

	// Caught up: no finding, whether it had replayed past the primary's
	// snapshot or the two keys were read alike.
	rep, res := fx.auditReplica(o, standby)
	if got := replicaCodes(rep); len(got) != 0 {
		t.Errorf("caught-up standby: %v", got)
	}
	rc := res.Replica
	if rc == nil || rc.State == nil || !rc.State.InRecovery || rc.State.Paused || rc.Missing+rc.Stale != 0 || rc.Error != "" {
		t.Fatalf("caught-up comparison %+v", rc)
	}
	if !rc.CaughtUp && rc.Compared != 2 {
		t.Errorf("caught-up standby compared %d keys", rc.Compared)
	}

	// Replay paused; then job 2 succeeds, job 3 is done, and the cache
	// follows the primary: the cache audit is clean, the standby is not.
	sb.PauseReplay()
	fx.exec(`UPDATE {s}.jobs SET status = 'SUCCEEDED', updated_at = '2026-12-01T11:05:00Z' WHERE idempotency_key = '2';
		INSERT INTO {s}.jobs VALUES ('3', 'SUCCEEDED', '2026-12-01T11:06:00Z'), ('4', 'PROCESSING', '2026-12-01T11:07:00Z')`)
	fx.set(time.Hour, "2", "SUCCEEDED", "3", "SUCCEEDED", "4", "PROCESSING")
	rep, res = fx.auditReplica(o, standby)
	// The cache agrees with the primary: the one finding is the replica's.
	if got, want := replicaCodes(rep), []string{"error CACHE_REPLICA_STALE"}; !slices.Equal(got, want) || len(rep.Findings) != 1 {
		t.Fatalf("paused standby: %v, want %v (all: %v)", got, want, rep.Findings)
	}
	rc = res.Replica
	st := rc.State
	if !st.Paused || st.BehindBytes == nil || *st.BehindBytes <= 0 || st.CatchUpMs != nil || st.ReplayLSN == nil {
		t.Errorf("paused standby state %+v", st)
	}
	t.Logf("paused standby: %d bytes behind, last replayed commit %s before its clock", *st.BehindBytes, st.Lag)
	if rc.CaughtUp || rc.Compared != 4 || rc.Missing != 2 || rc.Stale != 1 || rc.NotDone != 2 ||
		rc.Keys != "most recently updated by updated_at, up to 10,000" {
		t.Errorf("comparison %+v", rc)
	}
	wantKeys := []auditcache.ReplicaKey{
		{Key: fx.prefix + "2", ID: "2", Primary: "SUCCEEDED", Replica: "PROCESSING", Updated: "2026-12-01T11:05:00Z"},
		{Key: fx.prefix + "3", ID: "3", Primary: "SUCCEEDED", Replica: "no row", Updated: "2026-12-01T11:06:00Z"},
		{Key: fx.prefix + "4", ID: "4", Primary: "PROCESSING", Replica: "no row", Updated: "2026-12-01T11:07:00Z"},
	}
	if !slices.Equal(rc.Samples, wantKeys) {
		t.Errorf("samples %+v\nwant %+v", rc.Samples, wantKeys)
	}
	f := replicaFinding(t, rep, "CACHE_REPLICA_STALE")
	if want := "3 of 4 keys (most recently updated by updated_at, up to 10,000) read differently on the replica: " +
		"2 SUCCEEDED on the primary are not done there, and a worker whose idempotency check or status read " +
		"is routed to the replica runs the side effect again"; f.Message != want {
		t.Errorf("message %q\nwant %q", f.Message, want)
	}
	ev := strings.Join(f.Evidence, "\n")
	for _, want := range []string{"bytes behind the primary's", "(pg_wal_lsn_diff)",
		"WAL replay is paused (pg_wal_replay_pause()); WAL received up to ",
		"read behind the primary, it had not replayed the primary's position 1s later",
		fx.prefix + "2: primary SUCCEEDED (updated_at 2026-12-01T11:05:00Z), replica PROCESSING",
		fx.prefix + "3: primary SUCCEEDED (updated_at 2026-12-01T11:06:00Z), replica no row"} {
		if !strings.Contains(ev, want) {
			t.Errorf("evidence lacks %q:\n%s", want, ev)
		}
	}

	// Only the most recent keys are read there: 2 of them are 4 and 3.
	o2 := o
	o2.ReplicaKeys = 2
	_, res = fx.auditReplica(o2, standby)
	if rc := res.Replica; rc.Compared != 2 || rc.Missing != 2 || rc.Stale != 0 {
		t.Errorf("two most recent keys: %+v", rc)
	}

	// Keys written before the pause: none differs, but a paused replay
	// is a warning.
	quiet := fx.options("quiet")
	if quiet.Pattern, err = auditcache.ParsePattern(fx.Name + ":quiet:{key}"); err != nil {
		t.Fatal(err)
	}
	if err := fx.redis.Set(context.Background(), fx.Name+":quiet:q1", "SUCCEEDED", time.Hour).Err(); err != nil {
		t.Fatal(err)
	}
	rep, _ = fx.auditReplica(quiet, standby)
	if got := replicaCodes(rep); !slices.Equal(got, []string{"warn CACHE_REPLICA_LAG"}) {
		t.Errorf("quiet table on a paused standby: %v", got)
	}

	// Resumed and replayed: the same keys agree again.
	sb.ResumeReplay()
	sb.CatchUp()
	rep, res = fx.auditReplica(o, standby)
	if got := replicaCodes(rep); len(got) != 0 || res.Replica.State.Paused {
		t.Errorf("resumed standby: %v %+v", got, res.Replica.State)
	}
}

// TestReplicaNotStandby: a replica URL that names a server of its own
// (here the primary itself) is compared and said to be no standby; one that
// cannot be read is noted, and the cache audit stands.
func TestReplicaNotStandby(t *testing.T) {
	fx := newFixture(t)
	fx.exec(`CREATE TABLE {s}.jobs (idempotency_key text PRIMARY KEY, status text NOT NULL);
		INSERT INTO {s}.jobs VALUES ('1', 'SUCCEEDED'), ('2', 'SUCCEEDED')`)
	fx.set(time.Hour, "1", "SUCCEEDED", "2", "PROCESSING")
	o := fx.options("jobs")
	o.Recheck = 0

	rep, res := fx.auditReplica(o, fx.ro)
	rc := res.Replica
	if rc.State == nil || rc.State.InRecovery || rc.State.BehindBytes != nil || rc.CaughtUp || rc.Compared != 2 ||
		rc.Missing+rc.Stale != 0 || rc.Keys != "first met, up to 10,000" {
		t.Errorf("a primary as the replica: %+v %+v", rc, rc.State)
	}
	if got := replicaCodes(rep); len(got) != 0 {
		t.Errorf("a primary as the replica: %v", got)
	}
	if !slices.ContainsFunc(res.Notes, func(n string) bool {
		return strings.HasPrefix(n, "the replica ({Replica}) is not a streaming standby (pg_is_in_recovery() is false)")
	}) {
		t.Errorf("notes %q", res.Notes)
	}

	closed, err := connect.Postgres(context.Background(), testenv.Postgres.ConnURL(), connect.PostgresOptions{ReadOnly: true})
	if err != nil {
		t.Fatal(err)
	}
	closed.Close()
	rep, res = fx.auditReplica(o, closed)
	if rc := res.Replica; rc.State != nil || rc.Error == "" || rc.Compared != 0 {
		t.Errorf("an unreadable replica: %+v", rc)
	}
	t.Logf("unreadable replica: %s", res.Replica.Error)
	if !slices.Contains(res.Notes, "the replica ({Replica}) could not be read ("+res.Replica.Error+"): no key was compared on it") {
		t.Errorf("notes %q", res.Notes)
	}
	if got := fx.summary(rep); !slices.Equal(got, []string{"warn CACHE_NOT_DONE_DB_SUCCEEDED 2"}) {
		t.Errorf("the cache audit beside an unreadable replica: %q", got)
	}
	// Not compared is not checked, and fails the run: no pass.
	if slices.Contains(rep.Checks, "CACHE_REPLICA_STALE") || res.Incomplete() == nil {
		t.Errorf("an unreadable replica: checks %v, incomplete %v", rep.Checks, res.Incomplete())
	}
}
