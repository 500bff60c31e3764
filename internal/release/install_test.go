package release

import (
	"archive/tar"
	"bytes"
	"compress/gzip"
	"crypto/sha256"
	"fmt"
	"net/http"
	"net/http/httptest"
	"os"
	"os/exec"
	"path/filepath"
	"runtime"
	"strings"
	"testing"
)

// TestActionInstallRelease runs the install step with version: a tag,
// against a release served here as GitHub serves one (the archive and
// checksums.txt under /v<version>/): the archive whose sum matches is
// unpacked and run; a wrong sum, a missing release or a tag that is no
// version fail the step before anything is installed.
func TestActionInstallRelease(t *testing.T) {
	if runtime.GOOS != "linux" || (runtime.GOARCH != "amd64" && runtime.GOARCH != "arm64") {
		t.Skip("the fake release holds a linux amd64/arm64 archive")
	}
	binary, err := os.ReadFile(filepath.Join(installSource(t), "dupctl"))
	if err != nil {
		t.Fatal(err)
	}
	name := fmt.Sprintf("dupctl_1.2.3_linux_%s.tar.gz", runtime.GOARCH)
	archive := tarGz(t, map[string][]byte{"dupctl": binary, "README.md": []byte("# dupctl\n")})
	sums := map[string]string{
		"1.2.3": fmt.Sprintf("%x  %s\n", sha256.Sum256(archive), name),
		"1.2.4": fmt.Sprintf("%x  %s\n", sha256.Sum256([]byte("another archive")), strings.Replace(name, "1.2.3", "1.2.4", 1)),
	}
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		version, file, _ := strings.Cut(strings.TrimPrefix(r.URL.Path, "/v"), "/")
		switch {
		case file == "checksums.txt" && sums[version] != "":
			w.Write([]byte(sums[version]))
		case file == strings.Replace(name, "1.2.3", version, 1) && sums[version] != "":
			w.Write(archive)
		default:
			http.NotFound(w, r)
		}
	}))
	defer srv.Close()
	arch := map[string]string{"amd64": "X64", "arm64": "ARM64"}[runtime.GOARCH]
	tests := []struct {
		version string
		code    int
		out     string
	}{
		{"v1.2.3", 0, "commit:"},
		{"1.2.3", 0, "commit:"},
		{"v1.2.4", 2, "sha256"},
		{"v9.9.9", 3, "cannot download"},
		{"latest", 2, "must be a release tag"},
	}
	for _, tt := range tests {
		t.Run(tt.version, func(t *testing.T) {
			dir := t.TempDir()
			gh := fakeGitHub(dir)
			bin := filepath.Join(dir, "bin")
			cmd := exec.Command("bash", filepath.Join(scripts, "install.sh"))
			cmd.Env = append(gh.env(), "DUPCTL_VERSION="+tt.version, "DUPCTL_BIN_DIR="+bin, "DUPCTL_RELEASES="+srv.URL, "RUNNER_ARCH="+arch)
			out, err := cmd.CombinedOutput()
			code := 0
			if ee, ok := err.(*exec.ExitError); ok {
				code = ee.ExitCode()
			}
			if code != tt.code || !strings.Contains(string(out), tt.out) {
				t.Fatalf("install.sh with version %s: exit %d, want %d with %q:\n%s", tt.version, code, tt.code, tt.out, out)
			}
			_, statErr := os.Stat(filepath.Join(bin, "dupctl"))
			if installed := statErr == nil; installed != (tt.code == 0) {
				t.Errorf("dupctl installed: %v, want %v", installed, tt.code == 0)
			}
			if path := readFile(gh.path); (path == bin+"\n") != (tt.code == 0) {
				t.Errorf("$GITHUB_PATH holds %q", path)
			}
		})
	}
}

func tarGz(t *testing.T, files map[string][]byte) []byte {
	t.Helper()
	var buf bytes.Buffer
	zw := gzip.NewWriter(&buf)
	tw := tar.NewWriter(zw)
	for name, body := range files {
		if err := tw.WriteHeader(&tar.Header{Name: name, Mode: 0o755, Size: int64(len(body))}); err != nil {
			t.Fatal(err)
		}
		if _, err := tw.Write(body); err != nil {
			t.Fatal(err)
		}
	}
	if err := tw.Close(); err != nil {
		t.Fatal(err)
	}
	if err := zw.Close(); err != nil {
		t.Fatal(err)
	}
	return buf.Bytes()
}
