package chaos

import (
	"fmt"
	"slices"
	"sort"
	"strings"

	"github.com/dupctl/dupctl/internal/platform/problem"
)

// Point is a place in a worker's handling of one message where dupctl can
// see it on the wire, and so inject a fault.
type Point string

// The wire points, in the order a delivery passes them.
const (
	// AfterReceive: basic.deliver is handed to the worker (a kill there
	// lands before the worker can act on it).
	AfterReceive Point = "after-receive"
	// AfterLock: a lock acquisition (SET NX PX, or a lock script) on a
	// key of the message's business key answered success.
	AfterLock Point = "after-lock"
	// BeforeWrite: the worker sent its first INSERT/UPDATE/DELETE for the
	// business key to PostgreSQL (withheld).
	BeforeWrite Point = "before-write"
	// BeforeCommit: the worker sent the COMMIT of a transaction holding a
	// write for the business key (withheld). An autocommit write has no
	// separate commit, so a worker that writes only that way never
	// passes it.
	BeforeCommit Point = "before-commit"
	// AfterWrite: a transaction (or autocommit statement) with the
	// business key's first write committed.
	AfterWrite Point = "after-write"
	// BeforeAck: the worker sent basic.ack (withheld).
	BeforeAck Point = "before-ack"
	// AfterAck: basic.ack reached the broker.
	AfterAck Point = "after-ack"
)

// AllPoints lists the wire points crash visits, in flow order (the
// redelivery scenario's before-commit is not among them).
func AllPoints() []Point {
	return []Point{AfterReceive, AfterLock, BeforeWrite, AfterWrite, BeforeAck, AfterAck}
}

// Fault is what dupctl does at the point.
type Fault string

// Faults.
const (
	// Kill: SIGKILL the worker's process group; what it sent at the point
	// is dropped, its connections close, the broker redelivers; dupctl
	// starts a new copy (as a supervisor would).
	Kill Fault = "kill"
	// Stop: SIGSTOP the worker for the lock's TTL plus a margin (a
	// stop-the-world pause), then SIGCONT; a second copy of the message is
	// published when the pause starts.
	Stop Fault = "stop"
	// Close: a server drops the worker's connection at the point; the
	// worker lives. At before-ack the AMQP proxy withholds the ack and
	// closes the connection the way a broker does (connection.close
	// 320); at after-write the PostgreSQL proxy drops the connection
	// instead of the commit's reply; at before-commit it withholds the
	// COMMIT and drops the connection, so the server rolls the
	// transaction back; at after-lock the Redis proxy drops the worker's
	// connections and refuses new ones for the lock's TTL plus a margin
	// (a partition: the worker can neither renew nor release its lock),
	// and a second copy of the message is published.
	Close Fault = "close"
	// LagCache: writes to the status cache (--cache-keys) reach Redis
	// only after the lag; a second copy of the message is published when
	// the first is acked.
	LagCache Fault = "lag-cache"
	// Duplicate: two copies of the message are published at once.
	Duplicate Fault = "duplicate"
	// Failover: right after the worker's lock acquisition answered
	// success, the Redis master fails over before the lock replicated,
	// and a second copy of the message is published. On a Sentinel setup
	// the failover is real (sentinelfailover.go: the replicas cut off
	// before the lock command, SENTINEL FAILOVER after it, the lock looked
	// for on the new master). On a plain Redis it is played at the proxy:
	// dupctl deletes the lock key on the real Redis (the promoted replica
	// never received it) and drops every worker's Redis connection (as
	// Sentinel does when it demotes the old master: CLIENT KILL TYPE
	// normal); new connections are let through at once: they reach the
	// "new master".
	Failover Fault = "failover"
	// LagReplica: the workers read through {replica}, a proxy in front of
	// a real streaming standby of the database. When the victim's first
	// write is sent to the primary, dupctl pauses the standby's WAL replay
	// (pg_wal_replay_pause) before forwarding it; when that write
	// commits, a second copy of the message is published. Replay resumes
	// once the second copy was handled (acked or rejected), after the
	// lag (Options.ReplicaLag) at the latest, and always before the run
	// ends.
	LagReplica Fault = "lag-replica"
)

// Spec is how one simulate scenario is played on a user's worker.
type Spec struct {
	Scenario string
	Fault    Fault
	Points   []Point
	// Needs names the services the scenario cannot do without.
	Needs []string
}

// Specs are the scenarios a worker can be run under.
func Specs() []Spec {
	return []Spec{
		{Scenario: "crash", Fault: Kill, Points: AllPoints()},
		{Scenario: "redelivery", Fault: Close, Points: []Point{BeforeAck, AfterWrite, AfterLock, BeforeCommit}},
		{Scenario: "lock-expiry", Fault: Stop, Points: []Point{AfterLock, BeforeWrite}, Needs: []string{"redis"}},
		{Scenario: "unstable-key", Fault: Kill, Points: []Point{AfterWrite, BeforeAck}},
		{Scenario: "stale-cache", Fault: LagCache, Points: []Point{AfterAck}, Needs: []string{"redis", "cache"}},
		{Scenario: "race", Fault: Duplicate, Points: []Point{AfterReceive}},
		{Scenario: "failover", Fault: Failover, Points: []Point{AfterLock}, Needs: []string{"redis"}},
		{Scenario: "replica-lag", Fault: LagReplica, Points: []Point{AfterWrite}, Needs: []string{"replica"}},
	}
}

// SpecFor returns the scenario's spec.
func SpecFor(scenario string) (Spec, error) {
	var names []string
	for _, s := range Specs() {
		if s.Scenario == scenario {
			return s, nil
		}
		names = append(names, s.Scenario)
	}
	sort.Strings(names)
	return Spec{}, problem.Inputf("Worker", "simulate %s cannot run on a worker yet (worker scenarios: %s)",
		scenario, strings.Join(names, ", "))
}

// Plan is the fault one run injects: the seed picks the point and the
// business key whose message gets it.
type Plan struct {
	Seed uint64 `json:"seed"`
	// Attempt counts from 1; a run is tried again, up to
	// Options.Attempts times, while its scenario's condition does not
	// happen.
	Attempt int    `json:"attempt"`
	Fault   Fault  `json:"fault"`
	Point   Point  `json:"point"`
	Victim  string `json:"victim_key"`
}

func (p Plan) String() string {
	switch p.Fault {
	case LagCache:
		return fmt.Sprintf("status cache lags; a second copy of %s is published when the first is acked", p.Victim)
	case Duplicate:
		return fmt.Sprintf("two copies of %s are published at once", p.Victim)
	case Failover:
		return fmt.Sprintf("Redis fails over right after the lock of %s, before it replicated", p.Victim)
	case LagReplica:
		return fmt.Sprintf("replica replay paused at the first write of %s; a second copy is published when it commits", p.Victim)
	}
	return fmt.Sprintf("%s at %s of %s", p.Fault, p.Point, p.Victim)
}

// planFor derives a run's plan from its seed: the point round-robin over
// the scenario's points (consecutive seeds visit every point), the victim
// from a hash of the seed. A later attempt (from 1) of the same run - the
// scenario's condition did not happen - takes the next business key as its
// victim.
func planFor(spec Spec, seed uint64, keys []string, at []Point, attempt int) Plan {
	points := spec.Points
	if len(at) > 0 {
		points = slices.DeleteFunc(slices.Clone(points), func(p Point) bool { return !slices.Contains(at, p) })
	}
	return Plan{
		Seed:    seed,
		Attempt: attempt,
		Fault:   spec.Fault,
		Point:   points[seed%uint64(len(points))],
		Victim:  keys[(splitmix(seed)+uint64(attempt-1))%uint64(len(keys))],
	}
}

// splitmix is SplitMix64's finaliser: a well-mixed hash of the seed.
func splitmix(x uint64) uint64 {
	x += 0x9e3779b97f4a7c15
	x = (x ^ (x >> 30)) * 0xbf58476d1ce4e5b9
	x = (x ^ (x >> 27)) * 0x94d049bb133111eb
	return x ^ (x >> 31)
}

// ParsePoints reads point names.
func ParsePoints(spec Spec, names []string) ([]Point, error) {
	var out []Point
	for _, n := range names {
		p := Point(n)
		if !slices.Contains(spec.Points, p) {
			var valid []string
			for _, q := range spec.Points {
				valid = append(valid, string(q))
			}
			return nil, problem.Inputf("At", "unknown point %q for %s on a worker: want %s", n, spec.Scenario, strings.Join(valid, ", "))
		}
		out = append(out, p)
	}
	return out, nil
}
