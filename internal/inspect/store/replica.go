package store

import (
	"context"
	"fmt"
	"strings"

	"github.com/dupctl/dupctl/internal/idemtable/replica"
	"github.com/dupctl/dupctl/internal/platform/english"
	"github.com/jackc/pgx/v5"
)

// DefaultReplicaRows is how many of the most recent records the replica
// comparison reads from the primary.
const DefaultReplicaRows = 10_000

// ReplicaState is where the replica's replay stood against the primary's
// snapshot (shared with audit cache).
type ReplicaState = replica.State

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
	db      DB
	primary replica.Primary
	res     *Result

	snap  *replica.Snapshot // nil until opened
	tx    pgx.Tx
	state *ReplicaState
}

// newReplicaSession reads the primary's WAL position inside its snapshot.
func newReplicaSession(ctx context.Context, primary pgx.Tx, db DB, res *Result) (*replicaSession, error) {
	p, err := replica.ReadPrimary(ctx, primary)
	if err != nil {
		return nil, err
	}
	return &replicaSession{db: db, primary: p, res: res}, nil
}

func (s *replicaSession) close(ctx context.Context) { s.snap.Close(ctx) }

// open takes the replica's snapshot and reads its replay position.
func (s *replicaSession) open(ctx context.Context) error {
	if s.snap != nil {
		return nil
	}
	snap, err := replica.Open(ctx, s.db, s.primary)
	if err != nil {
		return err
	}
	s.snap, s.tx, s.state = snap, snap.Tx, snap.State
	s.res.Replica = snap.State
	return nil
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
	if !st.Behind() {
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
		return replica.Error(fmt.Errorf("look up %s: %w", in.t.Name, err))
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
			return replica.Error(fmt.Errorf("read %s: %w", in.t.Name, err))
		}
		var key string
		var status *string
		if _, err := pgx.ForEachRow(q, []any{&key, &status}, func() error {
			seen[key] = append(seen[key], status)
			return nil
		}); err != nil {
			return replica.Error(fmt.Errorf("read %s: %w", in.t.Name, err))
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
	ev := st.Evidence()
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
	if st.Lagging() {
		msg := fmt.Sprintf("the replica %s: an idempotency check routed to it misses every record written in that window", st.CatchUp)
		in.rep.Add(RuleReplicaLag.New(in.subject(), msg, ev...))
	}
}
