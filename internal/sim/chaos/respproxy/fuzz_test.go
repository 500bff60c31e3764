package respproxy

import (
	"bufio"
	"bytes"
	"slices"
	"testing"
)

// FuzzReadValue: the raw bytes a value was read from are exactly the
// input's prefix (the proxy forwards raw), and parsing never panics.
func FuzzReadValue(f *testing.F) {
	for _, s := range []string{"+OK\r\n", "$3\r\nabc\r\n", "*2\r\n:1\r\n_\r\n", "%1\r\n+a\r\n#t\r\n", "|1\r\n+k\r\n:1\r\n$-1\r\n", ">2\r\n+x\r\n=5\r\ntxt:a\r\n", "*-1\r\n", "!3\r\nERR\r\n", ",1.5\r\n", "(123\r\n"} {
		f.Add([]byte(s))
	}
	f.Fuzz(func(t *testing.T, in []byte) {
		br := bufio.NewReaderSize(bytes.NewReader(in), 4096)
		consumed := 0
		for {
			_, raw, err := ReadValue(br, nil)
			if err != nil {
				return
			}
			if !bytes.Equal(raw, in[consumed:consumed+len(raw)]) {
				t.Fatalf("raw %q is not the input's next %d bytes", raw, len(raw))
			}
			consumed += len(raw)
		}
	})
}

// FuzzCommand: AppendCommand then ReadCommand gives the same arguments.
func FuzzCommand(f *testing.F) {
	f.Add([]byte("SET"), []byte("k"), []byte("v\r\n\x00"))
	f.Add([]byte(""), []byte("*1"), []byte("$"))
	f.Fuzz(func(t *testing.T, a, b, c []byte) {
		args := [][]byte{a, b, c}
		wire := AppendCommand(nil, args...)
		got, raw, err := ReadCommand(bufio.NewReaderSize(bytes.NewReader(wire), 4096), nil)
		if err != nil {
			t.Fatalf("read back %q: %v", wire, err)
		}
		if !bytes.Equal(raw, wire) || !slices.EqualFunc(got, args, bytes.Equal) {
			t.Fatalf("round trip %q -> %q", args, got)
		}
	})
}
