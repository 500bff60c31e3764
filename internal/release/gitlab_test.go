package release

import (
	"bytes"
	"errors"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"slices"
	"strings"
	"testing"

	"go.yaml.in/yaml/v3"
)

const gitlabTemplate = "ci/gitlab/dupctl.gitlab-ci.yml"

type gitlabJob struct {
	Variables map[string]string `yaml:"variables"`
	Script    []string          `yaml:"script"`
	Artifacts struct {
		When    string            `yaml:"when"`
		Reports map[string]string `yaml:"reports"`
		Paths   []string          `yaml:"paths"`
	} `yaml:"artifacts"`
}

// readGitLab parses the template's two documents: the spec of its inputs
// and the job.
func readGitLab(t *testing.T) (inputs map[string]map[string]any, jobName string, job gitlabJob) {
	t.Helper()
	b, err := os.ReadFile(filepath.Join(root, gitlabTemplate))
	if err != nil {
		t.Fatal(err)
	}
	dec := yaml.NewDecoder(bytes.NewReader(b))
	var spec struct {
		Spec struct {
			Inputs map[string]map[string]any `yaml:"inputs"`
		} `yaml:"spec"`
	}
	if err := dec.Decode(&spec); err != nil {
		t.Fatalf("%s, spec: %v", gitlabTemplate, err)
	}
	var jobs map[string]gitlabJob
	if err := dec.Decode(&jobs); err != nil {
		t.Fatalf("%s, jobs: %v", gitlabTemplate, err)
	}
	if err := dec.Decode(new(any)); !errors.Is(err, io.EOF) {
		t.Fatalf("%s has more than two documents", gitlabTemplate)
	}
	if len(jobs) != 1 {
		t.Fatalf("%s has %d jobs, want 1", gitlabTemplate, len(jobs))
	}
	for name, j := range jobs {
		jobName, job = name, j
	}
	return spec.Spec.Inputs, jobName, job
}

// actionSteps are action.yml's inputs and its steps' run lines and env.
type actionSteps struct {
	Inputs map[string]map[string]any `yaml:"inputs"`
	Runs   struct {
		Steps []struct {
			ID  string            `yaml:"id"`
			Run string            `yaml:"run"`
			Env map[string]string `yaml:"env"`
		} `yaml:"steps"`
	} `yaml:"runs"`
}

func readAction(t *testing.T) actionSteps {
	t.Helper()
	var a actionSteps
	readYAML(t, "action.yml", &a)
	return a
}

var scriptRE = regexp.MustCompile(`bash "\$\w+/(\.github/actions/dupctl/\w+\.sh)"`)

// TestGitLabTemplateIsTheAction: the GitLab job runs the action's two
// scripts, with the same inputs mapped to the same variables.
func TestGitLabTemplateIsTheAction(t *testing.T) {
	inputs, name, job := readGitLab(t)
	action := readAction(t)
	for _, in := range []string{"version", "command", "fail-on", "args"} {
		if inputs[in] == nil || action.Inputs[in] == nil {
			t.Errorf("input %q: in the GitLab template %v, in action.yml %v", in, inputs[in] != nil, action.Inputs[in] != nil)
		}
		if inputs[in]["default"] != action.Inputs[in]["default"] {
			t.Errorf("input %q defaults to %v on GitLab, %v in action.yml", in, inputs[in]["default"], action.Inputs[in]["default"])
		}
	}
	if name != "$[[ inputs.job-name ]]" || job.Artifacts.Reports["junit"] != "dupctl-junit.xml" || job.Artifacts.When != "always" {
		t.Errorf("job %q: artifacts %+v; want reports:junit dupctl-junit.xml, when: always", name, job.Artifacts)
	}
	if got := job.Variables["DUPCTL_JUNIT"]; got != "$CI_PROJECT_DIR/dupctl-junit.xml" {
		t.Errorf("DUPCTL_JUNIT is %q, want the file artifacts:reports:junit names", got)
	}
	var actionRuns, gitlabRuns []string
	for _, s := range action.Runs.Steps {
		for _, m := range scriptRE.FindAllStringSubmatch(s.Run, -1) {
			actionRuns = append(actionRuns, m[1])
		}
		for k, v := range s.Env {
			if in := inputRef(v, `\$\{\{ inputs\.([\w-]+) \}\}`); in != "" {
				if want := "$[[ inputs." + in + " ]]"; job.Variables[k] != want {
					t.Errorf("action.yml sets %s from input %s; GitLab sets it to %q", k, in, job.Variables[k])
				}
			}
		}
	}
	for _, line := range job.Script {
		for _, m := range scriptRE.FindAllStringSubmatch(line, -1) {
			gitlabRuns = append(gitlabRuns, m[1])
		}
	}
	if len(actionRuns) != 2 || !slices.Equal(actionRuns, gitlabRuns) {
		t.Errorf("action.yml runs %v, the GitLab job %v: want the same two scripts", actionRuns, gitlabRuns)
	}
}

func inputRef(s, pattern string) string {
	if m := regexp.MustCompile(`^` + pattern + `$`).FindStringSubmatch(s); m != nil {
		return m[1]
	}
	return ""
}

// TestGitLabJobRuns runs the job's script as a runner would (inputs
// interpolated, variables set, the lines in one bash with -eo pipefail),
// on this checkout: dupctl's exit code is the job's, and the JUnit the
// pipeline reads is written.
func TestGitLabJobRuns(t *testing.T) {
	installSource(t) // the job's own build below then reuses the cache
	inputs, _, job := readGitLab(t)
	tests := []struct {
		command, failOn string
		code            int
		junit           string
	}{
		{"simulate crash", "none", 0, `failures="0"`},
		{"simulate crash", "info", 1, "<failure "},
	}
	for _, tt := range tests {
		t.Run(tt.command+" --fail-on "+tt.failOn, func(t *testing.T) {
			project := t.TempDir()
			values := map[string]string{"command": tt.command, "fail-on": tt.failOn, "source-dir": root}
			interp := func(s string) string {
				return regexp.MustCompile(`\$\[\[ inputs\.([\w-]+) \]\]`).ReplaceAllStringFunc(s, func(m string) string {
					in := m[len("$[[ inputs.") : len(m)-len(" ]]")]
					if v, ok := values[in]; ok {
						return v
					}
					return fmtDefault(inputs[in]["default"])
				})
			}
			env := []string{"PATH=" + os.Getenv("PATH"), "HOME=" + os.Getenv("HOME"), "GOFLAGS=" + os.Getenv("GOFLAGS"),
				"GOCACHE=" + goEnv("GOCACHE"), "GOMODCACHE=" + goEnv("GOMODCACHE"), "GOTOOLCHAIN=local",
				"CI=true", "GITLAB_CI=true", "NO_COLOR=1", "CI_PROJECT_DIR=" + project}
			for k, v := range job.Variables {
				env = append(env, k+"="+os.Expand(interp(v), func(k string) string {
					if k == "CI_PROJECT_DIR" {
						return project
					}
					return "$" + k
				}))
			}
			cmd := exec.Command("bash", "-eo", "pipefail", "-c", interp(strings.Join(job.Script, "\n")))
			cmd.Dir, cmd.Env = project, env
			out, err := cmd.CombinedOutput()
			code := 0
			if ee, ok := err.(*exec.ExitError); ok {
				code = ee.ExitCode()
			} else if err != nil {
				t.Fatal(err)
			}
			if code != tt.code {
				t.Fatalf("the job exits %d, want %d:\n%s", code, tt.code, out)
			}
			junit := readFile(filepath.Join(project, job.Artifacts.Reports["junit"]))
			if !strings.Contains(junit, tt.junit) {
				t.Errorf("%s has no %q:\n%s", job.Artifacts.Reports["junit"], tt.junit, junit)
			}
			if md := readFile(filepath.Join(project, job.Artifacts.Paths[0])); !strings.HasPrefix(md, "#") {
				t.Errorf("%s is no Markdown report:\n%s", job.Artifacts.Paths[0], md)
			}
		})
	}
}

func fmtDefault(v any) string {
	if v == nil {
		return ""
	}
	if s, ok := v.(string); ok {
		return s
	}
	b, _ := yaml.Marshal(v)
	return strings.TrimSpace(string(b))
}
