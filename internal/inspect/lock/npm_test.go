package lock_test

import (
	"context"
	"testing"
	"time"

	"github.com/dupctl/dupctl/internal/inspect/lock"
	"github.com/dupctl/dupctl/internal/platform/findings"
	"github.com/dupctl/dupctl/internal/testenv"
)

// Locks written by Node.js libraries' own code (testdata/npm: node-redlock
// 4, redis-semaphore's Mutex and Semaphore, BullMQ's job locks and
// deduplication key, Bull's job locks), held live beside the queues' own
// keys: every family is found and named, nothing else is a lock, and no
// healthy lock gets a warning.
func TestInspectLocksWrittenByNodeLibraries(t *testing.T) {
	c := testenv.RedisDB(t)
	p := testenv.WordName("npm")
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
	defer cancel()
	holdNodeFixture(ctx, t, "npm", c, "PREFIX="+p)

	res, err := lock.Run(ctx, c, lock.Options{All: true, Top: 100})
	if err != nil {
		t.Fatal(err)
	}
	d, rep := &res.Data, res.Report()
	want := map[string]string{ // template -> maker
		p + ":locks:account:{int}":       "node-redlock",
		"mutex:" + p + ":payment:{int}":  "redis-semaphore",
		"semaphore:" + p + ":export":     "redis-semaphore",
		"bull:" + p + "-mail:{int}:lock": "bullmq",
		"bull:" + p + "-mail:de:{id}":    "bullmq",
		"bull:" + p + "-pdf:{int}:lock":  "bull",
	}
	for _, f := range d.Families {
		maker, ok := want[f.Template]
		if !ok {
			t.Errorf("%s (%s, %v) taken for a lock family", f.Template, f.Certainty, f.Makers)
			continue
		}
		delete(want, f.Template)
		if f.Makers[maker] != f.Keys {
			t.Errorf("%s: makers %v, want all %d %s", f.Template, f.Makers, f.Keys, maker)
		}
		if f.Confidence < 0.9 {
			t.Errorf("%s: confidence %.2f (signals %v)", f.Template, f.Confidence, f.Signals)
		}
		if len(f.Problems) != 0 {
			t.Errorf("%s: problems %v on healthy locks", f.Template, f.Problems)
		}
	}
	for tmpl, maker := range want {
		t.Errorf("%s locks (%s) not found; skipped: %+v", maker, tmpl, d.Skipped)
	}
	for _, l := range d.Locks {
		if len(l.Problems) != 0 {
			t.Errorf("%s: key problems %v", l.Key, l.Problems)
		}
	}
	for _, fi := range rep.Findings {
		if fi.Severity >= findings.Warn {
			t.Errorf("%s %s %s: %s", fi.Severity, fi.Code, fi.Subject, fi.Message)
		}
	}
}
