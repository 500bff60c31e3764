package keys

import (
	"fmt"
	"io"
	"strings"

	"github.com/dupctl/dupctl/internal/keys"
	"github.com/dupctl/dupctl/internal/platform/english"
	"github.com/dupctl/dupctl/internal/platform/report"
)

// writeUnstable is the table view of `keys unstable`.
func writeUnstable(w io.Writer, th *report.Theme, r *keys.Result, verbose bool) error {
	in := r.Input
	fmt.Fprintf(w, "%s %s lines read as %s (%s unreadable), %s idempotency keys on %s business keys\n", th.Strong("keys unstable:"),
		english.Number(in.Lines), in.ReadAs(), english.Number(in.Malformed), english.Number(int64(r.Keys)), english.Number(int64(r.Groups)))
	fmt.Fprintf(w, "%d unstable, %d reused, %d job types with keyless side effects, %d case variants\n",
		len(r.Unstable), len(r.Reused), len(r.Missing), len(r.CaseVariants))
	if len(r.Unstable) == 0 {
		return nil
	}
	fmt.Fprintln(w)
	t := report.NewTable("BUSINESS KEY", "KEYS", "RETRIES", "VARYING", "CLASS", "TEMPLATE", "EFFECTS").AlignRight(1, 6).Shorten(0)
	const limit = 20
	for i, u := range r.Unstable {
		if i == limit && !verbose {
			break
		}
		retry := "yes"
		if !u.Confirmed {
			retry = "unproven"
		}
		vary := strings.Join(u.Values, " → ")
		if len(vary) > 60 {
			vary = vary[:57] + "..."
		}
		t.Row(u.BusinessKey, fmt.Sprint(len(u.Uses)), retry, vary, string(u.Class), u.Template, fmt.Sprint(u.Effects))
	}
	if err := t.Render(w); err != nil {
		return err
	}
	if len(r.Unstable) > limit && !verbose {
		fmt.Fprintln(w, th.Faint(fmt.Sprintf("(%d more: use -v to show all)", len(r.Unstable)-limit)))
	}
	return nil
}
