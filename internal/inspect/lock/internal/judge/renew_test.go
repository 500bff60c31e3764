package judge

import (
	"testing"
	"time"

	"github.com/dupctl/dupctl/internal/inspect/lock/internal/keyspace"
)

// TestRereadJudged: a second read 500 ms after the first tells a TTL that
// only fell (by at least the time between, less 1 ms of rounding) from one
// set again, another owner and a key that is gone; without values (token
// 0) only the TTL counts.
func TestRereadJudged(t *testing.T) {
	first := keyspace.Key{Key: "lock:a", Type: "string", Value: "tok-1", Read: true, PTTL: 900}
	s := TTLSuspect{Key: first.Key, PTTL: first.PTTL, Token: first.Token(), At: testNow}
	sent := testNow.Add(500 * time.Millisecond)
	again := func(value string, pttl int64) *keyspace.Key {
		k := first
		k.Value, k.PTTL = value, pttl
		return &k
	}
	for _, c := range []struct {
		name string
		s    TTLSuspect
		now  *keyspace.Key
		want Reread
	}{
		{"fell by the time between", s, again("tok-1", 400), StillLow},
		{"fell by 1 ms less (rounding)", s, again("tok-1", 401), StillLow},
		{"set again", s, again("tok-1", 402), Renewed},
		{"no TTL any more", s, again("tok-1", -1), Renewed},
		{"another owner", s, again("tok-2", 900), Retaken},
		{"gone", s, nil, Gone},
		{"no values: the TTL alone", TTLSuspect{Key: s.Key, PTTL: s.PTTL, At: s.At}, again("tok-2", 380), StillLow},
	} {
		if got := c.s.Judge(c.now, sent); got != c.want {
			t.Errorf("%s: %d, want %d", c.name, got, c.want)
		}
	}
	// Read again after its 900 ms would have run out (a long scan): gone or
	// another owner may be a plain expiry, so the key stays low; renewed
	// by its owner still shows.
	late := testNow.Add(time.Second)
	for _, c := range []struct {
		name string
		now  *keyspace.Key
		want Reread
	}{
		{"gone after its TTL", nil, StillLow},
		{"another owner after its TTL", again("tok-2", 900), StillLow},
		{"renewed by its owner", again("tok-1", 800), Renewed},
	} {
		if got := s.Judge(c.now, late); got != c.want {
			t.Errorf("%s: %d, want %d", c.name, got, c.want)
		}
	}
	h := keyspace.Key{Type: "hash", Read: true, Fields: []string{"6a4c2d1e-1234-4abc-9def-0123456789ab:57", "1"}}
	h2 := h
	h2.Fields = []string{h.Fields[0], "2"} // reentered by the same thread
	if h.Token() != h2.Token() || h.Token() == first.Token() {
		t.Errorf("a hash's token follows its field names only")
	}
}
