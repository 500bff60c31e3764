package report

import (
	"bytes"
	"encoding"
	"encoding/json"
	"io"
	"reflect"
	"strconv"
	"strings"
)

// streamJSON writes v as encoding/json's Encoder with SetIndent("", "  ")
// and SetEscapeHTML(false) would, byte for byte, but without holding the
// whole document: plain structs and slices are walked, and only their
// leaves (and anything with its own marshaller, a map, an embedded field)
// are encoded whole. A report of 30,000 duplicated keys is some 120 MB of
// JSON; encoded at once it took four copies of that in memory.
func streamJSON(w io.Writer, v any) error {
	s := &jsonStream{w: w}
	s.value(reflect.ValueOf(v), 0)
	if s.err == nil {
		s.write("\n")
	}
	return s.err
}

type jsonStream struct {
	w   io.Writer
	err error
	buf bytes.Buffer
	// own caches, per type, whether it has a marshaller of its own
	// (reflect's Implements is not cheap, and a big report has millions
	// of values of a few types).
	own map[reflect.Type]bool
}

func (s *jsonStream) write(str string) {
	if s.err == nil {
		_, s.err = io.WriteString(s.w, str)
	}
}

var (
	marshalerType     = reflect.TypeFor[json.Marshaler]()
	textMarshalerType = reflect.TypeFor[encoding.TextMarshaler]()
)

// ownMarshaler reports whether t or *t marshals itself.
func (s *jsonStream) ownMarshaler(t reflect.Type) bool {
	own, ok := s.own[t]
	if !ok {
		own = t.Implements(marshalerType) || t.Implements(textMarshalerType) ||
			reflect.PointerTo(t).Implements(marshalerType) || reflect.PointerTo(t).Implements(textMarshalerType)
		if s.own == nil {
			s.own = map[reflect.Type]bool{}
		}
		s.own[t] = own
	}
	return own
}

// walkable reports whether v's JSON can be written part by part: a struct
// with no embedded field and no marshaller of its own, or a slice (not of
// bytes) without one.
func (s *jsonStream) walkable(v reflect.Value) bool {
	t := v.Type()
	if s.ownMarshaler(t) {
		return false
	}
	switch t.Kind() {
	case reflect.Struct:
		for i := 0; i < t.NumField(); i++ {
			f := t.Field(i)
			if f.Anonymous || strings.Contains(f.Tag.Get("json"), ",string") {
				return false
			}
		}
		return true
	case reflect.Slice:
		return t.Elem().Kind() != reflect.Uint8 && !v.IsNil()
	}
	return false
}

func (s *jsonStream) value(v reflect.Value, depth int) {
	if !v.IsValid() {
		s.write("null")
		return
	}
	for v.Kind() == reflect.Interface || v.Kind() == reflect.Pointer {
		if v.IsNil() {
			s.write("null")
			return
		}
		if v.Kind() == reflect.Pointer && !s.walkable(v.Elem()) {
			break
		}
		v = v.Elem()
	}
	switch {
	case s.err != nil:
	case v.Kind() != reflect.Pointer && s.walkable(v) && v.Kind() == reflect.Struct:
		s.object(v, depth)
	case v.Kind() != reflect.Pointer && s.walkable(v) && v.Kind() == reflect.Slice:
		s.array(v, depth)
	default:
		s.leaf(v, depth)
	}
}

// leaf encodes a value whole, indented as it would be at this depth.
func (s *jsonStream) leaf(v reflect.Value, depth int) {
	if s.scalar(v) {
		return
	}
	s.buf.Reset()
	enc := json.NewEncoder(&s.buf)
	enc.SetEscapeHTML(false)
	enc.SetIndent(strings.Repeat("  ", depth), "  ")
	if err := enc.Encode(v.Interface()); err != nil {
		s.err = err
		return
	}
	s.write(strings.TrimSuffix(s.buf.String(), "\n"))
}

// scalar writes the leaves most of a big report is made of - strings of
// printable ASCII without quotes or backslashes, booleans and integers -
// as the Encoder would, without one (a third of -o json's time went to
// encoding them one by one).
func (s *jsonStream) scalar(v reflect.Value) bool {
	if s.ownMarshaler(v.Type()) {
		return false
	}
	b := s.buf.AvailableBuffer()
	switch v.Kind() {
	case reflect.String:
		str := v.String()
		for i := 0; i < len(str); i++ {
			if c := str[i]; c < 0x20 || c >= 0x7f || c == '"' || c == '\\' {
				return false
			}
		}
		b = append(append(append(b, '"'), str...), '"')
	case reflect.Bool:
		b = strconv.AppendBool(b, v.Bool())
	case reflect.Int, reflect.Int8, reflect.Int16, reflect.Int32, reflect.Int64:
		b = strconv.AppendInt(b, v.Int(), 10)
	case reflect.Uint, reflect.Uint8, reflect.Uint16, reflect.Uint32, reflect.Uint64:
		b = strconv.AppendUint(b, v.Uint(), 10)
	default:
		return false
	}
	if s.err == nil {
		_, s.err = s.w.Write(b)
	}
	return true
}

func (s *jsonStream) array(v reflect.Value, depth int) {
	if v.Len() == 0 {
		s.write("[]")
		return
	}
	inner := "\n" + strings.Repeat("  ", depth+1)
	s.write("[")
	for i := 0; i < v.Len() && s.err == nil; i++ {
		if i > 0 {
			s.write(",")
		}
		s.write(inner)
		s.value(v.Index(i), depth+1)
	}
	s.write("\n" + strings.Repeat("  ", depth) + "]")
}

func (s *jsonStream) object(v reflect.Value, depth int) {
	t := v.Type()
	inner := "\n" + strings.Repeat("  ", depth+1)
	n := 0
	for i := 0; i < t.NumField() && s.err == nil; i++ {
		f := t.Field(i)
		name, omitEmpty, omitZero, ok := fieldName(f)
		fv := v.Field(i)
		if !ok || omitEmpty && isEmpty(fv) || omitZero && fv.IsZero() {
			continue
		}
		if n == 0 {
			s.write("{")
		} else {
			s.write(",")
		}
		n++
		key, _ := json.Marshal(name)
		s.write(inner + string(key) + ": ")
		s.value(fv, depth+1)
	}
	if n == 0 {
		s.write("{}")
		return
	}
	s.write("\n" + strings.Repeat("  ", depth) + "}")
}

// fieldName reads a struct field's JSON name and options as encoding/json
// does (exported fields; "-" skips; "-," is the name "-").
func fieldName(f reflect.StructField) (name string, omitEmpty, omitZero, ok bool) {
	if !f.IsExported() {
		return "", false, false, false
	}
	tag := f.Tag.Get("json")
	if tag == "-" {
		return "", false, false, false
	}
	name, opts, _ := strings.Cut(tag, ",")
	if name == "" {
		name = f.Name
	}
	for _, o := range strings.Split(opts, ",") {
		switch o {
		case "omitempty":
			omitEmpty = true
		case "omitzero":
			omitZero = true
		}
	}
	return name, omitEmpty, omitZero, true
}

// isEmpty is encoding/json's omitempty test.
func isEmpty(v reflect.Value) bool {
	switch v.Kind() {
	case reflect.Array, reflect.Map, reflect.Slice, reflect.String:
		return v.Len() == 0
	case reflect.Bool, reflect.Int, reflect.Int8, reflect.Int16, reflect.Int32, reflect.Int64,
		reflect.Uint, reflect.Uint8, reflect.Uint16, reflect.Uint32, reflect.Uint64, reflect.Uintptr,
		reflect.Float32, reflect.Float64, reflect.Interface, reflect.Pointer:
		return v.IsZero()
	}
	return false
}
