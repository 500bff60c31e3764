package cli_test

import (
	"os/exec"
	"path/filepath"
	"sync"

	"github.com/rogpeppe/go-internal/testscript"
)

var goworker struct {
	dir  string // TestScript's temporary directory
	once sync.Once
	path string
	err  error
	out  []byte
}

// cmdGoworker builds testdata/workers/goworker once per test binary and
// sets $GOWORKER to it, for scripts that run `simulate --worker`:
//
//	goworker
func cmdGoworker(ts *testscript.TestScript, neg bool, args []string) {
	if neg || len(args) > 0 {
		ts.Fatalf("usage: goworker")
	}
	goworker.once.Do(func() {
		goworker.path = filepath.Join(goworker.dir, "goworker")
		goworker.out, goworker.err = exec.Command("go", "build", "-o", goworker.path, "../../testdata/workers/goworker").CombinedOutput()
	})
	if goworker.err != nil {
		ts.Fatalf("build goworker: %v\n%s", goworker.err, goworker.out)
	}
	ts.Setenv("GOWORKER", goworker.path)
}
