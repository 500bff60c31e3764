package simulate

import (
	"context"
	"io"

	"github.com/spf13/cobra"

	"github.com/dupctl/dupctl/internal/cli/cmdutil"
	"github.com/dupctl/dupctl/internal/platform/report"
	"github.com/dupctl/dupctl/internal/sim"
	"github.com/dupctl/dupctl/internal/worker"
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
			if err := (sim.MatrixOptions{MaxStates: maxStates}).Validate(); err != nil {
				return err
			}
			var err error
			if opts.Shard, err = sim.ParseShard(shard); err != nil {
				return err
			}
			if len(args) == 0 {
				opts.Scenarios = sim.Scenarios()
			}
			for _, a := range args {
				sc, err := sim.ScenarioByName(a)
				if err != nil {
					return err
				}
				opts.Scenarios = append(opts.Scenarios, sc)
			}
			if opts.Profiles, err = sim.ParseProfiles(profiles); err != nil {
				return err
			}
			if runF != nil {
				return runF(opts)
			}
			return runMatrix(cmd.Context(), opts)
		},
	}
	cmdutil.FieldFlags(cmd, fieldFlags)
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

func runMatrix(ctx context.Context, o *MatrixOptions) error {
	m, err := sim.Matrix(ctx, sim.MatrixOptions{Scenarios: o.Scenarios, Profiles: o.Profiles, MaxStates: o.MaxStates, Shard: o.Shard})
	if err != nil {
		return err
	}
	return o.Factory.Emit(ctx, report.Document{Report: m.Report(),
		Text: func(w io.Writer, th *report.Theme) error { return writeMatrix(w, th, m) },
		HTML: func(w io.Writer) error { return writeMatrixHTML(w, m) },
	})
}
