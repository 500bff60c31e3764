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
