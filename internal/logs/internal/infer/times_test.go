package infer

import (
	"testing"
	"time"
)

func TestParseClock(t *testing.T) {
	ref := time.Date(2026, 12, 7, 14, 0, 0, 0, time.UTC)
	for _, c := range []struct {
		in   string
		year int
		date time.Time
		want string // RFC 3339; "" when it cannot be completed; "bad" when not a clock
	}{
		{in: "Mar 14 09:00:20", year: 2026, want: "2026-03-14T09:00:20Z"},
		{in: "Dec  2 09:07:47", year: 2025, want: "2025-12-02T09:07:47Z"},
		{in: "Mar 14 09:00:20", want: ""},
		{in: "Mar 14, 2026 9:00:43 AM", want: "2026-03-14T09:00:43Z"},
		{in: "Mar 14, 2026 12:00:43 AM", want: "2026-03-14T00:00:43Z"},
		{in: "Mar 4, 2026 1:05:00 PM", want: "2026-03-04T13:05:00Z"},
		{in: "9:07AM", date: time.Date(2026, 3, 14, 0, 0, 0, 0, time.UTC), want: "2026-03-14T09:07:00Z"},
		{in: "12:30PM", date: time.Date(2026, 3, 14, 0, 0, 0, 0, time.UTC), want: "2026-03-14T12:30:00Z"},
		{in: "9:07AM", want: ""},
		{in: "09:07:50.215", date: time.Date(2026, 3, 14, 0, 0, 0, 0, time.UTC), want: "2026-03-14T09:07:50.215Z"},
		{in: "09:07:50,5", date: time.Date(2026, 3, 14, 0, 0, 0, 0, time.UTC), want: "2026-03-14T09:07:50.5Z"},
		{in: "25:07:50", want: "bad"},
		{in: "Foo 14 09:00:20", want: "bad"},
		{in: "Mar 44 09:00:20", want: "bad"},
		{in: "13:07PM", want: "bad"},
	} {
		clock, ok := ParseClock([]byte(c.in))
		if c.want == "bad" {
			if ok {
				t.Errorf("%q read as %+v", c.in, clock)
			}
			continue
		}
		if !ok {
			t.Errorf("%q not read", c.in)
			continue
		}
		got, ok := clock.Complete(c.year, c.date, nil)
		switch {
		case c.want == "" && ok:
			t.Errorf("%q completed to %v without what it leaves out", c.in, got)
		case c.want != "" && (!ok || got.Format(time.RFC3339Nano) != c.want):
			t.Errorf("%q = %v (%v), want %s", c.in, got.Format(time.RFC3339Nano), ok, c.want)
		}
		if n := ClockLen([]byte(c.in + " rest")); n != len(c.in) {
			t.Errorf("ClockLen(%q + rest) = %d, want %d", c.in, n, len(c.in))
		}
	}
	if y := YearBefore(3, 14, ref); y != 2026 {
		t.Errorf("March before December 2026: %d", y)
	}
	if y := YearBefore(12, 31, time.Date(2027, 1, 2, 0, 0, 0, 0, time.UTC)); y != 2026 {
		t.Errorf("Dec 31 before Jan 2 2027: %d", y)
	}
}

func TestDateIn(t *testing.T) {
	for in, want := range map[string]string{
		"app-2026-03-14.log": "2026-03-14", "app.20260314.log": "2026-03-14", "app.log": "", "build-123456789.log": "",
		"x2026/03/14": "2026-03-14", "2026-13-01": "",
	} {
		d, ok := DateIn(in)
		got := ""
		if ok {
			got = d.Format(time.DateOnly)
		}
		if got != want {
			t.Errorf("DateIn(%q) = %q, want %q", in, got, want)
		}
	}
}

func FuzzParseClock(f *testing.F) {
	for _, s := range []string{"Mar 14 09:00:20", "Mar 14, 2026 9:00:43 AM", "9:07AM", "09:07:50.215", "Dec  2 1:2:3", "1:"} {
		f.Add([]byte(s))
	}
	f.Fuzz(func(t *testing.T, b []byte) {
		if n := ClockLen(b); n < 0 || n > len(b) {
			t.Fatalf("ClockLen %d of %d bytes", n, len(b))
		}
		c, ok := ParseClock(b)
		if !ok {
			return
		}
		if c.Sec < 0 || c.Sec > 86400 || c.Month < 0 || c.Month > 12 {
			t.Fatalf("%q read as %+v", b, c)
		}
		c.Complete(2026, time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC), nil)
	})
}
