package sim

import (
	"context"
	"errors"
	"strings"
	"testing"
	"time"

	"github.com/dupctl/dupctl/internal/platform/problem"
	"github.com/dupctl/dupctl/internal/worker"
)

// flag words a field as the command line does, to hold the texts a user
// reads (internal/cli/testdata/script holds them too).
func flagOf(field string) string {
	return map[string]string{"Duration": "--job-duration", "Profiles": "--profile", "At": "--at"}[field]
}

// wantInput asserts err is bad input about field, reading want once its
// options are worded as flags (unknown ones as {Field}).
func wantInput(t *testing.T, err error, field, want string) {
	t.Helper()
	var in *problem.Input
	if !errors.As(err, &in) {
		t.Fatalf("err = %v (%T), want *problem.Input", err, err)
	}
	if in.Field != field {
		t.Errorf("Field = %q, want %q (%v)", in.Field, field, err)
	}
	got := in.Render(func(f string) string {
		if s := flagOf(f); s != "" {
			return s
		}
		return "--" + strings.ToLower(f)
	})
	if got != want {
		t.Errorf("text = %q, want %q", got, want)
	}
}

func ptr[T any](v T) *T { return &v }

func TestTuningRefusesBadValues(t *testing.T) {
	for _, c := range []struct {
		t           Tuning
		field, want string
	}{
		{Tuning{LockTTL: ptr(500 * time.Microsecond)}, "LockTTL", "--lockttl must be positive, got 500µs"},
		{Tuning{AckTimeout: ptr(-time.Second)}, "AckTimeout", "--acktimeout must be positive, got -1s"},
		{Tuning{Pause: ptr(-time.Second)}, "Pause", "--pause must be positive, got -1s"},
		{Tuning{CacheLag: ptr(-time.Second)}, "CacheLag", "--cachelag must be positive, got -1s"},
		{Tuning{ReplicaLag: ptr(-time.Millisecond)}, "ReplicaLag", "--replicalag must be positive, got -1ms"},
		{Tuning{Duration: "soon"}, "Duration",
			`--job-duration: job duration "soon": want a duration such as 45s or a distribution such as p50=30s,p99=4m`},
		{Tuning{At: []string{"later"}}, "At", `--at: unknown point "later": want ` + strings.Join(worker.PointNames(), ", ")},
	} {
		wantInput(t, c.t.Validate(), c.field, c.want)
		// Apply checks as Validate does: a library caller gets the same.
		cfg := DefaultConfig()
		wantInput(t, c.t.Apply(&cfg), c.field, c.want)
	}
	if err := (Tuning{LockTTL: ptr(time.Millisecond), AckTimeout: ptr(time.Duration(0))}).Validate(); err != nil {
		t.Errorf("1ms lock TTL and no ack timeout refused: %v", err)
	}
}

func TestTuningApplyChecksTheConfig(t *testing.T) {
	cfg := DefaultConfig()
	wantInput(t, Tuning{MaxAttempts: ptr(21)}.Apply(&cfg), "MaxAttempts", "--maxattempts must be 1..20, got 21")
	cfg = DefaultConfig()
	wantInput(t, Tuning{Workers: ptr(0)}.Apply(&cfg), "Workers", "--workers must be 1..64, got 0")
	cfg = DefaultConfig()
	tu := Tuning{Workers: ptr(3), Jobs: ptr(4), LockTTL: ptr(2 * time.Second), Duration: "45s",
		At: []string{"after-effect"}, MaxAttempts: ptr(2)}
	if err := tu.Apply(&cfg); err != nil {
		t.Fatal(err)
	}
	if cfg.Workers != 3 || cfg.Jobs != 4 || cfg.LockTTL != 2000 || cfg.MaxAttempts != 2 ||
		cfg.Duration.String() != "45s" || cfg.Faults.CrashAt != worker.Of(worker.PointAfterEffect) {
		t.Errorf("Apply gave %+v", cfg)
	}
}

func TestOptionsValidate(t *testing.T) {
	sc, err := ScenarioByName("crash")
	if err != nil {
		t.Fatal(err)
	}
	ok := Options{Scenario: sc, Runs: 1, MaxStates: 1}
	if err := ok.Validate(); err != nil {
		t.Fatal(err)
	}
	bad := ok
	bad.Explore = "sideways"
	wantInput(t, bad.Validate(), "Explore", `--explore "sideways": want exhaustive or random`)
	bad = ok
	bad.Runs = 0
	wantInput(t, bad.Validate(), "Runs", "--runs and --maxstates must be positive")
	bad = ok
	bad.Shard = Shard{K: 2, N: 2}
	wantInput(t, bad.Validate(), "Shard", `--shard 3/2: want k/n with 1 <= k <= n, e.g. 2/4`)
	// Run takes zeroes for the defaults, and checks the rest first.
	bad = Options{Scenario: sc, MaxStates: -1}
	if _, err := Run(context.Background(), bad); err == nil {
		t.Fatal("Run took a negative MaxStates")
	}
}

func TestParseShardAndProfiles(t *testing.T) {
	if s, err := ParseShard("2/4"); err != nil || s != (Shard{K: 1, N: 4}) {
		t.Errorf("ParseShard(2/4) = %v, %v", s, err)
	}
	for _, s := range []string{"0/2", "3/2", "x", "1/2x"} {
		_, err := ParseShard(s)
		wantInput(t, err, "Shard", `--shard "`+s+`": want k/n with 1 <= k <= n, e.g. 2/4`)
	}
	_, err := ParseProfiles([]string{"safe", "nope"})
	var in *problem.Input
	if !errors.As(err, &in) || in.Field != "Profiles" || !strings.HasPrefix(in.Render(cliName), `--profile: unknown profile "nope"`) {
		t.Errorf("ParseProfiles(nope) = %v", err)
	}
	p := worker.Profile{}
	err = SetSwitch(&p, "idem", "maybe")
	if !errors.As(err, &in) || in.Render(cliName) != `--idem: unknown value "maybe": want none|check|claim|txn` {
		t.Errorf("SetSwitch(idem, maybe) = %v", err)
	}
	_, err = ScenarioByName("nosuch")
	if !errors.As(err, &in) {
		t.Errorf("ScenarioByName(nosuch) = %T, want *problem.Input", err)
	}
}

func TestMatrixAndRiskValidate(t *testing.T) {
	wantInput(t, MatrixOptions{}.Validate(), "MaxStates", "--maxstates must be positive")
	if _, err := Matrix(context.Background(), MatrixOptions{MaxStates: -1}); err == nil {
		t.Error("Matrix took a negative MaxStates")
	}
	d, err := ParseJobDuration("p50=30s,p99=5m")
	if err != nil {
		t.Fatal(err)
	}
	ok := RiskOptions{Duration: d, LockTTL: 1, Workers: 1, Jobs: 1}
	if err := ok.Validate(); err != nil {
		t.Fatal(err)
	}
	for _, c := range []struct {
		change      func(*RiskOptions)
		field, want string
	}{
		{func(o *RiskOptions) { o.Duration = Dist{} }, "Duration", "--job-duration is required, e.g. p50=30s,p99=5m"},
		{func(o *RiskOptions) { o.LockTTL = 0 }, "LockTTL", "--lockttl must be positive"},
		{func(o *RiskOptions) { o.AckTimeout = -1 }, "AckTimeout", "--acktimeout must not be negative"},
		{func(o *RiskOptions) { o.Jobs = 10_000_001 }, "Jobs", "--jobs must be 1..10000000, got 10000001"},
		{func(o *RiskOptions) { o.Workers = 0 }, "Workers", "--workers must be positive"},
		{func(o *RiskOptions) { o.CrashRate = 1.5 }, "DupRate", "--duprate and --crashrate are shares between 0 and 1"},
	} {
		o := ok
		c.change(&o)
		wantInput(t, o.Validate(), c.field, c.want)
		_, err := Risk(context.Background(), o)
		wantInput(t, err, c.field, c.want)
	}
}

func cliName(f string) string {
	if s := flagOf(f); s != "" {
		return s
	}
	return "--" + strings.ToLower(f)
}
