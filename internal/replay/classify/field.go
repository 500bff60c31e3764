package classify

import (
	"bytes"
	"encoding/json"
	"fmt"
	"regexp"
	"strconv"
	"strings"
	"time"

	"github.com/dupctl/dupctl/internal/deadletter"
	"github.com/dupctl/dupctl/internal/platform/problem"

	amqp "github.com/rabbitmq/amqp091-go"
)

// Field names a value inside a message:
//
//	header.NAME[.SUB...]   a header (nested tables and arrays by dot path)
//	body.PATH              a JSON body field (dot path; array index by number)
//	prop.NAME              a basic property: message_id, correlation_id, type,
//	                       app_id, user_id, content_type, content_encoding,
//	                       reply_to, expiration, priority, delivery_mode, timestamp
type Field struct {
	Kind string // header, body, prop
	Path string
}

func (f Field) String() string { return f.Kind + "." + f.Path }

var propNames = []string{"message_id", "correlation_id", "type", "app_id", "user_id", "content_type",
	"content_encoding", "reply_to", "expiration", "priority", "delivery_mode", "timestamp"}

// parseField reads header.NAME, body.PATH or prop.NAME.
func parseField(s string) (Field, error) {
	kind, path, ok := strings.Cut(s, ".")
	if !ok || path == "" {
		return Field{}, fmt.Errorf("field %q: want header.NAME, body.PATH or prop.NAME", s)
	}
	switch kind {
	case "header":
	case "body":
		if strings.HasPrefix(path, ".") || strings.HasSuffix(path, ".") || strings.Contains(path, "..") {
			return Field{}, fmt.Errorf("field %q: an empty step in the body path (want body.a.b)", s)
		}
	case "prop":
		if !contains(propNames, path) {
			return Field{}, fmt.Errorf("field %q: unknown property %q (want one of %s)", s, path, strings.Join(propNames, ", "))
		}
	default:
		return Field{}, fmt.Errorf("field %q: want header.NAME, body.PATH or prop.NAME", s)
	}
	return Field{Kind: kind, Path: path}, nil
}

func contains(list []string, s string) bool {
	for _, x := range list {
		if x == s {
			return true
		}
	}
	return false
}

// lookup returns the field's value as text, and whether it is present.
func (f Field) lookup(m *deadletter.Message) (string, bool) {
	switch f.Kind {
	case "header":
		v, ok := headerPath(m.Props.Headers, f.Path)
		if !ok {
			return "", false
		}
		return valueText(v), true
	case "body":
		return bodyPath(m, f.Path)
	case "prop":
		return propText(&m.Props, f.Path)
	}
	return "", false
}

// headerPath finds NAME in the headers: first the whole path as one name
// (header names may contain dots), then a dot path into nested values.
func headerPath(h amqp.Table, path string) (any, bool) {
	if v, ok := h[path]; ok {
		return v, true
	}
	parts := strings.Split(path, ".")
	for i := len(parts) - 1; i >= 1; i-- {
		name := strings.Join(parts[:i], ".")
		if v, ok := h[name]; ok {
			return walk(v, parts[i:])
		}
	}
	return nil, false
}

func walk(v any, rest []string) (any, bool) {
	for _, p := range rest {
		switch x := v.(type) {
		case amqp.Table:
			nv, ok := x[p]
			if !ok {
				return nil, false
			}
			v = nv
		case []any:
			i, err := strconv.Atoi(p)
			if err != nil || i < 0 || i >= len(x) {
				return nil, false
			}
			v = x[i]
		case map[string]any:
			nv, ok := x[p]
			if !ok {
				return nil, false
			}
			v = nv
		default:
			return nil, false
		}
	}
	return v, true
}

// bodyPath reads a dot path from a JSON body; a body that is not JSON has
// no fields.
func bodyPath(m *deadletter.Message, path string) (string, bool) {
	trimmed := bytes.TrimSpace(m.Body)
	if len(trimmed) == 0 || (trimmed[0] != '{' && trimmed[0] != '[') {
		return "", false
	}
	d := json.NewDecoder(bytes.NewReader(trimmed))
	d.UseNumber()
	var doc any
	if d.Decode(&doc) != nil {
		return "", false
	}
	v, ok := walk(doc, strings.Split(path, "."))
	if !ok {
		return "", false
	}
	return valueText(v), true
}

// valueText is a value's text for comparisons and tables: strings as they
// are, numbers in decimal, timestamps in RFC 3339, anything else as JSON.
func valueText(v any) string {
	switch x := v.(type) {
	case nil:
		return ""
	case string:
		return x
	case []byte:
		return string(x)
	case bool, int8, uint8, int16, uint16, int32, uint32, int64, int, float32, float64, json.Number:
		return fmt.Sprint(x)
	case time.Time:
		return x.UTC().Format(time.RFC3339)
	case amqp.Decimal:
		return decimalText(x)
	}
	b, err := json.Marshal(v)
	if err != nil {
		return fmt.Sprint(v)
	}
	return string(b)
}

func decimalText(d amqp.Decimal) string {
	s := strconv.FormatInt(int64(d.Value), 10)
	if d.Scale == 0 {
		return s
	}
	neg := strings.HasPrefix(s, "-")
	s = strings.TrimPrefix(s, "-")
	for len(s) <= int(d.Scale) {
		s = "0" + s
	}
	s = s[:len(s)-int(d.Scale)] + "." + s[len(s)-int(d.Scale):]
	if neg {
		s = "-" + s
	}
	return s
}

func propText(p *deadletter.Properties, name string) (string, bool) {
	var s string
	switch name {
	case "message_id":
		s = p.MessageID
	case "correlation_id":
		s = p.CorrelationID
	case "type":
		s = p.Type
	case "app_id":
		s = p.AppID
	case "user_id":
		s = p.UserID
	case "content_type":
		s = p.ContentType
	case "content_encoding":
		s = p.ContentEncoding
	case "reply_to":
		s = p.ReplyTo
	case "expiration":
		s = p.Expiration
	case "priority":
		return strconv.Itoa(int(p.Priority)), true
	case "delivery_mode":
		return strconv.Itoa(int(p.DeliveryMode)), true
	case "timestamp":
		if p.Timestamp.IsZero() {
			return "", false
		}
		return p.Timestamp.UTC().Format(time.RFC3339), true
	}
	return s, s != ""
}

// FirstOf returns the first present field's value among candidates.
func FirstOf(m *deadletter.Message, fields []Field) (string, Field, bool) {
	for _, f := range fields {
		if v, ok := f.lookup(m); ok && v != "" {
			return v, f, true
		}
	}
	return "", Field{}, false
}

// Where is one --where condition: FIELD=VALUE, FIELD!=VALUE, FIELD~REGEX
// or FIELD alone (present).
type Where struct {
	Field Field
	Op    string // "=", "!=", "~", "exists"
	Value string
	re    *regexp.Regexp
}

func (w Where) String() string {
	if w.Op == "exists" {
		return w.Field.String()
	}
	return w.Field.String() + w.Op + w.Value
}

// ParseWhere reads one --where condition. Its errors are bad input about
// the Where option.
func ParseWhere(s string) (Where, error) {
	i := strings.IndexAny(s, "=!~")
	if i < 0 {
		f, err := parseField(s)
		if err != nil {
			return Where{}, whereError(s, err.Error(), err)
		}
		return Where{Field: f, Op: "exists"}, nil
	}
	var op string
	switch {
	case strings.HasPrefix(s[i:], "!="):
		op = "!="
	case s[i] == '=':
		op = "="
	case s[i] == '~':
		op = "~"
	default:
		return Where{}, whereError(s, "want FIELD=VALUE, FIELD!=VALUE, FIELD~REGEX or FIELD", nil)
	}
	f, err := parseField(s[:i])
	if err != nil {
		return Where{}, whereError(s, err.Error(), err)
	}
	w := Where{Field: f, Op: op, Value: s[i+len(op):]}
	if op != "~" && strings.HasPrefix(w.Value, "=") {
		// header.x==v would otherwise match the value "=v": a shell or
		// SQL habit, not what was meant.
		return Where{}, whereError(s, op+"= is not an operator: write FIELD"+op+"VALUE (FIELD~^= matches a value that starts with =)", nil)
	}
	if op == "~" {
		re, err := regexp.Compile(w.Value)
		if err != nil {
			return Where{}, whereError(s, err.Error(), err)
		}
		w.re = re
	}
	return w, nil
}

func whereError(s, why string, err error) error {
	return &problem.Input{Field: "Where", Value: s, Quote: true, Why: why, Err: err}
}

// match reports whether m satisfies the condition. A missing field matches
// only "!=".
func (w Where) match(m *deadletter.Message) bool {
	v, ok := w.Field.lookup(m)
	switch w.Op {
	case "exists":
		return ok
	case "=":
		return ok && v == w.Value
	case "!=":
		return !ok || v != w.Value
	case "~":
		return ok && w.re.MatchString(v)
	}
	return false
}

// The field candidates, in order, for the error message, job type and
// idempotency key (DefaultIdempotencyFields, the one used elsewhere). --error-field, --job-type-field and --idempotency-key
// replace them.
var (
	defaultErrorFields = mustFields("header.x-exception-message", "header.x-last-error", "header.error",
		"header.error-message", "header.error_message", "header.exception", "body.error", "body.lastError")
	defaultJobTypeFields = mustFields("prop.type", "header.job-type", "header.job_type", "header.jobType",
		"header.x-job-type", "body.type", "body.jobType", "body.job_type")
	DefaultIdempotencyFields = mustFields("header.idempotency-key", "header.idempotencyKey", "header.idempotency_key",
		"header.x-idempotency-key", "body.idempotencyKey", "body.idempotency_key")
)

func mustFields(specs ...string) []Field {
	out := make([]Field, len(specs))
	for i, s := range specs {
		f, err := parseField(s)
		if err != nil {
			panic(err)
		}
		out[i] = f
	}
	return out
}

// FieldList parses comma-free lists of field specs given one per flag.
func FieldList(specs []string) ([]Field, error) {
	var out []Field
	for _, s := range specs {
		f, err := parseField(strings.TrimSpace(s))
		if err != nil {
			return nil, err
		}
		out = append(out, f)
	}
	return out, nil
}
