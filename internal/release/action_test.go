package release

import (
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strings"
	"sync"
	"testing"
)

// root is the repository, where action.yml and the scripts live.
var root, _ = filepath.Abs("../..")

var scripts = filepath.Join(root, ".github", "actions", "dupctl")

// commitRE is what `dupctl version` prints when the build knows its commit.
var commitRE = regexp.MustCompile(`(?m)^commit: +[0-9a-f]{40}`)

var installed struct {
	once    sync.Once
	dir     string
	out     string
	path    string // what the step added to $GITHUB_PATH
	outputs string // what it wrote to $GITHUB_OUTPUT
	err     error
}

// installSource runs the action's install step once, as the runner would
// with version: source, and returns the folder it put dupctl in: every
// test of the package runs that binary.
func installSource(t *testing.T) string {
	t.Helper()
	installed.once.Do(func() {
		dir, err := os.MkdirTemp("", "dupctl-release-")
		if err != nil {
			installed.err = err
			return
		}
		installed.dir = filepath.Join(dir, "bin")
		gh := fakeGitHub(dir)
		cmd := exec.Command("bash", filepath.Join(scripts, "install.sh"))
		cmd.Env = append(gh.env(), "DUPCTL_VERSION=source", "DUPCTL_SOURCE="+root, "DUPCTL_BIN_DIR="+installed.dir)
		out, err := cmd.CombinedOutput()
		installed.out, installed.err = string(out), err
		installed.path, installed.outputs = readFile(gh.path), readFile(gh.output)
	})
	if installed.err != nil {
		t.Fatalf("install.sh (version source): %v\n%s", installed.err, installed.out)
	}
	return installed.dir
}

func TestMain(m *testing.M) {
	code := m.Run()
	if installed.dir != "" {
		os.RemoveAll(filepath.Dir(installed.dir))
	}
	os.Exit(code)
}

func readFile(path string) string {
	b, _ := os.ReadFile(path)
	return string(b)
}

// github is a runner's files for one step, in a folder of the test's.
type github struct{ temp, summary, output, path string }

func fakeGitHub(dir string) github {
	g := github{
		temp:    filepath.Join(dir, "runner-temp"),
		summary: filepath.Join(dir, "step-summary.md"),
		output:  filepath.Join(dir, "github-output"),
		path:    filepath.Join(dir, "github-path"),
	}
	os.MkdirAll(g.temp, 0o755)
	for _, f := range []string{g.summary, g.output, g.path} {
		os.WriteFile(f, nil, 0o644)
	}
	return g
}

// env is a runner's environment: the GitHub files, no connection settings
// but those a test adds, and no colour.
func (g github) env() []string {
	return []string{
		"PATH=" + os.Getenv("PATH"), "HOME=" + os.Getenv("HOME"), "GOFLAGS=" + os.Getenv("GOFLAGS"),
		"GOCACHE=" + goEnv("GOCACHE"), "GOMODCACHE=" + goEnv("GOMODCACHE"), "GOTOOLCHAIN=local",
		"CI=true", "GITHUB_ACTIONS=true", "NO_COLOR=1", "DUPCTL_NOW=2026-12-01T12:00:00Z",
		"RUNNER_TEMP=" + g.temp, "RUNNER_OS=Linux", "GITHUB_STEP_SUMMARY=" + g.summary,
		"GITHUB_OUTPUT=" + g.output, "GITHUB_PATH=" + g.path,
	}
}

func goEnv(name string) string {
	out, _ := exec.Command("go", "env", name).Output()
	return strings.TrimSpace(string(out))
}

func TestActionInstallSource(t *testing.T) {
	dir := installSource(t)
	if got := strings.TrimSpace(installed.path); got != dir {
		t.Errorf("$GITHUB_PATH holds %q, want the binary's folder %q", got, dir)
	}
	if !strings.Contains(installed.outputs, "path="+dir+"\n") {
		t.Errorf("$GITHUB_OUTPUT holds %q, want path=%s", installed.outputs, dir)
	}
	// -buildvcs=true records the commit even where GOFLAGS says
	// -buildvcs=false (this machine's does).
	if !commitRE.MatchString(installed.out) {
		t.Errorf("dupctl version after install.sh names no commit:\n%s", installed.out)
	}
}

// step is one run of the action's run step: its exit code and files.
type step struct {
	code                                 int
	dir, stdout, summary, junit, outputs string
}

// runStep runs run.sh as the action's second step runs it: the install
// step's $GITHUB_PATH before $PATH, the inputs as the action maps them.
func runStep(t *testing.T, command, failOn, args string, extraEnv ...string) step {
	t.Helper()
	return runStepIn(t, fakeGitHub(t.TempDir()), command, failOn, args, extraEnv...)
}

// runStepIn runs the step in the runner gh, which earlier steps may have used.
func runStepIn(t *testing.T, gh github, command, failOn, args string, extraEnv ...string) step {
	t.Helper()
	bin := installSource(t)
	cmd := exec.Command("bash", filepath.Join(scripts, "run.sh"))
	cmd.Dir = t.TempDir()
	cmd.Env = append(gh.env(), "PATH="+bin+string(os.PathListSeparator)+os.Getenv("PATH"),
		"DUPCTL_COMMAND="+command, "DUPCTL_FAIL_ON="+failOn, "DUPCTL_ARGS="+args)
	cmd.Env = append(cmd.Env, extraEnv...)
	out, err := cmd.Output()
	s := step{dir: cmd.Dir, stdout: string(out), summary: readFile(gh.summary), outputs: readFile(gh.output)}
	if ee, ok := err.(*exec.ExitError); ok {
		s.code = ee.ExitCode()
		t.Logf("stderr: %s", ee.Stderr)
	} else if err != nil {
		t.Fatalf("run.sh: %v", err)
	}
	if m := regexp.MustCompile(`(?m)^junit=(.*)$`).FindAllStringSubmatch(s.outputs, -1); m != nil {
		s.junit = readFile(m[len(m)-1][1])
	}
	return s
}

func TestActionRunExitCodes(t *testing.T) {
	// A job whose declared consumer (lock and check, no transaction) the
	// crash scenarios break: doctor's line 10 fails, with no service.
	naive := filepath.Join(t.TempDir(), "naive.yaml")
	if err := os.WriteFile(naive, []byte("version: 1\njobs:\n  - name: payment\n    profile: lock-check\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	tests := []struct {
		name, command, failOn, args string
		env                         []string
		code                        int
		junit                       string // what the JUnit holds; "" when there is none
	}{
		{name: "a run that passes", command: "simulate crash", failOn: "none", code: 0, junit: `failures="0"`},
		{name: "a failing check", command: "doctor --config " + naive, failOn: "error", code: 1, junit: "<failure "},
		{name: "a finding at fail-on", command: "simulate crash", failOn: "info", code: 1, junit: "<failure "},
		{name: "args come last and win", command: "simulate crash", failOn: "info", args: "--fail-on none", code: 0,
			junit: `failures="0"`},
		{name: "an unreachable service", command: "doctor", failOn: "error", code: 3, junit: "<error ",
			env: []string{"DUPCTL_REDIS_URL=redis://:hunter2@127.0.0.1:1/0"}},
		{name: "bad usage", command: "simulate crash --no-such-flag", failOn: "error", code: 2, junit: "<error "},
		{name: "a bad fail-on", command: "simulate crash", failOn: "sometimes", code: 2},
		{name: "an unmatched quote", command: "doctor --config 'dupctl.yaml", failOn: "error", code: 2},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			s := runStep(t, tt.command, tt.failOn, tt.args, tt.env...)
			if s.code != tt.code {
				t.Fatalf("exit %d, want %d; stdout:\n%s", s.code, tt.code, s.stdout)
			}
			if tt.junit == "" {
				return
			}
			if !strings.Contains(s.junit, tt.junit) {
				t.Errorf("JUnit has no %q:\n%s", tt.junit, s.junit)
			}
			if !strings.HasPrefix(s.summary, "#") {
				t.Errorf("the step summary is no Markdown report:\n%s", s.summary)
			}
			if !strings.Contains(s.outputs, "exit-code="+string(rune('0'+tt.code))+"\n") {
				t.Errorf("$GITHUB_OUTPUT holds %q, want exit-code=%d", s.outputs, tt.code)
			}
			if strings.Contains(s.summary+s.junit+s.stdout, "hunter2") {
				t.Errorf("a password reached a report")
			}
		})
	}
}

// TestActionRunSplitsWordsAndExpandsNothing: the command is split as a
// shell would split it, quotes kept, and nothing in it is run.
func TestActionRunSplitsWordsAndExpandsNothing(t *testing.T) {
	s := runStep(t, `simulate crash --html '$(touch pwned) a.html'`, "none", `-o "json=b c.json"`)
	if s.code != 0 {
		t.Fatalf("exit %d, want 0:\n%s", s.code, s.stdout)
	}
	for _, f := range []string{"$(touch pwned) a.html", "b c.json"} {
		if _, err := os.Stat(filepath.Join(s.dir, f)); err != nil {
			t.Errorf("%q was not passed as one word: %v", f, err)
		}
	}
	if _, err := os.Stat(filepath.Join(s.dir, "pwned")); err == nil {
		t.Errorf("the command input was run by a shell")
	}
}

// TestActionTwoStepsInOneJob: a job's second dupctl step writes a JUnit of
// its own, under an artifact name of its own, and leaves the first's alone.
func TestActionTwoStepsInOneJob(t *testing.T) {
	gh := fakeGitHub(t.TempDir())
	first := runStepIn(t, gh, "simulate crash", "none", "", "GITHUB_JOB=smoke")
	second := runStepIn(t, gh, "simulate crash", "info", "", "GITHUB_JOB=smoke")
	if first.code != 0 || second.code != 1 {
		t.Fatalf("exit codes %d and %d, want 0 and 1", first.code, second.code)
	}
	want := "junit=" + filepath.Join(gh.temp, "dupctl-junit.xml") + "\nartifact=dupctl-junit-smoke-1\n"
	want2 := "junit=" + filepath.Join(gh.temp, "dupctl-junit-2.xml") + "\nartifact=dupctl-junit-smoke-2\n"
	if !strings.Contains(second.outputs, want) || !strings.Contains(second.outputs, want2) {
		t.Errorf("$GITHUB_OUTPUT after two steps:\n%s\nwant %q then %q", second.outputs, want, want2)
	}
	if !strings.Contains(readFile(filepath.Join(gh.temp, "dupctl-junit.xml")), `failures="0"`) ||
		!strings.Contains(second.junit, "<failure ") {
		t.Errorf("the steps' JUnit files are not each their own run's")
	}
}

// TestActionYAML holds action.yml to what the runner accepts of a composite
// action (actions/runner's action_yaml.json): a run step names its shell,
// a step runs or uses, and expressions read only the contexts a composite
// step has - an unknown one fails every job that uses the action.
func TestActionYAML(t *testing.T) {
	var a struct {
		Inputs map[string]map[string]any `yaml:"inputs"`
		Runs   struct {
			Using string           `yaml:"using"`
			Steps []map[string]any `yaml:"steps"`
		} `yaml:"runs"`
	}
	readYAML(t, "action.yml", &a)
	if a.Runs.Using != "composite" || len(a.Runs.Steps) != 3 {
		t.Fatalf("runs.using %q with %d steps, want composite with install, run, upload", a.Runs.Using, len(a.Runs.Steps))
	}
	for i, s := range a.Runs.Steps {
		_, run := s["run"]
		_, uses := s["uses"]
		if run == uses || run && s["shell"] == nil {
			t.Errorf("step %d: run %v, uses %v, shell %v: a step runs (with a shell) or uses", i, run, uses, s["shell"])
		}
	}
	allowed := map[string]bool{"github": true, "inputs": true, "strategy": true, "matrix": true, "steps": true,
		"job": true, "runner": true, "env": true}
	b, err := os.ReadFile(filepath.Join(root, "action.yml"))
	if err != nil {
		t.Fatal(err)
	}
	exprs := regexp.MustCompile(`\$\{\{(.*?)\}\}`).FindAllStringSubmatch(string(b), -1)
	if len(exprs) < 8 {
		t.Fatalf("only %d expressions found in action.yml: the reader is broken", len(exprs))
	}
	for _, e := range exprs {
		body := regexp.MustCompile(`'[^']*'`).ReplaceAllString(e[1], "''")
		for _, ref := range regexp.MustCompile(`(?:^|[^\w.-])([a-z_]+)\.[a-z]`).FindAllStringSubmatch(body, -1) {
			if !allowed[ref[1]] {
				t.Errorf("expression ${{%s}} reads the context %q, which a composite step does not have", e[1], ref[1])
			}
		}
		for _, ref := range regexp.MustCompile(`\binputs\.([\w-]+)`).FindAllStringSubmatch(body, -1) {
			if a.Inputs[ref[1]] == nil {
				t.Errorf("expression ${{%s}} reads inputs.%s, which action.yml does not declare", e[1], ref[1])
			}
		}
	}
}
