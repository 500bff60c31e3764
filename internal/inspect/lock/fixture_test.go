package lock_test

import (
	"bufio"
	"context"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"testing"

	"github.com/dupctl/dupctl/internal/testenv"
	"github.com/redis/go-redis/v9"
)

// redisURLEnv is REDIS_URL for a fixture program writing to c's database.
func redisURLEnv(c *redis.Client) string {
	return "REDIS_URL=redis://" + c.Options().Addr + "/" + strconv.Itoa(c.Options().DB)
}

// holdNodeFixture installs the npm packages testdata/<dir>/package.json
// pins and holds testdata/<dir>/fixtures.js, writing to c's database (env:
// more of its environment).
func holdNodeFixture(ctx context.Context, t *testing.T, dir string, c *redis.Client, env ...string) {
	t.Helper()
	modules := testenv.NodeModules(t, filepath.Join("testdata", dir, "package.json"))
	script, err := filepath.Abs(filepath.Join("testdata", dir, "fixtures.js"))
	if err != nil {
		t.Fatal(err)
	}
	cmd := exec.CommandContext(ctx, "node", script)
	cmd.Env = append(append(os.Environ(), "NODE_PATH="+modules, redisURLEnv(c)), env...)
	holdFixture(t, cmd)
}

// holdFixture starts a fixture program - keys written by libraries' own
// code, locks held until its stdin closes - and returns once it printed
// "ready". It is stopped when the test ends.
func holdFixture(t *testing.T, cmd *exec.Cmd) {
	t.Helper()
	stderr := &strings.Builder{}
	cmd.Stderr = stderr
	stdin, err := cmd.StdinPipe()
	if err != nil {
		t.Fatal(err)
	}
	stdout, err := cmd.StdoutPipe()
	if err != nil {
		t.Fatal(err)
	}
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { stdin.Close(); _ = cmd.Wait() })
	if line, err := bufio.NewReader(stdout).ReadString('\n'); err != nil || line != "ready\n" {
		t.Fatalf("%s: %q %v\n%s", strings.Join(cmd.Args, " "), line, err, stderr)
	}
}
