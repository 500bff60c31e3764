package release

import (
	"os"
	"os/exec"
	"path/filepath"
	"runtime"
	"strings"
	"testing"
	"time"

	"go.yaml.in/yaml/v3"
)

// nfpmModule packs the .deb and .rpm here as goreleaser's nfpms does (it is
// the library goreleaser uses), from the module proxy.
const nfpmModule = "github.com/goreleaser/nfpm/v2/cmd/nfpm@v2.48.0"

// TestPackages builds the .deb and .rpm with nfpm from goreleaser.yaml's
// nfpms values, inspects the .rpm with rpm -qlp, installs the .deb with
// dpkg -i, runs the installed /usr/bin/dupctl, and removes it. It installs
// into this machine, so it runs only when asked: bash .ci/packages sets
// DUPCTL_PACKAGES=required.
func TestPackages(t *testing.T) {
	if os.Getenv("DUPCTL_PACKAGES") != "required" {
		t.Skip("installs a .deb into this machine: DUPCTL_PACKAGES=required (bash .ci/packages) runs it")
	}
	for _, tool := range []string{"dpkg", "rpm", "gzip"} {
		if _, err := exec.LookPath(tool); err != nil {
			t.Fatalf("%s is not installed (.ci/run installs rpm)", tool)
		}
	}
	if os.Geteuid() != 0 {
		t.Fatal("dpkg -i needs root")
	}
	if exec.Command("dpkg", "-s", "dupctl").Run() == nil {
		t.Fatal("a dupctl package is installed on this machine already: this test installs and removes its own")
	}
	g := readGoreleaser(t)
	work := t.TempDir()
	commit := strings.TrimSpace(run(t, root, "git", "rev-parse", "HEAD"))
	date := strings.TrimSpace(run(t, root, "git", "log", "-1", "--format=%cI"))
	start := time.Now()
	bin := releaseBuild(t, filepath.Join(work, "build"), "0.0.0-packagetest", commit, date)
	t.Logf("release build: %s", time.Since(start).Round(time.Millisecond))
	beforeHooks(t, work, bin)
	t.Logf("completions and man pages: %s", time.Since(start).Round(time.Millisecond))
	config := nfpmYAML(t, g.Nfpms[0], bin)
	if err := os.WriteFile(filepath.Join(work, "nfpm.yaml"), config, 0o644); err != nil {
		t.Fatal(err)
	}
	for _, format := range g.Nfpms[0].Formats {
		run(t, work, "go", "run", nfpmModule, "pkg", "--config", "nfpm.yaml", "--packager", format, "--target", "dupctl."+format)
	}
	t.Logf("nfpm: %s", time.Since(start).Round(time.Millisecond))
	checkRPM(t, filepath.Join(work, "dupctl.rpm"))
	checkDeb(t, filepath.Join(work, "dupctl.deb"), commit)
	t.Logf("rpm -qlp, dpkg -i, run, dpkg -r: %s", time.Since(start).Round(time.Millisecond))
}

// beforeHooks makes what goreleaser's before hooks make: completions and
// man pages, here with the binary being packed.
func beforeHooks(t *testing.T, work, bin string) {
	t.Helper()
	os.MkdirAll(filepath.Join(work, "completions"), 0o755)
	for _, sh := range []string{"bash", "zsh", "fish"} {
		out := run(t, work, bin, "completion", sh)
		if err := os.WriteFile(filepath.Join(work, "completions", "dupctl."+sh), []byte(out), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	// gen-docs built as the release binary is (CGO_ENABLED=0, -trimpath):
	// its packages are those just compiled for it.
	gen := filepath.Join(work, "gen-docs")
	build := exec.Command("go", "build", "-trimpath", "-o", gen, "./cmd/gen-docs")
	build.Dir, build.Env = root, append(os.Environ(), "CGO_ENABLED=0")
	if out, err := build.CombinedOutput(); err != nil {
		t.Fatalf("go build ./cmd/gen-docs: %v\n%s", err, out)
	}
	run(t, work, gen, "-man", filepath.Join(work, "manpages"))
	pages, _ := filepath.Glob(filepath.Join(work, "manpages", "*.1"))
	if len(pages) < 10 {
		t.Fatalf("gen-docs wrote %d man pages, want one per command", len(pages))
	}
	run(t, work, "gzip", append([]string{"-9n"}, pages...)...)
	lic, err := os.ReadFile(filepath.Join(root, "LICENSE"))
	if err != nil {
		t.Fatal(err)
	}
	os.WriteFile(filepath.Join(work, "LICENSE"), lic, 0o644)
}

// nfpmYAML is nfpm's configuration from goreleaser's nfpms entry: the same
// names and contents, plus the binary goreleaser puts in bindir.
func nfpmYAML(t *testing.T, n nfpmConfig, bin string) []byte {
	t.Helper()
	contents := append([]nfpmContents{{Src: bin, Dst: filepath.Join(n.Bindir, "dupctl"), FileInfo: map[string]any{"mode": 0o755}}},
		n.Contents...)
	c := map[string]any{
		"name": n.PackageName, "arch": runtime.GOARCH, "platform": "linux", "version": "0.0.0~packagetest",
		"maintainer": n.Maintainer, "description": n.Description, "vendor": n.Vendor, "homepage": n.Homepage,
		"license": n.License, "section": n.Section, "priority": n.Priority, "contents": contents,
	}
	b, err := yaml.Marshal(c)
	if err != nil {
		t.Fatal(err)
	}
	return b
}

// packaged are the files every package must install, wherever the format
// puts them; per format the zsh completion and the licence move.
var packaged = []string{
	"/usr/bin/dupctl",
	"/usr/share/bash-completion/completions/dupctl",
	"/usr/share/fish/vendor_completions.d/dupctl.fish",
	"/usr/share/man/man1/dupctl.1.gz",
	"/usr/share/man/man1/dupctl-simulate-crash.1.gz",
	"/usr/share/man/man1/dupctl-doctor.1.gz",
}

func checkRPM(t *testing.T, rpm string) {
	t.Helper()
	files := run(t, "", "rpm", "-qlp", rpm)
	for _, f := range append(packaged, "/usr/share/zsh/site-functions/_dupctl", "/usr/share/licenses/dupctl/LICENSE") {
		if !hasLine(files, f) {
			t.Errorf("rpm -qlp: the .rpm has no %s:\n%s", f, files)
		}
	}
	if lic := run(t, "", "rpm", "-qp", "--queryformat", "%{LICENSE}", rpm); lic != "MIT" {
		t.Errorf("the .rpm's licence is %q, want MIT", lic)
	}
}

func checkDeb(t *testing.T, deb, commit string) {
	t.Helper()
	run(t, "", "dpkg", "-i", deb)
	removed := false
	remove := func() {
		if !removed {
			removed = true
			run(t, "", "dpkg", "-r", "dupctl")
		}
	}
	t.Cleanup(remove)
	files := run(t, "", "dpkg", "-L", "dupctl")
	for _, f := range append(packaged, "/usr/share/zsh/vendor-completions/_dupctl", "/usr/share/doc/dupctl/copyright") {
		if !hasLine(files, f) {
			t.Errorf("dpkg -L: the .deb installed no %s:\n%s", f, files)
		}
	}
	if out := run(t, "", "/usr/bin/dupctl", "version"); !strings.Contains(out, "commit:  "+commit+"\n") {
		t.Errorf("/usr/bin/dupctl version does not name the commit %s:\n%s", commit, out)
	}
	cmd := exec.Command("/usr/bin/dupctl", "simulate", "crash")
	cmd.Env = append(os.Environ(), "NO_COLOR=1")
	out, err := cmd.CombinedOutput()
	if ee, ok := err.(*exec.ExitError); err != nil && (!ok || ee.ExitCode() != 1) || !strings.Contains(string(out), "crash") {
		t.Errorf("/usr/bin/dupctl simulate crash: %v\n%s", err, out)
	}
	remove()
	if _, err := os.Stat("/usr/bin/dupctl"); err == nil {
		t.Errorf("dpkg -r dupctl left /usr/bin/dupctl")
	}
}

func hasLine(text, line string) bool {
	for _, l := range strings.Split(text, "\n") {
		if l == line {
			return true
		}
	}
	return false
}

// run runs a command in dir and returns its stdout, failing the test on
// an error with its stderr.
func run(t *testing.T, dir, name string, args ...string) string {
	t.Helper()
	cmd := exec.Command(name, args...)
	cmd.Dir = dir
	var stderr strings.Builder
	cmd.Stderr = &stderr
	out, err := cmd.Output()
	if err != nil {
		t.Fatalf("%s %s: %v\n%s", name, strings.Join(args, " "), err, stderr.String())
	}
	return string(out)
}
