package report

import (
	"math"
	"strconv"
	"testing"
)

// luminance is WCAG 2's relative luminance of a #rrggbb colour.
func luminance(t *testing.T, hex string) float64 {
	t.Helper()
	var c [3]float64
	for i := range c {
		v, err := strconv.ParseUint(hex[1+2*i:3+2*i], 16, 8)
		if err != nil || len(hex) != 7 {
			t.Fatalf("colour %q: want #rrggbb", hex)
		}
		x := float64(v) / 255
		if x <= 0.03928 {
			c[i] = x / 12.92
		} else {
			c[i] = math.Pow((x+0.055)/1.055, 2.4)
		}
	}
	return 0.2126*c[0] + 0.7152*c[1] + 0.0722*c[2]
}

func contrast(t *testing.T, a, b string) float64 {
	la, lb := luminance(t, a), luminance(t, b)
	return (math.Max(la, lb) + 0.05) / (math.Min(la, lb) + 0.05)
}

// TestPaletteContrast holds WCAG AA in both colour schemes: 4.5:1 for
// every text colour on the background it is drawn on, 3:1 for every mark
// and bar edge against the page.
func TestPaletteContrast(t *testing.T) {
	text := [][2]string{
		{"ink", "bg"}, {"faint", "bg"}, {"link", "bg"}, {"error-text", "bg"}, {"pass-text", "bg"}, {"warn", "bg"}, {"info", "bg"},
		{"on-badge", "error"}, {"on-badge", "info"}, {"on-badge", "pass"}, {"on-badge", "faint"}, {"on-warn", "warn-bg"},
		{"on-lease", "lease"},
	}
	marks := [][2]string{
		{"error", "bg"}, {"warn", "bg"}, {"info", "bg"}, {"pass", "bg"}, {"delivery", "bg"}, {"lease-edge", "bg"},
		{"effect", "bg"}, {"fault", "bg"}, {"faint", "bg"},
	}
	for name, s := range map[string]scheme{"light": lightScheme, "dark": darkScheme} {
		for _, p := range text {
			if c := contrast(t, s[p[0]], s[p[1]]); c < 4.5 {
				t.Errorf("%s: text %s on %s is %.2f:1, WCAG AA wants 4.5:1", name, p[0], p[1], c)
			}
		}
		for _, p := range marks {
			if c := contrast(t, s[p[0]], s[p[1]]); c < 3 {
				t.Errorf("%s: mark %s on %s is %.2f:1, WCAG AA wants 3:1", name, p[0], p[1], c)
			}
		}
	}
}
