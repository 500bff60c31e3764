package simulate

import (
	"bytes"
	"strings"
	"testing"

	"github.com/dupctl/dupctl/internal/cli/cmdutil"
	"github.com/dupctl/dupctl/internal/platform/iostreams"
	"github.com/dupctl/dupctl/internal/sim"
	"github.com/dupctl/dupctl/internal/sim/chaos"
)

func scenario(t *testing.T, name string) *sim.Scenario {
	t.Helper()
	for _, sc := range sim.Scenarios() {
		if sc.Name == name {
			return sc
		}
	}
	t.Fatalf("no scenario %s", name)
	return nil
}

func factory() *cmdutil.Factory {
	ios, _, _, _ := iostreams.Test()
	return cmdutil.NewFactory(ios)
}

func TestIsWorkerRun(t *testing.T) {
	for line, want := range map[string]bool{
		"simulate crash --worker ./w":         true,
		"simulate crash --worker=./w":         true,
		"-o json simulate crash --worker ./w": true,
		"simulate crash --worker-env A=1":     false,
		"simulate crash":                      false,
		"audit logs --worker x":               false,
		"simulate crash -- --worker":          false,
	} {
		if got := IsWorkerRun(strings.Fields(line)); got != want {
			t.Errorf("IsWorkerRun(%q) = %v, want %v", line, got, want)
		}
	}
}

// TestWorkerFlagsToOptions: the worker command's flags land in its options
// with the worker run's own defaults (issue 31: --cache-lag said 5s, 2s
// was used; --runs showed 100000), through the runF seam.
func TestWorkerFlagsToOptions(t *testing.T) {
	var got *WorkerOptions
	run := func(name string, args ...string) error {
		cmd := NewCmdScenarioWorker(factory(), scenario(t, name), func(o *WorkerOptions) error { got = o; return nil })
		cmd.SetArgs(args)
		cmd.SetOut(&bytes.Buffer{})
		cmd.SetErr(&bytes.Buffer{})
		return cmd.Execute()
	}
	if err := run("stale-cache", "--worker", "./w", "--publish", ":q", "--worker-env", "A=1", "--worker-env", "B={redis}"); err != nil {
		t.Fatal(err)
	}
	c := got.Chaos
	if c.Worker != "./w" || c.Publish != ":q" || len(c.Env) != 2 || c.Workers != chaos.DefaultWorkers || c.Keys != chaos.DefaultKeys ||
		c.CacheLag != chaos.DefaultCacheLag || c.Runs != 0 || got.RunsGiven || c.Seed != 1 {
		t.Fatalf("options: %+v (runs given %v)", c, got.RunsGiven)
	}
	if err := run("crash", "--worker", "./w", "--at", "before-ack,after-write", "--runs", "4", "--workers", "3", "--jobs", "7"); err != nil {
		t.Fatal(err)
	}
	if got.Chaos.Runs != 4 || !got.RunsGiven || got.Chaos.Workers != 3 || got.Chaos.Keys != 7 ||
		strings.Join(got.At, ",") != "before-ack,after-write" {
		t.Fatalf("crash options: %+v at %v", got.Chaos, got.At)
	}
	if err := run("crash", "--publish", ":q"); err == nil || !strings.Contains(err.Error(), `"worker" not set`) {
		t.Fatalf("--worker is required: %v", err)
	}
	err := run("crash", "--worker", "./w", "--profile", "lock-check")
	if err == nil || !strings.Contains(err.Error(), "--profile describes dupctl's simulated worker") {
		t.Fatalf("a model flag: %v", err)
	}
}

// TestWorkerHelpIsItsOwn: each command's help lists its own flags only.
func TestWorkerHelpIsItsOwn(t *testing.T) {
	w := NewCmdScenarioWorker(factory(), scenario(t, "lock-expiry"), nil).LocalFlags().FlagUsages()
	m := newCmdScenario(factory(), scenario(t, "lock-expiry"), nil).LocalFlags().FlagUsages()
	for _, flag := range []string{"--profile", "--explore", "--max-states", "--lock-ttl", "--live", "--cache-lag"} {
		if strings.Contains(w, flag+" ") {
			t.Errorf("the worker command's help lists the model's %s", flag)
		}
	}
	for _, flag := range []string{"--worker ", "--publish", "--effects-sql", "--pause", "--at "} {
		if !strings.Contains(w, flag) {
			t.Errorf("the worker command's help lacks %s", flag)
		}
	}
	for _, flag := range []string{"--worker ", "--publish", "--effects-sql", "--at "} {
		if strings.Contains(m, flag) {
			t.Errorf("the model's help lists the worker's %s", flag)
		}
	}
	if !strings.Contains(w, "after-lock, before-write") {
		t.Errorf("the worker command's --at does not list its points:\n%s", w)
	}
}

// TestScenarioFlagsToOptions: the model's flags through its runF seam.
func TestScenarioFlagsToOptions(t *testing.T) {
	var got *ScenarioOptions
	cmd := newCmdScenario(factory(), scenario(t, "crash"), func(o *ScenarioOptions) error { got = o; return nil })
	cmd.SetArgs([]string{"--profile", "lock-check", "--explore", "random", "--runs", "50", "--seed", "9", "--workers", "3"})
	if err := cmd.Execute(); err != nil {
		t.Fatal(err)
	}
	o := got.Sim
	if got.Demo || len(o.Profiles) != 1 || o.Explore != sim.ExploreRandom || o.Runs != 50 || o.Seed != 9 {
		t.Fatalf("options: %+v", o)
	}
	cmd = newCmdScenario(factory(), scenario(t, "crash"), func(o *ScenarioOptions) error { got = o; return nil })
	cmd.SetArgs([]string{"--explore", "sideways"})
	cmd.SetOut(&bytes.Buffer{})
	cmd.SetErr(&bytes.Buffer{})
	// The capability names the option; the command words it as its flag.
	if err := cmd.Execute(); err == nil || !strings.Contains(cmdutil.Describe(cmd, err), `--explore "sideways"`) {
		t.Fatalf("bad --explore: %v", err)
	}
}
