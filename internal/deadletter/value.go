package deadletter

import (
	"bytes"
	"encoding/base64"
	"encoding/json"
	"fmt"
	"math"
	"slices"
	"strconv"
	"strings"
	"time"
	"unicode/utf8"

	"github.com/dupctl/dupctl/internal/platform/text"
	amqp "github.com/rabbitmq/amqp091-go"
)

// The typed JSON form of AMQP field values. Every value is an object with
// one key naming its AMQP type, so an int16 header stays an int16 and a
// timestamp stays a timestamp through export and replay:
//
//	{"int64": 3}  {"string": "rejected"}  {"bytes": "AAE="}
//	{"timestamp": "2026-12-01T12:00:00Z"}  {"decimal": {"scale": 2, "value": 1999}}
//	{"array": [{"int32": 1}]}  {"table": {"k": {"bool": true}}}  {"void": null}
//
// A long string that is not valid UTF-8 is {"string_base64": "..."}; a table
// whose field names are not all valid UTF-8 is {"table_pairs": [[name, value]]}
// with each name a Str. Non-finite floats are the strings "NaN", "+Inf", "-Inf".

// Str is a string that survives JSON whatever its bytes: a JSON string when
// it is valid UTF-8, {"base64": "..."} otherwise.
type Str string

// MarshalJSON implements json.Marshaler.
func (s Str) MarshalJSON() ([]byte, error) {
	if utf8.ValidString(string(s)) {
		return json.Marshal(string(s))
	}
	return json.Marshal(map[string]string{"base64": base64.StdEncoding.EncodeToString([]byte(s))})
}

// UnmarshalJSON implements json.Unmarshaler.
func (s *Str) UnmarshalJSON(b []byte) error {
	var plain string
	if err := json.Unmarshal(b, &plain); err == nil {
		if strings.ContainsRune(plain, utf8.RuneError) && !bytes.Contains(b, []byte("\xef\xbf\xbd")) &&
			!bytes.Contains(bytes.ToLower(b), []byte(`\ufffd`)) {
			// A lone surrogate escape (\udc80): decoded as U+FFFD, it
			// would be published as a character that was never there.
			return fmt.Errorf("%s: an escape that is not a character (a lone surrogate); write raw bytes as {\"base64\": ...}", clip(b))
		}
		*s = Str(plain)
		return nil
	}
	var obj map[string]string
	if err := json.Unmarshal(b, &obj); err != nil || len(obj) != 1 {
		return fmt.Errorf("want a string or {\"base64\": ...}, got %s", clip(b))
	}
	v, ok := obj["base64"]
	if !ok {
		return fmt.Errorf("want a string or {\"base64\": ...}, got %s", clip(b))
	}
	raw, err := base64.StdEncoding.DecodeString(v)
	if err != nil {
		return fmt.Errorf("base64 string: %w", err)
	}
	*s = Str(raw)
	return nil
}

// maxDepth bounds nesting when decoding, as the AMQP reader does.
const maxDepth = 64

// EncodeValue returns the typed JSON form of one AMQP field value.
func EncodeValue(v any) (json.RawMessage, error) {
	var buf bytes.Buffer
	if err := encodeValue(&buf, v, 0); err != nil {
		return nil, err
	}
	return buf.Bytes(), nil
}

// EncodeTable returns the typed JSON form of a table's fields (the object
// inside {"table": ...}).
func EncodeTable(t amqp.Table) (json.RawMessage, error) {
	var buf bytes.Buffer
	if err := encodeTableBody(&buf, t, 0); err != nil {
		return nil, err
	}
	return buf.Bytes(), nil
}

func encodeValue(buf *bytes.Buffer, v any, depth int) error {
	if depth > maxDepth {
		return fmt.Errorf("value nested deeper than %d levels", maxDepth)
	}
	switch x := v.(type) {
	case nil:
		buf.WriteString(`{"void":null}`)
		return nil
	case []any:
		buf.WriteString(`{"array":[`)
		for i, e := range x {
			if i > 0 {
				buf.WriteByte(',')
			}
			if err := encodeValue(buf, e, depth+1); err != nil {
				return err
			}
		}
		buf.WriteString(`]}`)
		return nil
	case amqp.Table:
		return encodeTable(buf, x, depth+1)
	case map[string]any:
		return encodeTable(buf, amqp.Table(x), depth+1)
	}
	tag, payload, ok := scalarTag(v)
	if !ok {
		return fmt.Errorf("unsupported AMQP value type %T", v)
	}
	b, err := json.Marshal(payload)
	if err != nil {
		return err
	}
	fmt.Fprintf(buf, `{%q:%s}`, tag, b)
	return nil
}

// scalarTag is the type tag and JSON payload of a value that is neither
// void nor an array nor a table.
func scalarTag(v any) (tag string, payload any, ok bool) {
	switch x := v.(type) {
	case bool:
		return "bool", x, true
	case int8:
		return "int8", x, true
	case uint8:
		return "uint8", x, true
	case int16:
		return "int16", x, true
	case uint16:
		return "uint16", x, true
	case int:
		return "int32", int32(x), true // amqp091-go writes int as 'I'
	case int32:
		return "int32", x, true
	case uint32:
		return "uint32", x, true
	case int64:
		return "int64", x, true
	case float32:
		return "float32", floatJSON(float64(x), 32), true
	case float64:
		return "float64", floatJSON(x, 64), true
	case amqp.Decimal:
		return "decimal", struct {
			Scale uint8 `json:"scale"`
			Value int32 `json:"value"`
		}{x.Scale, x.Value}, true
	case string:
		if utf8.ValidString(x) {
			return "string", x, true
		}
		return "string_base64", base64.StdEncoding.EncodeToString([]byte(x)), true
	case []byte:
		return "bytes", base64.StdEncoding.EncodeToString(x), true
	case time.Time:
		return "timestamp", x.UTC().Format(time.RFC3339), true
	}
	return "", nil, false
}

func encodeTable(buf *bytes.Buffer, t amqp.Table, depth int) error {
	for k := range t {
		if !utf8.ValidString(k) {
			return encodeTablePairs(buf, t, depth)
		}
	}
	buf.WriteString(`{"table":`)
	if err := encodeTableBody(buf, t, depth); err != nil {
		return err
	}
	buf.WriteByte('}')
	return nil
}

func encodeTableBody(buf *bytes.Buffer, t amqp.Table, depth int) error {
	buf.WriteByte('{')
	for i, k := range sortedKeys(t) {
		if i > 0 {
			buf.WriteByte(',')
		}
		kb, err := json.Marshal(k)
		if err != nil {
			return err
		}
		buf.Write(kb)
		buf.WriteByte(':')
		if err := encodeValue(buf, t[k], depth); err != nil {
			return fmt.Errorf("field %q: %w", k, err)
		}
	}
	buf.WriteByte('}')
	return nil
}

func encodeTablePairs(buf *bytes.Buffer, t amqp.Table, depth int) error {
	buf.WriteString(`{"table_pairs":[`)
	for i, k := range sortedKeys(t) {
		if i > 0 {
			buf.WriteByte(',')
		}
		kb, _ := Str(k).MarshalJSON()
		buf.WriteByte('[')
		buf.Write(kb)
		buf.WriteByte(',')
		if err := encodeValue(buf, t[k], depth); err != nil {
			return err
		}
		buf.WriteByte(']')
	}
	buf.WriteString(`]}`)
	return nil
}

func sortedKeys(t amqp.Table) []string {
	keys := make([]string, 0, len(t))
	for k := range t {
		keys = append(keys, k)
	}
	slices.Sort(keys)
	return keys
}

// floatJSON is a JSON number for finite floats (the shortest form that
// reads back to the same bits) and a string for NaN and the infinities.
func floatJSON(f float64, bits int) any {
	switch {
	case math.IsNaN(f):
		return "NaN"
	case math.IsInf(f, 1):
		return "+Inf"
	case math.IsInf(f, -1):
		return "-Inf"
	}
	return json.Number(strconv.FormatFloat(f, 'g', -1, bits))
}

// DecodeValue reads the typed JSON form back into the Go value amqp091-go
// writes with the same AMQP type.
func DecodeValue(raw json.RawMessage) (any, error) {
	return decodeValue(raw, 0)
}

// DecodeTable reads the object form of a table's fields.
func DecodeTable(raw json.RawMessage) (amqp.Table, error) {
	return decodeTableBody(raw, 0)
}

func decodeValue(raw json.RawMessage, depth int) (any, error) {
	if depth > maxDepth {
		return nil, fmt.Errorf("value nested deeper than %d levels", maxDepth)
	}
	var obj map[string]json.RawMessage
	if err := json.Unmarshal(raw, &obj); err != nil || len(obj) != 1 {
		return nil, fmt.Errorf("want a typed value like {\"int32\": 1}, got %s", clip(raw))
	}
	for tag, p := range obj {
		return decodeTagged(tag, p, depth)
	}
	panic("unreachable")
}

func decodeTagged(tag string, p json.RawMessage, depth int) (any, error) {
	wrap := func(err error) error { return fmt.Errorf("%s value %s: %w", tag, clip(p), err) }
	switch tag {
	case "void", "bool", "decimal":
		return decodeSimple(tag, p, wrap)
	case "int8", "uint8", "int16", "uint16", "int32", "uint32", "int64":
		return decodeInt(tag, p, wrap)
	case "float32", "float64":
		bits := 64
		if tag == "float32" {
			bits = 32
		}
		f, err := decodeFloat(p, bits)
		if err != nil {
			return nil, wrap(err)
		}
		if bits == 32 {
			return float32(f), nil
		}
		return f, nil
	case "string", "string_base64", "bytes", "timestamp":
		return decodeString(tag, p, wrap)
	case "array":
		var items []json.RawMessage
		if err := json.Unmarshal(p, &items); err != nil {
			return nil, wrap(err)
		}
		out := make([]any, 0, len(items))
		for i, it := range items {
			v, err := decodeValue(it, depth+1)
			if err != nil {
				return nil, fmt.Errorf("array item %d: %w", i, err)
			}
			out = append(out, v)
		}
		return out, nil
	case "table":
		return decodeTableBody(p, depth+1)
	case "table_pairs":
		return decodeTablePairs(p, depth+1)
	}
	return nil, fmt.Errorf("unknown AMQP value type %q", tag)
}

// decodeSimple reads a void, a bool or a decimal.
func decodeSimple(tag string, p json.RawMessage, wrap func(error) error) (any, error) {
	switch tag {
	case "void":
		if string(p) != "null" {
			return nil, wrap(fmt.Errorf("want null"))
		}
		return nil, nil
	case "bool":
		var b bool
		if err := json.Unmarshal(p, &b); err != nil {
			return nil, wrap(err)
		}
		return b, nil
	}
	var d struct {
		Scale *uint8 `json:"scale"`
		Value *int32 `json:"value"`
	}
	if err := strictUnmarshal(p, &d); err != nil || d.Scale == nil || d.Value == nil {
		return nil, wrap(fmt.Errorf("want {\"scale\": n, \"value\": n}"))
	}
	return amqp.Decimal{Scale: *d.Scale, Value: *d.Value}, nil
}

// decodeString reads the values written as a JSON string: a string (as
// text or base64), bytes (base64) and a timestamp (RFC 3339).
func decodeString(tag string, p json.RawMessage, wrap func(error) error) (any, error) {
	var s string
	if err := json.Unmarshal(p, &s); err != nil {
		return nil, wrap(err)
	}
	switch tag {
	case "string":
		return s, nil
	case "timestamp":
		t, err := time.Parse(time.RFC3339, s)
		if err != nil {
			return nil, wrap(err)
		}
		return t, nil
	}
	b, err := base64.StdEncoding.DecodeString(s)
	if err != nil {
		return nil, wrap(err)
	}
	if tag == "bytes" {
		return b, nil
	}
	return string(b), nil
}

func decodeInt(tag string, p json.RawMessage, wrap func(error) error) (any, error) {
	var n json.Number
	if err := json.Unmarshal(p, &n); err != nil {
		return nil, wrap(err)
	}
	bits := map[string]int{"int8": 8, "uint8": 8, "int16": 16, "uint16": 16, "int32": 32, "uint32": 32, "int64": 64}[tag]
	if tag[0] == 'u' {
		u, err := strconv.ParseUint(n.String(), 10, bits)
		if err != nil {
			return nil, wrap(err)
		}
		switch bits {
		case 8:
			return uint8(u), nil
		case 16:
			return uint16(u), nil
		}
		return uint32(u), nil
	}
	i, err := strconv.ParseInt(n.String(), 10, bits)
	if err != nil {
		return nil, wrap(err)
	}
	switch bits {
	case 8:
		return int8(i), nil
	case 16:
		return int16(i), nil
	case 32:
		return int32(i), nil
	}
	return i, nil
}

func decodeFloat(p json.RawMessage, bits int) (float64, error) {
	var s string
	if json.Unmarshal(p, &s) == nil {
		switch s {
		case "NaN":
			return math.NaN(), nil
		case "+Inf":
			return math.Inf(1), nil
		case "-Inf":
			return math.Inf(-1), nil
		}
		return 0, fmt.Errorf("want a number, \"NaN\", \"+Inf\" or \"-Inf\"")
	}
	var n json.Number
	if err := json.Unmarshal(p, &n); err != nil {
		return 0, err
	}
	return strconv.ParseFloat(n.String(), bits)
}

func decodeTableBody(p json.RawMessage, depth int) (amqp.Table, error) {
	if depth > maxDepth {
		return nil, fmt.Errorf("value nested deeper than %d levels", maxDepth)
	}
	var fields map[string]json.RawMessage
	if err := json.Unmarshal(p, &fields); err != nil || fields == nil {
		return nil, fmt.Errorf("want a table object, got %s", clip(p))
	}
	t := make(amqp.Table, len(fields))
	for k, raw := range fields {
		v, err := decodeValue(raw, depth)
		if err != nil {
			return nil, fmt.Errorf("field %q: %w", k, err)
		}
		t[k] = v
	}
	return t, nil
}

func decodeTablePairs(p json.RawMessage, depth int) (amqp.Table, error) {
	var pairs [][2]json.RawMessage
	if err := json.Unmarshal(p, &pairs); err != nil {
		return nil, fmt.Errorf("want [[name, value], ...], got %s", clip(p))
	}
	t := make(amqp.Table, len(pairs))
	for _, pr := range pairs {
		var k Str
		if err := k.UnmarshalJSON(pr[0]); err != nil {
			return nil, fmt.Errorf("field name: %w", err)
		}
		v, err := decodeValue(pr[1], depth)
		if err != nil {
			return nil, fmt.Errorf("field %q: %w", string(k), err)
		}
		t[string(k)] = v
	}
	return t, nil
}

func strictUnmarshal(p []byte, v any) error {
	d := json.NewDecoder(bytes.NewReader(p))
	d.DisallowUnknownFields()
	return d.Decode(v)
}

// clip shortens raw input for an error message.
func clip(b []byte) string { return text.Clip(string(b), 63, "...") }
