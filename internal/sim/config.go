package sim

import (
	"fmt"
	"github.com/dupctl/dupctl/internal/platform/problem"
	"time"

	"github.com/dupctl/dupctl/internal/worker"
)

// Faults is the fault budget of a run: how many of each fault may fire, and
// at which points of the flow.
type Faults struct {
	Crash      int           // a worker process dies; its connection closes
	CrashAt    worker.Points // where a crash may happen
	Pause      int           // a stop-the-world pause (GC, VM migration)
	PauseAt    worker.Points
	DropAck    int // the connection drops before the ack: broker redelivers, the worker lives on
	DupPublish int // the publisher sends a message again (a retry after a lost confirm)
	EffectFail int // the side effect fails with a retryable error
	// Failover: the Redis master fails over right after a worker wrote its
	// lock, before the write replicated; the promoted replica does not
	// have the lock (nor the fencing counter's increment).
	Failover   int
	FailoverAt worker.Points
}

// Config is one simulation: the system, the profile and the faults.
type Config struct {
	Workers int
	// Jobs are the messages published at the start. Job j has business key
	// j % Keys, so Keys < Jobs puts several messages on one business key.
	Jobs       int
	Keys       int
	Profile    worker.Profile
	Faults     Faults
	LockTTL    int64 // virtual ms
	AckTimeout int64 // broker consumer timeout; 0: none
	Duration   Dist  // how long a job's work takes
	PauseFor   int64
	CacheLag   int64 // the status cache shows a write this long after it
	// ReplicaLag: a read replica shows a commit this long after it (its
	// replay lag), for profiles that read status there.
	ReplicaLag    int64
	BackoffBase   int64 // retry delay = base * 2^(attempt-1), plus jitter
	MaxAttempts   uint8 // dead-letter when a retry would exceed this
	DeliveryLimit uint8 // the broker dead-letters a message delivered this often; 0: never (classic queue)
	MaxRenewals   uint8 // a lock is never renewed more than this: no lock forever
	MaxSteps      int   // a schedule longer than this is a livelock
	JitterPercent int64 // +- this % of the backoff, drawn from the seed
	// DupAt publishes a duplicate of job 1 at this virtual time (risk
	// mode's timed duplicate); 0: none.
	DupAt int64
}

// DefaultConfig is a small system: two workers, one job.
func DefaultConfig() Config {
	return Config{
		Workers:       2,
		Jobs:          1,
		Keys:          1,
		LockTTL:       30_000,
		Duration:      Fixed(10 * time.Second),
		PauseFor:      60_000,
		CacheLag:      5_000,
		ReplicaLag:    1_000,
		BackoffBase:   5_000,
		MaxAttempts:   5,
		DeliveryLimit: 20, // RabbitMQ 4 quorum queues' default delivery-limit
		MaxRenewals:   200,
		MaxSteps:      2_000,
		JitterPercent: 20,
	}
}

// lag is how late the profile's lagged status view shows a write. The
// model has one such view, s.Cache: the status cache, or the read replica
// for a profile that reads status there. A replica replays every write
// of the ledger late, as the cache mirrors each one, so one mechanism
// serves both; only its lag and its name differ.
func (c *Config) lag() int64 {
	if c.Profile.StatusFrom == worker.StatusReplica {
		return c.ReplicaLag
	}
	return c.CacheLag
}

// lockID is the lock a delivery takes: per business key or per job.
func (c *Config) lockID(job, key int32) int32 {
	if c.Profile.LockKey == worker.LockKeyJob {
		return int32(c.Keys) + job
	}
	return key
}

func (c *Config) numLocks() int { return c.Keys + c.Jobs }

// Limits keep every simulation small enough to run in memory and in time.
const (
	MaxWorkers = 64
	MaxJobs    = 10_000
)

// Validate says what is wrong with a config, naming its fields ({Workers}).
func (c *Config) Validate() error {
	switch {
	case c.Workers < 1 || c.Workers > MaxWorkers:
		return problem.Inputf("Workers", "{Workers} must be 1..%d, got %d", MaxWorkers, c.Workers)
	case c.Jobs < 1 || c.Jobs > MaxJobs:
		return problem.Inputf("Jobs", "{Jobs} must be 1..%d, got %d", MaxJobs, c.Jobs)
	case c.Keys < 1 || c.Keys > c.Jobs:
		return fmt.Errorf("business keys must be 1..jobs, got %d", c.Keys)
	case c.LockTTL <= 0:
		return problem.Inputf("LockTTL", "{LockTTL} must be positive")
	case c.AckTimeout < 0 || c.PauseFor < 0 || c.CacheLag < 0 || c.ReplicaLag < 0 || c.BackoffBase < 0 || c.DupAt < 0:
		return fmt.Errorf("durations must not be negative")
	case c.MaxAttempts < 1 || c.MaxAttempts > 20:
		return problem.Inputf("MaxAttempts", "{MaxAttempts} must be 1..20, got %d", c.MaxAttempts)
	case c.MaxSteps < 1 || c.MaxSteps > 1_000_000:
		return fmt.Errorf("max steps must be 1..1000000")
	case c.JitterPercent < 0 || c.JitterPercent > 100:
		return fmt.Errorf("jitter must be 0..100%%")
	case !c.Faults.budgetsValid():
		return fmt.Errorf("fault budgets must be 0..100")
	}
	return nil
}

// budgetsValid reports whether every fault budget is 0..100.
func (f Faults) budgetsValid() bool {
	for _, b := range []int{f.Crash, f.Pause, f.DropAck, f.DupPublish, f.EffectFail, f.Failover} {
		if b < 0 || b > 100 {
			return false
		}
	}
	return true
}
