package release

import (
	"debug/elf"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"slices"
	"strings"
	"testing"

	"go.yaml.in/yaml/v3"
)

// goreleaser is the part of goreleaser.yaml these tests hold against the code.
type goreleaser struct {
	Before struct {
		Hooks []string `yaml:"hooks"`
	} `yaml:"before"`
	Builds []struct {
		ID      string   `yaml:"id"`
		Main    string   `yaml:"main"`
		Binary  string   `yaml:"binary"`
		Env     []string `yaml:"env"`
		Flags   []string `yaml:"flags"`
		Ldflags []string `yaml:"ldflags"`
	} `yaml:"builds"`
	Nfpms []nfpmConfig `yaml:"nfpms"`
	Docks []struct {
		IDs        []string `yaml:"ids"`
		Dockerfile string   `yaml:"dockerfile"`
		Platforms  []string `yaml:"platforms"`
	} `yaml:"dockers_v2"`
}

type nfpmConfig struct {
	IDs         []string       `yaml:"ids"`
	PackageName string         `yaml:"package_name"`
	Formats     []string       `yaml:"formats"`
	Vendor      string         `yaml:"vendor"`
	Homepage    string         `yaml:"homepage"`
	Maintainer  string         `yaml:"maintainer"`
	Description string         `yaml:"description"`
	License     string         `yaml:"license"`
	Section     string         `yaml:"section"`
	Priority    string         `yaml:"priority"`
	Bindir      string         `yaml:"bindir"`
	Contents    []nfpmContents `yaml:"contents"`
}

type nfpmContents struct {
	Src      string         `yaml:"src"`
	Dst      string         `yaml:"dst"`
	Type     string         `yaml:"type,omitempty"`
	Packager string         `yaml:"packager,omitempty"`
	FileInfo map[string]any `yaml:"file_info,omitempty"`
}

// readYAML decodes the repository's file rel into v.
func readYAML(t *testing.T, rel string, v any) {
	t.Helper()
	b, err := os.ReadFile(filepath.Join(root, rel))
	if err != nil {
		t.Fatal(err)
	}
	if err := yaml.Unmarshal(b, v); err != nil {
		t.Fatalf("%s: %v", rel, err)
	}
}

func readGoreleaser(t *testing.T) goreleaser {
	t.Helper()
	var g goreleaser
	readYAML(t, "goreleaser.yaml", &g)
	if len(g.Builds) != 1 || len(g.Nfpms) != 1 || len(g.Docks) != 1 {
		t.Fatalf("goreleaser.yaml has %d builds, %d nfpms, %d dockers_v2; want one each", len(g.Builds), len(g.Nfpms), len(g.Docks))
	}
	return g
}

// ldflags are the release build's -ldflags with goreleaser's templates
// filled as a release fills them.
func ldflags(t *testing.T, g goreleaser, version, commit, date string) string {
	t.Helper()
	r := strings.NewReplacer("{{ .Version }}", version, "{{ .FullCommit }}", commit, "{{ .CommitDate }}", date)
	s := r.Replace(strings.Join(g.Builds[0].Ldflags, " "))
	if strings.Contains(s, "{{") {
		t.Fatalf("ldflags use a template this test does not fill: %s", s)
	}
	return s
}

// releaseBuild builds dupctl as goreleaser's build says (env, flags,
// ldflags) into dir, with -buildvcs=true so the toolchain's stamp is there
// too and the linker's values must win over it.
func releaseBuild(t *testing.T, dir, version, commit, date string) string {
	t.Helper()
	g := readGoreleaser(t)
	b := g.Builds[0]
	bin := filepath.Join(dir, b.Binary)
	args := append([]string{"build", "-buildvcs=true"}, b.Flags...)
	args = append(args, "-ldflags", ldflags(t, g, version, commit, date), "-o", bin, b.Main)
	cmd := exec.Command("go", args...)
	cmd.Dir = root
	cmd.Env = append(os.Environ(), b.Env...)
	if out, err := cmd.CombinedOutput(); err != nil {
		t.Fatalf("go %s: %v\n%s", strings.Join(args, " "), err, out)
	}
	return bin
}

// TestReleaseLdflags: a binary built with the release's ldflags prints the
// version, commit and date it was given, not the toolchain's stamp, and
// is never "modified" (its commit is the release's, by construction).
func TestReleaseLdflags(t *testing.T) {
	const version, commit, date = "9.8.7", "0123456789abcdef0123456789abcdef01234567", "2026-11-30T10:00:00Z"
	bin := releaseBuild(t, t.TempDir(), version, commit, date)
	out, err := exec.Command(bin, "version").CombinedOutput()
	if err != nil {
		t.Fatalf("dupctl version: %v\n%s", err, out)
	}
	for _, want := range []string{"dupctl " + version + "\n", "commit:  " + commit + "\n", "built:   " + date + "\n"} {
		if !strings.Contains(string(out), want) {
			t.Errorf("dupctl version has no %q:\n%s", want, out)
		}
	}
	if strings.Contains(string(out), "modified") || strings.Contains(string(out), "not recorded") {
		t.Errorf("a release build says it was modified or knows no commit:\n%s", out)
	}
	assertStatic(t, bin)
}

// assertStatic fails unless bin is an ELF file with no interpreter and no
// shared library: it runs on scratch or distroless/static.
func assertStatic(t *testing.T, bin string) {
	t.Helper()
	f, err := elf.Open(bin)
	if err != nil {
		t.Fatalf("%s: %v", bin, err)
	}
	defer f.Close()
	for _, p := range f.Progs {
		if p.Type == elf.PT_INTERP {
			t.Errorf("%s asks for a dynamic loader (PT_INTERP): it is not static", bin)
		}
	}
	if libs, _ := f.ImportedLibraries(); len(libs) > 0 {
		t.Errorf("%s needs shared libraries %v: it is not static", bin, libs)
	}
}

func TestReleaseConfig(t *testing.T) {
	g := readGoreleaser(t)
	if !slices.Contains(g.Builds[0].Env, "CGO_ENABLED=0") {
		t.Errorf("builds[0].env %v: the release binary must be static (CGO_ENABLED=0)", g.Builds[0].Env)
	}
	// Every -X names a variable buildinfo declares: the linker ignores a
	// name it does not find, silently.
	src, err := os.ReadFile(filepath.Join(root, "internal", "platform", "buildinfo", "buildinfo.go"))
	if err != nil {
		t.Fatal(err)
	}
	xs := regexp.MustCompile(`-X github\.com/dupctl/dupctl/internal/platform/buildinfo\.(\w+)=`).FindAllStringSubmatch(
		strings.Join(g.Builds[0].Ldflags, " "), -1)
	if len(xs) != 3 {
		t.Errorf("ldflags set %d buildinfo variables, want Version, Commit and Date", len(xs))
	}
	for _, x := range xs {
		if !regexp.MustCompile(`(?m)^\s+` + x[1] + `\s+= ""`).Match(src) {
			t.Errorf("ldflags set buildinfo.%s, which buildinfo.go does not declare", x[1])
		}
	}
	n := g.Nfpms[0]
	if n.Bindir != "/usr/bin" || !slices.Contains(n.Formats, "deb") || !slices.Contains(n.Formats, "rpm") || n.License != "MIT" {
		t.Errorf("nfpms: bindir %q, formats %v, license %q; want /usr/bin, deb and rpm, MIT", n.Bindir, n.Formats, n.License)
	}
	for _, hook := range []string{"./cmd/gen-docs -man manpages", "completion $sh > completions/dupctl.$sh"} {
		if !anyContains(g.Before.Hooks, hook) {
			t.Errorf("before.hooks do not make what nfpms packs: no %q", hook)
		}
	}
	if d := g.Docks[0]; !slices.Contains(d.IDs, g.Builds[0].ID) || !slices.Contains(d.Platforms, "linux/amd64") {
		t.Errorf("dockers_v2 %+v: want the image of build %q for linux/amd64", d, g.Builds[0].ID)
	}
}

func anyContains(list []string, s string) bool {
	return slices.ContainsFunc(list, func(v string) bool { return strings.Contains(v, s) })
}
