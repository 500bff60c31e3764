package chaos

import (
	"fmt"
	"time"
)

// A run's trace is what the proxies saw of it: its events, each delivery
// of a business key, each lock a worker took, the stale reads and the
// plain DELs of another's lock, and where the fault fell. The run records
// it while the workers go; once they are stopped it is finished, and the
// judge (verdict.go, causes.go, condition.go) reads nothing else: a
// verdict is a function of the trace and the effects counted, so a trace
// recorded from a real run judges again without any service
// (testdata/traces).
type trace struct {
	id    string
	plan  Plan
	keys  []string
	start time.Time
	// end is when the trace was finished: open deliveries end there, and
	// the run's time is counted to it.
	end     time.Time
	events  []Event
	delivs  []*delivery
	leases  []*lease
	stale   []staleRead
	foreign []foreignUnlock
	repub   map[string]bool // business keys the worker published again
	fired   *Event
	firedAt time.Time
	// faultLease is the lease the fault fell on (lock-expiry's pause, the
	// Redis cut): the lock another worker must then take.
	faultLease *lease
	// unkeyed are side-effect lines that named no key of the run;
	// effectLines the effects log's lines of the run's keys, placed in
	// time where the log shows it (nil with the effects query).
	unkeyed     int64
	effectLines []EffectLine
	// effectsFrom is where the effects were counted (EffectsSQL,
	// EffectsOutput, EffectsFile).
	effectsFrom string
	// faults is what the fault drivers knew that the wire did not show.
	faults faultFacts
}

// faultFacts are what a fault's driver knew of it that no proxy saw, as
// the judge needs them.
type faultFacts struct {
	cacheLag  time.Duration // stale-cache's hold on a status write
	cacheKeys string        // the status cache keys it held
	// sentinel is failover's real failover of a Sentinel setup (nil:
	// played at the proxy, or another scenario).
	sentinel *sentinelFacts
	// replicaPauseSeq is the event of replica-lag's pause of the
	// standby's replay (0: never paused).
	replicaPauseSeq int
}

// sentinelFacts are what a real failover found: the master the run began
// on, where the failover went, and the event saying the lock was missing
// there (0 while it was not found missing).
type sentinelFacts struct {
	master, newMaster string
	lostSeq           int
}

// Event is one line of a run's schedule, as dupctl saw it on the wire.
type Event struct {
	T     int64  `json:"t_ms"`
	Lane  string `json:"lane"` // W1, W2, W1#2 (W1's second process), dupctl
	Kind  string `json:"kind"`
	Key   string `json:"key,omitempty"`
	Text  string `json:"text"`
	Fault bool   `json:"fault,omitempty"`
	// Seq is the event's place in the order dupctl saw the events (1 for
	// the first); a key's deciding events name it (KeyVerdict.Deciding).
	Seq int `json:"seq"`
}

// Line is the event as one evidence line.
func (e Event) Line() string {
	return fmt.Sprintf("t=%dms %s: %s", e.T, e.Lane, e.Text)
}

type delivery struct {
	slot        *slot
	inst        int
	key         string
	redelivered bool
	from, to    time.Time
	end         string // ack, requeued, rejected, returned, auto-ack
	reads       int
	writes      int
	committed   int
	readFirst   bool     // it read the key before its first write: a check
	checks      []string // what it read before its first write, as seen on the wire
	values      []string // key-bearing values it committed
	faulted     bool
	// copyN is which of dupctl's messages for the key it carries (1 the
	// workload's, 2 a scenario's second); 0 when its message id says not.
	copyN int
	// lagged: a status cache write of its key was held back when it
	// arrived (stale-cache).
	lagged bool
	// seq and endSeq are the events of its delivery and of its end;
	// checkSeqs the reads before its first write, commitSeqs its commits.
	seq, endSeq           int
	checkSeqs, commitSeqs []int
}

type lease struct {
	lock      string
	key       string // business key
	slot      *slot
	inst      int
	token     string
	from      time.Time
	ttl       time.Duration
	expires   time.Time
	released  time.Time
	deleted   time.Time // by another worker's plain DEL
	deletedBy string
	deliv     *delivery
	seq       int // the event of its taking
}

type staleRead struct {
	key  string
	slot *slot
	inst int
	at   time.Time
	seq  int
	// replica: read on the standby while its replay was paused (else
	// from the cache while its write was held back); deliv made it.
	replica bool
	deliv   *delivery
}

type foreignUnlock struct {
	lock, key string
	by        string
	of        *lease
	at        time.Time
	seq       int
}

// effectsLogged reports whether the effects were counted in log lines
// rather than by the effects query.
func (t *trace) effectsLogged() bool {
	return t.effectsFrom == EffectsOutput || t.effectsFrom == EffectsFile
}
