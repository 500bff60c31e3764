package cli_test

import (
	"os"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/dupctl/dupctl/internal/testenv"
	amqp "github.com/rabbitmq/amqp091-go"
)

// TestReplayInputIsBounded: a replay's input is bounded in time and size
// and never rewritten silently (issue 27): /dev/zero and an idle FIFO end
// with --timeout and Ctrl-C, a journal line is capped, invalid UTF-8 in a
// file is refused, and so are a non-finite --rate and an empty step in a
// body path.
func TestReplayInputIsBounded(t *testing.T) {
	if testing.Short() {
		t.Skip("runs the binary")
	}
	dir := t.TempDir()
	fifo := filepath.Join(dir, "idle.fifo")
	if err := syscall.Mkfifo(fifo, 0o600); err != nil {
		t.Fatal(err)
	}
	badUTF8 := filepath.Join(dir, "bad.jsonl")
	rec := `{"format":"dupctl-dlq-export/1","properties":{"message_id":"m-` + "\xff\xfe" +
		`"},"body_encoding":"text","body":"x","body_bytes":1}` + "\n"
	if err := os.WriteFile(badUTF8, []byte(rec), 0o644); err != nil {
		t.Fatal(err)
	}
	bigJournal := filepath.Join(dir, "big.journal")
	j := `{"t":"start","run":"r1","file":"` + badUTF8 + `"}` + "\n" + `{"t":"pub","seq":1,"fp":"` + strings.Repeat("a", 2<<20) + `"}` + "\n"
	if err := os.WriteFile(bigJournal, []byte(j), 0o644); err != nil {
		t.Fatal(err)
	}
	amqpURL := "amqp://guest:guest@127.0.0.1:1/"
	for _, c := range []struct {
		line      string
		interrupt time.Duration
		code      int
		stderr    string
		within    time.Duration
	}{
		// /dev/zero: the record cap (exit 2) or --timeout (exit 3), whichever
		// comes first on this machine.
		{"dlq replay --from-file /dev/zero --timeout 5s --amqp-url " + amqpURL, 0, 2, "record longer than|timed out", 90 * time.Second},
		{"dlq replay --from-file " + fifo + " --timeout 1s --amqp-url " + amqpURL, 0, 3, "timed out", 30 * time.Second},
		{"dlq replay --from-file " + fifo + " --amqp-url " + amqpURL, 500 * time.Millisecond, 130, "interrupted", 30 * time.Second},
		{"dlq replay --from-file " + badUTF8 + " --amqp-url " + amqpURL, 0, 2, "not valid UTF-8", 30 * time.Second},
		{"dlq replay --from-file " + badUTF8 + " --resume " + bigJournal + " --yes --amqp-url " + amqpURL,
			0, 2, "longer than 1048576 bytes", 30 * time.Second},
		{"dlq replay --queue q --rate NaN --amqp-url " + amqpURL, 0, 2, "--rate NaN: want a finite number", 30 * time.Second},
		{"dlq replay --queue q --rate +Inf --amqp-url " + amqpURL, 0, 2, "--rate +Inf: want a finite number", 30 * time.Second},
		{"dlq replay --queue q --where body.a..b=1 --amqp-url " + amqpURL, 0, 2, "an empty step in the body path", 30 * time.Second},
	} {
		var await func(pid int) error
		if c.interrupt > 0 {
			// Once dupctl waits on the FIFO: a fixed delay, on a loaded
			// machine, came before its signal handler and killed it.
			await = func(pid int) error { return testenv.AwaitBlockedOnFIFO(pid, 30*time.Second, c.interrupt) }
		}
		o := runDupctlUntil(t, c.line, await)
		matched := false
		for _, want := range strings.Split(c.stderr, "|") {
			matched = matched || strings.Contains(string(o.stderr), want)
		}
		if strings.Contains(c.stderr, "timed out") && o.code == 3 {
			o.code = c.code // the timeout won the race with the cap
		}
		if o.code != c.code || !matched {
			t.Errorf("dupctl %s: exit %d, stderr %q; want exit %d and %q", c.line, o.code, o.stderr, c.code, c.stderr)
		}
		// The bounds are far above the few seconds these take: they catch a
		// run that never ends, not a slow machine.
		if o.took > c.within {
			t.Errorf("dupctl %s took %s, bound %s", c.line, o.took.Round(time.Millisecond), c.within)
		}
	}
}

// TestInterruptedExportLeavesNoWholeLookingFile: Ctrl-C in the middle of
// an export leaves FILE.partial, never FILE (issue 27: a file cut
// mid-line under the name asked for was taken for a whole export).
func TestInterruptedExportLeavesNoWholeLookingFile(t *testing.T) {
	if testing.Short() {
		t.Skip("runs the binary")
	}
	url := testenv.Need(t, testenv.AMQP)
	conn, err := amqp.Dial(url)
	if err != nil {
		t.Fatal(err)
	}
	defer conn.Close()
	ch, err := conn.Channel()
	if err != nil {
		t.Fatal(err)
	}
	q := testenv.UniqueName("export-int")
	if _, err := ch.QueueDeclare(q, false, false, false, false, nil); err != nil {
		t.Fatal(err)
	}
	defer ch.QueueDelete(q, false, false, false)
	body := []byte(strings.Repeat("x", 4096))
	for i := 0; i < 20000; i++ {
		if err := ch.PublishWithContext(t.Context(), "", q, false, false, amqp.Publishing{Body: body}); err != nil {
			t.Fatal(err)
		}
	}
	out := filepath.Join(t.TempDir(), "dlq.jsonl")
	// Interrupted once records reach the partial file - not after a fixed
	// time, which on a loaded machine came before the export had begun.
	o := runDupctlUntil(t, "dlq export --queue "+q+" --out "+out+" --window 50 --amqp-url "+url, func(pid int) error {
		return testenv.AwaitFile(out+".partial", pid, 60*time.Second)
	})
	if o.code != 130 {
		t.Skipf("the export ended before the interrupt (exit %d): nothing to check; stderr %s", o.code, o.stderr)
	}
	if _, err := os.Stat(out); err == nil {
		t.Fatalf("an interrupted export left %s under the name asked for", out)
	}
	if st, err := os.Stat(out + ".partial"); err != nil || st.Size() == 0 {
		t.Fatalf("no partial file with what was written: %v", err)
	}
}
