package audit

import (
	"testing"
	"time"

	"github.com/dupctl/dupctl/internal/cli/cmdutil"
	"github.com/dupctl/dupctl/internal/platform/iostreams"
)

func TestLogsFlags(t *testing.T) {
	ios, _, _, _ := iostreams.Test()
	f := cmdutil.NewFactory(ios)
	var got *LogsOptions
	cmd := NewCmdLogs(f, func(o *LogsOptions) error { got = o; return nil })
	cmd.SetArgs([]string{"a.log", "dir/", "--clock-skew", "250ms", "--incident", "ord-1", "--field", "businessKey=p.o",
		"--event", "side_effect=x", "--strict"})
	if err := cmd.Execute(); err != nil {
		t.Fatal(err)
	}
	if len(got.Args) != 2 || got.ClockSkew != 250*time.Millisecond || got.Incident != "ord-1" || !got.Log.Strict ||
		got.Log.Fields[0] != "businessKey=p.o" || got.Log.Events[0] != "side_effect=x" {
		t.Fatalf("options %+v", got)
	}
	if _, err := got.Log.Compile(nil); err != nil {
		t.Fatal(err)
	}
}
