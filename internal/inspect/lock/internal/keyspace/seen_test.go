package keyspace

import (
	"fmt"
	"testing"
)

// TestSeenFilter: a repeat is caught; a million distinct keys are almost
// never taken for repeats, as FalseDropEstimate predicts.
func TestSeenFilter(t *testing.T) {
	s := NewSeen()
	if s.add("lock:a") || !s.add("lock:a") {
		t.Fatal("repeat not caught")
	}
	drops := 0
	for i := range 1_000_000 {
		if s.add(fmt.Sprintf("lock:order:%d", i)) {
			drops++
		}
	}
	est := s.FalseDropEstimate()
	if drops > 1 || est > 0.1 {
		t.Errorf("1M distinct keys: %d taken for repeats, estimate %.3f", drops, est)
	}
	t.Logf("1M keys: %d false drops, estimate %.4f", drops, est)
}
