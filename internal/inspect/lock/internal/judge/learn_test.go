package judge

import (
	"testing"

	"github.com/dupctl/dupctl/internal/inspect/lock/internal/keyspace"
)

// TestLearner: MONITOR's lines say how keys are written - SET NX PX (the
// seed's acquire), SETNX then EXPIRE, a script's SET NX, a script's GET
// then DEL of the same key (compare-and-delete) - or written as data (a
// plain SET, SETEX); a script's own SET without NX (an extension) says
// nothing.
func TestLearner(t *testing.T) {
	l := NewLearner(testNow)
	for _, line := range []string{
		`1765120000.000001 [0 127.0.0.1:5001] "SET" "pay:order:1" "8d0c5a1e-3b2a-4c1d-9e8f-0a1b2c3d4e5f" "NX" "PX" "30000"`,
		`1765120000.000002 [0 127.0.0.1:5001] "set" "pay:order:2" "tok" "px" "30000" "nx"`,
		`1765120000.000003 [0 127.0.0.1:5002] "SETNX" "old:lock:7" "1765120030"`,
		`1765120000.000004 [0 127.0.0.1:5002] "EXPIRE" "old:lock:7" "30"`,
		`1765120000.000005 [0 lua] "get" "rel:job:1"`,
		`1765120000.000006 [0 lua] "del" "rel:job:1"`,
		`1765120000.000007 [0 127.0.0.1:5003] "EVALSHA" "abc" "1" "rel:job:1" "tok"`,
		`1765120000.000008 [0 lua] "SET" "ext:job:1" "tok" "PX" "5000"`,
		`1765120000.000009 [0 127.0.0.1:5004] "SET" "cfg:blob:1" "{\"a\":1}"`,
		`1765120000.000010 [0 127.0.0.1:5004] "SET" "cfg:blob:2" "v" "EX" "60"`,
		`1765120000.000011 [0 127.0.0.1:5004] "SETEX" "otp:user:1" "300" "123456"`,
		`1765120000.000012 [0 127.0.0.1:5004] "GET" "cfg:blob:1"`,
	} {
		c, db, ok := keyspace.ParseMonitorLine(line)
		if !ok || db != 0 {
			t.Fatalf("%s: not read", line)
		}
		l.Add(c)
	}
	got := l.Finish()
	for tmpl, want := range map[string]string{
		"pay:order:{int}": "lock", "old:lock:{int}": "lock", "rel:job:{int}": "lock",
		"cfg:blob:{int}": "data", "otp:user:{int}": "data", "ext:job:{int}": "",
	} {
		x := got[tmpl]
		var is string
		switch {
		case x == nil:
		case x.Lock():
			is = "lock"
		case x.Data():
			is = "data"
		}
		if is != want {
			t.Errorf("%s: %q (%+v), want %q", tmpl, is, x, want)
		}
	}
	if x := got["pay:order:{int}"]; x.LockWrites != 2 {
		t.Errorf("pay:order: %+v, want 2 writes", x)
	}
	if x := got["rel:job:{int}"]; x.Releases != 1 || x.Why() != "seen while learning: 1 release by compare-and-delete" {
		t.Errorf("rel:job: %+v %q", x, x.Why())
	}
}
