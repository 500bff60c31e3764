package simulate

import (
	"context"
	"fmt"
	"io"

	"github.com/dupctl/dupctl/internal/cli/cmdutil"
	"github.com/dupctl/dupctl/internal/platform/exitcode"
	"github.com/dupctl/dupctl/internal/platform/findings"
	"github.com/dupctl/dupctl/internal/platform/report"
	"github.com/dupctl/dupctl/internal/sim"
	"github.com/dupctl/dupctl/internal/worker"
	"github.com/spf13/cobra"
)

// MatrixOptions are one `dupctl simulate matrix` run.
type MatrixOptions struct {
	Factory   *cmdutil.Factory
	Scenarios []*sim.Scenario
	Profiles  []worker.Profile
	MaxStates int
	Shard     sim.Shard
}

// NewCmdMatrix is `dupctl simulate matrix`.
func NewCmdMatrix(f *cmdutil.Factory, runF func(*MatrixOptions) error) *cobra.Command {
	var maxStates int
	var shard string
	var profiles []string
	cmd := &cobra.Command{
		Use:   "matrix [scenario...]",
		Short: "Every scenario under every profile, exhaustively, against the documented expectations",
		Long: `Matrix explores every scenario (or the ones named) under every mitigation
profile, exhaustively in each scenario's small scope, and compares each
cell with its documented expectation (docs/simulate.md): DUP (a duplicate
side effect must be found), LOSS (a job must be lost: the trade-off of
ack-first and claim-first), ok (neither can happen).

A cell that differs is a SIM_MATRIX_MISMATCH error, so
'dupctl simulate matrix --fail-on error' is a CI gate on the simulator's
own claims.` + exitStatus,
		Example: `  dupctl simulate matrix
  dupctl simulate matrix crash lock-expiry
  dupctl simulate matrix --shard 1/2 -o junit > matrix.xml`,
		ValidArgs: scenarioNames(),
		RunE: func(cmd *cobra.Command, args []string) error {
			opts := &MatrixOptions{Factory: f, MaxStates: maxStates}
			if maxStates < 1 {
				return exitcode.UsageErrorf("--max-states must be positive")
			}
			var err error
			if opts.Shard, err = parseShard(shard); err != nil {
				return err
			}
			if len(args) == 0 {
				opts.Scenarios = sim.Scenarios()
			}
			for _, a := range args {
				sc, err := sim.ScenarioByName(a)
				if err != nil {
					return exitcode.UsageErrorf("%w", err)
				}
				opts.Scenarios = append(opts.Scenarios, sc)
			}
			if opts.Profiles, err = parseProfiles(profiles); err != nil {
				return err
			}
			if runF != nil {
				return runF(opts)
			}
			return runMatrix(cmd.Context(), opts)
		},
	}
	cmd.Flags().IntVar(&maxStates, "max-states", 5_000_000, "stop a cell's exploration after this many states")
	cmd.Flags().StringVar(&shard, "shard", "", "explore only cells k, k+n, ... (k/n), to split the work across CI jobs")
	cmd.Flags().StringSliceVar(&profiles, "profile", nil, "profiles (columns) to explore (default: all)")
	return cmd
}

func scenarioNames() []string {
	var out []string
	for _, sc := range sim.Scenarios() {
		out = append(out, sc.Name)
	}
	return out
}

type cellJSON struct {
	Scenario string `json:"scenario"`
	Profile  string `json:"profile"`
	Expected string `json:"expected"`
	Observed string `json:"observed"`
	Found    string `json:"violations"`
	States   int    `json:"states"`
	Complete bool   `json:"complete"`
	Match    bool   `json:"match"`
	Skipped  bool   `json:"skipped_by_shard,omitempty"`
}

func runMatrix(ctx context.Context, o *MatrixOptions) error {
	m, err := sim.RunMatrix(ctx, o.Scenarios, o.Profiles, o.MaxStates, o.Shard)
	if err != nil {
		return err
	}
	rep := &findings.Report{Command: "simulate matrix"}
	rep.Check(sim.RuleMatrixMismatch.Code, sim.RuleIncomplete.Code)
	cells := []cellJSON{}
	for _, row := range m.Cells {
		for _, c := range row {
			subject := c.Scenario + "/" + c.Profile
			cells = append(cells, cellJSON{Scenario: c.Scenario, Profile: c.Profile, Expected: c.Expected.String(), Observed: c.Observed.String(),
				Found: c.Found.String(), States: c.States, Complete: c.Complete, Match: c.Match(), Skipped: c.States < 0})
			if c.States < 0 {
				continue
			}
			if !c.Complete {
				rep.Add(sim.RuleIncomplete.New(subject, fmt.Sprintf("stopped after %s states", count(c.States))))
				continue
			}
			if c.Expected != c.Observed {
				rep.Add(sim.RuleMatrixMismatch.New(subject, fmt.Sprintf("documented %s, observed %s", c.Expected, c.Observed),
					"dupctl simulate "+c.Scenario+" --profile "+c.Profile))
			}
		}
	}
	rep.Data = map[string]any{"cells": cells, "states": m.States}
	return o.Factory.Emit(ctx, report.Document{Report: rep, Text: func(w io.Writer, th *report.Theme) error {
		return writeMatrix(w, th, m)
	}})
}

func writeMatrix(w io.Writer, th *report.Theme, m *sim.Matrix) error {
	header := []string{"PROFILE"}
	for _, sc := range m.Scenarios {
		header = append(header, sc.Short)
	}
	t := report.NewTable(header...)
	cells, differ := 0, 0
	for j, p := range m.Profiles {
		row := []string{p.Name}
		for i := range m.Scenarios {
			c := m.Cells[i][j]
			text := c.Observed.String()
			switch {
			case c.States < 0:
				text = th.Faint("·")
			case !c.Complete:
				text = th.Severity(findings.Warn, text+"?")
			case c.Expected != c.Observed:
				text = th.Mark(text + "≠" + c.Expected.String())
				differ++
			case c.Observed == sim.ExpectSafe:
				text = th.Pass(text)
			default:
				text = th.Severity(findings.Error, text)
			}
			if c.States >= 0 {
				cells++
			}
			row = append(row, text)
		}
		t.Row(row...)
	}
	if err := t.Render(w); err != nil {
		return err
	}
	fmt.Fprintf(w, "\nDUP: a side effect ran twice; LOSS: a job was lost; ok: neither, in every schedule of the scope.\n")
	fmt.Fprintf(w, "%d cells explored exhaustively (%s states); %d differ from the documented expectation.\n", cells, count(m.States), differ)
	return nil
}
