package sim

import (
	"context"

	"github.com/dupctl/dupctl/internal/platform/problem"
	"github.com/dupctl/dupctl/internal/worker"
)

// Cell is one scenario explored exhaustively under one profile.
type Cell struct {
	Scenario string
	Profile  string
	Expected Expect
	Observed Expect
	Found    Violation
	States   int
	Complete bool
}

// Match reports whether the cell came out as documented.
func (c Cell) Match() bool { return c.Complete && c.Expected == c.Observed }

// MatrixOptions choose what one `dupctl simulate matrix` explores.
type MatrixOptions struct {
	Scenarios []*Scenario      // the rows; empty: every scenario
	Profiles  []worker.Profile // the columns; empty: every profile
	MaxStates int              // a cell's exploration stops here; 0: 5,000,000
	Shard     Shard
}

// Validate checks the options as given: a zero MaxStates is refused here,
// though Matrix takes it for the default.
func (o MatrixOptions) Validate() error {
	if o.MaxStates < 1 {
		return problem.Inputf("MaxStates", "{MaxStates} must be positive")
	}
	return o.Shard.validate()
}

// MatrixResult is every scenario under every profile.
type MatrixResult struct {
	Scenarios []*Scenario
	Profiles  []worker.Profile
	Cells     [][]Cell // [scenario][profile]
	States    int
}

// Matrix explores every scenario under every profile exhaustively.
func Matrix(ctx context.Context, o MatrixOptions) (*MatrixResult, error) {
	if len(o.Scenarios) == 0 {
		o.Scenarios = Scenarios()
	}
	if len(o.Profiles) == 0 {
		o.Profiles = worker.Profiles()
	}
	if o.MaxStates == 0 {
		o.MaxStates = 5_000_000
	}
	if err := o.Validate(); err != nil {
		return nil, err
	}
	m := &MatrixResult{Scenarios: o.Scenarios, Profiles: o.Profiles}
	i := 0
	for _, sc := range o.Scenarios {
		row := make([]Cell, 0, len(o.Profiles))
		for _, p := range o.Profiles {
			cell := Cell{Scenario: sc.Name, Profile: p.Name, Expected: sc.Expected(p.Name)}
			if o.Shard.mine(i) {
				if err := ctx.Err(); err != nil {
					return nil, err
				}
				cfg := sc.Config(p)
				e := &engine{cfg: &cfg}
				r := e.exhaustive(ctx, o.MaxStates)
				cell.Found, cell.Observed, cell.States, cell.Complete = r.Found, expectOf(r.Found), r.States, r.Complete
				m.States += r.States
			} else {
				cell.Observed, cell.Complete = cell.Expected, true // another shard's cell
				cell.States = -1
			}
			row = append(row, cell)
			i++
		}
		m.Cells = append(m.Cells, row)
	}
	return m, nil
}
