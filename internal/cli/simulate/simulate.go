// Package simulate holds the `dupctl simulate` commands: one per scenario of
// the catalogue, the matrix, replay and risk. They turn flags into
// sim.Options, run internal/sim and render its results.
package simulate

import (
	"fmt"
	"strings"
	"time"

	"github.com/spf13/cobra"
	"github.com/spf13/pflag"

	"github.com/dupctl/dupctl/internal/cli/cmdutil"
	"github.com/dupctl/dupctl/internal/platform/exitcode"
	"github.com/dupctl/dupctl/internal/sim"
	"github.com/dupctl/dupctl/internal/sim/chaos"
	"github.com/dupctl/dupctl/internal/worker"
)

// NewCmdSimulate is `dupctl simulate`. With workerRun (a command line
// with --worker: IsWorkerRun), the scenarios a worker can play are their
// worker commands (NewCmdScenarioWorker) instead of the simulator's.
func NewCmdSimulate(f *cmdutil.Factory, workerRun bool) *cobra.Command {
	cmd := &cobra.Command{
		Use:   "simulate <scenario>",
		Short: "Reproduce every duplicate cause on an embedded simulator and prove which mitigations stop it",
		Long: `Simulate runs N workers of the safe consumer flow (receive, lock, check or
claim, side effect, commit, unlock, ack, with retries, backoff and a DLQ)
over an in-memory at-least-once broker, Redis lock semantics, a database
ledger and a lagging cache. A virtual clock and a seeded scheduler decide
every interleaving, so the same seed gives the same output, byte for byte,
in milliseconds and without any server.

Each scenario reproduces one duplicate cause. With no flags it explores,
exhaustively, the profile that shows the duplicate and the safe
profile, prints the shortest failing schedule as a timeline, replays it under
every other profile, and gives a token that 'dupctl simulate replay'
reproduces.

Invariants: a business key's side effect runs at most once; no job is lost
(it ends succeeded or dead-lettered); no lock is released by a non-owner.` + exitStatus,
		Example: `  dupctl simulate crash
  dupctl simulate lock-expiry --profile lock-fence
  dupctl simulate crash --profile lock-check --idem txn
  dupctl simulate matrix --fail-on error -o junit > sim.xml
  dupctl simulate risk --job-duration p50=30s,p99=5m --lock-ttl 2m`,
		RunE: cmdutil.GroupRunE,
	}
	for _, sc := range sim.Scenarios() {
		if _, err := chaos.SpecFor(sc.Name); err == nil && workerRun {
			cmd.AddCommand(NewCmdScenarioWorker(f, sc, nil))
			continue
		}
		cmd.AddCommand(newCmdScenario(f, sc, nil))
	}
	cmd.AddCommand(NewCmdMatrix(f, nil), NewCmdReplay(f, nil), NewCmdRisk(f, nil))
	return cmd
}

var exitStatus = cmdutil.ExitStatus(map[int]string{
	1: "findings at or above --fail-on (a duplicate or loss under a profile\n" +
		"you chose; a matrix cell that differs from its documentation)",
	3: "--live: a system could not be reached, or a runtime failure",
})

// systemFlags are the flags that shape the simulated system.
type systemFlags struct {
	workers, jobs       int
	lockTTL, ackTimeout time.Duration
	pause, cacheLag     time.Duration
	replicaLag          time.Duration
	jobDuration         string
	maxAttempts         int
	at                  []string
	switches            map[string]*string
	flags               *pflag.FlagSet
	profile             []string
}

func (s *systemFlags) register(fs *pflag.FlagSet, crash bool) {
	s.flags = fs
	fs.IntVar(&s.workers, "workers", 0, "number of workers (default: the scenario's)")
	fs.IntVar(&s.jobs, "jobs", 0, "number of jobs published at the start (default: the scenario's)")
	fs.DurationVar(&s.lockTTL, "lock-ttl", 0, "lock TTL (default 30s)")
	fs.DurationVar(&s.ackTimeout, "ack-timeout", 0, "broker consumer timeout (default: none, or 30m in ack-timeout)")
	fs.DurationVar(&s.pause, "pause", 0, "length of an injected stop-the-world pause (default 1m)")
	fs.DurationVar(&s.cacheLag, "cache-lag", 0, "how long the status cache lags the database (default 5s)")
	fs.DurationVar(&s.replicaLag, "replica-lag", 0,
		"how long a read replica replays a commit late (default 1s; profiles that read status there)")
	fs.StringVar(&s.jobDuration, "job-duration", "", "job duration: fixed (45s) or a distribution (p50=30s,p99=4m)")
	fs.IntVar(&s.maxAttempts, "max-attempts", 0, "attempts before the DLQ (default 5)")
	if crash {
		fs.StringSliceVar(&s.at, "at", nil, "crash only at these points: "+strings.Join(worker.PointNames(), ", "))
	}
	fs.StringSliceVar(&s.profile, "profile", nil, "mitigation profile(s) to explore: "+strings.Join(worker.ProfileNames(), ", "))
	s.switches = map[string]*string{}
	for _, sw := range worker.Switches {
		s.switches[sw.Name] = fs.String(sw.Name, "", sw.Help+" ("+sw.Values+"); changes --profile")
	}
}

// profiles resolves --profile and the single-switch flags. nil means the
// scenario's demonstration pair.
func (s *systemFlags) profiles(sc *sim.Scenario) ([]worker.Profile, error) {
	var out []worker.Profile
	if len(s.profile) > 0 {
		var err error
		if out, err = parseProfiles(s.profile); err != nil {
			return nil, err
		}
	}
	var changed []string
	for _, sw := range worker.Switches {
		if s.flags.Changed(sw.Name) {
			changed = append(changed, sw.Name)
		}
	}
	if len(changed) == 0 {
		return out, nil
	}
	if len(out) > 1 {
		return nil, exitcode.UsageErrorf("mitigation switches change one profile: give at most one --profile with --%s", changed[0])
	}
	base := worker.Profile{}
	if len(out) == 1 {
		base = out[0]
	} else if sc != nil {
		base, _ = worker.ProfileByName(sc.Faulty)
	}
	for _, name := range changed {
		if err := base.Set(name, *s.switches[name]); err != nil {
			return nil, exitcode.UsageErrorf("%w", err)
		}
	}
	return []worker.Profile{base}, nil
}

// tune applies the changed flags to a scenario's config.
func (s *systemFlags) tune(sc *sim.Scenario) (func(*sim.Config) error, error) {
	var dist *sim.Dist
	if s.jobDuration != "" {
		d, err := sim.ParseDist(s.jobDuration)
		if err != nil {
			return nil, exitcode.UsageErrorf("--job-duration: %w", err)
		}
		dist = &d
	}
	var crashAt worker.Points
	for _, name := range s.at {
		pt, ok := worker.ParsePoint(name)
		if !ok {
			return nil, exitcode.UsageErrorf("--at: unknown point %q: want %s", name, strings.Join(worker.PointNames(), ", "))
		}
		crashAt |= worker.Of(pt)
	}
	fs := s.flags
	for _, d := range []struct {
		name string
		v    time.Duration
	}{{"lock-ttl", s.lockTTL}, {"ack-timeout", s.ackTimeout}, {"pause", s.pause}, {"cache-lag", s.cacheLag}, {"replica-lag", s.replicaLag}} {
		if fs.Changed(d.name) && (d.v < 0 || (d.name == "lock-ttl" && d.v < time.Millisecond)) {
			return nil, exitcode.UsageErrorf("--%s must be positive, got %s", d.name, d.v)
		}
	}
	return func(c *sim.Config) error {
		if fs.Changed("workers") {
			c.Workers = s.workers
		}
		if fs.Changed("jobs") {
			shared := c.Keys < c.Jobs
			c.Jobs, c.Keys = s.jobs, s.jobs
			if shared { // race: messages come in pairs per business key
				c.Keys = max(1, s.jobs/2)
			}
		}
		if fs.Changed("lock-ttl") {
			c.LockTTL = sim.Millis(s.lockTTL)
		}
		if fs.Changed("ack-timeout") {
			c.AckTimeout = sim.Millis(s.ackTimeout)
		}
		if fs.Changed("pause") {
			c.PauseFor = sim.Millis(s.pause)
		}
		if fs.Changed("cache-lag") {
			c.CacheLag = sim.Millis(s.cacheLag)
		}
		if fs.Changed("replica-lag") {
			c.ReplicaLag = sim.Millis(s.replicaLag)
		}
		if fs.Changed("max-attempts") {
			if s.maxAttempts < 1 || s.maxAttempts > 20 {
				return exitcode.UsageErrorf("--max-attempts must be 1..20, got %d", s.maxAttempts)
			}
			c.MaxAttempts = uint8(s.maxAttempts)
		}
		if dist != nil {
			c.Duration = *dist
		}
		if crashAt != 0 {
			c.Faults.CrashAt = crashAt
		}
		if err := c.Validate(); err != nil {
			return exitcode.UsageErrorf("%w", err)
		}
		return nil
	}, nil
}

// parseShard reads "k/n" (1-based k, as CI matrices count).
func parseShard(s string) (sim.Shard, error) {
	if s == "" {
		return sim.Shard{}, nil
	}
	var k, n int
	if _, err := fmt.Sscanf(s, "%d/%d", &k, &n); err != nil || n < 1 || k < 1 || k > n || fmt.Sprintf("%d/%d", k, n) != s {
		return sim.Shard{}, exitcode.UsageErrorf("--shard %q: want k/n with 1 <= k <= n, e.g. 2/4", s)
	}
	return sim.Shard{K: k - 1, N: n}, nil
}

// parseProfiles resolves --profile names ("all" for every profile); none
// given means every profile.
func parseProfiles(names []string) ([]worker.Profile, error) {
	if len(names) == 0 {
		return worker.Profiles(), nil
	}
	var out []worker.Profile
	for _, name := range names {
		if name == "all" {
			out = append(out, worker.Profiles()...)
			continue
		}
		p, err := worker.ProfileByName(name)
		if err != nil {
			return nil, exitcode.UsageErrorf("--profile: %w", err)
		}
		out = append(out, p)
	}
	return out, nil
}
