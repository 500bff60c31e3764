package classify

import (
	"errors"
	"strings"
	"testing"
	"time"

	"github.com/dupctl/dupctl/internal/platform/problem"
)

// inputAbout asserts err is bad input about field and returns its text
// with options worded as flags are (kebab-less: --Field).
func inputAbout(t *testing.T, err error, field string) string {
	t.Helper()
	var in *problem.Input
	if !errors.As(err, &in) {
		t.Fatalf("err = %v (%T), want *problem.Input", err, err)
	}
	if in.Field != field {
		t.Errorf("Field = %q, want %q", in.Field, field)
	}
	return in.Render(func(f string) string { return "--" + f })
}

func TestParseAge(t *testing.T) {
	for in, want := range map[string]time.Duration{
		"90m": 90 * time.Minute, "36h": 36 * time.Hour, "3d": 72 * time.Hour, "0.5d": 12 * time.Hour, "": 0,
	} {
		got, err := ParseAge(in)
		if err != nil || got != want {
			t.Errorf("%q: %v %v", in, got, err)
		}
	}
	for _, in := range []string{"-1h", "3 days", "d", "-3d"} {
		_, err := ParseAge(in)
		if got, want := inputAbout(t, err, "OlderThan"), `--OlderThan "`+in+`": want a duration like 90m, 36h or 3d`; got != want {
			t.Errorf("%q: %q, want %q", in, got, want)
		}
	}
}

func TestFilterValidate(t *testing.T) {
	ok := Filter{Reasons: Reasons, Groups: []string{"3f2a9c1b"}, OlderThan: time.Hour}
	if err := ok.Validate(); err != nil {
		t.Fatal(err)
	}
	got := inputAbout(t, Filter{Reasons: []string{"expired", "nope"}}.Validate(), "Reasons")
	if want := `--Reasons "nope": want rejected, expired, maxlen, delivery_limit, republished or unknown`; got != want {
		t.Errorf("%q, want %q", got, want)
	}
	for _, g := range []string{"xyz", "ABCDEF12", "3f2a9c1b0"} {
		got := inputAbout(t, Filter{Groups: []string{"3f2a9c1b", g}}.Validate(), "Groups")
		if want := `--Groups "` + g + `": a group id is 8 hex digits, from 'dupctl dlq stats'`; got != want {
			t.Errorf("%q, want %q", got, want)
		}
	}
	inputAbout(t, Filter{OlderThan: -time.Hour}.Validate(), "OlderThan")
}

func TestRouterAndFieldsValidate(t *testing.T) {
	for _, via := range []string{ViaQueue, ViaExchange} {
		if err := (Router{Via: via}).Validate(); err != nil {
			t.Errorf("%q: %v", via, err)
		}
	}
	if got := inputAbout(t, Router{Via: "sideways"}.Validate(), "Via"); got != `--Via "sideways": want queue or exchange` {
		t.Errorf("%q", got)
	}
	inputAbout(t, Router{}.Validate(), "Via")
	if fs, err := FieldsOf("ErrorFields", []string{"header.error", "body.a.b"}); err != nil || len(fs) != 2 {
		t.Errorf("FieldsOf = %v, %v", fs, err)
	}
	_, err := FieldsOf("JobTypeFields", []string{"bogus"})
	if got := inputAbout(t, err, "JobTypeFields"); !strings.HasPrefix(got, `--JobTypeFields: field "bogus": want `) {
		t.Errorf("%q", got)
	}
}
