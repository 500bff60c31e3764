package resp

import (
	"bufio"
	"errors"
	"io"
	"strings"
	"testing"
)

func reader(s string) *Reader { return NewReader(bufio.NewReaderSize(strings.NewReader(s), 16)) }

func TestReadValue(t *testing.T) {
	for in, want := range map[string]string{
		"+OK\r\n":            "OK",
		":-42\r\n":           "-42",
		"$-1\r\n":            "nil",
		"_\r\n":              "nil",
		"*2\r\n:1\r\n:2\r\n": "[2 values]",
		"%1\r\n+a\r\n:1\r\n": "[2 values]",
		"-ERR wrong\r\n":     "error ERR wrong",
		"$5\r\nhello\r\n":    "hello",
		"$70\r\n" + strings.Repeat("x", 70) + "\r\n": strings.Repeat("x", 60) + "…",
	} {
		v, err := reader(in).ReadValue()
		if err != nil || v.String() != want {
			t.Errorf("%q: %q %v, want %q", in, v.String(), err, want)
		}
	}
	for in, want := range map[string]error{
		"":                                      io.EOF,
		"$5\r\nhel":                             io.ErrUnexpectedEOF,
		"+OK\n":                                 ErrProtocol,
		"?x\r\n":                                ErrProtocol,
		"$3\r\nabcd\r\n":                        ErrProtocol,
		"*2000000\r\n":                          ErrProtocol,
		"%600000\r\n":                           ErrProtocol,
		"#x\r\n":                                ErrProtocol,
		":1x\r\n":                               ErrProtocol,
		"+" + strings.Repeat("x", 40) + "\r\n":  ErrProtocol, // longer than the buffer
		strings.Repeat("*1\r\n", 40) + ":1\r\n": ErrProtocol, // too deep
	} {
		if _, err := reader(in).ReadValue(); !errors.Is(err, want) {
			t.Errorf("%q: %v, want %v", in, err, want)
		}
	}
}

// TestReadBulkKeeps: the streaming read keeps the first bytes of a long
// bulk in the caller's buffer and leaves the stream at the next value.
func TestReadBulkKeeps(t *testing.T) {
	r := reader("$10\r\n0123456789\r\n:7\r\n")
	h, err := r.ReadHeader()
	if err != nil || !h.Bulk() || h.N != 10 {
		t.Fatalf("header %+v %v", h, err)
	}
	buf := make([]byte, 0, 8)
	b, err := r.ReadBulk(h.N, 4, buf)
	if err != nil || string(b) != "0123" || &b[0] != &buf[:1][0] {
		t.Fatalf("bulk %q %v", b, err)
	}
	if h, err := r.ReadHeader(); err != nil || h.Type != ':' || h.N != 7 {
		t.Fatalf("next %+v %v", h, err)
	}
}

func TestReadCommand(t *testing.T) {
	for in, want := range map[string]string{
		"*2\r\n$3\r\nGET\r\n$1\r\nk\r\n": "GET k",
		"PING  me\r\n":                   "PING me",
		"\r\n":                           "",
		"*-1\r\n":                        "",
	} {
		args, raw, err := ReadCommand(bufio.NewReader(strings.NewReader(in)), nil)
		var words []string
		for _, a := range args {
			words = append(words, string(a))
		}
		if err != nil || strings.Join(words, " ") != want || string(raw) != in {
			t.Errorf("%q: %q raw %q %v, want %q", in, words, raw, err, want)
		}
	}
	if _, _, err := ReadCommand(bufio.NewReader(strings.NewReader("*1\r\n:1\r\n")), nil); !errors.Is(err, ErrProtocol) {
		t.Errorf("an integer in a command: %v", err)
	}
}

func TestReadValueRoundTrip(t *testing.T) {
	in := "*3\r\n$3\r\nSET\r\n$1\r\nk\r\n$-1\r\n|1\r\n+ttl\r\n:5\r\n%1\r\n+a\r\n#t\r\n>2\r\n+p\r\n_\r\n=7\r\ntxt:abc\r\n"
	br := bufio.NewReader(strings.NewReader(in))
	var raw []byte
	var types []byte
	for {
		v, b, err := ReadValue(br, raw)
		if err != nil {
			break
		}
		raw = b
		types = append(types, v.Type)
	}
	if string(raw) != in || string(types) != "*|%>=" {
		t.Fatalf("types %q, raw %q", types, raw)
	}
}
