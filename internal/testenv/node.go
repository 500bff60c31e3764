package testenv

import (
	"crypto/sha256"
	"encoding/hex"
	"os"
	"os/exec"
	"path/filepath"
	"testing"
)

// NodeModules installs the npm packages a package.json pins (a fixture
// written by a Node.js library's own code) and returns the node_modules
// directory, for NODE_PATH. The install is kept in the user's cache,
// keyed by the file's bytes, so only the first run downloads. Without node
// and npm the test skips, or fails when integration tests are required.
func NodeModules(t testing.TB, packageJSON string) string {
	t.Helper()
	for _, tool := range []string{"node", "npm"} {
		if _, err := exec.LookPath(tool); err != nil {
			if Required() {
				t.Fatalf("DUPCTL_INTEGRATION=required: %s is not installed (apt-get install nodejs npm)", tool)
			}
			t.Skipf("%s is not installed; set DUPCTL_INTEGRATION=required to make this a failure", tool)
		}
	}
	pkg, err := os.ReadFile(packageJSON)
	if err != nil {
		t.Fatal(err)
	}
	sum := sha256.Sum256(pkg)
	cache, err := os.UserCacheDir()
	if err != nil {
		cache = os.TempDir()
	}
	dir := filepath.Join(cache, "dupctl-test", "npm-"+hex.EncodeToString(sum[:8]))
	modules := filepath.Join(dir, "node_modules")
	if _, err := os.Stat(filepath.Join(modules, ".package-lock.json")); err == nil {
		return modules
	}
	// Installed beside, then renamed in: a run killed mid-install leaves
	// no half directory that a later run would take for a whole one.
	if err := os.MkdirAll(filepath.Dir(dir), 0o755); err != nil {
		t.Fatal(err)
	}
	tmp, err := os.MkdirTemp(filepath.Dir(dir), "install-")
	if err != nil {
		t.Fatal(err)
	}
	defer os.RemoveAll(tmp)
	if err := os.WriteFile(filepath.Join(tmp, "package.json"), pkg, 0o644); err != nil {
		t.Fatal(err)
	}
	cmd := exec.Command("npm", "install", "--no-audit", "--no-fund", "--ignore-scripts", "--loglevel=error")
	cmd.Dir = tmp
	if out, err := cmd.CombinedOutput(); err != nil {
		t.Fatalf("npm install (%s): %v\n%s", packageJSON, err, out)
	}
	if err := os.Rename(tmp, dir); err != nil {
		if _, statErr := os.Stat(modules); statErr != nil { // not another run's install beside ours
			t.Fatal(err)
		}
	}
	return modules
}
