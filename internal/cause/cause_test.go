package cause_test

import (
	"slices"
	"strings"
	"testing"

	auditlogs "github.com/dupctl/dupctl/internal/audit/logs"
	"github.com/dupctl/dupctl/internal/cause"
	"github.com/dupctl/dupctl/internal/sim/chaos"
)

// TestSourcesUsePrecedence holds both sources to the one precedence: each
// source's detector table covers exactly the causes, in the order the
// cause model gives, but for those it says it cannot see. Worker chaos
// sees them all; audit logs cannot see a lock lost in a failover.
func TestSourcesUsePrecedence(t *testing.T) {
	want := cause.Codes()
	if got := chaos.CauseOrder(); !slices.Equal(got, want) {
		t.Errorf("worker chaos tries the causes in the order %v, want the precedence %v", got, want)
	}
	blind := auditlogs.CausesBlind()
	if len(blind) != 1 || blind[0].Code != cause.LockFailover.Code || blind[0].Why == "" {
		t.Errorf("audit logs is blind to %v, want only %s, with a reason", blind, cause.LockFailover.Code)
	}
	wantLogs := slices.DeleteFunc(slices.Clone(want), func(c string) bool { return c == cause.LockFailover.Code })
	if got := auditlogs.CauseOrder(); !slices.Equal(got, wantLogs) {
		t.Errorf("audit logs tries the causes in the order %v, want the precedence %v", got, wantLogs)
	}
}

// TestAuditReportsEveryCause: audit logs' rules are the cause model's,
// in its order, then its own input checks.
func TestAuditReportsEveryCause(t *testing.T) {
	var got []string
	for _, r := range auditlogs.Rules() {
		got = append(got, r.Code)
	}
	var want []string
	for _, r := range cause.Rules() {
		want = append(want, r.Code)
	}
	if !slices.Equal(got[:len(want)], want) {
		t.Errorf("audit logs' rules start %v, want the cause model's %v", got[:len(want)], want)
	}
}

// TestEvidenceIsWritten: every cause says what evidence names it, and how
// each source sees it.
func TestEvidenceIsWritten(t *testing.T) {
	seen := map[string]bool{}
	for _, c := range cause.Precedence() {
		if !strings.HasPrefix(c.Code, "DUP_EFFECT_") || seen[c.Code] {
			t.Errorf("cause code %q: want a unique DUP_EFFECT_ code", c.Code)
		}
		seen[c.Code] = true
		if len(c.Needs) < 2 || c.InLogs == "" || c.OnWire == "" {
			t.Errorf("%s: the evidence it needs is not written down (Needs %d facts, InLogs %q, OnWire %q)",
				c.Code, len(c.Needs), c.InLogs, c.OnWire)
		}
		if c.Title == "" || c.Doc == "" || c.Fix == "" {
			t.Errorf("%s: rule without title, doc or fix", c.Code)
		}
	}
}

// TestNewDetectorsOrdersAndRefuses: a table is run in precedence order
// whatever order it was written in, and a table that misses a cause or
// names a code that is not one is refused.
func TestNewDetectorsOrdersAndRefuses(t *testing.T) {
	table := map[string]int{}
	for i, code := range cause.Codes() {
		table[code] = i
	}
	var order []int
	for _, i := range cause.NewDetectors(table).All() {
		order = append(order, i)
	}
	if !slices.IsSorted(order) || len(order) != len(table) {
		t.Errorf("detectors ran in the order %v", order)
	}
	missing := map[string]int{}
	for code, i := range table {
		missing[code] = i
	}
	delete(missing, cause.Race.Code)
	extra := map[string]int{"DUP_EFFECT_UNEXPLAINED": 99}
	for code, i := range table {
		extra[code] = i
	}
	for name, bad := range map[string]map[string]int{"missing": missing, "extra": extra} {
		func() {
			defer func() {
				if recover() == nil {
					t.Errorf("a table with a %s code was accepted", name)
				}
			}()
			cause.NewDetectors(bad)
		}()
	}
	// A cause the source says it cannot see, with the reason, may be
	// missing; without a reason, or with a detector too, it may not.
	d := cause.NewDetectors(missing, cause.Blind{Code: cause.Race.Code, Why: "no timestamps"})
	if slices.Contains(d.Codes(), cause.Race.Code) || len(d.Blind()) != 1 {
		t.Errorf("a blind cause is run: %v, blind %v", d.Codes(), d.Blind())
	}
	for name, blind := range map[string]struct {
		table map[string]int
		b     cause.Blind
	}{
		"no reason":     {missing, cause.Blind{Code: cause.Race.Code}},
		"also detected": {table, cause.Blind{Code: cause.Race.Code, Why: "x"}},
		"not a cause":   {table, cause.Blind{Code: "DUP_EFFECT_UNEXPLAINED", Why: "x"}},
	} {
		func() {
			defer func() {
				if recover() == nil {
					t.Errorf("a blind cause with %s was accepted", name)
				}
			}()
			cause.NewDetectors(blind.table, blind.b)
		}()
	}
}
