package pgproxy

import (
	"bufio"
	"bytes"
	"testing"
)

// FuzzMessage: whatever ReadMessage accepts, Append writes back byte for
// byte; the message readers and Classify never panic on it.
func FuzzMessage(f *testing.F) {
	bind := []byte("\x00stmt_1\x00\x00\x01\x00\x00\x00\x02\x00\x00\x00\x03abc\xff\xff\xff\xff\x00\x00")
	f.Add(Message{Type: 'B', Body: bind}.Append(nil))
	f.Add(Message{Type: 'Q', Body: []byte("insert into t values ('k-1')\x00")}.Append(nil))
	f.Add(Message{Type: 'P', Body: []byte("s\x00select 1\x00\x00\x00")}.Append(nil))
	f.Fuzz(func(t *testing.T, in []byte) {
		br := bufio.NewReader(bytes.NewReader(in))
		m, err := ReadMessage(br, false)
		if err != nil {
			return
		}
		out := m.Append(nil)
		if !bytes.Equal(out, in[:len(out)]) {
			t.Fatalf("re-encoded %x, read %x", out, in[:len(out)])
		}
		_, _ = BindParams(m.Body)
		_, _, _ = ParseMsg(m.Body)
		if q, err := QueryText(m.Body); err == nil {
			Classify(q)
			Values(&Statement{SQL: q, Raw: m.Body})
		}
		Values(&Statement{Raw: m.Body, Bind: true})
	})
}
