package report

import (
	"strings"
	"testing"
)

// TestBarEndLabelsStayInThePicture: a bar ending near the right edge says
// how it ended on two lines (the whole in its title) rather than running
// off the picture; a short end stays one plain text.
func TestBarEndLabelsStayInThePicture(t *testing.T) {
	long := "released after it was taken over by worker-8, it went on to its last line"
	l := &Lanes{ID: "t", Start: 0, End: 1000, Lanes: []Lane{{Name: "w1", Rows: []LaneRow{{Label: "lock", Bars: []Bar{
		{From: 0, To: 100, Kind: BarLease, End: "expired"},
		{From: 100, To: 1000, Kind: BarBelieved, End: long},
	}}}}}}
	var b strings.Builder
	if err := l.SVG(&b); err != nil {
		t.Fatal(err)
	}
	svg := b.String()
	if !strings.Contains(svg, `<text class="bar-end-label" x="`) || !strings.Contains(svg, `>expired</text>`) {
		t.Errorf("the short end is not one plain text:\n%s", svg)
	}
	if !strings.Contains(svg, "<title>"+long+"</title>") || !strings.Contains(svg, `dy="11"`) {
		t.Fatalf("the long end is not wrapped with its whole text as title:\n%s", svg)
	}
	for _, part := range strings.Split(svg, "<tspan")[1:] {
		words := part[strings.Index(part, ">")+1 : strings.Index(part, "</tspan>")]
		if x := float64(lanesLeft+lanesWidth) + 3 + endLabelCharPx*float64(len([]rune(strings.TrimSpace(words)))); x >
			float64(lanesLeft+lanesWidth+lanesRight) {
			t.Errorf("line %q runs to x=%.0f, past the picture's %d", words, x, lanesLeft+lanesWidth+lanesRight)
		}
	}
}
