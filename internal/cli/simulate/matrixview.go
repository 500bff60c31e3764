package simulate

import (
	"fmt"
	"io"

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
