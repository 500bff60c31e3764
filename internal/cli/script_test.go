package cli_test

import (
	"flag"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"testing"

	"github.com/dupctl/dupctl/internal/cli"
	"github.com/dupctl/dupctl/internal/testenv"
	"github.com/rogpeppe/go-internal/testscript"
)

var updateScripts = flag.Bool("update", false,
	"rewrite the expected output inside testdata/script/*.txtar (and the sizes docs/reports.md quotes: TestReportSizesInDocs)")

func TestMain(m *testing.M) {
	testscript.Main(m, map[string]func(){
		"dupctl": func() { os.Exit(cli.Main()) },
	})
}

// TestScript runs the end-to-end scripts in testdata/script: a user's
// command line in, exact stdout, stderr and exit code out.
func TestScript(t *testing.T) {
	goworker.dir = t.TempDir()
	testscript.Run(t, testscript.Params{
		Dir:                 "../../testdata/script",
		RequireExplicitExec: true,
		RequireUniqueNames:  true,
		UpdateScripts:       *updateScripts,
		Setup: func(env *testscript.Env) error {
			env.Setenv("NO_COLOR", "1")
			env.Setenv("DUPCTL_NOW", "2026-12-01T12:00:00Z")
			// A replay's default journal goes under the script's own work
			// directory, wherever HOME points.
			env.Setenv("XDG_STATE_HOME", filepath.Join(env.WorkDir, ".state"))
			// Connection settings come only from what a script sets.
			for _, k := range []string{"REDIS_URL", "DATABASE_URL", "AMQP_URL", "DUPCTL_REDIS_URL", "DUPCTL_DATABASE_URL", "DUPCTL_AMQP_URL",
				"CI", "CLICOLOR_FORCE"} {
				env.Setenv(k, "")
			}
			return testenv.SetupScript(env)
		},
		Condition: testenv.Condition,
		Cmds: map[string]func(ts *testscript.TestScript, neg bool, args []string){
			"exitcode":  cmdExitcode,
			"amqp":      cmdAMQP,
			"sql":       cmdSQL,
			"redis":     cmdRedis,
			"goworker":  cmdGoworker,
			"pgstandby": cmdPGStandby,
		},
	})
}

// cmdExitcode runs a command and asserts its exact exit status:
//
//	exitcode 2 dupctl --bogus
//
// stdout and stderr stay available to later stdout/stderr/cmp lines.
func cmdExitcode(ts *testscript.TestScript, neg bool, args []string) {
	if neg {
		ts.Fatalf("unsupported: ! exitcode")
	}
	if len(args) < 2 {
		ts.Fatalf("usage: exitcode N command [args...]")
	}
	want, err := strconv.Atoi(args[0])
	if err != nil {
		ts.Fatalf("exitcode: %v", err)
	}
	err = ts.Exec(args[1], args[2:]...)
	got := 0
	if err != nil {
		ee, ok := err.(*exec.ExitError)
		if !ok {
			ts.Fatalf("exitcode: %v", err)
		}
		got = ee.ExitCode()
	}
	if got != want {
		ts.Fatalf("exit code %d, want %d\nstderr: %s", got, want, strings.TrimSpace(fmt.Sprint(ts.ReadFile("stderr"))))
	}
}
