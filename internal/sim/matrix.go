package sim

import (
	"context"

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

// Matrix is every scenario under every profile.
type Matrix struct {
	Scenarios []*Scenario
	Profiles  []worker.Profile
	Cells     [][]Cell // [scenario][profile]
	States    int
}

// RunMatrix explores every scenario under every profile exhaustively.
func RunMatrix(ctx context.Context, scenarios []*Scenario, profiles []worker.Profile, maxStates int, sh Shard) (*Matrix, error) {
	m := &Matrix{Scenarios: scenarios, Profiles: profiles}
	i := 0
	for _, sc := range scenarios {
		row := make([]Cell, 0, len(profiles))
		for _, p := range profiles {
			cell := Cell{Scenario: sc.Name, Profile: p.Name, Expected: sc.Expected(p.Name)}
			if sh.mine(i) {
				if err := ctx.Err(); err != nil {
					return nil, err
				}
				cfg := sc.Config(p)
				e := &engine{cfg: &cfg}
				r := e.exhaustive(ctx, maxStates)
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
