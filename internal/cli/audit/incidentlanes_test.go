package audit

import (
	"testing"
	"time"

	auditlogs "github.com/dupctl/dupctl/internal/audit/logs"
	"github.com/dupctl/dupctl/internal/platform/report"
)

// TestTakenHolderHatchedToItsLastAction: a lock expires under its holder,
// another worker takes the key, and the first holder goes on working and
// releases later. Its hold is hatched from the TTL's end to its own
// release, not only to the other's acquisition (issue 44: 3 ms hatched,
// the 600 ms it worked on unmarked).
func TestTakenHolderHatchedToItsLastAction(t *testing.T) {
	at := func(ms int) time.Duration { return time.Duration(ms) * time.Millisecond }
	rows := []auditlogs.TimelineRow{
		{Offset: at(0), Lane: 0, Worker: "w1", Event: "lock_acquired", Detail: "key=lock:o-1 token=a ttl=5s"},
		{Offset: at(6500), Lane: 1, Worker: "w2", Event: "lock_acquired", Detail: "key=lock:o-1 token=b ttl=30s"},
		{Offset: at(6600), Lane: 1, Worker: "w2", Event: "side_effect", Detail: "key=pay:o-1"},
		{Offset: at(9000), Lane: 0, Worker: "w1", Event: "side_effect", Detail: "key=pay:o-1"},
		{Offset: at(9010), Lane: 0, Worker: "w1", Event: "lock_released", Detail: "key=lock:o-1 token=a"},
	}
	holds, _ := auditlogs.LockHolds(rows, 2)
	var bars []report.Bar
	for _, r := range lockRows(holds, rows, 0, "w1", 9010, 0) {
		bars = append(bars, r.Bars...)
	}
	var believed *report.Bar
	for i := range bars {
		if bars[i].Kind == report.BarBelieved {
			believed = &bars[i]
		}
	}
	if believed == nil || believed.From != 5000 || believed.To != 9010 {
		t.Fatalf("w1's bars %+v: want one hatched from the TTL's end (5000) to its release (9010)", bars)
	}
}
