package sim

import (
	"context"
	"testing"

	"github.com/dupctl/dupctl/internal/worker"
)

func benchRandom(b *testing.B, scenario, profile string, jobs int) {
	sc, _ := ScenarioByName(scenario)
	p, _ := worker.ProfileByName(profile)
	cfg := sc.Config(p)
	cfg.Jobs, cfg.Keys = jobs, jobs
	e := &engine{cfg: &cfg}
	var buf []Action
	steps := 0
	b.ReportAllocs()
	b.ResetTimer()
	for i := 0; b.Loop(); i++ {
		_, buf = e.runRandom(uint64(i), false, nil, buf)
		steps += int(e.s.Steps)
	}
	b.ReportMetric(float64(b.N)/b.Elapsed().Seconds(), "schedules/s")
	b.ReportMetric(float64(steps)/float64(b.N), "steps/schedule")
}

// BenchmarkRandomCrash is the figure: random exploration of the
// crash scenario, 2 workers, 2 and 10 jobs, one core.
func BenchmarkRandomCrash2Jobs(b *testing.B)  { benchRandom(b, "crash", "lock-check", 2) }
func BenchmarkRandomCrash10Jobs(b *testing.B) { benchRandom(b, "crash", "lock-check", 10) }

// BenchmarkExhaustiveCrash2x2 explores every schedule of 2 workers x 2
// messages under the crash scenario.
func BenchmarkExhaustiveCrash2x2(b *testing.B) {
	sc, _ := ScenarioByName("crash")
	p, _ := worker.ProfileByName("lock-check")
	cfg := sc.Config(p)
	cfg.Jobs, cfg.Keys = 2, 2
	states := 0
	for b.Loop() {
		e := &engine{cfg: &cfg}
		r := e.exhaustive(context.Background(), 10_000_000)
		states = r.States
	}
	b.ReportMetric(float64(states), "states")
}
