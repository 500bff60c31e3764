package audit

import (
	"fmt"
	"github.com/dupctl/dupctl/internal/idemtable"
	"io"

	auditcache "github.com/dupctl/dupctl/internal/audit/cache"

	"github.com/dupctl/dupctl/internal/platform/english"
	"github.com/dupctl/dupctl/internal/platform/report"
)

func writeCache(w io.Writer, th *report.Theme, r *auditcache.Result) error {
	fmt.Fprintf(w, "%s %s (%s values) against %s (key %s, status %s)\n", th.Strong("audit cache:"), r.Pattern, r.Value, r.Table,
		idemtable.DisplayIdent(r.KeyColumn), idemtable.DisplayIdent(r.StatusColumn))
	fmt.Fprintf(w, "live messages: %s\n", r.Liveness)
	lookup := "one indexed query per SCAN page"
	if r.Lookup == auditcache.LookupScan {
		lookup = "the table read once, matched in memory"
	}
	fmt.Fprintf(w, "database: %s\n", lookup)
	if rc := r.Replica; rc != nil && rc.State != nil {
		fmt.Fprintf(w, "replica: %s\n", rc.State.Describe())
		fmt.Fprintf(w, "replica keys: %s\n", replicaKeysText(rc))
	}
	for _, n := range r.Notes {
		fmt.Fprintf(w, "%s\n", th.Faint("note: "+n))
	}
	fmt.Fprintln(w)
	t := report.NewTable("READ", "COMPARED", "AGREE", "DISAGREE", "IN FLIGHT", "VANISHED").AlignRight(0, 1, 2, 3, 4, 5)
	disagree := r.Compared - r.Agree - r.Transient
	t.Row(english.Number(r.Read), english.Number(r.Compared), english.Number(r.Agree), english.Number(disagree),
		english.Number(r.Transient), english.Number(r.Vanished))
	return t.Render(w)
}

// replicaKeysText is what the comparison with the replica found.
func replicaKeysText(rc *auditcache.ReplicaCompare) string {
	if rc.CaughtUp {
		return "the replica had replayed past the primary's snapshot: nothing can differ"
	}
	keys := english.Number(rc.Compared) + " " + english.Plural(rc.Compared, "key", "keys")
	n := rc.Missing + rc.Stale
	if n == 0 {
		return fmt.Sprintf("%s (%s): the same on the replica", keys, rc.Keys)
	}
	return fmt.Sprintf("%s of %s (%s) differ on the replica, %s SUCCEEDED on the primary only",
		english.Number(n), keys, rc.Keys, english.Number(rc.NotDone))
}
