package text

import (
	"testing"
	"unicode/utf8"
)

func TestClip(t *testing.T) {
	for _, c := range []struct {
		in   string
		n    int
		mark string
		want string
	}{
		{"short", 10, "...", "short"},
		{"abcdefghij", 8, "...", "abcde..."},
		{"héllo wörld", 6, "...", "hé..."}, // é is two bytes
		{"ééééé", 6, "…", "é…"},            // … is three bytes: the cut backs off the second é
		{"abcdef", 2, "...", ".."},
	} {
		if got := Clip(c.in, c.n, c.mark); got != c.want || len(got) > c.n || !utf8.ValidString(got) {
			t.Errorf("Clip(%q, %d, %q) = %q, want %q", c.in, c.n, c.mark, got, c.want)
		}
	}
	if got := ClipRunes("payments-worker-7d9f", 10, "…"); got != "payments-…" {
		t.Errorf("ClipRunes: %q", got)
	}
	if got := ClipRunes("ééé", 3, "…"); got != "ééé" {
		t.Errorf("ClipRunes kept: %q", got)
	}
}

func FuzzClip(f *testing.F) {
	f.Add("héllo wörld", 6)
	f.Fuzz(func(t *testing.T, s string, n int) {
		n = n % 200
		if n < 0 {
			n = -n
		}
		got := Clip(s, n, "...")
		if len(got) > max(n, len(s)) || (utf8.ValidString(s) && !utf8.ValidString(got)) {
			t.Fatalf("Clip(%q, %d) = %q", s, n, got)
		}
	})
}
