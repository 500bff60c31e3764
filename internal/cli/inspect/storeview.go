package inspect

import (
	"fmt"
	"github.com/dupctl/dupctl/internal/idemtable"
	"io"
	"strings"

	"github.com/dupctl/dupctl/internal/inspect/store"
	"github.com/dupctl/dupctl/internal/platform/english"
	"github.com/dupctl/dupctl/internal/platform/findings"
	"github.com/dupctl/dupctl/internal/platform/report"
)

func writeStore(w io.Writer, th *report.Theme, res *store.Result) error {
	if len(res.Discovered) > 0 {
		fmt.Fprintf(w, "%s %d likely idempotency %s\n\n", th.Strong("inspect store:"), len(res.Discovered),
			english.Plural(len(res.Discovered), "table", "tables"))
	}
	if r := res.Replica; r != nil {
		fmt.Fprintf(w, "%s %s\n\n", th.Strong("replica:"), r.Describe())
	}
	for i, t := range res.Tables {
		if i > 0 {
			fmt.Fprintln(w)
		}
		if err := writeTable(w, th, t); err != nil {
			return err
		}
	}
	return nil
}

func writeTable(w io.Writer, th *report.Theme, t *store.TableResult) error {
	rows := "about " + english.Number(max(t.RowsEstimate, 0)) + " rows"
	if t.Rows != nil {
		rows = english.Number(*t.Rows) + " rows"
	}
	fmt.Fprintf(w, "%s %s (%s)\n", th.Strong("table"), t.Table, rows)
	cols := []string{"key " + idents(t.KeyColumns...) + keySource(t.KeySource)}
	if t.StatusColumn != "" {
		cols = append(cols, "status "+idents(t.StatusColumn))
	}
	if len(t.TimeColumns) > 0 {
		cols = append(cols, "time "+idents(t.TimeColumns...))
	}
	if t.AttemptColumn != "" {
		cols = append(cols, "attempts "+idents(t.AttemptColumn))
	}
	if len(t.BusinessColumns) > 0 {
		cols = append(cols, "business key "+idents(t.BusinessColumns...))
	}
	fmt.Fprintf(w, "columns: %s\n", strings.Join(cols, "; "))
	if t.Coverage != "" {
		fmt.Fprintf(w, "key: %s\n", coverageText(th, t.Coverage))
	}
	if p := t.Partitioning; p != nil {
		fmt.Fprintf(w, "partitioned: %s\n", partitionText(th, p))
	}
	if len(t.Indexes) > 0 {
		fmt.Fprintln(w)
		it := report.NewTable("UNIQUE INDEX", "KIND", "COLUMNS", "WHERE", "VALID", "COVERAGE")
		for _, ix := range t.Indexes {
			cov := string(ix.Coverage)
			if len(ix.Gaps) > 0 {
				cov += ": " + strings.Join(ix.Gaps, ", ")
			}
			valid := "yes"
			if !ix.Valid {
				valid = th.Severity(findings.Error, "NO")
			}
			it.Row(ix.Name, ix.Kind, strings.Join(ix.Columns, ", "), ix.Predicate, valid, cov)
		}
		if err := it.Render(w); err != nil {
			return err
		}
	}
	if len(t.Statuses) > 0 {
		fmt.Fprintln(w)
		st := report.NewTable("STATUS", "ROLE", "ROWS").AlignRight(2)
		for _, s := range t.Statuses {
			role := s.Role
			if role == "" {
				role = th.Severity(findings.Warn, "unexpected")
			}
			st.Row(s.Display(), role, english.Number(s.Rows))
		}
		if err := st.Render(w); err != nil {
			return err
		}
	}
	fmt.Fprintln(w)
	ct := report.NewTable("CHECK", "RESULT")
	for _, row := range checkRows(t) {
		ct.Row(row[0], row[1])
	}
	return ct.Render(w)
}

// idents shows column names as they would be typed back.
func idents(names ...string) string {
	out := make([]string, len(names))
	for i, n := range names {
		out[i] = idemtable.DisplayIdent(n)
	}
	return strings.Join(out, ", ")
}

func keySource(s string) string {
	if s == "column name" {
		return " (found by name)"
	}
	return ""
}

// partitionText is the partitioning line: red when a key can land in two
// partitions.
func partitionText(th *report.Theme, p *store.Partitioning) string {
	s := p.Describe()
	switch {
	case p.ByKey:
		return s + ", " + th.Pass("every key in one partition")
	case p.Key != "":
		return s + ", " + th.Severity(findings.Error, "a key can land in two partitions (by "+idents(p.Outside...)+")")
	}
	return s
}

func coverageText(th *report.Theme, c string) string {
	if strings.HasPrefix(c, "unique:") {
		return th.Pass(c)
	}
	return th.Severity(findings.Error, c)
}

// checkRows is one line per data check: what it found, or why it did not run.
func checkRows(t *store.TableResult) [][2]string {
	var out [][2]string
	groups := func(name string, g *store.Groups, one, many string) {
		if g == nil {
			return
		}
		if g.Groups == 0 {
			out = append(out, [2]string{name, "none"})
			return
		}
		out = append(out, [2]string{name,
			fmt.Sprintf("%s %s (%s)", english.Number(g.Groups), english.Plural(int(g.Groups), one, many), rowsText(g.Rows))})
	}
	groups(store.CheckDuplicates, t.Duplicates, "key with more than one row", "keys with more than one row")
	if d := t.Duplicates; d != nil && d.AcrossPartitions != nil && *d.AcrossPartitions > 0 {
		out[len(out)-1][1] += fmt.Sprintf(", %s in more than one partition", english.Number(*d.AcrossPartitions))
	}
	groups(store.CheckNormalized, t.NormalizedDuplicates, "key spelled several ways", "keys spelled several ways")
	groups(store.CheckBusiness, t.MultipleSucceeded,
		"business key succeeded under several keys", "business keys succeeded under several keys")
	if s := t.Stuck; s != nil {
		out = append(out, [2]string{store.CheckStuck, fmt.Sprintf("%s in PROCESSING for more than %s (%s)", rowsText(s.Rows), s.After, s.Since)})
	}
	if ow := t.Overwritten; ow != nil {
		res := "nothing to read"
		if len(ow.Evidence) > 0 {
			res = fmt.Sprintf("%s, from %s", rowsText(ow.Rows), strings.Join(ow.Evidence, "; "))
		}
		out = append(out, [2]string{store.CheckOverwritten, res})
	}
	if rc := t.Replica; rc != nil {
		out = append(out, [2]string{store.CheckReplica, replicaCheckText(rc)})
	}
	for _, s := range t.Skipped {
		out = append(out, [2]string{s.Check, "skipped: " + s.Reason})
	}
	return out
}

func rowsText(n int64) string {
	if n == 0 {
		return "no rows"
	}
	return english.Number(n) + " " + english.Plural(int(n), "row", "rows")
}

func replicaCheckText(rc *store.ReplicaCompare) string {
	if rc.CaughtUp {
		return "the replica had replayed past the primary's snapshot: nothing can differ"
	}
	n := rc.Missing + rc.Stale
	if n == 0 {
		return fmt.Sprintf("%s (%s): the same on the replica", rowsText(rc.Compared), rc.Order)
	}
	return fmt.Sprintf("%s of %s (%s) missing or stale on the replica, %s done on the primary only",
		english.Number(n), rowsText(rc.Compared), rc.Order, english.Number(rc.NotDone))
}
