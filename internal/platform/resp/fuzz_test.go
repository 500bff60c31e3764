package resp

import (
	"bufio"
	"bytes"
	"reflect"
	"slices"
	"strconv"
	"testing"
)

// FuzzReadValue: the raw bytes a value was read from are exactly the
// input's next bytes (a proxy forwards raw), a reader that does not record
// reads the same values and fails on the same input, and parsing never
// panics.
func FuzzReadValue(f *testing.F) {
	for _, s := range []string{"+OK\r\n", "$3\r\nabc\r\n", "*2\r\n:1\r\n_\r\n", "%1\r\n+a\r\n#t\r\n", "|1\r\n+k\r\n:1\r\n$-1\r\n",
		">2\r\n+x\r\n=5\r\ntxt:a\r\n", "*-1\r\n", "!3\r\nERR\r\n", ",1.5\r\n", "(123\r\n", "$0\r\n\r\n", ":+7\r\n"} {
		f.Add([]byte(s))
	}
	f.Fuzz(func(t *testing.T, in []byte) {
		br := bufio.NewReaderSize(bytes.NewReader(in), 4096)
		plain := NewReader(bufio.NewReaderSize(bytes.NewReader(in), 4096))
		consumed := 0
		for {
			v, raw, err := ReadValue(br, nil)
			w, perr := plain.ReadValue()
			if (err == nil) != (perr == nil) {
				t.Fatalf("recording reader: %v, plain reader: %v", err, perr)
			}
			if err != nil {
				return
			}
			if !reflect.DeepEqual(v, w) {
				t.Fatalf("recording reader read %+v, plain reader %+v", v, w)
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
		if s := AppendCommand(nil, string(a), string(b), string(c)); !bytes.Equal(s, wire) {
			t.Fatalf("strings and bytes write %q and %q", s, wire)
		}
	})
}

// FuzzParseInt: ParseInt reads what strconv.ParseInt reads in base 10.
func FuzzParseInt(f *testing.F) {
	for _, s := range []string{"0", "-1", "+5", "9223372036854775807", "-9223372036854775808", "9223372036854775808", "", "-", "1_0", "007"} {
		f.Add([]byte(s))
	}
	f.Fuzz(func(t *testing.T, b []byte) {
		n, ok := ParseInt(b)
		want, err := strconv.ParseInt(string(b), 10, 64)
		if ok != (err == nil) || ok && n != want {
			t.Fatalf("ParseInt(%q) = %d %v, strconv: %d %v", b, n, ok, want, err)
		}
	})
}

// FuzzClippedBulk: reading a bulk header by header and keeping only its
// first bytes (the lock scan's hot path) keeps a prefix of what ReadValue
// reads, never more than asked, and fails where ReadValue fails.
func FuzzClippedBulk(f *testing.F) {
	for _, s := range []string{"$5\r\nhello\r\n", "$20\r\n0123456789abcdefghij\r\n", "$-1\r\n", "$3\r\nab", "$2\r\nabc\r\n"} {
		f.Add([]byte(s), uint8(4))
	}
	f.Fuzz(func(t *testing.T, in []byte, keep uint8) {
		whole, werr := NewReader(bufio.NewReaderSize(bytes.NewReader(in), 4096)).ReadValue()
		r := NewReader(bufio.NewReaderSize(bytes.NewReader(in), 4096))
		h, err := r.ReadHeader()
		if err != nil || !h.Bulk() {
			return // not a bulk: ReadValue's fuzz covers it
		}
		got, err := r.ReadBulk(h.N, int(keep), make([]byte, 0, 2))
		if (err == nil) != (werr == nil) {
			t.Fatalf("clipped read: %v, whole read: %v", err, werr)
		}
		if err != nil {
			return
		}
		if len(got) > int(keep) || !bytes.HasPrefix(whole.Str, got) || len(got) != min(len(whole.Str), int(keep)) {
			t.Fatalf("kept %q of %q (keep %d)", got, whole.Str, keep)
		}
	})
}
