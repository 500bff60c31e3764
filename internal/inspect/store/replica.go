package store

import (
	"context"
	"fmt"
	"strings"
	"time"

	"github.com/dupctl/dupctl/internal/platform/english"
	"github.com/dupctl/dupctl/internal/platform/problem"
	"github.com/jackc/pgx/v5"
)

// DefaultReplicaRows is how many of the most recent records the replica
// comparison reads from the primary.
const DefaultReplicaRows = 10_000

// replicaLagWarn bounds the wait for a replica read behind the primary to
// replay the primary's position: one that takes longer is worth a warning
// even when no record differs yet, since any check routed there misses the
// records written in that window.
const replicaLagWarn = time.Second

// ReplicaState is where the replica's replay stood against the primary's
// snapshot: the evidence figures of the replica findings.
type ReplicaState struct {
	// InRecovery is false for a replica that is not a streaming standby
	// (a logical subscriber): it has no replay figures.
	InRecovery bool `json:"in_recovery"`
	// PrimaryLSN is the primary's WAL position when its snapshot was taken
	// (pg_current_wal_lsn()).
	PrimaryLSN string  `json:"primary_lsn"`
	ReceiveLSN *string `json:"receive_lsn"` // pg_last_wal_receive_lsn()
	ReplayLSN  *string `json:"replay_lsn"`  // pg_last_wal_replay_lsn()
	// BehindBytes is pg_wal_lsn_diff(primary_lsn, replay_lsn), 0 when the
	// replica had replayed past the primary's snapshot.
	BehindBytes *int64 `json:"behind_bytes"`
	Paused      bool   `json:"replay_paused"`
	// LastReplayed is the commit time of the last replayed transaction
	// (pg_last_xact_replay_timestamp()).
	LastReplayed *time.Time `json:"last_replayed_commit"`
	// LagMs is the replica's clock minus LastReplayed while it is behind,
	// 0 when caught up, null when not a standby. On a primary that was
	// idle before its last write it overstates the lag: CatchUp measures.
	LagMs *int64 `json:"lag_ms"`
	Lag   string `json:"lag"`
	// CatchUpMs is how long the replica, read behind, took to replay the
	// primary's position, polled up to 1s; null when it did not within
	// that (or was not behind). CatchUp says it in words.
	CatchUpMs *int64 `json:"catch_up_ms"`
	CatchUp   string `json:"catch_up"`
}

// behind reports whether the replica had not replayed everything the
// primary's snapshot holds. A physical standby that had is the primary as
// of then, so no record can differ.
func (s *ReplicaState) behind() bool {
	return !s.InRecovery || s.BehindBytes == nil || *s.BehindBytes > 0
}

// ReplicaCompare is one table's records on the primary against the
// replica.
type ReplicaCompare struct {
	// CaughtUp: the replica had replayed past the primary's snapshot, so
	// nothing was compared.
	CaughtUp bool   `json:"caught_up"`
	Compared int64  `json:"compared"` // primary records looked up on the replica
	Order    string `json:"order"`    // which records: "most recent by updated_at", or "in table order" (no time column)
	// TableMissing: the table does not exist on the replica yet.
	TableMissing bool  `json:"table_missing"`
	Missing      int64 `json:"missing"` // on the primary, not on the replica
	Stale        int64 `json:"stale"`   // on both, with another status on the replica
	// NotDone counts the records done (SUCCEEDED) on the primary that the
	// replica shows missing or not done: a check there runs the effect
	// again. Without a status column, every missing record.
	NotDone int64        `json:"not_done"`
	Samples []ReplicaRow `json:"samples"`
}

// ReplicaRow is one record that differs.
type ReplicaRow struct {
	Key     string `json:"key"`
	Primary string `json:"primary"` // status on the primary, or "present"
	Replica string `json:"replica"` // status on the replica, or "missing"
}

// replicaSession is the replica's side of a run: the primary's WAL
// position, read when its snapshot was taken, and the replica's snapshot,
// opened at the first table compared (a snapshot held open on a hot
// standby while the primary is scanned invites a recovery conflict).
type replicaSession struct {
	db         DB
	primaryLSN string
	primaryID  string
	res        *Result

	tx    pgx.Tx // nil until opened
	state *ReplicaState
}

// newReplicaSession reads the primary's WAL position inside its snapshot.
func newReplicaSession(ctx context.Context, primary pgx.Tx, replica DB, res *Result) (*replicaSession, error) {
	s := &replicaSession{db: replica, res: res}
	err := primary.QueryRow(ctx, `SELECT CASE WHEN pg_is_in_recovery() THEN pg_last_wal_replay_lsn() ELSE pg_current_wal_lsn() END::text,
  `+systemID).Scan(&s.primaryLSN, &s.primaryID)
	if err != nil {
		return nil, fmt.Errorf("read the primary's WAL position: %w", err)
	}
	return s, nil
}

func (s *replicaSession) close(ctx context.Context) {
	if s.tx != nil {
		s.tx.Rollback(context.WithoutCancel(ctx))
	}
}

// open takes the replica's snapshot and reads its replay position in the
// same statement, so "behind" compares the two snapshots.
func (s *replicaSession) open(ctx context.Context) error {
	if s.tx != nil {
		return nil
	}
	tx, err := s.db.BeginTx(ctx, pgx.TxOptions{IsoLevel: pgx.RepeatableRead, AccessMode: pgx.ReadOnly})
	if err != nil {
		return replicaError(fmt.Errorf("begin read-only snapshot: %w", err))
	}
	s.tx = tx
	st := &ReplicaState{PrimaryLSN: s.primaryLSN}
	var version int
	var replicaID string
	var replayAt, now *time.Time
	err = tx.QueryRow(ctx, `SELECT pg_is_in_recovery(), pg_last_wal_receive_lsn()::text, pg_last_wal_replay_lsn()::text,
  GREATEST(pg_wal_lsn_diff($1::pg_lsn, pg_last_wal_replay_lsn()), 0)::bigint, pg_last_xact_replay_timestamp(), clock_timestamp(),
  current_setting('server_version_num')::int, `+systemID, s.primaryLSN).
		Scan(&st.InRecovery, &st.ReceiveLSN, &st.ReplayLSN, &st.BehindBytes, &replayAt, &now, &version, &replicaID)
	if err != nil {
		return replicaError(fmt.Errorf("read the replica's replay position: %w", err))
	}
	if st.InRecovery && s.primaryID != "" && replicaID != "" && s.primaryID != replicaID {
		return problem.Inputf("Replica", "the replica is a standby of another cluster (system identifier %s, the primary's %s)",
			replicaID, s.primaryID).WithHint("give a standby of the database {DatabaseURL} names")
	}
	if st.InRecovery {
		if err := readPause(ctx, tx, version, st); err != nil {
			return replicaError(err)
		}
		st.LastReplayed = replayAt
		lag := int64(0)
		if st.behind() && replayAt != nil && now != nil {
			lag = max(now.Sub(*replayAt).Milliseconds(), 0)
		}
		st.LagMs, st.Lag = &lag, english.Duration(time.Duration(lag)*time.Millisecond)
	} else {
		st.BehindBytes, st.ReceiveLSN, st.ReplayLSN = nil, nil, nil
	}
	if _, err := tx.Exec(ctx, "SET LOCAL TimeZone = 'UTC'"); err != nil {
		return replicaError(err)
	}
	if st.InRecovery && st.behind() {
		if err := s.measureCatchUp(ctx, st); err != nil {
			return err
		}
	}
	s.state, s.res.Replica = st, st
	return nil
}

// measureCatchUp polls the replica, outside its snapshot, until it has
// replayed the primary's position or replicaLagWarn passed: a measured
// lag, where pg_last_xact_replay_timestamp only bounds it.
func (s *replicaSession) measureCatchUp(ctx context.Context, st *ReplicaState) error {
	start := time.Now()
	for {
		var done bool
		err := pgx.BeginTxFunc(ctx, s.db, pgx.TxOptions{AccessMode: pgx.ReadOnly}, func(tx pgx.Tx) error {
			return tx.QueryRow(ctx, "SELECT pg_last_wal_replay_lsn() >= $1::pg_lsn", s.primaryLSN).Scan(&done)
		})
		if err != nil {
			return replicaError(fmt.Errorf("poll the replica's replay position: %w", err))
		}
		took := time.Since(start)
		if done {
			ms := took.Milliseconds()
			st.CatchUpMs, st.CatchUp = &ms, "replayed the primary's position "+english.Duration(took)+" later"
			return nil
		}
		if took >= replicaLagWarn {
			st.CatchUp = "had not replayed the primary's position " + english.Duration(replicaLagWarn) + " later"
			return nil
		}
		select {
		case <-ctx.Done():
			return ctx.Err()
		case <-time.After(10 * time.Millisecond):
		}
	}
}

// systemID is the cluster's system identifier where the role may read it
// (pg_control_system), else "": a standby shares its primary's.
const systemID = `CASE WHEN pg_catalog.has_function_privilege('pg_catalog.pg_control_system()', 'EXECUTE')
  THEN (SELECT system_identifier::text FROM pg_catalog.pg_control_system()) ELSE '' END`

func readPause(ctx context.Context, tx pgx.Tx, version int, st *ReplicaState) error {
	// Before PostgreSQL 14 a requested pause and one in effect read alike.
	q := "SELECT pg_is_wal_replay_paused()"
	if version >= 140000 {
		q = "SELECT pg_get_wal_replay_pause_state() <> 'not paused'"
	}
	if err := tx.QueryRow(ctx, q).Scan(&st.Paused); err != nil {
		return fmt.Errorf("read the replica's replay state: %w", err)
	}
	return nil
}

// replicaError says which server failed: both are PostgreSQL.
func replicaError(err error) error {
	return problem.System(fmt.Errorf("replica: %w", err), "check {Replica}")
}

// replicaRow is one primary record to look up on the replica.
type replicaRow struct {
	parts  []string
	key    string
	status *string
}

// replicaCompare looks the primary's most recent records up on the
// replica: missing there, or with another status, is what an idempotency
// check routed to the replica would see.
func (in *inspector) replicaCompare(ctx context.Context) error {
	if in.replica == nil {
		if in.o.Checks != nil {
			in.skip(CheckReplica, "no {ReplicaURL}")
		}
		return nil
	}
	if err := in.replica.open(ctx); err != nil {
		return err
	}
	in.rep.Check(RuleReplicaStale.Code, RuleReplicaLag.Code)
	rc := &ReplicaCompare{Samples: []ReplicaRow{}, Order: "in table order"}
	in.res.Replica = rc
	st := in.replica.state
	if !st.behind() {
		rc.CaughtUp = true
		return nil
	}
	rows, err := in.recentRows(ctx, rc)
	if err != nil {
		return err
	}
	if err := in.lookupOnReplica(ctx, rows, rc); err != nil {
		return err
	}
	in.replicaFindings(rc)
	return nil
}

// recentRows reads the primary's most recent records (by the time
// columns), up to ReplicaRows: where a lagging replica differs.
func (in *inspector) recentRows(ctx context.Context, rc *ReplicaCompare) ([]replicaRow, error) {
	statusSel, order := "NULL::text", ""
	if in.status != nil {
		statusSel = in.status.SQL() + "::text"
	}
	if len(in.times) > 0 {
		order = " ORDER BY " + coalesceExpr(in.times) + " DESC NULLS LAST"
		rc.Order = "most recent by " + strings.Join(in.res.TimeColumns, ", ")
	}
	sql := "SELECT " + eachText(in.key) + ", " + textExpr(in.key) + ", " + statusSel + " FROM " + in.t.Name.SQL() +
		" WHERE " + allNotNull(in.key) + order + " LIMIT $1"
	q, err := in.q.Query(ctx, sql, in.o.ReplicaRows)
	if err != nil {
		return nil, fmt.Errorf("read recent records of %s: %w", in.t.Name, err)
	}
	parts := make([]string, len(in.key))
	var r replicaRow
	dest := make([]any, 0, len(in.key)+2)
	for i := range parts {
		dest = append(dest, &parts[i])
	}
	dest = append(dest, &r.key, &r.status)
	var out []replicaRow
	_, err = pgx.ForEachRow(q, dest, func() error {
		out = append(out, replicaRow{parts: append([]string(nil), parts...), key: r.key, status: r.status})
		return nil
	})
	if err != nil {
		return nil, fmt.Errorf("read recent records of %s: %w", in.t.Name, err)
	}
	rc.Compared = int64(len(out))
	return out, nil
}

// lookupOnReplica reads the same keys on the replica, in its snapshot, and
// counts what differs.
func (in *inspector) lookupOnReplica(ctx context.Context, rows []replicaRow, rc *ReplicaCompare) error {
	if len(rows) == 0 {
		return nil
	}
	tx := in.replica.tx
	var exists bool
	if err := tx.QueryRow(ctx, "SELECT to_regclass($1) IS NOT NULL", in.t.Name.SQL()).Scan(&exists); err != nil {
		return replicaError(fmt.Errorf("look up %s: %w", in.t.Name, err))
	}
	seen := map[string][]*string{}
	if exists {
		statusSel := "NULL::text"
		if in.status != nil {
			statusSel = in.status.SQL() + "::text"
		}
		groups := make([]Group, len(rows))
		for i, r := range rows {
			groups[i] = Group{parts: r.parts}
		}
		sql := "SELECT " + textExpr(in.key) + ", " + statusSel + " FROM " + in.t.Name.SQL() + " WHERE " + keyIn(in.key, 1)
		q, err := tx.Query(ctx, sql, keyArgs(groups, len(in.key))...)
		if err != nil {
			return replicaError(fmt.Errorf("read %s: %w", in.t.Name, err))
		}
		var key string
		var status *string
		if _, err := pgx.ForEachRow(q, []any{&key, &status}, func() error {
			seen[key] = append(seen[key], status)
			return nil
		}); err != nil {
			return replicaError(fmt.Errorf("read %s: %w", in.t.Name, err))
		}
	}
	rc.TableMissing = !exists
	for _, r := range rows {
		in.judgeReplicaRow(r, seen[r.key], rc)
	}
	return nil
}

// judgeReplicaRow counts one primary record against the replica's rows
// for its key.
func (in *inspector) judgeReplicaRow(r replicaRow, there []*string, rc *ReplicaCompare) {
	done := func(s *string) bool {
		if in.status == nil {
			return true
		}
		if s == nil {
			return false
		}
		role, ok := in.o.Statuses.RoleOf(*s)
		return ok && role == Succeeded
	}
	show := func(s *string) string {
		switch {
		case in.status == nil:
			return "present"
		case s == nil:
			return "NULL"
		}
		return *s
	}
	row := ReplicaRow{Key: r.key, Primary: show(r.status), Replica: "missing"}
	switch {
	case len(there) == 0:
		rc.Missing++
	default:
		for _, s := range there {
			if show(s) == row.Primary {
				return
			}
		}
		rc.Stale++
		row.Replica = show(there[0])
	}
	if done(r.status) && (len(there) == 0 || !done(there[0])) {
		rc.NotDone++
	}
	if len(rc.Samples) < in.o.Samples {
		rc.Samples = append(rc.Samples, row)
	}
}

// replicaFindings: records that differ are the error; a replica far
// behind that holds no differing record of this table yet is a warning.
func (in *inspector) replicaFindings(rc *ReplicaCompare) {
	st := in.replica.state
	ev := st.evidence()
	if n := rc.Missing + rc.Stale; n > 0 {
		for _, s := range rc.Samples {
			ev = append(ev, fmt.Sprintf("key %s: %s on the primary, %s on the replica", quoteKey(s.Key), s.Primary, s.Replica))
		}
		if rc.TableMissing {
			ev = append(ev, "the table does not exist on the replica yet")
		}
		msg := fmt.Sprintf("%d of %d records (%s) %s missing or stale on the replica (%d done on the primary and not on the replica): "+
			"an idempotency check routed to the replica says not done, and the side effect runs again",
			n, rc.Compared, rc.Order, english.Plural(n, "is", "are"), rc.NotDone)
		in.rep.Add(RuleReplicaStale.New(in.subject(), msg, ev...))
		return
	}
	if st.InRecovery && (st.Paused || st.CatchUpMs == nil) {
		msg := fmt.Sprintf("the replica %s: an idempotency check routed to it misses every record written in that window", st.CatchUp)
		in.rep.Add(RuleReplicaLag.New(in.subject(), msg, ev...))
	}
}

// evidence is the replay figures, one line each.
func (s *ReplicaState) evidence() []string {
	if !s.InRecovery {
		return []string{"the replica is not in recovery (a logical subscriber or a server of its own): no replay figures; " +
			"it was read after the primary, so a record may also differ because it changed in between"}
	}
	var ev []string
	if s.ReplayLSN != nil && s.BehindBytes != nil {
		ev = append(ev, fmt.Sprintf("replayed WAL up to %s, %s bytes behind the primary's %s (pg_wal_lsn_diff)",
			*s.ReplayLSN, english.Number(*s.BehindBytes), s.PrimaryLSN))
	}
	if s.Paused {
		recv := ""
		if s.ReceiveLSN != nil {
			recv = "; WAL received up to " + *s.ReceiveLSN
		}
		ev = append(ev, "WAL replay is paused (pg_wal_replay_pause())"+recv)
	}
	if s.CatchUp != "" {
		ev = append(ev, "read behind the primary, it "+s.CatchUp)
	}
	if s.LastReplayed != nil {
		ev = append(ev, fmt.Sprintf("last replayed commit %s, %s before the replica's clock (pg_last_xact_replay_timestamp)",
			s.LastReplayed.UTC().Format(time.RFC3339Nano), s.Lag))
	}
	return ev
}
