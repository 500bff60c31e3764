package amqpproxy

import (
	"bufio"
	"bytes"
	"testing"
)

// FuzzFrame: whatever ReadFrame accepts, Append writes back byte for byte
// (the proxy forwards what it parsed), and Decode never panics on it.
func FuzzFrame(f *testing.F) {
	f.Add(CloseFrame(320, "CONNECTION_FORCED").Append(nil))
	deliver := []byte{0, 60, 0, 60, 3, 'c', 't', 'g', 0, 0, 0, 0, 0, 0, 0, 7, 1, 0, 1, 'q'}
	f.Add(Frame{Type: FrameMethod, Channel: 1, Payload: deliver}.Append(nil))
	f.Add(Frame{Type: FrameMethod, Channel: 1, Payload: []byte{0, 60, 0, 80, 0, 0, 0, 0, 0, 0, 0, 7, 1}}.Append(nil))
	f.Add(Frame{Type: FrameHeader, Channel: 1, Payload: []byte{0, 60, 0, 0, 0, 0, 0, 0, 0, 0, 0, 5, 0x10, 0}}.Append(nil))
	f.Add([]byte{1, 0, 1, 0, 0, 0, 2, 0, 60, 0xCE})
	f.Fuzz(func(t *testing.T, in []byte) {
		br := bufio.NewReader(bytes.NewReader(in))
		var asm assembler
		consumed := 0
		for {
			fr, err := ReadFrame(br)
			if err != nil {
				return
			}
			out := fr.Append(nil)
			if !bytes.Equal(out, in[consumed:consumed+len(out)]) {
				t.Fatalf("frame re-encoded as %x, read from %x", out, in[consumed:consumed+len(out)])
			}
			consumed += len(out)
			if m, ok := fr.Method(); ok {
				_, _ = Decode(fr.Channel, m)
			}
			asm.feed(fr)
		}
	})
}
