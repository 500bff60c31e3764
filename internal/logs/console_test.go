package logs

import "testing"

// Spring Boot's correlation bracket is W3C hex ids joined by dashes; a
// thread name or one id alone is not.
func TestIsCorrelation(t *testing.T) {
	for in, want := range map[string]bool{
		"4bf92f3577b34da68707a01da3ce929d-000000018707a01d":                  true,
		"4bf92f3577b34da68707a01da3ce929d-00f067aa0ba902b7-00f067aa0ba902b7": true,
		"ntContainer#0-5":                    false,
		"4bf92f3577b34da68707a01da3ce929d":   false,
		"4bf92f3577b34da6-":                  false,
		"-4bf92f3577b34da6":                  false,
		"4bf92f3577b34da6--4bf92f3577b34da6": false,
		"4bf92f3577b34da6-4bf92f3577b34dxx":  false,
		"":                                   false,
	} {
		if got := isCorrelation([]byte(in)); got != want {
			t.Errorf("isCorrelation(%q) = %v, want %v", in, got, want)
		}
	}
}
