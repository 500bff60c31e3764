package simulate

import (
	"fmt"
	"io"
	"strings"

	"github.com/dupctl/dupctl/internal/platform/findings"
	"github.com/dupctl/dupctl/internal/platform/report"
	"github.com/dupctl/dupctl/internal/sim"
)

func writeMatrix(w io.Writer, th *report.Theme, m *sim.MatrixResult) error {
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

// writeMatrixHTML is the matrix as a grid: a row per profile, a column
// per scenario, each cell its outcome in words and colour (a cell that
// differs from the documented expectation outlined, with both), then the
// same notes as the terminal.
func writeMatrixHTML(w io.Writer, m *sim.MatrixResult) error {
	io.WriteString(w, "<div class=\"scroll\"><table class=\"matrix\"><thead><tr><th scope=\"col\">profile</th>")
	for _, sc := range m.Scenarios {
		fmt.Fprintf(w, "<th scope=\"col\"><abbr title=\"%s\">%s</abbr></th>", report.Escape(sc.Name+": "+sc.Title), report.Escape(sc.Short))
	}
	io.WriteString(w, "</tr></thead><tbody>\n")
	for j, p := range m.Profiles {
		fmt.Fprintf(w, "<tr><th scope=\"row\">%s</th>", report.Escape(p.Name))
		for i, sc := range m.Scenarios {
			c := m.Cells[i][j]
			text, class := c.Observed.String(), "cell-"+strings.ToLower(c.Observed.String())
			switch {
			case c.States < 0:
				text, class = "·", "cell-none"
			case !c.Complete:
				text += "?"
			case c.Expected != c.Observed:
				text += " ≠ " + c.Expected.String()
				class += " cell-differs"
			}
			fmt.Fprintf(w, "<td class=\"%s\" data-scenario=\"%s\" data-profile=\"%s\" data-outcome=\"%s\" title=\"%s under %s: %s\">%s</td>",
				report.Escape(class), report.Escape(sc.Name), report.Escape(p.Name), report.Escape(c.Observed.String()),
				report.Escape(sc.Name), report.Escape(p.Name), report.Escape(text), report.Escape(text))
		}
		io.WriteString(w, "</tr>\n")
	}
	io.WriteString(w, "</tbody></table></div>\n")
	return report.TextHTML(w, func(w io.Writer, _ *report.Theme) error {
		cells, differ := 0, 0
		for i := range m.Scenarios {
			for j := range m.Profiles {
				c := m.Cells[i][j]
				if c.States >= 0 {
					cells++
				}
				if c.States >= 0 && c.Complete && c.Expected != c.Observed {
					differ++
				}
			}
		}
		fmt.Fprintf(w, "DUP: a side effect ran twice; LOSS: a job was lost; ok: neither, in every schedule of the scope.\n")
		fmt.Fprintf(w, "%d cells explored exhaustively (%s states); %d differ from the documented expectation.\n",
			cells, count(m.States), differ)
		return nil
	})
}
