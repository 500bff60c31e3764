package chaos

import (
	"context"
	"fmt"
	"sync"
	"time"

	"github.com/dupctl/dupctl/internal/idemtable/replica"
	"github.com/dupctl/dupctl/internal/platform/problem"
	"github.com/dupctl/dupctl/internal/sim/chaos/pgproxy"
)

// replica-lag: the workers read "already done?" through {replica}, a
// proxy in front of a real streaming standby. dupctl pauses the standby's
// WAL replay as the victim's first write goes to the primary, so the
// commit that follows is received by the standby but not applied; a second
// copy of the message is published when the write commits, and a worker
// that trusts what the replica answers runs the effect again. Pausing
// replay is the one change dupctl makes to the standby, and only for this
// scenario, on the standby it was given for it: it resumes replay once the
// second copy was handled, after the lag at the latest, and when the run
// ends whatever happened.

// replicaState is where the run stands with the standby's replay; the
// fields are under run.mu, the pause and resume themselves under its own
// mu.
type replicaState struct {
	tried    bool // the pause was asked for (once a run)
	paused   bool
	pausedAt time.Time
	pauseSeq int
	resumed  time.Time
	// reads are the replica reads awaiting their CommandComplete: the
	// event to complete with the answer, and the delivery's check.
	reads map[*pgproxy.Statement]replicaRead
	// mu serialises pausing and resuming the replay (round trips to the
	// standby, without run.mu).
	mu sync.Mutex
}

type replicaRead struct {
	seq   int
	deliv *delivery
	check int // index in deliv.checks, -1 when not a check
}

// checkStandby holds the replica replica-lag pauses to what it must be: a
// streaming standby of the primary (the same system identifier), whose
// replay is not paused already (dupctl would resume what someone else
// paused), and which dupctl's role may pause.
func checkStandby(ctx context.Context, d Deps) error {
	p, err := replica.ReadPrimary(ctx, d.Postgres)
	if err != nil {
		return problem.System(err, "")
	}
	var recovery, paused, may bool
	var id string
	err = d.Replica.QueryRow(ctx, `SELECT pg_is_in_recovery(),
  CASE WHEN pg_is_in_recovery() THEN pg_is_wal_replay_paused() ELSE false END,
  pg_catalog.has_function_privilege('pg_catalog.pg_wal_replay_pause()', 'EXECUTE')
    AND pg_catalog.has_function_privilege('pg_catalog.pg_wal_replay_resume()', 'EXECUTE'),
  CASE WHEN pg_catalog.has_function_privilege('pg_catalog.pg_control_system()', 'EXECUTE')
    THEN (SELECT system_identifier::text FROM pg_catalog.pg_control_system()) ELSE '' END`).Scan(&recovery, &paused, &may, &id)
	switch {
	case err != nil:
		return replica.Error(err)
	case !recovery:
		return problem.Inputf("ReplicaURL", "the replica is not in recovery (not a streaming standby): it has no replay to pause").
			WithHint("give a streaming standby of {DatabaseURL}")
	case p.SystemID != "" && id != "" && p.SystemID != id:
		return problem.Inputf("ReplicaURL", "the replica is a standby of another cluster (system identifier %s, the primary's %s)",
			id, p.SystemID).WithHint("give a standby of the database {DatabaseURL} names")
	case paused:
		return problem.Inputf("ReplicaURL", "WAL replay on the replica is already paused: dupctl pauses and resumes it "+
			"itself, and would resume a pause it did not make").WithHint("resume it (SELECT pg_wal_replay_resume()) or give another standby")
	case !may:
		return problem.Inputf("ReplicaURL", "the replica's user may not pause WAL replay (pg_wal_replay_pause)").
			WithHint("connect as a superuser, or GRANT EXECUTE ON FUNCTION pg_wal_replay_pause(), pg_wal_replay_resume() to the role")
	}
	return nil
}

// pauseReplica pauses the standby's replay before the victim's first
// write is forwarded, and waits until the pause is in effect: the write's
// commit then reaches the standby and is not applied. Once a run.
func (r *run) pauseReplica(key string) {
	r.rep.mu.Lock()
	defer r.rep.mu.Unlock()
	r.mu.Lock()
	if r.rep.tried || r.fired != nil || r.stopping {
		r.mu.Unlock()
		return
	}
	r.rep.tried = true
	r.mu.Unlock()
	ctx, cancel := context.WithTimeout(r.ctx, 10*time.Second)
	defer cancel()
	err := waitReplay(ctx, r.d, "SELECT pg_wal_replay_pause()", true)
	r.mu.Lock()
	defer r.mu.Unlock()
	if err != nil {
		if r.failure == nil {
			r.failure = replica.Error(fmt.Errorf("pause WAL replay: %w", err))
		}
		return
	}
	r.rep.paused, r.rep.pausedAt = true, time.Now()
	r.rep.pauseSeq = r.add("dupctl", "replica-pause", key, fmt.Sprintf("the worker sends its first write for %s; dupctl "+
		"pauses WAL replay on the replica (pg_wal_replay_pause) before forwarding it, for %s at most", key, r.o.ReplicaLag)).Seq
	r.timers = append(r.timers, time.AfterFunc(r.o.ReplicaLag, func() {
		r.resumeReplica(fmt.Sprintf("after %s, the lag", r.o.ReplicaLag))
	}))
}

// resumeReplica resumes the standby's replay if this run paused it; why
// says what ended the lag. An error fails the run: a standby left paused
// must be said.
func (r *run) resumeReplica(why string) error {
	r.rep.mu.Lock()
	defer r.rep.mu.Unlock()
	r.mu.Lock()
	paused := r.rep.paused
	r.mu.Unlock()
	if !paused {
		return nil
	}
	// Not the run's context: a cancelled run resumes replay all the same.
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	err := waitReplay(ctx, r.d, "SELECT pg_wal_replay_resume()", false)
	r.mu.Lock()
	defer r.mu.Unlock()
	if err != nil {
		err = replica.Error(fmt.Errorf("resume WAL replay (it stays paused until SELECT pg_wal_replay_resume() is run on it): %w", err))
		if r.failure == nil {
			r.failure = err
		}
		return err
	}
	r.rep.paused, r.rep.resumed = false, time.Now()
	r.add("dupctl", "replica-resume", r.plan.Victim, "dupctl resumes WAL replay on the replica (pg_wal_replay_resume) "+why)
	return nil
}

// waitReplay runs a replay control function on dupctl's connection to the
// standby and waits until replay is paused (or not) as asked. Before
// PostgreSQL 14 a requested pause and one in effect read alike.
func waitReplay(ctx context.Context, d Deps, call string, paused bool) error {
	if _, err := d.Replica.Exec(ctx, call); err != nil {
		return err
	}
	state := `SELECT CASE WHEN current_setting('server_version_num')::int >= 140000
  THEN pg_catalog.pg_get_wal_replay_pause_state() = 'paused' ELSE pg_catalog.pg_is_wal_replay_paused() END`
	if !paused {
		state = "SELECT NOT pg_catalog.pg_is_wal_replay_paused()"
	}
	for {
		var done bool
		if err := d.Replica.QueryRow(ctx, state).Scan(&done); err != nil {
			return err
		}
		if done {
			return nil
		}
		select {
		case <-ctx.Done():
			return fmt.Errorf("replay did not change state: %w", ctx.Err())
		case <-time.After(10 * time.Millisecond):
		}
	}
}

// replicaRead records a read through the replica proxy that names a
// business key: a check of the delivery that makes it, stale when the
// standby's replay is paused and the key's write already committed on the
// primary. Its answer completes the event (replied). The caller holds
// r.mu.
func (o *pgObs) replicaRead(c *pgproxy.Conn, st *pgproxy.Statement, keys []string) {
	r, s := o.r, o.s
	inst := r.gates[c.Gate]
	lane := s.lane(inst)
	for _, k := range keys {
		text, kind := "on the replica: "+sqlSummary(st.SQL), "replica-read"
		stale := r.rep.paused && r.committedKey(k)
		if stale {
			text, kind = "on the replica, its replay paused since the write committed (stale): "+sqlSummary(st.SQL), "stale-replica-read"
		}
		seq := r.add(lane, kind, k, text).Seq
		rd := replicaRead{seq: seq, check: -1}
		if d := r.openOf(s, inst, k); d != nil {
			rd.deliv = d
			if d.writes == 0 {
				rd.check = len(d.checks)
			}
			d.read(text, seq)
		}
		if stale {
			r.stale = append(r.stale, staleRead{key: k, slot: s, inst: inst, at: time.Now(), seq: seq, replica: true, deliv: rd.deliv})
		}
		if r.rep.reads == nil {
			r.rep.reads = map[*pgproxy.Statement]replicaRead{}
		}
		r.rep.reads[st] = rd
	}
}

// Replied completes a replica read's event with the server's answer
// ("SELECT 0": no row, so "not done").
func (o *pgObs) Replied(_ *pgproxy.Conn, st *pgproxy.Statement, tag string) {
	if !o.replica {
		return
	}
	r := o.r
	r.mu.Lock()
	defer r.mu.Unlock()
	rd, ok := r.rep.reads[st]
	if !ok {
		return
	}
	delete(r.rep.reads, st)
	answer := " -> " + tag
	if tag == "SELECT 0" {
		answer += " (no row)"
	}
	r.events[rd.seq-1].Text += answer
	if rd.deliv != nil && rd.check >= 0 && rd.check < len(rd.deliv.checks) {
		rd.deliv.checks[rd.check] += answer
	}
}

// secondHandled resumes replay early once a copy of the victim delivered
// after the fault was acked or rejected: the question was asked. The
// caller holds r.mu; the resume runs without it.
func (r *run) secondHandled(ds []*delivery) {
	if r.plan.Fault != LagReplica || r.fired == nil || !r.rep.paused {
		return
	}
	for _, d := range ds {
		if d.key == r.plan.Victim && d.from.After(r.firedAt) && (d.end == "ack" || d.end == "rejected") {
			why := fmt.Sprintf("once the second message for %s was handled (%s by %s)", d.key, d.end, d.slot.lane(d.inst))
			go func() { _ = r.resumeReplica(why) }()
			return
		}
	}
}

// replicaCommitted fires replica-lag's fault when the victim's write
// committed on the primary: a second copy is published for a worker to
// read its status on the replica. The caller holds r.mu.
func (r *run) replicaCommitted(lane string) {
	if !r.rep.tried {
		return
	}
	state := fmt.Sprintf("WAL replay on the replica paused since %s", r.at(r.rep.pausedAt))
	if !r.rep.paused {
		state = "but WAL replay on the replica was not paused any more"
		if !r.rep.resumed.IsZero() {
			state += " (resumed at " + r.at(r.rep.resumed) + ")"
		}
	}
	r.fire(lane, r.plan.Victim, fmt.Sprintf("the worker's write for %s commits on the primary, %s: the replica does not "+
		"show it; dupctl publishes a second message for %s", r.plan.Victim, state, r.plan.Victim))
	r.publishLater(r.plan.Victim, 2)
}
