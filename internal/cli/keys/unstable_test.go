package keys

import (
	"testing"

	"github.com/dupctl/dupctl/internal/cli/cmdutil"
	"github.com/dupctl/dupctl/internal/platform/iostreams"
)

func TestUnstableFlags(t *testing.T) {
	ios, _, _, _ := iostreams.Test()
	f := cmdutil.NewFactory(ios)
	var got *UnstableOptions
	cmd := NewCmdUnstable(f, func(o *UnstableOptions) error { got = o; return nil })
	cmd.SetArgs([]string{"--query", "SELECT 1", "--mapping", "m.json"})
	if err := cmd.Execute(); err != nil {
		t.Fatal(err)
	}
	if got.Query != "SELECT 1" || got.Log.Mapping != "m.json" || len(got.Args) != 0 {
		t.Fatalf("options %+v", got)
	}
}
