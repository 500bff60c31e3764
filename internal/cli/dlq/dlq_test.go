package dlq

import (
	"bytes"
	"runtime"
	"testing"
	"time"

	"github.com/dupctl/dupctl/internal/replay/classify"

	"github.com/dupctl/dupctl/internal/cli/cmdutil"
	"github.com/dupctl/dupctl/internal/platform/iostreams"
)

func factory() *cmdutil.Factory {
	ios := &iostreams.IOStreams{In: &bytes.Buffer{}, Out: &bytes.Buffer{}, ErrOut: &bytes.Buffer{}}
	return cmdutil.NewFactory(ios)
}

func TestReplayFlagsBecomeOptions(t *testing.T) {
	var got *ReplayOptions
	cmd := NewCmdReplay(factory(), func(o *ReplayOptions) error { got = o; return nil })
	cmd.SetArgs([]string{"--queue", "orders.dlq", "--to", "orders", "--where", "body.type=payment", "--reason", "rejected,expired",
		"--older-than", "2d", "--max", "10", "--rate", "50", "--window", "64", "--window-mib", "16", "--group", "3f2a9c1b",
		"--reset-attempts", "retry-count", "--yes"})
	if err := cmd.Execute(); err != nil {
		t.Fatal(err)
	}
	ro, err := got.options()
	if err != nil {
		t.Fatal(err)
	}
	if ro.Queue != "orders.dlq" || ro.ParkQueue != "orders.dlq.parked" || ro.Max != 10 || ro.Rate != 50 || ro.Window != 64 || !ro.Yes {
		t.Fatalf("options: %+v", ro)
	}
	if ro.WindowBytes != 16<<20 {
		t.Fatalf("--window-mib 16: WindowBytes %d", ro.WindowBytes)
	}
	if ro.Router.To == nil || ro.Router.To.Exchange != "orders" || !ro.Router.KeepKey {
		t.Fatalf("--to: %+v", ro.Router)
	}
	f := ro.Filter
	if f.OlderThan != 48*time.Hour || len(f.Reasons) != 2 || len(f.Where) != 1 || f.Groups[0] != "3f2a9c1b" {
		t.Fatalf("filter: %+v", f)
	}
	if ro.Rewrite.ResetAttempts != "retry-count" || ro.MaxReplays != 3 {
		t.Fatalf("rewrite: %+v", ro.Rewrite)
	}
	if len(ro.IdempotencyKeys) != len(classify.DefaultIdempotencyFields) {
		t.Fatalf("idempotency keys: %v", ro.IdempotencyKeys)
	}
}

func TestWindowMiB(t *testing.T) {
	if got := windowMiB(0).bytes(); got >= 0 {
		t.Errorf("0 MiB: %d, want a negative value (no bound)", got)
	}
	if got := windowMiB(64).bytes(); got != 64<<20 {
		t.Errorf("64 MiB: %d", got)
	}
	if windowMiB(-1).check() == nil {
		t.Error("-1 accepted")
	}
}

func TestOneProc(t *testing.T) {
	defer runtime.GOMAXPROCS(runtime.GOMAXPROCS(3))
	restore := oneProc(func(string) string { return "" })
	if got := runtime.GOMAXPROCS(0); got != 1 {
		t.Errorf("during the replay: GOMAXPROCS %d, want 1", got)
	}
	restore()
	if got := runtime.GOMAXPROCS(0); got != 3 {
		t.Errorf("after the replay: GOMAXPROCS %d, want 3 back", got)
	}
	userSet := func(k string) string {
		if k == "GOMAXPROCS" {
			return "3"
		}
		return ""
	}
	restore = oneProc(userSet)
	if got := runtime.GOMAXPROCS(0); got != 3 {
		t.Errorf("with GOMAXPROCS=3 in the environment: %d, want it left alone", got)
	}
	restore()
}
