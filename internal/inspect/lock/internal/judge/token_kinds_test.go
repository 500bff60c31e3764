package judge

import "testing"

// TestTokensByWhatTheyAre: entropy from the alphabet a token uses, hosts
// written pid@host or host:pid, uniqid()'s clock.
func TestTokensByWhatTheyAre(t *testing.T) {
	for v, want := range map[string]struct {
		class   OwnerClass
		minBits int
	}{
		"hBvQzKPLmwRtXgaNcYdeJfSu": {OwnerRandom, 130}, // 24 random letters of both cases: 137 bits, not 0
		"u/NJwtqJ8DmQ6Lx0oP3RkE+s": {OwnerRandom, 140}, // python-redis-lock, b64encode(urandom(18))
		"qwrtzpsdfghjklmnbvcxwqrt": {OwnerRandom, 100}, // random lower-case letters
		"4821@worker-3.internal":   {OwnerHost, 0},     // pid@host, not an e-mail address
		"worker-3.internal:4821":   {OwnerHost, 0},
		"6752f1a3c9e41":            {OwnerTimestamp, 0}, // PHP uniqid()
		"4821":                     {OwnerCounter, 0},
	} {
		o := classifyOwner(v, "lock:x", testNow)
		if o.Class != want.class || o.Bits < want.minBits {
			t.Errorf("%q: %s %d bits, want %s and %d+ bits", v, o.Class, o.Bits, want.class, want.minBits)
		}
		if valueSignals(v, testNow) != nil && want.class == OwnerHost {
			t.Errorf("%q: taken for data: %v", v, valueSignals(v, testNow))
		}
	}
}

// TestRenewedLeaseIsNoOutlier: 100 ms leases re-taken every 50 ms read
// anywhere from 0 to 100 ms left; none is far below its siblings, as
// Redis's idle clock cannot tell them apart.
func TestRenewedLeaseIsNoOutlier(t *testing.T) {
	f := newFamily("lock:tick", nil)
	for i, pttl := range []int64{0, 1, 60, 75, 80, 90, 95, 100} {
		j := Judged{}
		j.Observed.Key, j.Observed.PTTL, j.Observed.Idle = "lock:tick:"+string(rune('a'+i)), pttl, 0
		f.addTTL(&j.Observed, testNow)
	}
	if s := f.ttlStats(); s.OutliersBelow != 0 {
		t.Errorf("%d outliers below in a family of 100 ms leases", s.OutliersBelow)
	}
}
