package sim

import (
	"fmt"
	"strings"
	"time"

	"github.com/dupctl/dupctl/internal/platform/problem"
	"github.com/dupctl/dupctl/internal/worker"
)

// Tuning is what a user changes of a scenario's system (the flags of
// `dupctl simulate <scenario>`); a nil or empty field keeps the
// scenario's own value. Apply is an Options.Tune.
type Tuning struct {
	Workers, Jobs *int
	LockTTL       *time.Duration
	AckTimeout    *time.Duration
	Pause         *time.Duration // how long an injected pause lasts
	CacheLag      *time.Duration
	ReplicaLag    *time.Duration
	// Duration is the job duration as written ("45s", "p50=30s,p99=4m").
	Duration string
	// At names the fault points a crash may happen at (worker.PointNames).
	At          []string
	MaxAttempts *int
}

// Validate checks the values that do not depend on the scenario; Apply
// checks the rest against the config it changes.
func (t Tuning) Validate() error {
	if t.Duration != "" {
		if _, err := ParseJobDuration(t.Duration); err != nil {
			return err
		}
	}
	if _, err := t.crashAt(); err != nil {
		return err
	}
	for _, d := range []struct {
		field string
		v     *time.Duration
		least time.Duration
	}{{"LockTTL", t.LockTTL, time.Millisecond}, {"AckTimeout", t.AckTimeout, 0}, {"Pause", t.Pause, 0},
		{"CacheLag", t.CacheLag, 0}, {"ReplicaLag", t.ReplicaLag, 0}} {
		if d.v != nil && *d.v < d.least {
			return problem.Inputf(d.field, "{%s} must be positive, got %s", d.field, *d.v)
		}
	}
	return nil
}

func (t Tuning) crashAt() (worker.Points, error) {
	var at worker.Points
	for _, name := range t.At {
		pt, ok := worker.ParsePoint(name)
		if !ok {
			return 0, problem.Inputf("At", "unknown point %q: want %s", name, strings.Join(worker.PointNames(), ", "))
		}
		at |= worker.Of(pt)
	}
	return at, nil
}

// Apply changes c as t says and checks the result.
func (t Tuning) Apply(c *Config) error {
	if err := t.Validate(); err != nil {
		return err
	}
	if t.Workers != nil {
		c.Workers = *t.Workers
	}
	if t.Jobs != nil {
		shared := c.Keys < c.Jobs
		c.Jobs, c.Keys = *t.Jobs, *t.Jobs
		if shared { // race: messages come in pairs per business key
			c.Keys = max(1, *t.Jobs/2)
		}
	}
	for _, d := range []struct {
		v   *time.Duration
		dst *int64
	}{{t.LockTTL, &c.LockTTL}, {t.AckTimeout, &c.AckTimeout}, {t.Pause, &c.PauseFor},
		{t.CacheLag, &c.CacheLag}, {t.ReplicaLag, &c.ReplicaLag}} {
		if d.v != nil {
			*d.dst = Millis(*d.v)
		}
	}
	if t.MaxAttempts != nil {
		if n := *t.MaxAttempts; n < 1 || n > 20 {
			return problem.Inputf("MaxAttempts", "{MaxAttempts} must be 1..20, got %d", n)
		}
		c.MaxAttempts = uint8(*t.MaxAttempts)
	}
	if t.Duration != "" {
		d, _ := ParseJobDuration(t.Duration) // Validate read it
		c.Duration = d
	}
	if at, _ := t.crashAt(); at != 0 {
		c.Faults.CrashAt = at
	}
	return c.Validate()
}

// ParseJobDuration reads a job duration as ParseDist does, as bad input
// about the Duration option.
func ParseJobDuration(s string) (Dist, error) {
	d, err := ParseDist(s)
	if err != nil {
		return Dist{}, problem.Inputf("Duration", "%w", err)
	}
	return d, nil
}

// ParseShard reads "k/n" (1-based k, as CI matrices count); "" is no shard.
func ParseShard(s string) (Shard, error) {
	if s == "" {
		return Shard{}, nil
	}
	var k, n int
	if _, err := fmt.Sscanf(s, "%d/%d", &k, &n); err != nil || n < 1 || k < 1 || k > n || fmt.Sprintf("%d/%d", k, n) != s {
		return Shard{}, problem.Inputf("Shard", "{Shard} %q: want k/n with 1 <= k <= n, e.g. 2/4", s)
	}
	return Shard{K: k - 1, N: n}, nil
}

func (s Shard) validate() error {
	if s.N > 1 && (s.K < 0 || s.K >= s.N) || s.N < 0 {
		return problem.Inputf("Shard", "{Shard} %d/%d: want k/n with 1 <= k <= n, e.g. 2/4", s.K+1, s.N)
	}
	return nil
}

// ParseProfiles resolves profile names ("all" for every profile); none
// given means every profile.
func ParseProfiles(names []string) ([]worker.Profile, error) {
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
			return nil, problem.Inputf("Profiles", "%w", err)
		}
		out = append(out, p)
	}
	return out, nil
}

// SetSwitch changes one mitigation switch of p (worker.Switches), as bad
// input when the switch or its value is unknown.
func SetSwitch(p *worker.Profile, name, value string) error {
	if err := p.Set(name, value); err != nil {
		return &problem.Input{Why: err.Error(), Err: err}
	}
	return nil
}
