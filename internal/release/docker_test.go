package release

import (
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
)

// finalStage returns the instructions of a Dockerfile's last stage (the
// image), one per line, continuations joined.
func finalStage(t *testing.T, path string) []string {
	t.Helper()
	b, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	var all []string
	for _, line := range strings.Split(strings.ReplaceAll(string(b), "\\\n", " "), "\n") {
		line = strings.TrimSpace(line)
		if line == "" || strings.HasPrefix(line, "#") {
			continue
		}
		if strings.HasPrefix(line, "FROM ") {
			all = all[:0]
		}
		all = append(all, line)
	}
	return all
}

// TestDockerfiles: both images (from source, and goreleaser's) are the
// static binary on scratch or distroless/static, run as a user other than
// root, with dupctl as the entry point.
func TestDockerfiles(t *testing.T) {
	g := readGoreleaser(t)
	for _, path := range []string{"Dockerfile", g.Docks[0].Dockerfile} {
		t.Run(path, func(t *testing.T) {
			stage := finalStage(t, filepath.Join(root, path))
			if len(stage) == 0 {
				t.Fatal("no FROM")
			}
			base := strings.Fields(stage[0])[1]
			if base != "scratch" && !strings.HasPrefix(base, "gcr.io/distroless/static") {
				t.Errorf("the image is based on %s, want scratch or gcr.io/distroless/static", base)
			}
			var user, entry, copied string
			for _, in := range stage[1:] {
				word, rest, _ := strings.Cut(in, " ")
				switch word {
				case "USER":
					user = rest
				case "ENTRYPOINT":
					entry = rest
				case "COPY":
					if f := strings.Fields(rest); len(f) > 0 {
						copied = f[len(f)-1]
					}
				case "RUN":
					t.Errorf("the image's stage runs %q: scratch and distroless/static have no shell", rest)
				}
			}
			if name, _, _ := strings.Cut(user, ":"); name == "" || name == "0" || name == "root" {
				t.Errorf("USER %q: the image must not run as root", user)
			}
			if entry != `["dupctl"]` {
				t.Errorf(`ENTRYPOINT %s, want ["dupctl"]`, entry)
			}
			if copied != "/usr/bin/dupctl" {
				t.Errorf("the binary is copied to %q, want /usr/bin/dupctl (on distroless's PATH)", copied)
			}
		})
	}
}

// TestDockerfileBuildsStatic runs the root Dockerfile's go build line here
// (no Docker daemon needed): it must make a static binary that prints the
// commit given as a build argument.
func TestDockerfileBuildsStatic(t *testing.T) {
	b, err := os.ReadFile(filepath.Join(root, "Dockerfile"))
	if err != nil {
		t.Fatal(err)
	}
	var run string
	for _, line := range strings.Split(string(b), "\n") {
		if strings.HasPrefix(line, "RUN ") && strings.Contains(line, " go build ") {
			run = strings.TrimPrefix(line, "RUN ")
		}
	}
	if !strings.HasPrefix(run, "CGO_ENABLED=0 go build ") || !strings.Contains(run, " -o /out/dupctl ") {
		t.Fatalf("the Dockerfile's build line %q: want CGO_ENABLED=0 go build ... -o /out/dupctl", run)
	}
	bin := filepath.Join(t.TempDir(), "dupctl")
	const commit = "fedcba9876543210fedcba9876543210fedcba98"
	cmd := exec.Command("bash", "-c", strings.Replace(run, "/out/dupctl", bin, 1))
	cmd.Dir = root
	cmd.Env = append(os.Environ(), "VERSION=1.0.0-image", "COMMIT="+commit, "DATE=2026-12-01T00:00:00Z")
	if out, err := cmd.CombinedOutput(); err != nil {
		t.Fatalf("%s: %v\n%s", run, err, out)
	}
	assertStatic(t, bin)
	out, err := exec.Command(bin, "version").CombinedOutput()
	if err != nil || !strings.Contains(string(out), "commit:  "+commit+"\n") {
		t.Errorf("dupctl version of the image's build (%v) names no commit %s:\n%s", err, commit, out)
	}
}
