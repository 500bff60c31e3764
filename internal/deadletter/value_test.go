package deadletter

import (
	"bytes"
	"encoding/json"
	"math"
	"reflect"
	"strings"
	"testing"
	"time"

	amqp "github.com/rabbitmq/amqp091-go"
)

// everyType is a header table with every AMQP field type amqp091-go reads
// and writes, with edge values.
func everyType() amqp.Table {
	ts := time.Date(2026, 11, 30, 12, 0, 0, 0, time.UTC)
	return amqp.Table{
		"bool": true, "int8": int8(-128), "uint8": uint8(255), "int16": int16(-32768), "uint16": uint16(65535),
		"int32": int32(math.MinInt32), "uint32": uint32(math.MaxUint32), "int64": int64(math.MaxInt64),
		"float32": float32(1.5), "float64": 0.1, "float-neg-zero": math.Copysign(0, -1),
		"decimal": amqp.Decimal{Scale: 2, Value: -1999}, "string": "héllo \"world\"\n",
		"string-binary": "\xff\xfe\x00", "bytes": []byte{0, 1, 2, 255}, "empty-bytes": []byte{},
		"timestamp": ts, "void": nil,
		"array": []any{int32(1), "two", []any{int64(3)}, amqp.Table{"four": int16(4)}},
		"table": amqp.Table{"nested": amqp.Table{"deep": uint8(7)}, "\xffbad-key": "v"},
		"x-death": []any{amqp.Table{"count": int64(2), "queue": "q", "reason": "rejected", "time": ts,
			"routing-keys": []any{"a", "b"}, "exchange": ""}},
	}
}

// canon makes tables comparable: timestamps in UTC, NaN-free.
func canon(v any) any {
	switch x := v.(type) {
	case amqp.Table:
		out := amqp.Table{}
		for k, e := range x {
			out[k] = canon(e)
		}
		return out
	case []any:
		out := make([]any, len(x))
		for i, e := range x {
			out[i] = canon(e)
		}
		return out
	case time.Time:
		return x.UTC()
	}
	return v
}

func TestValueCodecRoundTrip(t *testing.T) {
	in := everyType()
	raw, err := EncodeTable(in)
	must(t, err)
	out, err := DecodeTable(raw)
	must(t, err)
	if !reflect.DeepEqual(canon(in), canon(out)) {
		t.Fatalf("round trip changed the table:\nin  %#v\nout %#v", canon(in), canon(out))
	}
	// Every tag names its type.
	for _, want := range []string{`"int8":{"int8":-128}`, `"uint32":{"uint32":4294967295}`, `"int64":{"int64":9223372036854775807}`,
		`"decimal":{"decimal":{"scale":2,"value":-1999}}`, `"string-binary":{"string_base64":"//4A"}`, `"bytes":{"bytes":"AAEC/w=="}`,
		`"timestamp":{"timestamp":"2026-11-30T12:00:00Z"}`, `"void":{"void":null}`, `[{"base64":"/2JhZC1rZXk="},{"string":"v"}]`,
		`"float-neg-zero":{"float64":-0}`} {
		if !strings.Contains(string(raw), want) {
			t.Errorf("encoding lacks %s:\n%s", want, raw)
		}
	}
}

func TestValueCodecNonFiniteFloats(t *testing.T) {
	for _, f := range []float64{math.NaN(), math.Inf(1), math.Inf(-1)} {
		raw, err := EncodeValue(f)
		must(t, err)
		v, err := DecodeValue(raw)
		must(t, err)
		g := v.(float64)
		if !(math.IsNaN(f) && math.IsNaN(g)) && g != f {
			t.Fatalf("%v came back as %v (%s)", f, g, raw)
		}
	}
}

func TestValueCodecRejectsBadInput(t *testing.T) {
	for _, in := range []string{`{"int8":128}`, `{"uint16":-1}`, `{"int32":1.5}`, `{"colour":1}`, `{"int8":1,"int16":2}`,
		`{"timestamp":"yesterday"}`, `{"bytes":"!!"}`, `{"decimal":{"scale":1}}`, `{"void":1}`, `[]`, `7`} {
		if _, err := DecodeValue(json.RawMessage(in)); err == nil {
			t.Errorf("%s decoded without error", in)
		}
	}
}

func TestReadRecordsReportsTheLine(t *testing.T) {
	in := `{"format":"dupctl-dlq/1","properties":{},"body":"a","body_encoding":"text","body_bytes":1}

{"format":"dupctl-dlq/1","properties":{"headers":{"h":{"int8":999}}},"body":"a","body_encoding":"text","body_bytes":1}
`
	n := 0
	err := ReadRecords(strings.NewReader(in), func(*Message) error { n++; return nil })
	if err == nil || !strings.Contains(err.Error(), "line 3:") || n != 1 {
		t.Fatalf("n=%d err=%v", n, err)
	}
}

func FuzzDecodeValue(f *testing.F) {
	raw, _ := EncodeTable(everyType())
	f.Add(string(raw))
	f.Add(`{"a":{"array":[{"table":{"b":{"float32":"NaN"}}}]}}`)
	f.Add(`{"a":{"table_pairs":[[{"base64":"/w=="},{"void":null}]]}}`)
	f.Fuzz(func(t *testing.T, s string) {
		tbl, err := DecodeTable(json.RawMessage(s))
		if err != nil {
			return
		}
		// Whatever decodes must encode and decode to the same table.
		enc, err := EncodeTable(tbl)
		if err != nil {
			t.Fatalf("decoded table does not encode: %v", err)
		}
		again, err := DecodeTable(enc)
		if err != nil {
			t.Fatalf("re-decode: %v\n%s", err, enc)
		}
		enc2, _ := EncodeTable(again)
		if !bytes.Equal(enc, enc2) {
			t.Fatalf("not stable:\n%s\n%s", enc, enc2)
		}
	})
}

func FuzzParseRecord(f *testing.F) {
	f.Add(`{"format":"dupctl-dlq/1","properties":{"message_id":"m","headers":{"x-death":{"array":[]}}},` +
		`"body":"/w==","body_encoding":"base64","body_bytes":1}`)
	f.Add(`{"format":"dupctl-dlq/1","properties":{"message_id":{"base64":"/w=="}},"body":"","body_encoding":"text","body_bytes":0}`)
	f.Fuzz(func(t *testing.T, s string) {
		m, err := ParseRecord([]byte(s))
		if err != nil {
			return
		}
		rec, err := m.MarshalRecord(time.Time{}, "", "")
		if err != nil {
			t.Fatalf("parsed record does not marshal: %v", err)
		}
		m2, err := ParseRecord(rec)
		if err != nil {
			t.Fatalf("re-parse: %v\n%s", err, rec)
		}
		if m.Fingerprint() != m2.Fingerprint() {
			t.Fatalf("fingerprint changed through a round trip:\n%s", rec)
		}
	})
}

func must(t testing.TB, err error) {
	t.Helper()
	if err != nil {
		t.Fatal(err)
	}
}
