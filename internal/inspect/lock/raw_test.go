package lock

import (
	"bufio"
	"strings"
	"testing"
)

func rawReader(s string) *rawConn { return &rawConn{r: bufio.NewReader(strings.NewReader(s))} }

func TestRawReply(t *testing.T) {
	type reply struct {
		kind replyKind
		text string
	}
	rc := rawReader(":-2\r\n$5\r\nhello\r\n$-1\r\n-WRONGTYPE Operation against a key\r\n+OK\r\n$0\r\n\r\n:17\r\n")
	for _, want := range []reply{{replyInt, "-2"}, {replyBulk, "hello"}, {replyNil, ""}, {replyError, "WRONGTYPE Operation against a key"},
		{replyStatus, "OK"}, {replyBulk, ""}, {replyInt, "17"}} {
		kind, text, err := rc.reply()
		if err != nil || kind != want.kind || text != want.text {
			t.Fatalf("reply() = %v %q %v, want %v %q", kind, text, err, want.kind, want.text)
		}
	}
	for _, bad := range []string{"$999999999999\r\n", "$3\r\nab", "*2\r\n", "x\r\n", ":1\n", ""} {
		if _, _, err := rawReader(bad).reply(); err == nil {
			t.Errorf("reply(%q) accepted", bad)
		}
	}
}

// FuzzRawReply: any byte stream gives replies or an error, never a panic
// or an allocation beyond maxBulk.
func FuzzRawReply(f *testing.F) {
	for _, s := range []string{":-2\r\n", "$5\r\nhello\r\n", "$-1\r\n", "-ERR x\r\n", "$2147483647\r\n", "_\r\n"} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, s string) {
		rc := rawReader(s)
		for range 16 {
			kind, text, err := rc.reply()
			if err != nil {
				return
			}
			if kind == replyBulk && len(text) > maxBulk {
				t.Fatalf("bulk of %d bytes", len(text))
			}
		}
	})
}
