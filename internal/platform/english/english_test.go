package english

import "testing"

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
