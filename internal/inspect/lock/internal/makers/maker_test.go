package makers

import (
	"testing"
)

func TestFencedKey(t *testing.T) {
	for key, want := range map[string]string{
		"lock:order:42:fence":         "lock:order:42",
		"fence:lock:order:42":         "lock:order:42",
		"lock:fencing_token:order:42": "lock:order:42",
		"lock:order:42":               "lock:order:42",
	} {
		if got := fencedKey(key); got != want {
			t.Errorf("fencedKey(%q) = %q, want %q", key, got, want)
		}
	}
}
