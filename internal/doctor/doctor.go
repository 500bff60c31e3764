// Package doctor runs the seed's production checklist against a live
// stack: each checklist item is backed by the checks of the other
// capabilities that the given connections and configuration allow, and
// says pass, fail, warn or not checked, with what was checked and the
// evidence.
package doctor

import (
	"context"
	"errors"
	"fmt"
	"slices"

	"github.com/dupctl/dupctl/internal/platform/findings"
)

// Item is one line of the seed's production checklist.
type Item struct {
	ID    int
	Title string
}

// Checklist is the seed's production checklist, in its order.
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
	Run  func(ctx context.Context) (*findings.Report, error)
}

// NothingError is what a check returns when it ran but found nothing to
// judge (no lock key matched, an empty log): its items stay "not
// checked", never "pass".
type NothingError struct{ Reason string }

func (e *NothingError) Error() string { return e.Reason }

// Status of a checklist item.
type Status string

const (
	Pass       Status = "pass"
	Fail       Status = "fail"
	Warn       Status = "warn"
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
}

// Result is the whole checklist and every finding behind it.
type Result struct {
	Items  []ItemResult
	Report *findings.Report
}

// Run runs the checks in order and fills the checklist. A check that
// fails to run (a system unreachable midway) is an error: doctor never
// reports "pass" for something it could not look at.
func Run(ctx context.Context, checks []Check) (*Result, error) {
	res := &Result{Report: &findings.Report{Command: "doctor"}}
	byItem := map[int]*ItemResult{}
	for _, it := range Checklist {
		ir := &ItemResult{ID: it.ID, Title: it.Title, Status: NotChecked, Checked: []string{}, Skipped: []string{}, Evidence: []string{}}
		byItem[it.ID] = ir
	}
	for _, c := range checks {
		if c.Skip != "" {
			for _, id := range c.Items {
				byItem[id].Skipped = append(byItem[id].Skipped, c.Name+": "+c.Skip)
			}
			continue
		}
		rep, err := c.Run(ctx)
		var nothing *NothingError
		if errors.As(err, &nothing) {
			for _, id := range c.Items {
				byItem[id].Skipped = append(byItem[id].Skipped, c.Name+": "+nothing.Reason)
			}
			continue
		}
		if err != nil {
			return nil, fmt.Errorf("%s: %w", c.Name, err)
		}
		res.Report.Check(rep.Checks...)
		res.Report.Add(rep.Findings...)
		res.Report.Allowed = append(res.Report.Allowed, rep.Allowed...)
		for _, id := range c.Items {
			ir := byItem[id]
			ir.Checked = append(ir.Checked, c.Name)
			if ir.Status == NotChecked {
				ir.Status = Pass
			}
			for _, f := range rep.Findings {
				only, ok := c.ItemOf[f.Code]
				if !ok {
					only = c.Primary
				}
				if only != 0 && only != id {
					continue
				}
				ir.Status = worse(ir.Status, f.Severity)
				if f.Severity >= findings.Warn {
					ir.Evidence = append(ir.Evidence, fmt.Sprintf("%s %s: %s", f.Code, f.Subject, f.Message))
				}
			}
		}
	}
	for _, it := range Checklist {
		res.Items = append(res.Items, *byItem[it.ID])
	}
	return res, nil
}

func worse(s Status, sev findings.Severity) Status {
	rank := func(s Status) int { return slices.Index([]Status{NotChecked, Pass, Warn, Fail}, s) }
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
