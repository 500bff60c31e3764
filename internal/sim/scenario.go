package sim

import (
	"fmt"
	"github.com/dupctl/dupctl/internal/platform/problem"
	"strings"
	"time"

	"github.com/dupctl/dupctl/internal/worker"
)

// Expect is a matrix cell's expected outcome.
type Expect uint8

const (
	ExpectSafe Expect = iota
	ExpectDup
	ExpectLoss
	ExpectDupLoss
)

func (x Expect) String() string {
	return [...]string{"ok", "DUP", "LOSS", "DUP+LOSS"}[x]
}

// expectOf reduces violations to a matrix outcome.
func expectOf(v Violation) Expect {
	switch {
	case v.Has(VDuplicate) && v.Has(VLoss):
		return ExpectDupLoss
	case v.Has(VDuplicate):
		return ExpectDup
	case v.Has(VLoss):
		return ExpectLoss
	}
	return ExpectSafe
}

// Scenario is one cause of a duplicate side effect, set up so the simulator
// can reproduce it: the system, the faults, the profile that shows the
// duplicate and the expected outcome under every profile.
type Scenario struct {
	Name   string
	Short  string // matrix column label
	Title  string
	Cause  string // the cause, in one sentence
	Faulty string // the profile that shows the duplicate
	Safe   string // the profile that prevents it
	// Points are the fault points this scenario exercises: each must fire
	// somewhere in its exploration.
	Points []worker.Point
	config func() Config
	// expect per profile name; a profile not listed is expected ok.
	expect map[string]Expect
}

// Config returns the scenario's system and faults under profile p.
func (sc *Scenario) Config(p worker.Profile) Config {
	c := sc.config()
	c.Profile = p
	return c
}

// Expected is the documented outcome under a named profile.
func (sc *Scenario) Expected(profile string) Expect { return sc.expect[profile] }

// DemoProfiles are the scenario's demonstration pair: the faulty profile
// that shows the duplicate, then the safe one that prevents it.
func (sc *Scenario) DemoProfiles() []worker.Profile {
	faulty, err1 := worker.ProfileByName(sc.Faulty)
	safe, err2 := worker.ProfileByName(sc.Safe)
	if err1 != nil || err2 != nil {
		panic("sim: scenario " + sc.Name + " names an unknown profile") // caught by every test that lists scenarios
	}
	return []worker.Profile{faulty, safe}
}

var allPoints = worker.Of(worker.PointAfterReceive, worker.PointAfterLock, worker.PointAfterReserve,
	worker.PointBeforeEffect, worker.PointAfterEffect, worker.PointAfterCommit, worker.PointBeforeAck)

func base() Config { return DefaultConfig() }

// expectAll maps the named profiles to one outcome; with it each
// scenario's expectation table lists only the profiles that fail it.
func expectAll(x Expect, names ...string) map[string]Expect {
	m := map[string]Expect{}
	for _, n := range names {
		m[n] = x
	}
	return m
}

func with(m map[string]Expect, x Expect, names ...string) map[string]Expect {
	for _, n := range names {
		m[n] = x
	}
	return m
}

// Scenarios is the catalogue, one scenario per cause of a duplicate.
func Scenarios() []*Scenario {
	return []*Scenario{
		{
			Name: "crash", Short: "crash",
			Title:  "a worker dies mid-flow; the broker redelivers the unacked message",
			Cause:  "Worker crash: the business work finished, the worker died before saving the final status or before the ack.",
			Faulty: "lock-only", Safe: "safe",
			Points: []worker.Point{worker.PointAfterReceive, worker.PointAfterLock, worker.PointAfterReserve, worker.PointAfterEffect,
				worker.PointAfterCommit, worker.PointBeforeAck},
			config: func() Config {
				c := base()
				c.Faults = Faults{Crash: 1, CrashAt: allPoints}
				return c
			},
			expect: with(with(expectAll(ExpectDup, "naive", "lock-only", "check", "lock-check", "lock-jobid", "lock-del", "lock-fence",
				"lock-renew", "cache", "replica", "per-attempt"),
				ExpectLoss, "claim", "ack-first"), ExpectSafe, "txn", "safe"),
		},
		{
			Name: "lock-expiry", Short: "expiry",
			Title: "the lock expires while its holder is paused; a duplicate delivery takes the lock",
			Cause: "Lock expiry: the job runs longer than the lock TTL (here a stop-the-world pause); " +
				"another worker takes a new lock and runs the same job.",
			Faulty: "lock-check", Safe: "safe",
			Points: []worker.Point{worker.PointBeforeEffect, worker.PointAfterEffect},
			config: func() Config {
				c := base()
				c.Faults = Faults{Pause: 1, PauseAt: worker.Of(worker.PointBeforeEffect, worker.PointAfterEffect), DupPublish: 1}
				return c
			},
			expect: expectAll(ExpectDup, "naive", "lock-only", "check", "lock-check", "lock-jobid", "lock-del", "lock-fence", "lock-renew",
				"ack-first", "cache", "replica", "per-attempt"),
		},
		{
			Name: "redelivery", Short: "redeliv",
			Title:  "the connection drops before the ack reaches the broker; the message comes back",
			Cause:  "Duplicate delivery: the broker redelivers because the ack did not arrive.",
			Faulty: "lock-only", Safe: "safe",
			Points: []worker.Point{worker.PointBeforeAck},
			config: func() Config {
				c := base()
				c.Faults = Faults{DropAck: 1}
				return c
			},
			expect: expectAll(ExpectDup, "naive", "lock-only", "cache", "replica", "per-attempt"),
		},
		{
			Name: "ack-timeout", Short: "ack-to",
			Title: "the job outlives the broker's consumer timeout; the broker redelivers while it still runs",
			Cause: "Duplicate delivery: RabbitMQ's consumer_timeout (30m by default) closes the channel of a consumer that holds a delivery too " +
				"long and requeues it.",
			Faulty: "lock-check", Safe: "safe",
			config: func() Config {
				c := base()
				c.AckTimeout = (30 * time.Minute).Milliseconds()
				c.Duration = Fixed(45 * time.Minute)
				return c
			},
			expect: expectAll(ExpectDup, "naive", "lock-only", "check", "lock-check", "lock-jobid", "lock-del", "lock-fence",
				"cache", "replica", "per-attempt"),
		},
		{
			Name: "race", Short: "race",
			Title:  "two different messages for one business key are processed at once",
			Cause:  "Race between instances: two different messages refer to the same business entity.",
			Faulty: "lock-jobid", Safe: "safe",
			config: func() Config {
				c := base()
				c.Jobs, c.Keys = 2, 1
				return c
			},
			expect: expectAll(ExpectDup, "naive", "lock-only", "check", "lock-jobid", "lock-del", "per-attempt"),
		},
		{
			Name: "unlock-no-token", Short: "unlock",
			Title:  "a worker that did not get the lock deletes it with plain DEL; a third attempt walks in",
			Cause:  "Unlock without token: DEL by key alone removes another worker's lock.",
			Faulty: "lock-del", Safe: "safe",
			config: func() Config {
				c := base()
				c.Faults = Faults{DupPublish: 1}
				return c
			},
			expect: expectAll(ExpectDup, "naive", "lock-only", "check", "lock-del", "cache", "replica", "per-attempt"),
		},
		{
			Name: "unstable-key", Short: "key",
			Title:  "the idempotency key changes per delivery, so the redelivery after a crash is not recognised",
			Cause:  "Unstable idempotency key: a key that includes the attempt or a fresh UUID changes on every retry.",
			Faulty: "per-attempt", Safe: "safe",
			Points: []worker.Point{worker.PointAfterCommit, worker.PointBeforeAck},
			config: func() Config {
				c := base()
				c.Faults = Faults{Crash: 1, CrashAt: worker.Of(worker.PointAfterCommit, worker.PointBeforeAck)}
				return c
			},
			expect: expectAll(ExpectDup, "naive", "lock-only", "cache", "replica", "per-attempt"),
		},
		{
			Name: "stale-cache", Short: "cache",
			Title:  "\"already done?\" is read from a cache that lags the database",
			Cause:  "Cache inconsistency: the cache says not processed while the database already holds the success.",
			Faulty: "cache", Safe: "safe",
			config: func() Config {
				c := base()
				c.Faults = Faults{DupPublish: 1}
				return c
			},
			expect: expectAll(ExpectDup, "naive", "lock-only", "check", "lock-del", "cache", "replica", "per-attempt"),
		},
		{
			Name: "replica-lag", Short: "replica",
			Title: "\"already done?\" is read from a streaming replica that has not replayed the commit yet",
			Cause: "Replica lag: the idempotency check is routed to a read replica, which says not processed while the primary " +
				"already holds the success (the stale-cache cause, with the replica as the cache).",
			Faulty: "replica", Safe: "safe",
			config: func() Config {
				c := base()
				c.Faults = Faults{DupPublish: 1}
				return c
			},
			expect: expectAll(ExpectDup, "naive", "lock-only", "check", "lock-del", "cache", "replica", "per-attempt"),
		},
		{
			Name: "status-race", Short: "status",
			Title:  "a late FAILED overwrites SUCCEEDED, and the retry runs the effect again",
			Cause:  "FAILED overwriting SUCCEEDED through a race on the status update.",
			Faulty: "txn", Safe: "safe",
			config: func() Config {
				c := base()
				c.Faults = Faults{DupPublish: 1, EffectFail: 1}
				c.MaxAttempts = 3 // enough for the retry after the failure; keeps the scope small
				return c
			},
			expect: expectAll(ExpectDup, "naive", "lock-only", "check", "lock-del", "cache", "replica", "txn", "per-attempt"),
		},
		{
			Name: "failover", Short: "failover",
			Title: "the Redis master fails over before the lock replicated; the new master grants it to another worker",
			Cause: "Lock lost in a failover: Redis replicates asynchronously, so a lock written to a master that fails over right after is not " +
				"on the promoted replica, which grants it again while the first holder still works " +
				"(why Redlock exists, and why an idempotency record in the database is still needed).",
			Faulty: "lock-check", Safe: "safe",
			Points: []worker.Point{worker.PointAfterLock},
			config: func() Config {
				c := base()
				c.Faults = Faults{Failover: 1, FailoverAt: worker.Of(worker.PointAfterLock), DupPublish: 1}
				return c
			},
			expect: expectAll(ExpectDup, "naive", "lock-only", "check", "lock-check", "lock-jobid", "lock-del", "lock-fence", "lock-renew",
				"ack-first", "cache", "replica", "per-attempt"),
		},
	}
}

// ScenarioByName finds a scenario.
func ScenarioByName(name string) (*Scenario, error) {
	var names []string
	for _, sc := range Scenarios() {
		if sc.Name == name {
			return sc, nil
		}
		names = append(names, sc.Name)
	}
	return nil, &problem.Input{Why: fmt.Sprintf("unknown scenario %q: want one of %s", name, strings.Join(names, ", "))}
}

// OutcomeOf reduces violations to the matrix's words.
func OutcomeOf(v Violation) Expect { return expectOf(v) }
