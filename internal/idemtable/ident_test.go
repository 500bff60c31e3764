package idemtable

import (
	"slices"
	"strings"
	"testing"
	"unicode/utf8"
)

func TestParseName(t *testing.T) {
	for _, c := range []struct {
		in   string
		want Name
		err  string
	}{
		{in: "payments", want: Name{Name: "payments"}},
		{in: "Payments", want: Name{Name: "payments"}},
		{in: " billing . Payments ", want: Name{Schema: "billing", Name: "payments"}},
		{in: `"Payments"`, want: Name{Name: "Payments"}},
		{in: `"Billing Dept"."Pay""ments"`, want: Name{Schema: "Billing Dept", Name: `Pay"ments`}},
		{in: `"a.b"`, want: Name{Name: "a.b"}},
		{in: `"x; DROP TABLE t; --"`, want: Name{Name: "x; DROP TABLE t; --"}},
		{in: "tbl_1$", want: Name{Name: "tbl_1$"}},
		{in: "ÄÖ", want: Name{Name: "ÄÖ"}},
		{in: "x; DROP TABLE t", err: `unexpected ';'`},
		{in: "a.b.c", err: "3 dotted parts"},
		{in: "", err: "empty name"},
		{in: `""`, err: "empty quoted name"},
		{in: `"abc`, err: "unterminated"},
		{in: "1abc", err: "starts with a letter"},
		{in: "a.", err: "empty name"},
		{in: strings.Repeat("a", 64), err: "longer than"},
	} {
		got, err := ParseName(c.in)
		if c.err != "" {
			if err == nil || !strings.Contains(err.Error(), c.err) {
				t.Errorf("ParseName(%q) = %v, %v; want error containing %q", c.in, got, err, c.err)
			}
			continue
		}
		if err != nil || got != c.want {
			t.Errorf("ParseName(%q) = %#v, %v; want %#v", c.in, got, err, c.want)
		}
	}
}

func TestParseIdentList(t *testing.T) {
	got, err := ParseIdentList(`tenant_id, "Idem,Key" ,Status`)
	if want := []string{"tenant_id", "Idem,Key", "status"}; err != nil || !slices.Equal(got, want) {
		t.Errorf("got %q, %v; want %q", got, err, want)
	}
	if _, err := ParseIdentList("a,,b"); err == nil {
		t.Error("empty element accepted")
	}
}

func TestNameDisplayAndSQL(t *testing.T) {
	for _, c := range []struct {
		n           Name
		show, quote string
	}{
		{Name{Schema: "public", Name: "payments"}, "public.payments", `"public"."payments"`},
		{Name{Name: "Payments"}, `"Payments"`, `"Payments"`},
		{Name{Name: `x"; DROP TABLE t; --`}, `"x""; DROP TABLE t; --"`, `"x""; DROP TABLE t; --"`},
		{Name{Name: "1st"}, `"1st"`, `"1st"`},
	} {
		if got := c.n.String(); got != c.show {
			t.Errorf("String(%#v) = %s, want %s", c.n, got, c.show)
		}
		if got := c.n.SQL(); got != c.quote {
			t.Errorf("SQL(%#v) = %s, want %s", c.n, got, c.quote)
		}
	}
}

// FuzzParseName: any input either fails cleanly or gives names that
// round-trip: displayed and parsed again, they are the same name.
func FuzzParseName(f *testing.F) {
	for _, s := range []string{"payments", `"Billing Dept"."Pay""ments"`, "a.b", `"x; DROP TABLE t; --"`, `""""`, "Ä.b", `"a"b`} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, s string) {
		n, err := ParseName(s)
		if err != nil {
			return
		}
		if n.Name == "" || len(n.Name) > maxIdentLen || len(n.Schema) > maxIdentLen {
			t.Fatalf("ParseName(%q) = %#v: empty or over-long part", s, n)
		}
		if !utf8.ValidString(n.Name) {
			return // PostgreSQL would reject it; nothing to round-trip
		}
		back, err := ParseName(n.String())
		if err != nil || back != n {
			t.Fatalf("ParseName(%q) = %#v; displayed %s parses as %#v, %v", s, n, n.String(), back, err)
		}
	})
}
