package logs

import (
	"context"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	logread "github.com/dupctl/dupctl/internal/logs"
)

// TestRetryWithoutAttempt: a retry line that names no attempt ends the
// run; the check and side effect the worker logs after it are the next
// attempt's run (as an attempt field would have made them), so an
// idempotency key that changed between the attempts is the cause stated -
// not "the same run logged the side effect twice".
func TestRetryWithoutAttempt(t *testing.T) {
	lines := []string{
		`{"time":"2026-03-14T09:00:43Z","worker":"w1","msg":"message received","orderId":"ord-1","messageId":"m-1"}`,
		`{"time":"2026-03-14T09:00:43.1Z","worker":"w1","msg":"idempotency check miss","orderId":"ord-1","idempotencyKey":"charge:ord-1:100"}`,
		`{"time":"2026-03-14T09:00:44Z","worker":"w1","msg":"side_effect","orderId":"ord-1"}`,
		`{"time":"2026-03-14T09:00:44.1Z","worker":"w1","msg":"committed","orderId":"ord-1","idempotencyKey":"charge:ord-1:100"}`,
		`{"time":"2026-03-14T09:00:44.2Z","worker":"w1","msg":"retry scheduled","orderId":"ord-1"}`,
		`{"time":"2026-03-14T09:00:47Z","worker":"w1","msg":"idempotency check miss","orderId":"ord-1","idempotencyKey":"charge:ord-1:200"}`,
		`{"time":"2026-03-14T09:00:47.5Z","worker":"w1","msg":"side_effect","orderId":"ord-1"}`,
		`{"time":"2026-03-14T09:00:48Z","worker":"w1","msg":"committed","orderId":"ord-1","idempotencyKey":"charge:ord-1:200"}`,
		`{"time":"2026-03-14T09:00:48.1Z","worker":"w1","msg":"message acked","orderId":"ord-1","messageId":"m-1"}`,
	}
	p := filepath.Join(t.TempDir(), "w1.log")
	if err := os.WriteFile(p, []byte(strings.Join(lines, "\n")+"\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	src, err := logread.File(p)
	if err != nil {
		t.Fatal(err)
	}
	res, err := Run(context.Background(), []logread.Source{src}, Options{ClockSkew: 100 * time.Millisecond})
	if err != nil {
		t.Fatal(err)
	}
	if len(res.Duplicates) != 1 || res.Duplicates[0].Cause != RuleUnstableKey.Code {
		t.Fatalf("duplicates %+v, want one %s", res.Duplicates, RuleUnstableKey.Code)
	}
}
