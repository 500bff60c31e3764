// Package replica reads where a replica of the database that holds an
// idempotency table stands against the primary: whether it is a streaming
// standby, how far its WAL replay is behind the primary's position, whether
// replay is paused, and how long it takes to catch up. An idempotency check
// or a status read routed to a replica that is behind answers "not done"
// for work the primary has done; inspect store and audit cache both compare
// records on the two servers, and both need these figures as evidence.
//
// It only reads: one REPEATABLE READ READ ONLY transaction on the replica,
// and short read-only polls while it measures the catch-up.
package replica

import (
	"context"
	"fmt"
	"strings"
	"time"

	"github.com/dupctl/dupctl/internal/platform/english"
	"github.com/dupctl/dupctl/internal/platform/problem"
	"github.com/jackc/pgx/v5"
)

// DB opens a snapshot on a server (a pgxpool.Pool or pgx.Conn).
type DB interface {
	BeginTx(ctx context.Context, o pgx.TxOptions) (pgx.Tx, error)
}

// Querier reads one row: the primary's transaction, so that its position
// belongs to the snapshot the records are read in.
type Querier interface {
	QueryRow(ctx context.Context, sql string, args ...any) pgx.Row
}

// lagWarn bounds the wait for a replica read behind the primary to replay
// the primary's position: one that takes longer is worth a warning even
// when no record differs yet, since any check routed there misses the
// records written in that window.
const lagWarn = time.Second

// State is where the replica's replay stood against the primary's
// snapshot: the evidence figures of the replica findings.
type State struct {
	// InRecovery is false for a replica that is not a streaming standby
	// (a logical subscriber, or a server of its own): it has no replay
	// figures.
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

// Behind reports whether the replica had not replayed everything the
// primary's snapshot holds. A physical standby that had is the primary as
// of then, so no record can differ; a replica that is no standby may
// always differ.
func (s *State) Behind() bool {
	return !s.InRecovery || s.BehindBytes == nil || *s.BehindBytes > 0
}

// Lagging reports a standby whose replay is paused or did not catch up
// within a second: worth a warning even when no record differs yet.
func (s *State) Lagging() bool {
	return s.InRecovery && s.Behind() && (s.Paused || s.CatchUpMs == nil)
}

// Primary is the primary's side: its WAL position and system identifier,
// read in the snapshot its records are read in.
type Primary struct {
	LSN      string
	SystemID string // "" when the role may not read it
}

// ReadPrimary reads the primary's WAL position inside its snapshot (the
// replay position when the "primary" is itself a standby).
func ReadPrimary(ctx context.Context, q Querier) (Primary, error) {
	var p Primary
	err := q.QueryRow(ctx, `SELECT CASE WHEN pg_is_in_recovery() THEN pg_last_wal_replay_lsn() ELSE pg_current_wal_lsn() END::text,
  `+systemID).Scan(&p.LSN, &p.SystemID)
	if err != nil {
		return Primary{}, fmt.Errorf("read the primary's WAL position: %w", err)
	}
	return p, nil
}

// Snapshot is the replica's side: a read-only snapshot and where its
// replay stood when it was taken.
type Snapshot struct {
	Tx    pgx.Tx
	State *State
}

// Close ends the snapshot.
func (s *Snapshot) Close(ctx context.Context) {
	if s != nil && s.Tx != nil {
		s.Tx.Rollback(context.WithoutCancel(ctx))
	}
}

// Open takes the replica's snapshot and reads its replay position in the
// same statement, so "behind" compares the two snapshots. A standby that
// is behind is then polled, outside the snapshot, for how long it takes to
// catch up. A standby of another cluster is an input error.
func Open(ctx context.Context, db DB, p Primary) (*Snapshot, error) {
	tx, err := db.BeginTx(ctx, pgx.TxOptions{IsoLevel: pgx.RepeatableRead, AccessMode: pgx.ReadOnly})
	if err != nil {
		return nil, Error(fmt.Errorf("begin read-only snapshot: %w", err))
	}
	snap := &Snapshot{Tx: tx}
	if snap.State, err = readState(ctx, tx, p); err != nil {
		snap.Close(ctx)
		return nil, err
	}
	if _, err := tx.Exec(ctx, "SET LOCAL TimeZone = 'UTC'"); err != nil {
		snap.Close(ctx)
		return nil, Error(err)
	}
	if st := snap.State; st.InRecovery && st.Behind() {
		if err := measureCatchUp(ctx, db, p.LSN, st); err != nil {
			snap.Close(ctx)
			return nil, err
		}
	}
	return snap, nil
}

func readState(ctx context.Context, tx pgx.Tx, p Primary) (*State, error) {
	st := &State{PrimaryLSN: p.LSN}
	var version int
	var replicaID string
	var replayAt, now *time.Time
	err := tx.QueryRow(ctx, `SELECT pg_is_in_recovery(), pg_last_wal_receive_lsn()::text, pg_last_wal_replay_lsn()::text,
  GREATEST(pg_wal_lsn_diff($1::pg_lsn, pg_last_wal_replay_lsn()), 0)::bigint, pg_last_xact_replay_timestamp(), clock_timestamp(),
  current_setting('server_version_num')::int, `+systemID, p.LSN).
		Scan(&st.InRecovery, &st.ReceiveLSN, &st.ReplayLSN, &st.BehindBytes, &replayAt, &now, &version, &replicaID)
	if err != nil {
		return nil, Error(fmt.Errorf("read the replica's replay position: %w", err))
	}
	if st.InRecovery && p.SystemID != "" && replicaID != "" && p.SystemID != replicaID {
		return nil, problem.Inputf("Replica", "the replica is a standby of another cluster (system identifier %s, the primary's %s)",
			replicaID, p.SystemID).WithHint("give a standby of the database {DatabaseURL} names")
	}
	if !st.InRecovery {
		st.BehindBytes, st.ReceiveLSN, st.ReplayLSN = nil, nil, nil
		return st, nil
	}
	if err := readPause(ctx, tx, version, st); err != nil {
		return nil, Error(err)
	}
	st.LastReplayed = replayAt
	lag := int64(0)
	if st.Behind() && replayAt != nil && now != nil {
		lag = max(now.Sub(*replayAt).Milliseconds(), 0)
	}
	st.LagMs, st.Lag = &lag, english.Duration(time.Duration(lag)*time.Millisecond)
	return st, nil
}

// measureCatchUp polls the replica, outside its snapshot, until it has
// replayed the primary's position or lagWarn passed: a measured lag, where
// pg_last_xact_replay_timestamp only bounds it.
func measureCatchUp(ctx context.Context, db DB, lsn string, st *State) error {
	start := time.Now()
	for {
		var done bool
		err := pgx.BeginTxFunc(ctx, db, pgx.TxOptions{AccessMode: pgx.ReadOnly}, func(tx pgx.Tx) error {
			return tx.QueryRow(ctx, "SELECT pg_last_wal_replay_lsn() >= $1::pg_lsn", lsn).Scan(&done)
		})
		if err != nil {
			return Error(fmt.Errorf("poll the replica's replay position: %w", err))
		}
		took := time.Since(start)
		if done {
			ms := took.Milliseconds()
			st.CatchUpMs, st.CatchUp = &ms, "replayed the primary's position "+english.Duration(took)+" later"
			return nil
		}
		if took >= lagWarn {
			st.CatchUp = "had not replayed the primary's position " + english.Duration(lagWarn) + " later"
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

func readPause(ctx context.Context, tx pgx.Tx, version int, st *State) error {
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

// Error says which server failed: both are PostgreSQL.
func Error(err error) error {
	return problem.System(fmt.Errorf("replica: %w", err), "check {Replica}")
}

// Evidence is the replay figures, one line each.
func (s *State) Evidence() []string {
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

// Describe is the state in one line, for a command's summary.
func (s *State) Describe() string {
	if !s.InRecovery {
		return "not in recovery (not a streaming standby): no replay figures"
	}
	parts := []string{"streaming standby"}
	if s.ReplayLSN != nil && s.BehindBytes != nil {
		parts = append(parts, fmt.Sprintf("replayed up to %s, %s bytes behind the primary's %s",
			*s.ReplayLSN, english.Number(*s.BehindBytes), s.PrimaryLSN))
	}
	if s.Paused {
		parts = append(parts, "replay paused")
	}
	if s.CatchUp != "" {
		parts = append(parts, s.CatchUp)
	}
	return strings.Join(parts, "; ")
}
