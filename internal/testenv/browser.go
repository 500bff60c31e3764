package testenv

import (
	"os/exec"
	"testing"
)

// Chromium returns the path of Debian's chromium for browser tests: it
// skips without one, and fails when integration tests are required
// (.ci/run installs it).
func Chromium(t testing.TB) string {
	t.Helper()
	for _, name := range []string{"chromium", "chromium-browser", "google-chrome"} {
		if p, err := exec.LookPath(name); err == nil {
			return p
		}
	}
	msg := "no chromium on PATH: apt-get install -y chromium"
	if Required() {
		t.Fatalf("DUPCTL_INTEGRATION=required: %s", msg)
	}
	t.Skipf("%s; set DUPCTL_INTEGRATION=required to make this a failure", msg)
	return ""
}
