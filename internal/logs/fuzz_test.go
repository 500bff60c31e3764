package logs

import (
	"bytes"
	"context"
	"encoding/json"
	"testing"
	"unicode/utf8"
)

// FuzzLine checks the field scanner against encoding/json: it never
// panics, it accepts every line encoding/json accepts as an object, and a
// string field it extracts equals what encoding/json decodes.
func FuzzLine(f *testing.F) {
	for _, s := range []string{
		`{"zz":"a","event":"side_effect","n":{"zz":1}}`,
		`{"zz":"a\u00e9\"\\","x":[1,{"y":[]}],"t":true,"f":false,"z":null}`,
		`  {"a" : { "b" : { "zz" : "deep" } } , "zz" : "top" }  `,
		`{"zz":"\ud83d\ude00"}`, `{"zz":12.5e3}`, `[1]`, `{"zz":"unterminated}`, `{}`, `{"a":1,}`,
	} {
		f.Add([]byte(s))
	}
	m, err := Compile(Config{Fields: map[string][]string{"jobId": {"zz"}}})
	if err != nil {
		f.Fatal(err)
	}
	f.Fuzz(func(t *testing.T, b []byte) {
		x := &extractor{m: m}
		var ev Event
		err := x.line(b, &ev)
		var v any
		if json.Unmarshal(b, &v) != nil {
			return // lenient on what encoding/json rejects
		}
		obj, isObj := v.(map[string]any)
		if !isObj {
			if err == nil {
				t.Fatalf("accepted a non-object %q", b)
			}
			return
		}
		if err != nil {
			t.Fatalf("rejected a valid object %q: %v", b, err)
		}
		if bytes.Count(b, []byte(`"zz"`)) != 1 {
			return // duplicate or escaped keys: encoding/json keeps the last
		}
		if s, ok := obj["zz"].(string); ok && utf8.ValidString(ev.JobID()) && s != ev.JobID() {
			t.Fatalf("zz: got %q, encoding/json %q in %q", ev.JobID(), s, b)
		}
	})
}

// FuzzScan runs arbitrary bytes through the chunked parallel scanner:
// no panic, and every line is an event, malformed, or blank.
func FuzzScan(f *testing.F) {
	f.Add([]byte("{\"event\":\"acked\"}\nnot json\n\n{\"a\":1}"), uint8(3))
	f.Add([]byte("\x1f\x8b broken gzip"), uint8(1))
	f.Add([]byte("[{\"a\":1},{\"b\":2}]"), uint8(2))
	f.Fuzz(func(t *testing.T, b []byte, chunk uint8) {
		src := ReaderSource("-", bytes.NewReader(b))
		st, err := Scan(context.Background(), []Source{src}, Options{ChunkSize: int(chunk) + 1, Workers: 2}, func(*Event) error { return nil })
		if err != nil {
			return // a broken gzip or JSON array stream is an error, not a panic
		}
		if st.Events+st.Malformed > st.Lines {
			t.Fatalf("%d events + %d malformed > %d lines", st.Events, st.Malformed, st.Lines)
		}
	})
}
