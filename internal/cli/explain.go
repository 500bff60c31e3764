package cli

import (
	"encoding/json"
	"fmt"
	"strings"

	"github.com/dupctl/dupctl/internal/cli/cmdutil"

	"github.com/spf13/cobra"

	"github.com/dupctl/dupctl/internal/platform/exitcode"
	"github.com/dupctl/dupctl/internal/platform/findings"
	"github.com/dupctl/dupctl/internal/platform/report"
)

// NewCmdExplain documents finding codes from the rule catalog.
func NewCmdExplain(f *cmdutil.Factory) *cobra.Command {
	return &cobra.Command{
		Use:   "explain [CODE]",
		Short: "Explain a finding code, or list every code",
		Long: `Explain prints what a finding code means, how it leads to duplicate
processing and how to fix it. Without a code it lists every code this
build can report. docs/checks.md is the same text.`,
		Example: `  dupctl explain
  dupctl explain DUP_EFFECT_LOCK_EXPIRY
  dupctl explain -o json`,
		Args: cobra.MaximumNArgs(1),
		ValidArgsFunction: func(cmd *cobra.Command, args []string, toComplete string) ([]string, cobra.ShellCompDirective) {
			var codes []string
			for _, r := range f.Catalog.All() {
				codes = append(codes, r.Code+"\t"+r.Title)
			}
			return codes, cobra.ShellCompDirectiveNoFileComp
		},
		RunE: func(cmd *cobra.Command, args []string) error {
			out := f.IO.Out
			switch f.Global.Output {
			case report.FormatJSON:
				return explainJSON(f, args)
			case report.FormatJUnit:
				return exitcode.UsageErrorf("explain writes -o table or -o json: it checks nothing, so it has no JUnit form")
			}
			if len(args) == 0 {
				t := report.NewTable("CODE", "SEVERITY", "TITLE")
				for _, r := range f.Catalog.All() {
					t.Row(r.Code, r.Severity.String(), r.Title)
				}
				return t.Render(report.Fitted(out, f.IO.TableWidth()))
			}
			r, ok := f.Catalog.Lookup(args[0])
			if !ok {
				return exitcode.UsageErrorf("unknown finding code %q: run 'dupctl explain' for the list", args[0])
			}
			fmt.Fprintf(out, "%s: %s\n\nseverity: %s\n", r.Code, r.Title, r.Severity)
			if r.Since != "" {
				fmt.Fprintf(out, "since:    %s\n", r.Since)
			}
			if r.Doc != "" {
				fmt.Fprintf(out, "\n%s\n", strings.TrimSpace(r.Doc))
			}
			fmt.Fprintf(out, "\nFix: %s\n", r.Fix)
			return nil
		},
	}
}

// ruleJSON is one rule as `explain -o json` writes it.
type ruleJSON struct {
	Code     string `json:"code"`
	Severity string `json:"severity"`
	Title    string `json:"title"`
	Doc      string `json:"doc"`
	Fix      string `json:"fix"`
	Since    string `json:"since"`
}

// explainJSON writes every rule (a JSON array) or the one asked for (an
// object).
func explainJSON(f *cmdutil.Factory, args []string) error {
	toJSON := func(r findings.Rule) ruleJSON {
		return ruleJSON{Code: r.Code, Severity: r.Severity.String(), Title: r.Title, Doc: strings.TrimSpace(r.Doc), Fix: r.Fix, Since: r.Since}
	}
	var v any
	if len(args) == 0 {
		all := []ruleJSON{}
		for _, r := range f.Catalog.All() {
			all = append(all, toJSON(r))
		}
		v = all
	} else {
		r, ok := f.Catalog.Lookup(args[0])
		if !ok {
			return exitcode.UsageErrorf("unknown finding code %q: run 'dupctl explain' for the list", args[0])
		}
		v = toJSON(r)
	}
	enc := json.NewEncoder(f.IO.Out)
	enc.SetIndent("", "  ")
	return enc.Encode(v)
}
