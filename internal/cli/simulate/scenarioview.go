package simulate

import (
	"fmt"
	"io"
	"strings"

	"github.com/dupctl/dupctl/internal/platform/english"
	"github.com/dupctl/dupctl/internal/platform/findings"
	"github.com/dupctl/dupctl/internal/platform/report"
	"github.com/dupctl/dupctl/internal/sim"
	"github.com/dupctl/dupctl/internal/worker"
)

// scenarioDocument is a scenario run for every output: the table view,
// the shortest failing schedule as a Markdown list, and as HTML its
// timeline per failing profile beside the same schedule under every
// profile.
func scenarioDocument(res *sim.Result, verbose bool) report.Document {
	return report.Document{Report: res.Report(),
		Text: func(w io.Writer, th *report.Theme) error { return writeScenario(w, th, res, verbose) },
		Markdown: func(w io.Writer) error {
			for _, pr := range res.Profiles {
				if ex := pr.Example; ex != nil {
					writeScheduleMarkdown(w, fmt.Sprintf("%s: %s (replay: dupctl simulate replay %s)", pr.Profile.Name,
						headline(res, ex), ex.Token), &ex.Timeline)
				}
			}
			return nil
		},
		HTML: func(w io.Writer) error { return writeScenarioHTML(w, res) },
	}
}

func writeScenarioHTML(w io.Writer, res *sim.Result) error {
	sc := res.Scenario
	fmt.Fprintf(w, "<p>%s. %s</p>\n", report.Escape(upperFirst(sc.Title)), report.Escape(sc.Cause))
	if len(res.Profiles) > 0 {
		fmt.Fprintf(w, "<p class=\"note\">Scope: %s</p>\n", report.Escape(scopeText(&res.Profiles[0].Config)))
	}
	fmt.Fprintf(w, "<div class=\"scroll\"><table><thead><tr><th scope=\"col\">profile</th><th scope=\"col\">expected</th><th "+
		"scope=\"col\">result</th><th scope=\"col\">explored</th><th scope=\"col\">mitigations</th></tr></thead><tbody>\n")
	for i := range res.Profiles {
		pr := &res.Profiles[i]
		exp := "-"
		if pr.HasExpected {
			exp = pr.Expected.String()
		}
		class := "pass"
		if pr.Found.Has(sim.VDuplicate) || pr.Found.Has(sim.VLoss) {
			class = "fail"
		}
		fmt.Fprintf(w, "<tr><td>%s</td><td>%s</td><td><span class=\"badge %s\">%s</span></td><td>%s</td><td>%s</td></tr>\n",
			report.Escape(pr.Profile.Name),
			report.Escape(exp), class, report.Escape(pr.Outcome().String()), report.Escape(sim.ExploredText(pr)), report.Escape(pr.Profile.Summary))
	}
	io.WriteString(w, "</tbody></table></div>\n")
	for _, pr := range res.Profiles {
		ex := pr.Example
		if ex == nil {
			continue
		}
		fmt.Fprintf(w, "<h2>%s: %s</h2>\n<p class=\"note\">replay: <code>dupctl simulate replay %s</code></p>\n",
			report.Escape(pr.Profile.Name), report.Escape(headline(res, ex)), report.Escape(ex.Token))
		if err := writeTimelineHTML(w, &ex.Timeline, fmt.Sprintf("%s under %s: %s", sc.Name, pr.Profile.Name, sim.ViolationText(ex.Violation)),
			sc.Cause); err != nil {
			return err
		}
		writeCounterfactualsHTML(w, ex.Counterfactual)
	}
	return nil
}

func writeScenario(w io.Writer, th *report.Theme, res *sim.Result, verbose bool) error {
	sc := res.Scenario
	fmt.Fprintf(w, "%s %s\n", th.Strong("simulate "+sc.Name+":"), sc.Title)
	fmt.Fprintf(w, "%s\n", th.Faint(sc.Cause))
	if len(res.Profiles) > 0 {
		fmt.Fprintf(w, "Scope: %s\n", scopeText(&res.Profiles[0].Config))
	}
	fmt.Fprintln(w)
	t := report.NewTable("PROFILE", "EXPECTED", "RESULT", "EXPLORED", "MITIGATIONS")
	for _, pr := range res.Profiles {
		exp := "-"
		if pr.HasExpected {
			exp = pr.Expected.String()
		}
		t.Row(pr.Profile.Name, exp, outcomeText(th, pr.Found), sim.ExploredText(&pr), pr.Profile.Summary)
	}
	if err := t.Render(w); err != nil {
		return err
	}
	if len(res.Profiles) > 0 && res.Profiles[0].ScopeChanged {
		fmt.Fprintf(w, "%s\n", th.Faint("EXPECTED: - flags changed the scenario's scope: its documented outcomes do not apply"))
	}
	for _, pr := range res.Profiles {
		ex := pr.Example
		if ex == nil {
			continue
		}
		fmt.Fprintf(w, "\n%s %s\n", th.Strong(pr.Profile.Name+":"), headline(res, ex))
		fmt.Fprintf(w, "replay: dupctl simulate replay %s\n\n", ex.Token)
		if err := writeTimeline(w, th, &ex.Timeline); err != nil {
			return err
		}
		fmt.Fprintf(w, "\n%s\n", th.Strong("The same schedule under every profile:"))
		if err := writeCounterfactuals(w, th, ex.Counterfactual); err != nil {
			return err
		}
		for _, cf := range ex.Counterfactual {
			if cf.Timeline != nil && cf.Profile.Name != pr.Profile.Name {
				fmt.Fprintf(w, "\n%s\n", th.Strong(fmt.Sprintf("The same schedule under %s (%s):", cf.Profile.Name, outcomeText(th, cf.Found))))
				if err := writeTimeline(w, th, cf.Timeline); err != nil {
					return err
				}
			}
		}
	}
	return nil
}

func scopeText(c *sim.Config) string {
	parts := []string{
		fmt.Sprintf("%d %s, %d %s on %d business %s", c.Workers, english.Plural(c.Workers, "worker", "workers"), c.Jobs, english.Plural(c.Jobs,
			"job", "jobs"), c.Keys, english.Plural(c.Keys, "key", "keys")),
		"job " + c.Duration.String(),
		"lock TTL " + sim.FormatMillis(c.LockTTL),
	}
	if c.AckTimeout > 0 {
		parts = append(parts, "ack timeout "+sim.FormatMillis(c.AckTimeout))
	}
	if c.Profile.StatusFrom == worker.StatusReplica {
		parts = append(parts, "replica lag "+sim.FormatMillis(c.ReplicaLag))
	}
	parts = append(parts, "faults: "+sim.FaultsText(c))
	return strings.Join(parts, "; ")
}

// outcomeText is the matrix word for what was found, styled.
// headline says what a profile's failing schedule reproduced, in how many
// steps, and which profiles stop it: the same words in every format.
func headline(res *sim.Result, ex *sim.Counterexample) string {
	shrunk := "" // said only when the search's schedule was longer
	if ex.OriginalSteps > ex.Steps {
		shrunk = fmt.Sprintf(" (shrunk from %d)", ex.OriginalSteps)
	}
	return fmt.Sprintf("%s reproduced in %d steps%s%s", reproduced(ex.Violation), ex.Steps, shrunk, stoppedBy(res))
}

// reproduced names what a failing schedule shows, for a headline that
// says it happened ("duplicate reproduced in 12 steps").
func reproduced(v sim.Violation) string {
	switch v {
	case sim.VDuplicate:
		return "duplicate"
	case sim.VLoss:
		return "lost job"
	case sim.VNonOwnerUnlock:
		return "unlock by a non-owner"
	case sim.VLivelock:
		return "livelock"
	}
	return v.String()
}

// stoppedBy names the profiles under which nothing went wrong
// ("; safe stops it"), or "" when every profile run failed.
func stoppedBy(res *sim.Result) string {
	var ok []string
	for _, pr := range res.Profiles {
		if pr.Found == 0 {
			ok = append(ok, pr.Profile.Name)
		}
	}
	switch {
	case len(ok) == 0:
		return ""
	case len(ok) == 1:
		return "; " + ok[0] + " stops it"
	case len(ok) <= 3:
		return "; " + strings.Join(ok[:len(ok)-1], ", ") + " and " + ok[len(ok)-1] + " stop it"
	}
	return fmt.Sprintf("; %d profiles stop it (%s, ...)", len(ok), strings.Join(ok[:3], ", "))
}

func outcomeText(th *report.Theme, v sim.Violation) string {
	x := sim.OutcomeOf(v)
	s := x.String()
	if v.Has(sim.VNonOwnerUnlock) {
		s += " (non-owner unlock)"
	}
	if v.Has(sim.VLivelock) {
		s += " (livelock)"
	}
	if x == sim.ExpectSafe {
		return th.Pass(s)
	}
	return th.Severity(findings.Error, s)
}
