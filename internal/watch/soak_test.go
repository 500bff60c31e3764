package watch

import (
	"fmt"
	"runtime"
	"testing"
	"time"
)

// series counts the series of a metric family in the registry.
func series(t *testing.T, m *metrics, name string) int {
	t.Helper()
	mfs, err := m.reg.Gather()
	if err != nil {
		t.Fatal(err)
	}
	for _, mf := range mfs {
		if mf.GetName() == name {
			return len(mf.GetMetric())
		}
	}
	return 0
}

func heap() uint64 {
	runtime.GC()
	var ms runtime.MemStats
	runtime.ReadMemStats(&ms)
	return ms.HeapAlloc
}

// TestSoakCompressed is days of churn in a few seconds: 3,000 lock scans
// whose 100 family templates are all new each time, 3,000 DLQ reads with
// new origin queues, and 300,000 followed lines of 30,000 job types. The
// series stay within the label bound and the heap does not grow between
// the first tenth and the end.
func TestSoakCompressed(t *testing.T) {
	const bound = 50
	m := newMetrics(bound)
	w := &watcher{m: m}
	run := func(i int) {
		fams := make([]LockFamily, 100)
		for j := range fams {
			fams[j] = LockFamily{Template: fmt.Sprintf("lock:f%d:{int}", i*100+j), Certainty: "likely", Keys: 3, NoTTL: int64(j % 2)}
		}
		m.apply("lock", &Sample{LockFamilies: fams,
			DLQ: []DLQGroup{{DLQ: "orders.dlq", Queue: fmt.Sprintf("q%d", i), Reason: "rejected", Messages: 1}}})
		for j := range 100 {
			w.seen(LogRecord{Kind: "received", JobType: fmt.Sprintf("type-%d", (i*100+j)%30000), Duration: time.Millisecond})
		}
	}
	for i := range 300 {
		run(i)
	}
	early := heap()
	for i := 300; i < 3000; i++ {
		run(i)
	}
	late := heap()
	if n := series(t, m, "dupctl_lock_keys"); n > bound+1 {
		t.Errorf("dupctl_lock_keys has %d series, bound %d (+other)", n, bound)
	}
	if n := series(t, m, "dupctl_dlq_messages"); n != 1 {
		t.Errorf("dupctl_dlq_messages has %d series after the last read of one queue, want 1", n)
	}
	if n := series(t, m, "dupctl_log_jobs_received_total"); n > bound+1 {
		t.Errorf("dupctl_log_jobs_received_total has %d series, bound %d (+other)", n, bound)
	}
	if late > early+early/10 {
		t.Errorf("heap grew from %d to %d bytes over the churn (more than 10%%)", early, late)
	}
	t.Logf("heap after 300 runs %d bytes, after 3000 %d", early, late)
}
