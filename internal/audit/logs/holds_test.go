package logs

import (
	"fmt"
	"testing"
	"time"
)

// TestLockHolds reads holds from a key's rows: a lease that expired under
// its holder and was taken by another worker (the first holder goes on to
// its own release), a release of a lock another worker held, one without a
// token, and a crash ending its worker's hold. (A release that carries
// its own token while another worker holds the key is drawn as deleting
// that worker's lock: the line says released, not refused.)
func TestLockHolds(t *testing.T) {
	at := func(ms int) time.Duration { return time.Duration(ms) * time.Millisecond }
	rows := []TimelineRow{
		{Offset: at(0), Lane: 0, Worker: "w1", Event: "lock_acquired", Detail: "key=lock:o-1 token=a ttl=5s"},
		{Offset: at(6500), Lane: 1, Worker: "w2", Event: "lock_acquired", Detail: "key=lock:o-1 token=b ttl=30s"},
		{Offset: at(9000), Lane: 0, Worker: "w1", Event: "side_effect", Detail: "key=pay:o-1"},
		{Offset: at(9010), Lane: 0, Worker: "w1", Event: "lock_released", Detail: "key=lock:o-1 token=a"},
		{Offset: at(9500), Lane: 0, Worker: "w1", Event: "lock_released", Detail: "key=lock:o-1 token=a"},
		{Offset: at(9600), Lane: 2, Worker: "w3", Event: "lock_acquired", Detail: "key=lock:o-2"},
		{Offset: at(9700), Lane: 1, Worker: "w2", Event: "lock_released", Detail: "key=lock:o-2 token=(none)"},
		{Offset: at(9800), Lane: 0, Worker: "w1", Event: "lock_acquired", Detail: "key=lock:o-3 ttl=1s"},
		{Offset: at(9900), Lane: 0, Worker: "w1", Event: "crash"},
	}
	holds, foreign := LockHolds(rows, 3)
	want := []string{
		"w0 lock:o-1 0s-9.01s ttl 5s: released after it was taken over by w2",
		"w1 lock:o-1 6.5s-9.01s ttl 30s: deleted by w1",
		"w2 lock:o-2 9.6s-9.7s ttl 0s: deleted by w2",
		"w0 lock:o-3 9.8s-9.9s ttl 1s: w1 crashed (crashed)",
	}
	if len(holds) != len(want) {
		t.Fatalf("%d holds %+v, want %d", len(holds), holds, len(want))
	}
	for i, h := range holds {
		got := fmt.Sprintf("w%d %s %s-%s ttl %s: %s", h.Lane, h.Key, h.From, h.To, h.TTL, h.How)
		if h.Crashed {
			got += " (crashed)"
		}
		if got != want[i] {
			t.Errorf("hold %d = %q, want %q", i, got, want[i])
		}
	}
	wantForeign := map[int]string{3: "DEL of w2's lock", 4: "DEL of a lock it did not hold", 6: "DEL of w3's lock"}
	if fmt.Sprint(foreign) != fmt.Sprint(wantForeign) {
		t.Errorf("foreign releases %v, want %v", foreign, wantForeign)
	}
}
