package keyspace

import "testing"

// TestParseMonitorLine: MONITOR's quoting (sdscatrepr) read back.
func TestParseMonitorLine(t *testing.T) {
	c, db, ok := ParseMonitorLine(`1765120000.123456 [3 127.0.0.1:53412] "SET" "a \"b\"\\c" "\x00\xffz\n" "NX"`)
	if !ok || db != 3 || c.Lua || c.Client != "127.0.0.1:53412" || len(c.Args) != 4 || c.Args[1] != `a "b"\c` ||
		c.Args[2] != "\x00\xffz\n" || c.Args[3] != "NX" {
		t.Errorf("%v %d %+v", ok, db, c)
	}
	if c, _, ok := ParseMonitorLine(`1765120000.1 [0 lua] "del" "k"`); !ok || !c.Lua {
		t.Errorf("lua: %v %+v", ok, c)
	}
	for _, bad := range []string{"OK", `1.0 [x 1.2.3.4:5] "GET" "k"`, `1.0 [0 1.2.3.4:5] "GET" "k`} {
		if _, _, ok := ParseMonitorLine(bad); ok {
			t.Errorf("%q read", bad)
		}
	}
}
