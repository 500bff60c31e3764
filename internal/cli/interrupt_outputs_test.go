package cli_test

import (
	"context"
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/dupctl/dupctl/internal/cli"
	"github.com/dupctl/dupctl/internal/platform/iostreams"
	"github.com/dupctl/dupctl/internal/platform/report"
)

// TestInterruptedWritesItsOutputs: a run stopped by Ctrl-C (exit 130)
// still writes each output asked for, with an "interrupted" error: a CI
// step that uploads the report finds one that says so.
func TestInterruptedWritesItsOutputs(t *testing.T) {
	dir := t.TempDir()
	ctx, cancel := context.WithCancel(context.Background())
	cancel() // Ctrl-C before the command could do anything
	ios, _, _, stderr := iostreams.Test()
	jsonPath, junitPath := filepath.Join(dir, "r.json"), filepath.Join(dir, "r.xml")
	code := cli.Run(ctx, []string{"simulate", "matrix", "-o", "json=" + jsonPath, "-o", "junit=" + junitPath}, ios)
	if code != 130 {
		t.Fatalf("exit %d, want 130: %s", code, stderr)
	}
	b, err := os.ReadFile(jsonPath)
	if err != nil {
		t.Fatal(err)
	}
	var rep report.JSONReport
	if err := json.Unmarshal(b, &rep); err != nil || rep.Error == nil || rep.Error.Message != "interrupted" || rep.Error.ExitCode != 130 {
		t.Fatalf("json: %v %s", err, b)
	}
	x, err := os.ReadFile(junitPath)
	if err != nil || !strings.Contains(string(x), `<error message="interrupted" type="exit 130">`) {
		t.Fatalf("junit: %v %s", err, x)
	}
}
