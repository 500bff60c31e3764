package cache

import (
	"container/heap"
	"context"
	"errors"
	"fmt"
	"slices"
	"strings"
	"time"

	"github.com/dupctl/dupctl/internal/idemtable"
	"github.com/dupctl/dupctl/internal/idemtable/replica"
	"github.com/dupctl/dupctl/internal/platform/english"
	"github.com/dupctl/dupctl/internal/platform/findings"
	"github.com/dupctl/dupctl/internal/platform/problem"
	"github.com/jackc/pgx/v5"
)

// DefaultReplicaKeys is how many of the keys the audit met are looked up on
// the replica.
const DefaultReplicaKeys = 10_000

// ReplicaCompare is the keys' statuses on the primary against the replica:
// what a worker whose idempotency check or status read is routed to the
// replica would read.
type ReplicaCompare struct {
	// State is where the replica's replay stood against the primary's
	// snapshot (null when it could not be read).
	State *replica.State `json:"state"`
	// CaughtUp: the replica had replayed past the primary's snapshot, so
	// nothing was compared (nothing can differ).
	CaughtUp bool `json:"caught_up"`
	// Keys says which keys were looked up: the most recently updated of
	// those the audit met, or the first met (no time column).
	Keys     string `json:"keys"`
	Compared int64  `json:"compared"` // keys with a row on the primary, looked up on the replica
	// TableMissing: the table does not exist on the replica yet.
	TableMissing bool  `json:"table_missing"`
	Missing      int64 `json:"missing"` // a row on the primary, none on the replica
	Stale        int64 `json:"stale"`   // another status on the replica
	// NotDone counts the keys SUCCEEDED on the primary that the replica
	// shows missing or not done: a worker reading there runs the effect
	// again.
	NotDone int64        `json:"not_done"`
	Samples []ReplicaKey `json:"samples"`
	// Error is why the replica could not be read ("" when it was): the
	// cache audit stands, no key was compared there.
	Error string `json:"error"`
}

// ReplicaKey is one key whose status differs on the replica.
type ReplicaKey struct {
	Key     string `json:"key"` // the cache key
	ID      string `json:"id"`  // the database key
	Primary string `json:"primary"`
	Replica string `json:"replica"` // status, "no row"
	Updated string `json:"updated"` // the primary row's time column, RFC 3339
}

// keyPicker keeps the keys to look up on the replica: the max most recently
// updated on the primary (a lagging replica differs on the newest rows),
// or the first met when the table has no time column.
type keyPicker struct {
	max    int
	byTime bool
	picks  pickHeap
	member map[string]bool
}

type pick struct {
	id      string
	updated int64 // noTime when none
}

// pickHeap is a min-heap by time: the oldest pick leaves first.
type pickHeap []pick

func (h pickHeap) Len() int { return len(h) }
func (h pickHeap) Less(i, j int) bool {
	if h[i].updated != h[j].updated {
		return h[i].updated < h[j].updated
	}
	return h[i].id > h[j].id
}
func (h pickHeap) Swap(i, j int) { h[i], h[j] = h[j], h[i] }
func (h *pickHeap) Push(x any)   { *h = append(*h, x.(pick)) }
func (h *pickHeap) Pop() any {
	old := *h
	x := old[len(old)-1]
	*h = old[:len(old)-1]
	return x
}

// offer considers one key with a row on the primary. SCAN may return a
// key twice: it is kept once.
func (p *keyPicker) offer(id string, updated int64) {
	if p == nil || p.member[id] {
		return
	}
	if len(p.picks) < p.max {
		p.member[id] = true
		heap.Push(&p.picks, pick{id, updated})
		return
	}
	if !p.byTime || updated <= p.picks[0].updated {
		return
	}
	delete(p.member, p.picks[0].id)
	p.picks[0] = pick{id, updated}
	p.member[id] = true
	heap.Fix(&p.picks, 0)
}

// ids are the picked keys, in key order.
func (p *keyPicker) ids() []string {
	out := make([]string, len(p.picks))
	for i, k := range p.picks {
		out[i] = k.id
	}
	slices.Sort(out)
	return out
}

func (a *auditor) newPicker() *keyPicker {
	n := a.o.ReplicaKeys
	if n <= 0 {
		n = DefaultReplicaKeys
	}
	return &keyPicker{max: n, byTime: a.at != nil, member: map[string]bool{}}
}

// compareReplica reads the picked keys in a snapshot of the primary and in
// one of the replica taken right after, and counts the keys whose status
// differs. A replica that cannot be read leaves a note: the cache audit
// stands. Only a standby of another cluster is an error.
func (a *auditor) compareReplica(ctx context.Context, primary DB, rdb replica.DB) error {
	rc := &ReplicaCompare{Samples: []ReplicaKey{}, Keys: a.pickedKeys()}
	a.res.Replica = rc
	ptx, err := primary.BeginTx(ctx, pgx.TxOptions{IsoLevel: pgx.RepeatableRead, AccessMode: pgx.ReadOnly})
	if err != nil {
		return fmt.Errorf("begin a snapshot of the primary: %w", err)
	}
	defer ptx.Rollback(context.WithoutCancel(ctx))
	p, err := replica.ReadPrimary(ctx, ptx)
	if err != nil {
		return err
	}
	snap, err := replica.Open(ctx, rdb, p)
	if err != nil {
		return a.unreadable(rc, err)
	}
	defer snap.Close(ctx)
	rc.State = snap.State
	if !rc.State.InRecovery {
		a.res.Notes = append(a.res.Notes, "the replica ({Replica}) is not a streaming standby (pg_is_in_recovery() is false): "+
			"no replay figures; its keys were read after the primary's, so a status may also differ because it changed in between")
	}
	if !rc.State.Behind() {
		rc.CaughtUp = true
		return nil
	}
	ids := a.picker.ids()
	for start := 0; start < len(ids); start += a.o.Batch {
		if err := a.compareBatch(ctx, ptx, snap.Tx, ids[start:min(start+a.o.Batch, len(ids))], rc); err != nil {
			return a.unreadable(rc, err)
		}
	}
	slices.SortFunc(rc.Samples, func(x, y ReplicaKey) int { return strings.Compare(x.Key, y.Key) })
	rc.Samples = rc.Samples[:min(len(rc.Samples), a.o.Samples)]
	return nil
}

// unreadable notes a replica that could not be read, and lets the audit
// go on; a standby of another cluster (bad input) stops it.
func (a *auditor) unreadable(rc *ReplicaCompare, err error) error {
	var in *problem.Input
	if errors.As(err, &in) || errors.Is(err, context.Canceled) {
		return err
	}
	var sys *problem.Unavailable
	if errors.As(err, &sys) {
		err = sys.Err
	}
	rc.Error = strings.TrimPrefix(err.Error(), "replica: ")
	rc.Compared, rc.Missing, rc.Stale, rc.NotDone, rc.Samples = 0, 0, 0, 0, []ReplicaKey{}
	a.res.Notes = append(a.res.Notes, "the replica ({Replica}) could not be read ("+rc.Error+"): no key was compared on it")
	return nil
}

// Incomplete is the error of an audit asked to compare a replica that it
// could not read (nil otherwise): the cache findings stand, and the run
// fails whatever --fail-on says - a comparison that did not happen is no
// pass.
func (r *Result) Incomplete() error {
	if r.Replica == nil || r.Replica.Error == "" {
		return nil
	}
	return problem.System(fmt.Errorf("the replica ({Replica}) could not be read: %s", r.Replica.Error),
		"the cache findings stand, no key was compared on the replica; check that it accepts this user and is reachable, then run it again")
}

// pickedKeys says which keys the comparison reads.
func (a *auditor) pickedKeys() string {
	n := english.Number(int64(a.picker.max))
	if a.at != nil {
		return "most recently updated by " + idemtable.DisplayIdent(a.at.Name) + ", up to " + n
	}
	return "first met, up to " + n
}

// compareBatch reads one batch of keys on both sides.
func (a *auditor) compareBatch(ctx context.Context, ptx, rtx pgx.Tx, ids []string, rc *ReplicaCompare) error {
	onPrimary := make(map[string]dbRow, len(ids))
	r, err := ptx.Query(ctx, a.selectRows(a.key.AnyOf(1)), ids)
	if err != nil {
		return fmt.Errorf("look up %d keys in %s on the primary: %w", len(ids), a.table.Name, err)
	}
	if err := a.collect(r, onPrimary); err != nil {
		return err
	}
	if rc.Compared == 0 {
		var exists bool
		if err := rtx.QueryRow(ctx, "SELECT to_regclass($1) IS NOT NULL", a.table.Name.SQL()).Scan(&exists); err != nil {
			return fmt.Errorf("look up %s: %w", a.table.Name, err)
		}
		rc.TableMissing = !exists
	}
	onReplica := make(map[string]dbRow, len(ids))
	if !rc.TableMissing {
		r, err := rtx.Query(ctx, a.selectRows(a.key.AnyOf(1)), ids)
		if err != nil {
			return fmt.Errorf("look up %d keys in %s: %w", len(ids), a.table.Name, err)
		}
		if err := a.collect(r, onReplica); err != nil {
			return err
		}
	}
	for _, id := range ids {
		if row, ok := onPrimary[id]; ok {
			there, found := onReplica[id]
			a.judgeReplicaKey(id, row, there, found, rc)
		}
	}
	return nil
}

// judgeReplicaKey counts one key found on the primary against the
// replica's row for it.
func (a *auditor) judgeReplicaKey(id string, row, there dbRow, found bool, rc *ReplicaCompare) {
	rc.Compared++
	k := ReplicaKey{Key: a.o.Pattern.Key(id), ID: id, Primary: a.statusOr(row.status), Replica: "no row"}
	switch {
	case !found:
		rc.Missing++
	case there.status == row.status:
		return
	default:
		rc.Stale++
		k.Replica = a.statusOr(there.status)
	}
	if a.succeeded(row) && (!found || !a.succeeded(there)) {
		rc.NotDone++
	}
	if row.updated != noTime {
		k.Updated = time.Unix(0, row.updated).UTC().Format(time.RFC3339)
	}
	rc.Samples = append(rc.Samples, k)
}

// statusOr is a status as shown: NULL for a NULL status.
func (a *auditor) statusOr(i int32) string {
	if s, ok := a.statusText(i); ok {
		return s
	}
	return "NULL"
}

// replicaFindings: keys that differ are the finding (an error when one is
// done on the primary only); a lagging replica on which no key differs
// yet is a warning.
func (a *auditor) replicaFindings(rep *findings.Report) {
	rc := a.res.Replica
	if rc == nil || rc.State == nil || rc.Error != "" {
		return // not compared: not checked (Incomplete fails the run)
	}
	rep.Check(RuleReplicaStale.Code, RuleReplicaLag.Code)
	ev := rc.State.Evidence()
	n := rc.Missing + rc.Stale
	if n == 0 {
		if rc.State.Lagging() {
			msg := fmt.Sprintf("the replica %s: a status read routed to it misses every status written in that window", rc.State.CatchUp)
			rep.Add(RuleReplicaLag.New(a.res.Table, msg, ev...))
		}
		return
	}
	for _, k := range rc.Samples {
		line := fmt.Sprintf("%s: primary %s", k.Key, k.Primary)
		if k.Updated != "" {
			line += " (" + idemtable.DisplayIdent(a.res.TimeColumn) + " " + k.Updated + ")"
		}
		ev = append(ev, line+", replica "+k.Replica)
	}
	if rc.TableMissing {
		ev = append(ev, "the table does not exist on the replica yet")
	}
	msg := fmt.Sprintf("%d of %d %s (%s) read differently on the replica: ", n, rc.Compared,
		english.Plural(rc.Compared, "key", "keys"), rc.Keys)
	f := RuleReplicaStale.New(a.res.Table, msg, ev...)
	if rc.NotDone > 0 {
		f.Message += fmt.Sprintf("%d SUCCEEDED on the primary %s not done there, and a worker whose idempotency check "+
			"or status read is routed to the replica runs the side effect again", rc.NotDone, english.Plural(rc.NotDone, "is", "are"))
	} else {
		f.Message += "none is SUCCEEDED on the primary only, but a status read routed to the replica is out of date"
		f.Severity = findings.Warn
	}
	rep.Add(f)
}
