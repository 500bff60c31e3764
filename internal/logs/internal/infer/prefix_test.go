package infer

import (
	"bytes"
	"testing"
)

func TestSplitPrefix(t *testing.T) {
	for _, c := range []struct {
		kind                      PrefixKind
		line                      string
		instance, app, pid, rest  string
		time, container, sdParams string
		ok                        bool
	}{
		{kind: PrefixKubectl, line: "[pod/payments-7d9f8b6c4-x2k9p/app] 2026-03-14T09:00:00Z INFO started", instance: "payments-7d9f8b6c4-x2k9p",
			container: "app", rest: "2026-03-14T09:00:00Z INFO started", ok: true},
		{kind: PrefixKubectl, line: `[pod/w-1/worker] {"msg":"x"}`, instance: "w-1", container: "worker", rest: `{"msg":"x"}`, ok: true},
		{kind: PrefixKubectl, line: "[main] INFO c.a.Listener - started", ok: false},
		{kind: PrefixKubectl, line: "[pod/a b/c] x", ok: false},
		{kind: PrefixCompose, line: "payments-worker-1  | 2026-03-14T09:00:00.880Z  INFO 21518 --- [main] x : y", instance: "payments-worker-1",
			rest: "2026-03-14T09:00:00.880Z  INFO 21518 --- [main] x : y", ok: true},
		{kind: PrefixCompose, line: `web-1 | {"level":"info"}`, instance: "web-1", rest: `{"level":"info"}`, ok: true},
		{kind: PrefixCompose, line: "no bar here", ok: false},
		{kind: PrefixSyslog3164, line: "Mar 14 09:00:20 ip-10-20-3-39 payworker[10072]: ord-61835: charging 183.66 EUR",
			instance: "ip-10-20-3-39", app: "payworker", pid: "10072", time: "Mar 14 09:00:20", rest: "ord-61835: charging 183.66 EUR", ok: true},
		{kind: PrefixSyslog3164, line: "Dec  2 09:07:47 host cron: job done", instance: "host", app: "cron", time: "Dec  2 09:07:47",
			rest: "job done", ok: true},
		{kind: PrefixSyslog3164, line: "<13>Dec  2 09:07:47 10.0.0.1 app[7]: hi", instance: "10.0.0.1", app: "app", pid: "7",
			time: "Dec  2 09:07:47", rest: "hi", ok: true},
		{kind: PrefixSyslog3164, line: "2026-03-14 09:00:00 INFO x", ok: false},
		{kind: PrefixSyslog5424,
			line:     `<134>1 2026-03-14T09:00:20.000Z ip-10-20-3-39 payworker 10072 charge [order@32473 id="ord-1" n="a\"b"] charged`,
			instance: "ip-10-20-3-39", app: "payworker", pid: "10072", time: "2026-03-14T09:00:20.000Z", rest: "charged",
			sdParams: `order@32473:id=ord-1;order@32473:n=a\"b;`, ok: true},
		{kind: PrefixSyslog5424, line: "<14>1 2026-03-14T09:00:20Z host app - - - \xef\xbb\xbfplain message", instance: "host", app: "app",
			time: "2026-03-14T09:00:20Z", rest: "plain message", ok: true},
		{kind: PrefixSyslog5424, line: "<14>1 2026-03-14T09:00:20Z host app - - [unterminated x", ok: false},
	} {
		p, rest, ok := SplitPrefix(c.kind, []byte(c.line))
		if ok != c.ok {
			t.Errorf("%q: ok %v, want %v", c.line, ok, c.ok)
			continue
		}
		if !ok {
			continue
		}
		var sd bytes.Buffer
		SDParams(p.SD, func(id, k, v []byte) { sd.WriteString(string(id) + ":" + string(k) + "=" + string(v) + ";") })
		got := []string{string(p.Instance), string(p.App), string(p.PID), string(p.Time), string(p.Container), string(rest), sd.String()}
		want := []string{c.instance, c.app, c.pid, c.time, c.container, c.rest, c.sdParams}
		for i := range got {
			if got[i] != want[i] {
				t.Errorf("%q: part %d = %q, want %q", c.line, i, got[i], want[i])
			}
		}
	}
}

func TestDetectPrefix(t *testing.T) {
	lines := func(s ...string) [][]byte {
		var out [][]byte
		for _, l := range s {
			out = append(out, []byte(l))
		}
		return out
	}
	if k, n := DetectPrefix(lines("a-1 | x", "bbbb-2 | y", "a-1 | z", "cc-3 | w")); k != PrefixNone {
		// the bars do not stand in one column: not compose's padding
		t.Errorf("misaligned bars read as %v (%d)", k, n)
	}
	if k, _ := DetectPrefix(lines("svc-1  | x", "svc-2  | y", "svc-1  | z")); k != PrefixCompose {
		t.Errorf("compose lines read as %v", k)
	}
	if k, _ := DetectPrefix(lines("[pod/a/c] x", "[pod/b/c] y", "plain")); k != PrefixKubectl {
		t.Errorf("kubectl lines read as %v", k)
	}
	if k, _ := DetectPrefix(lines(`{"a":1}`, `{"a":2}`)); k != PrefixNone {
		t.Errorf("JSON lines read as %v", k)
	}
}

// FuzzSplitPrefix: any line, any kind: no panic, and the rest is a suffix
// of the line, its fields inside it.
func FuzzSplitPrefix(f *testing.F) {
	for _, s := range []string{"[pod/a/b] x", "svc-1  | y", "Mar 14 09:00:20 h a[1]: m", `<1>1 2026-03-14T09:00:20Z h a 1 m [x k="v"] z`,
		"<1>1 - - - - - -", "[", "<", " | ", "Mar  1 00:00:00 h :"} {
		for k := PrefixKubectl; k < numPrefixes; k++ {
			f.Add(uint8(k), []byte(s))
		}
	}
	f.Fuzz(func(t *testing.T, k uint8, l []byte) {
		p, rest, ok := SplitPrefix(PrefixKind(k%uint8(numPrefixes)), l)
		if !ok {
			return
		}
		if !bytes.HasSuffix(l, rest) {
			t.Fatalf("rest %q is not a suffix of %q", rest, l)
		}
		for _, part := range [][]byte{p.Instance, p.App, p.PID, p.Time, p.SD} {
			if len(part) > 0 && !bytes.Contains(l, part) {
				t.Fatalf("field %q not in %q", part, l)
			}
		}
		SDParams(p.SD, func(_, _, _ []byte) {})
	})
}
