package doctor

import (
	"context"
	"errors"
	"strings"
	"testing"

	"github.com/dupctl/dupctl/internal/platform/config"
	"github.com/dupctl/dupctl/internal/platform/findings"
)

var (
	ruleA = findings.Rule{Code: "A_RULE", Severity: findings.Error, Title: "a", Fix: "fix a"}
	ruleW = findings.Rule{Code: "W_RULE", Severity: findings.Warn, Title: "w", Fix: "fix w"}
	ruleN = findings.Rule{Code: "NOT_CHECKED", Severity: findings.Info, Title: "n", Fix: "give the management URL"}
)

func ran(fs ...findings.Finding) func(context.Context) (*findings.Report, error) {
	return func(context.Context) (*findings.Report, error) {
		r := &findings.Report{}
		r.Add(fs...)
		return r, nil
	}
}

func item(t *testing.T, res *Result, id int) ItemResult {
	t.Helper()
	for _, it := range res.Items {
		if it.ID == id {
			return it
		}
	}
	t.Fatalf("no item %d", id)
	return ItemResult{}
}

// A line passes only when every check under it ran and held; otherwise it
// is partial and says what is missing, or not checked.
func TestLineStates(t *testing.T) {
	res, err := RunChecks(context.Background(), []Check{
		{Items: []int{1}, Name: "held", Run: ran()},
		{Items: []int{2}, Name: "held", Run: ran()},
		{Items: []int{2}, Name: "skipped", Skip: "no --redis-url"},
		{Items: []int{3}, Name: "nothing", Run: func(context.Context) (*findings.Report, error) {
			return nil, &NothingError{Reason: "no lock key matched"}
		}},
		{Items: []int{4, 7}, Name: "topology", PartialWhen: map[string][]int{"NOT_CHECKED": {7}},
			Run: ran(ruleN.New("broker", "checked queue existence only"))},
		{Items: []int{10}, Name: "model", Partial: "a model, not the worker", Run: ran()},
		{Items: []int{5}, Name: "failing", Run: ran(ruleA.New("x", "bad"))},
		{Items: []int{5}, Name: "skipped too", Skip: "no dlq"},
	})
	if err != nil {
		t.Fatal(err)
	}
	for id, want := range map[int]Status{1: Pass, 2: Partial, 3: NotChecked, 4: Pass, 7: Partial, 10: Partial, 5: Fail, 6: NotChecked} {
		if got := item(t, res, id).Status; got != want {
			t.Errorf("line %d: %s, want %s", id, got, want)
		}
	}
	if m := item(t, res, 2).Missing; len(m) != 1 || m[0] != "skipped: no --redis-url" {
		t.Errorf("line 2 missing %v", m)
	}
	if m := item(t, res, 7).Missing; len(m) != 1 || !strings.Contains(m[0], "checked queue existence only: give the management URL") {
		t.Errorf("line 7 missing %v", m)
	}
}

// A check that cannot run leaves its lines not checked with the reason;
// the others still run, and the error comes with the result.
func TestUnreachableSystemLeavesTheRestChecked(t *testing.T) {
	down := errors.New("cannot reach Redis")
	res, err := RunChecks(context.Background(), []Check{
		{Items: []int{3}, Name: "inspect lock", Run: func(context.Context) (*findings.Report, error) { return nil, down }},
		{Items: []int{2}, Name: "inspect store", Run: ran(ruleW.New("t", "stuck rows"))},
	})
	if !errors.Is(err, down) || res == nil {
		t.Fatalf("res %v, err %v", res, err)
	}
	if it := item(t, res, 3); it.Status != NotChecked || len(it.Skipped) != 1 ||
		!strings.Contains(it.Skipped[0], "could not run: cannot reach Redis") {
		t.Errorf("line 3: %+v", it)
	}
	if it := item(t, res, 2); it.Status != Warn {
		t.Errorf("line 2: %+v", it)
	}
}

// The same finding from several jobs' checks is reported once, naming them.
func TestFindingsOfSeveralJobsAreOne(t *testing.T) {
	same := ruleW.New("redis", "no AOF: a restart loses every lock")
	res, err := RunChecks(context.Background(), []Check{
		{Items: []int{3}, Name: "inspect lock of job a", Run: ran(same)},
		{Items: []int{3}, Name: "inspect lock of job b", Run: ran(same)},
	})
	if err != nil {
		t.Fatal(err)
	}
	if n := len(res.Report().Findings); n != 1 {
		t.Fatalf("%d findings, want 1", n)
	}
	if ev := res.Report().Findings[0].Evidence; len(ev) != 1 || ev[0] != "reported by: inspect lock of job a; inspect lock of job b" {
		t.Errorf("evidence %v", ev)
	}
}

// A value doctor took from dupctl.yaml is named as its key there, not as
// the flag of the command that would otherwise take it.
func TestConfigValuesNamedAsConfigKeys(t *testing.T) {
	c := cacheCheck(&env{}, config.Job{Name: "payments", CachePattern: "job:status", Idempotency: config.Idempotency{Table: "jobs"}})
	_, err := c.Run(context.Background())
	want := `job payments: cache_pattern "job:status": want exactly one {key} where the database key goes`
	if err == nil || !strings.HasPrefix(err.Error(), want) {
		t.Fatalf("got %v, want %s...", err, want)
	}
	if strings.Contains(err.Error(), "--") {
		t.Fatalf("doctor names a flag: %v", err)
	}
}

// A check with nothing to judge keeps what it found all the same: its
// findings are reported, an info one leaves the line not checked, one at
// warn or above moves it.
func TestNothingToJudgeKeepsItsFindings(t *testing.T) {
	nothing := func(fs ...findings.Finding) func(context.Context) (*findings.Report, error) {
		return func(context.Context) (*findings.Report, error) {
			r := &findings.Report{}
			r.Add(fs...)
			return nil, &NothingError{Reason: "no lock key found (5 keys scanned)", Report: r}
		}
	}
	res, err := RunChecks(context.Background(), []Check{
		{Items: []int{3}, Name: "inspect lock", Run: nothing(ruleN.New("redis", "AOF is off"))},
		{Items: []int{4}, Name: "inspect lock b", Run: nothing(ruleW.New("redis", "maxmemory-policy allkeys-lru"))},
	})
	if err != nil {
		t.Fatal(err)
	}
	if it := item(t, res, 3); it.Status != NotChecked || len(it.Checked) != 0 || len(it.Skipped) != 1 {
		t.Errorf("line 3: %+v", it)
	}
	if it := item(t, res, 4); it.Status != Warn || len(it.Evidence) != 1 {
		t.Errorf("line 4: %+v", it)
	}
	if n := len(res.Report().Findings); n != 2 {
		t.Errorf("%d findings, want 2", n)
	}
}
