// Package simulate holds the `dupctl simulate` commands: one per scenario of
// the catalogue, the matrix, replay and risk. They turn flags into
// sim.Options, run internal/sim and render its results.
package simulate

import (
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
		if out, err = sim.ParseProfiles(s.profile); err != nil {
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
		if err := sim.SetSwitch(&base, name, *s.switches[name]); err != nil {
			return nil, err
		}
	}
	return []worker.Profile{base}, nil
}

// tuning is what the changed flags change of a scenario's system.
func (s *systemFlags) tuning() sim.Tuning {
	fs := s.flags
	t := sim.Tuning{Duration: s.jobDuration, At: s.at}
	ints := []struct {
		name string
		v    *int
		dst  **int
	}{{"workers", &s.workers, &t.Workers}, {"jobs", &s.jobs, &t.Jobs}, {"max-attempts", &s.maxAttempts, &t.MaxAttempts}}
	for _, f := range ints {
		if fs.Changed(f.name) {
			*f.dst = f.v
		}
	}
	durations := []struct {
		name string
		v    *time.Duration
		dst  **time.Duration
	}{{"lock-ttl", &s.lockTTL, &t.LockTTL}, {"ack-timeout", &s.ackTimeout, &t.AckTimeout}, {"pause", &s.pause, &t.Pause},
		{"cache-lag", &s.cacheLag, &t.CacheLag}, {"replica-lag", &s.replicaLag, &t.ReplicaLag}}
	for _, d := range durations {
		if fs.Changed(d.name) {
			*d.dst = d.v
		}
	}
	return t
}

// fieldFlags are the flags of a simulate command whose Options field is
// named otherwise.
var fieldFlags = map[string]string{"Profiles": "profile", "Duration": "job-duration"}
