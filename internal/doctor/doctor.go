// Package doctor runs the production checklist of duplicate-safe queue
// workers against a live stack: each checklist item is backed by the
// checks of the other capabilities that the given connections and
// configuration allow, and says pass, fail, warn, partial or not checked,
// with what was checked, what was not and the evidence. A line passes only
// when every check under it ran and held.
package doctor

import (
	"context"
	"errors"
	"fmt"
	"slices"
	"strings"

	"github.com/dupctl/dupctl/internal/doctor/topology"
	"github.com/dupctl/dupctl/internal/platform/findings"
)

// Item is one line of the production checklist.
type Item struct {
	ID    int
	Title string
}

// Checklist is the production checklist, in its order.
var Checklist = []Item{
	{1, "Business key for lock and idempotency"},
	{2, "Idempotency in reliable storage with a unique constraint or atomic operation"},
	{3, "Lock with TTL, unique token and atomic script unlock"},
	{4, "Lock TTL sized to real job durations (renewal for long jobs)"},
	{5, "Retryable vs non-retryable errors"},
	{6, "Retries with backoff (retry or delay queues, not tight loops)"},
	{7, "Dead-letter queue for what keeps failing"},
	{8, "No cache-only final decisions"},
	{9, "Structured logs and metrics for lock, retry, duplicates, DLQ"},
	{10, "Crash scenarios tested: die before ack, die before the status update, lock expiring mid-run"},
}

// Check is one check run for one or more checklist items.
type Check struct {
	// Items the check speaks to. A finding whose code is in ItemOf counts
	// against that item only; the others count against Primary when it is
	// set, else against all of Items.
	Items   []int
	ItemOf  map[string]int
	Primary int
	Name    string // what is checked, e.g. "inspect lock lock:payment:*"
	// Skip, when set, says why the check cannot run (a missing
	// connection or config entry): its items are "not checked".
	Skip string
	// Partial, when set, says why the check, even when it holds, does
	// not settle its items (a model of the system rather than the system):
	// they are at best "partial", with this as what would complete them.
	Partial string
	// PartialWhen maps a finding code the check reports about its own
	// coverage (TOPO_NOT_CHECKED) to the item it leaves partial; the
	// finding's message says what was checked, Partial what is missing.
	PartialWhen map[string][]int
	Run         func(ctx context.Context) (*findings.Report, error)
}

// NothingError is what a check returns when it ran but found nothing to
// judge (no lock key matched, an empty log): its items stay "not
// checked", never "pass". Report, when set, is what the capability found
// all the same (a Redis setting that loses locks, keys that may be
// locks): its findings are reported as the command reports them, and one
// at warn or above moves the line as it would had there been something
// to judge.
type NothingError struct {
	Reason string
	Report *findings.Report
}

func (e *NothingError) Error() string { return e.Reason }

// Status of a checklist item.
type Status string

const (
	Pass       Status = "pass"
	Fail       Status = "fail"
	Warn       Status = "warn"
	Partial    Status = "partial"
	NotChecked Status = "not checked"
)

// ItemResult is one checklist line.
type ItemResult struct {
	ID       int      `json:"id"`
	Title    string   `json:"title"`
	Status   Status   `json:"status"`
	Checked  []string `json:"checked"`
	Skipped  []string `json:"not_checked"`
	Evidence []string `json:"evidence"`
	// Missing says what would complete a partial line.
	Missing []string `json:"missing"`
}

// Result is the whole checklist and every finding behind it.
type Result struct {
	Items  []ItemResult
	report *findings.Report
	// Failed are the checks that could not run (a system unreachable):
	// their items say so, and the run as a whole failed.
	Failed []error
	// Broker is where the broker's nodes are and where each job's queue
	// lives, when the management API was read (nil otherwise).
	Broker *topology.Map
}

// Run runs every check the connections and the jobs allow (Checks) in
// order and fills the checklist. A check that
// fails to run (a system unreachable midway) leaves its items "not
// checked" with the reason, and the others still run: doctor never reports
// "pass" for something it could not look at, and always prints every line.
// The error is that of the checks that failed, joined, after the result.
func Run(ctx context.Context, d Deps, o Options) (*Result, error) {
	e := &env{Deps: d, Options: o}
	res, err := RunChecks(ctx, e.checks())
	if res != nil {
		res.Broker = e.broker
	}
	return res, err
}

// RunChecks runs the given checks in order and fills the checklist.
func RunChecks(ctx context.Context, checks []Check) (*Result, error) {
	l := newChecklist()
	for _, c := range checks {
		if ctx.Err() != nil {
			return l.res, ctx.Err()
		}
		if c.Skip != "" {
			l.skip(c, c.Skip)
			continue
		}
		rep, err := c.Run(ctx)
		var nothing *NothingError
		switch {
		case errors.As(err, &nothing):
			l.skip(c, nothing.Reason)
			if nothing.Report != nil {
				l.merge(c, nothing.Report)
				for _, id := range c.Items {
					l.count(c, nothing.Report, id)
				}
			}
			continue
		case err != nil && ctx.Err() != nil:
			return l.res, err
		case err != nil:
			l.skip(c, "could not run: "+oneLine(err.Error()))
			l.res.Failed = append(l.res.Failed, fmt.Errorf("%s: %w", c.Name, err))
			continue
		}
		l.merge(c, rep)
		for _, id := range c.Items {
			l.judge(c, rep, id)
		}
	}
	l.finish()
	return l.res, errors.Join(l.res.Failed...)
}

// checklist is the result being filled, line by line.
type checklist struct {
	res     *Result
	byItem  map[int]*ItemResult
	skipped map[int]bool
	partial map[int]bool
	seen    map[string]int      // one finding for several jobs' identical ones: its index
	from    map[string][]string // and the checks that reported it
}

func newChecklist() *checklist {
	l := &checklist{res: &Result{report: &findings.Report{Command: "doctor"}}, byItem: map[int]*ItemResult{},
		skipped: map[int]bool{}, partial: map[int]bool{}, seen: map[string]int{}, from: map[string][]string{}}
	for _, it := range Checklist {
		l.byItem[it.ID] = &ItemResult{ID: it.ID, Title: it.Title, Status: NotChecked, Checked: []string{}, Skipped: []string{},
			Evidence: []string{}, Missing: []string{}}
	}
	return l
}

// skip records why a check did not run under each of its lines.
func (l *checklist) skip(c Check, why string) {
	for _, id := range c.Items {
		l.byItem[id].Skipped = append(l.byItem[id].Skipped, c.Name+": "+why)
		l.skipped[id] = true
	}
}

// merge adds a check's findings to the report, one finding for identical
// ones of several checks.
func (l *checklist) merge(c Check, rep *findings.Report) {
	res := l.res
	res.report.Check(rep.Checks...)
	for _, f := range rep.Findings {
		key := f.Code + "\x00" + f.Subject + "\x00" + f.Message
		l.from[key] = appendNew(l.from[key], c.Name)
		if i, dup := l.seen[key]; dup {
			res.report.Findings[i].Evidence = appendNew(res.report.Findings[i].Evidence, f.Evidence...)
			continue
		}
		res.report.Add(f)
		l.seen[key] = len(res.report.Findings) - 1
	}
	res.report.Allowed = append(res.report.Allowed, rep.Allowed...)
}

// judge moves line id by what a check that ran under it found.
func (l *checklist) judge(c Check, rep *findings.Report, id int) {
	ir := l.byItem[id]
	ir.Checked = append(ir.Checked, c.Name)
	if ir.Status == NotChecked {
		ir.Status = Pass
	}
	if c.Partial != "" {
		l.partial[id] = true
		ir.Missing = appendNew(ir.Missing, c.Partial)
	}
	l.count(c, rep, id)
}

// count moves line id by the severities of a check's findings that speak
// to it.
func (l *checklist) count(c Check, rep *findings.Report, id int) {
	ir := l.byItem[id]
	for _, f := range rep.Findings {
		if items, ok := c.PartialWhen[f.Code]; ok {
			if slices.Contains(items, id) {
				l.partial[id] = true
				ir.Missing = appendNew(ir.Missing, f.Message+": "+f.Fix)
			}
			continue
		}
		only, ok := c.ItemOf[f.Code]
		if !ok {
			only = c.Primary
		}
		if only != 0 && only != id {
			continue
		}
		ir.Status = worse(ir.Status, f.Severity)
		if f.Severity >= findings.Warn {
			ir.Evidence = appendNew(ir.Evidence, fmt.Sprintf("%s %s: %s", f.Code, f.Subject, f.Message))
		}
	}
}

// finish names the checks behind a finding several reported, and lets a
// line hold only as far as it was checked.
func (l *checklist) finish() {
	res := l.res
	for key, i := range l.seen {
		if len(l.from[key]) > 1 {
			f := &res.report.Findings[i]
			f.Evidence = append(f.Evidence, "reported by: "+strings.Join(l.from[key], "; "))
		}
	}
	for _, it := range Checklist {
		ir := l.byItem[it.ID]
		if ir.Status == Pass && (l.skipped[it.ID] || l.partial[it.ID]) {
			// Something under this line did not run, or ran on a model:
			// it holds as far as it was checked, and says what is missing.
			ir.Status = Partial
			for _, s := range ir.Skipped {
				ir.Missing = appendNew(ir.Missing, s)
			}
		}
		res.Items = append(res.Items, *ir)
	}
}

func appendNew(list []string, more ...string) []string {
	for _, m := range more {
		if !slices.Contains(list, m) {
			list = append(list, m)
		}
	}
	return list
}

func oneLine(s string) string { return strings.Join(strings.Fields(s), " ") }

// Report is every finding behind the checklist, with the checklist as its
// data.
func (r *Result) Report() *findings.Report {
	r.report.Data = map[string]any{"checklist": r.Items, "broker": r.Broker}
	return r.report
}

func worse(s Status, sev findings.Severity) Status {
	rank := func(s Status) int { return slices.Index([]Status{NotChecked, Pass, Partial, Warn, Fail}, s) }
	next := s
	switch sev {
	case findings.Error:
		next = Fail
	case findings.Warn:
		next = Warn
	}
	if rank(next) > rank(s) {
		return next
	}
	return s
}
