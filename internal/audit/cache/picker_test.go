package cache

import (
	"slices"
	"testing"
)

// TestKeyPicker: with a time column the most recent keys stay, a key met
// twice (SCAN may return one twice) is kept once; without one, the first
// met stay.
func TestKeyPicker(t *testing.T) {
	p := &keyPicker{max: 3, byTime: true, member: map[string]bool{}}
	for _, k := range []pick{{"a", 5}, {"b", 1}, {"c", 9}, {"c", 9}, {"d", 7}, {"e", 2}, {"f", 8}} {
		p.offer(k.id, k.updated)
	}
	if got, want := p.ids(), []string{"c", "d", "f"}; !slices.Equal(got, want) {
		t.Errorf("by time: %v, want %v", got, want)
	}
	p = &keyPicker{max: 2, member: map[string]bool{}}
	for _, id := range []string{"z", "z", "y", "x"} {
		p.offer(id, 0)
	}
	if got, want := p.ids(), []string{"y", "z"}; !slices.Equal(got, want) {
		t.Errorf("first met: %v, want %v", got, want)
	}
	var none *keyPicker
	none.offer("a", 1) // no replica: nothing kept, no panic
}
