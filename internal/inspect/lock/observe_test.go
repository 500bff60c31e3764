package lock

import (
	"context"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/dupctl/dupctl/internal/inspect/lock/internal/judge"
	"github.com/dupctl/dupctl/internal/inspect/lock/internal/locktest"
)

// TestOrphansNeedTwoObservations: a lock left alone is an orphan after two
// looks; one renewed between the looks is not; a single snapshot judges
// none. The renewal runs in
// the hook between the looks, so the test holds however slow the machine.
func TestOrphansNeedTwoObservations(t *testing.T) {
	c, p := locktest.Redis(t, "orphan", ":left:1", ":renewed:1")
	ctx := context.Background()
	c.Set(ctx, p+":left:1", "8d0c5a01-3b2a-4c1d-9e8f-0a1b2c3d4e5f", time.Hour)
	c.Set(ctx, p+":renewed:1", "8d0c5a02-3b2a-4c1d-9e8f-0a1b2c3d4e5f", time.Hour)
	time.Sleep(3 * time.Second)
	o := Options{Patterns: []string{p + ":*"}, LockPatterns: []string{p + ":*"}, Observe: 2, Interval: 2 * time.Second,
		IdleAfter: 4 * time.Second, Top: 10, afterLook: func(int) { c.PExpire(ctx, p+":renewed:1", time.Hour) }}
	res, err := Run(ctx, c, o)
	if err != nil {
		t.Fatal(err)
	}
	rep, d := res.Report(), &res.Data
	orphans := map[string]bool{}
	for _, f := range rep.Findings {
		if f.Code == judge.RuleIdleOrphan.Code {
			orphans[strings.TrimPrefix(f.Subject, p)] = true
		}
	}
	if !orphans[":left:{int}"] || orphans[":renewed:{int}"] {
		t.Errorf("orphans %v, want only :left:{int}", orphans)
	}
	if d.Observe == nil || d.Observe.Candidates != 2 || d.Observe.Orphans != 1 || d.Observe.Touched != 1 {
		t.Errorf("observations %+v, want 2 candidates, 1 touched, 1 orphan", d.Observe)
	}
	res, err = Run(ctx, c, Options{Patterns: []string{p + ":*"}})
	if err != nil || slices.Contains(res.Checks, judge.RuleIdleOrphan.Code) {
		t.Errorf("a single snapshot evaluated the orphan check (%v)", err)
	}
}
