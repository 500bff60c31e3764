package makers

import (
	"testing"
)

func TestSplitRedislock(t *testing.T) {
	for v, want := range map[string][2]string{
		"Xk3_9aQ-zP1mN8bV2cL7wR":               {"Xk3_9aQ-zP1mN8bV2cL7wR", ""},
		`Xk3_9aQ-zP1mN8bV2cL7wR{"host":"w1"}`:  {"Xk3_9aQ-zP1mN8bV2cL7wR", `{"host":"w1"}`},
		"Xk3_9aQ-zP1mN8bV2cL7wRworker-7":       {"Xk3_9aQ-zP1mN8bV2cL7wR", "worker-7"},
		"-GJRaH90V3OCf50wfmNK0w|batch-0":       {"-GJRaH90V3OCf50wfmNK0w", "|batch-0"},
		"rLPBLQLG-NmrFSpsbcbecw{}":             {"rLPBLQLG-NmrFSpsbcbecw", "{}"},
		"Xk3_9aQ-zP1mN8bV2cL7wRq8ZtY2pLx0Vb":   {}, // a 34-character random token
		"8d0c5a1e-3b2a-4c1d-9e8f-0a1b2c3d4e5f": {}, // a UUID
		"9e107d9d372bb6826bd81d3542a419d6":     {}, // hex
		"MyServiceWorkerInstanc":               {}, // a CamelCase word
		"short":                                {},
	} {
		tok, meta, ok := splitRedislock(v)
		if got := [2]string{tok, meta}; ok != (want != [2]string{}) || ok && got != want {
			t.Errorf("splitRedislock(%q) = %q %q %v, want %q", v, tok, meta, ok, want)
		}
	}
}
