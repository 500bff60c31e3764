package english

import (
	"testing"
	"time"
)

func TestPluralAndCount(t *testing.T) {
	if got := Plural(1, "run", "runs"); got != "run" {
		t.Errorf("Plural(1) = %q", got)
	}
	for _, n := range []int64{0, 2, -1} {
		if got := Plural(n, "run", "runs"); got != "runs" {
			t.Errorf("Plural(%d) = %q", n, got)
		}
	}
	if got := Count(uint8(1), "lock family", "lock families"); got != "1 lock family" {
		t.Errorf("Count(1) = %q", got)
	}
	if got := Count(12, "line", "lines"); got != "12 lines" {
		t.Errorf("Count(12) = %q", got)
	}
}

func TestNumber(t *testing.T) {
	for n, want := range map[int64]string{0: "0", 999: "999", 1000: "1,000", -1234567: "-1,234,567", 100000: "100,000"} {
		if got := Number(n); got != want {
			t.Errorf("Number(%d) = %q, want %q", n, got, want)
		}
	}
}

func TestDuration(t *testing.T) {
	for d, want := range map[time.Duration]string{
		15 * time.Minute:                   "15m",
		time.Hour:                          "1h",
		90 * time.Minute:                   "1h30m",
		3*time.Hour + 20*time.Second:       "3h0m20s",
		45 * time.Second:                   "45s",
		1500 * time.Millisecond:            "2s",
		250 * time.Millisecond:             "250ms",
		50*time.Hour + 10*time.Minute:      "2d2h",
		time.Minute + 500*time.Millisecond: "1m1s",
	} {
		if got := Duration(d); got != want {
			t.Errorf("Duration(%s) = %s, want %s", d, got, want)
		}
	}
}
