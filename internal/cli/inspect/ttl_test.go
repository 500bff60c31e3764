package inspect

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/dupctl/dupctl/internal/cli/cmdutil"
	"github.com/dupctl/dupctl/internal/inspect/ttl"
	"github.com/dupctl/dupctl/internal/platform/iostreams"
)

// parseTTLFlags runs `inspect ttl` with args and returns the options its
// RunE built, without reading anything.
func parseTTLFlags(t *testing.T, args ...string) (*TTLOptions, error) {
	t.Helper()
	ios, _, _, _ := iostreams.Test()
	var got *TTLOptions
	cmd := NewCmdTTL(cmdutil.NewFactory(ios), func(o *TTLOptions) error { got = o; return nil })
	cmd.SetArgs(args)
	cmd.SilenceErrors, cmd.SilenceUsage = true, true
	return got, cmd.Execute()
}

func TestTTLFlags(t *testing.T) {
	file := filepath.Join(t.TempDir(), "ttls.yaml")
	if err := os.WriteFile(file, []byte("payment: 1m\nsettlement: 10m\ndefault: 5m\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	o, err := parseTTLFlags(t, "runs.csv", "-", "--ttl-file", file, "--ttl", "payment=2m", "--unit", "s",
		"--exact-max", "0", "--include-wait", "--quantile", "0.999", "--buffer", "2", "--simulate", "--sim-profile", "safe,claim")
	if err != nil {
		t.Fatal(err)
	}
	if strings.Join(o.Files, " ") != "runs.csv -" || o.Table.Unit != time.Second || o.Collect.ExactMax != -1 || !o.Collect.IncludeWait {
		t.Errorf("files %v unit %s exact-max %d include-wait %v", o.Files, o.Table.Unit, o.Collect.ExactMax, o.Collect.IncludeWait)
	}
	for typ, want := range map[string]struct {
		d   time.Duration
		src string
	}{
		"payment":    {2 * time.Minute, ttl.SourceFlag},
		"settlement": {10 * time.Minute, ttl.SourceConfig},
		"email":      {5 * time.Minute, ttl.SourceConfig},
	} {
		if d, src := o.Collect.TTLs.For(typ); d != want.d || src != want.src {
			t.Errorf("TTL of %s = %s from %s, want %s from %s", typ, d, src, want.d, want.src)
		}
	}
	if o.Analyze.Quantile != 0.999 || o.Analyze.Buffer != 2 || !o.Simulate || len(o.Sim.Profiles) != 2 || o.Sim.Profiles[1].Name != "claim" {
		t.Errorf("analyze %+v simulate %v profiles %v", o.Analyze, o.Simulate, o.Sim.Profiles)
	}
	o, err = parseTTLFlags(t, "--query", "select 1")
	if err != nil || o.Query != "select 1" || o.QueryTimeout != time.Minute || o.Collect.ExactMax != ttl.DefaultExactMax ||
		len(o.Sim.Profiles) != 3 {
		t.Errorf("defaults: %v %+v", err, o)
	}
}
