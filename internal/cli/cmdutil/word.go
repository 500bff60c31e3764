package cmdutil

import (
	"reflect"
	"strings"
	"sync"

	"github.com/dupctl/dupctl/internal/platform/findings"
	"github.com/dupctl/dupctl/internal/platform/problem"
)

// Capabilities name the options a text is about by their Options field
// ({KeyColumn}), never by a flag: the command line, dupctl.yaml and a Go
// caller know the same option by different names. Word* put the reader's
// name in, once, before any renderer sees the report.

// Expand words the {Field} placeholders of s that name knows; the others
// stay as they are ({Order123} in a key is data, not an option).
func Expand(s string, name Namer) string {
	if name == nil || !strings.Contains(s, "{") {
		return s
	}
	return problem.Expand(s, func(field string) string {
		if n, ok := name(field); ok {
			return n
		}
		return "{" + field + "}"
	})
}

// WordReport words a report's command, findings (message, evidence, fix) and the
// strings of its data with name; what name does not know in a finding is
// worded as its rule's documentation words it (rule, may be nil).
func WordReport(rep *findings.Report, name Namer, rule func(code string) Namer) {
	if rep == nil {
		return
	}
	rep.Command = Expand(rep.Command, name)
	for i := range rep.Findings {
		f := &rep.Findings[i]
		n := name
		if rule != nil {
			n = n.Or(rule(f.Code))
		}
		if n == nil {
			continue
		}
		f.Message = Expand(f.Message, n)
		f.Fix = Expand(f.Fix, n)
		for j := range f.Evidence {
			f.Evidence[j] = Expand(f.Evidence[j], n)
		}
	}
	if name != nil && rep.Data != nil {
		// Through the field, so that data held by value is worded too.
		w := worder{name: name, seen: map[uintptr]bool{}}
		w.walk(reflect.ValueOf(rep).Elem().FieldByName("Data"))
	}
}

// WordData words, in place, every exported string reachable from v
// through pointers, structs, slices, arrays, maps and interfaces: the
// notes and reasons a result carries for its view and its JSON.
func WordData(v any, name Namer) {
	if name == nil || v == nil {
		return
	}
	w := worder{name: name, seen: map[uintptr]bool{}}
	w.walk(reflect.ValueOf(v))
}

type worder struct {
	name Namer
	seen map[uintptr]bool
}

func (w *worder) walk(v reflect.Value) {
	if !v.IsValid() || !mayHoldText(v.Type()) {
		return
	}
	switch v.Kind() {
	case reflect.String:
		if v.CanSet() {
			if s := v.String(); strings.Contains(s, "{") {
				if t := Expand(s, w.name); t != s {
					v.SetString(t)
				}
			}
		}
	case reflect.Pointer:
		if v.IsNil() || w.seen[v.Pointer()] {
			return
		}
		w.seen[v.Pointer()] = true
		w.walk(v.Elem())
	case reflect.Interface:
		if v.IsNil() {
			return
		}
		e := v.Elem()
		if e.Kind() == reflect.Pointer || !v.CanSet() {
			w.walk(e)
			return
		}
		c := reflect.New(e.Type()).Elem()
		c.Set(e)
		w.walk(c)
		v.Set(c)
	case reflect.Struct:
		t := v.Type()
		for i := range t.NumField() {
			if t.Field(i).IsExported() {
				w.walk(v.Field(i))
			}
		}
	case reflect.Slice, reflect.Array:
		for i := range v.Len() {
			w.walk(v.Index(i))
		}
	case reflect.Map:
		if !mayHoldText(v.Type().Elem()) {
			return
		}
		it := v.MapRange()
		for it.Next() {
			c := reflect.New(it.Value().Type()).Elem()
			c.Set(it.Value())
			w.walk(c)
			v.SetMapIndex(it.Key(), c)
		}
	}
}

var holdsText sync.Map // reflect.Type -> bool

// mayHoldText reports whether a value of type t can reach an exported
// string, so that numbers, times and byte slices are never walked.
func mayHoldText(t reflect.Type) bool {
	if b, ok := holdsText.Load(t); ok {
		return b.(bool)
	}
	holdsText.Store(t, true) // a recursive type: assume so while deciding
	b := decideText(t)
	holdsText.Store(t, b)
	return b
}

func decideText(t reflect.Type) bool {
	switch t.Kind() {
	case reflect.String, reflect.Interface:
		return true
	case reflect.Pointer, reflect.Slice, reflect.Array:
		return t.Elem().Kind() != reflect.Uint8 && mayHoldText(t.Elem())
	case reflect.Map:
		return mayHoldText(t.Elem())
	case reflect.Struct:
		for i := range t.NumField() {
			if f := t.Field(i); f.IsExported() && mayHoldText(f.Type) {
				return true
			}
		}
	}
	return false
}

// WordError words err's message with name, keeping what it wraps (its
// exit code, its type) for errors.As.
func WordError(err error, name Namer) error {
	if err == nil || name == nil {
		return err
	}
	return &wordedError{err: err, name: name}
}

type wordedError struct {
	err  error
	name Namer
}

func (e *wordedError) Error() string { return Expand(e.err.Error(), e.name) }
func (e *wordedError) Unwrap() error { return e.err }

// Plain names any field in plain words (KeyColumn: key-column): the last
// resort of a reader who knows the option by no flag.
func Plain(field string) (string, bool) { return Kebab(field), true }
