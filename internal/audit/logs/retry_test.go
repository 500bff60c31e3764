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

// TestRetryInPlaceKeepsTheMessage: a job retried in place after its commit
// failed ("retrying" attempt=2, no message id on the retry's lines) is the
// same message's next attempt, and the ack that names the message is that
// attempt's: the first run ended unacked, so the record that was never
// committed is the cause stated - not "no message or job id says whether
// they handled one message or two". Also when the received line and the
// ack carry the delivery's count as the attempt (deliveryCount=1).
func TestRetryInPlaceKeepsTheMessage(t *testing.T) {
	// delivery: what the received line and the ack add - nothing, or the
	// delivery's count, which is not the in-place retry's attempt.
	for _, delivery := range []string{"", `,"attempt":1`} {
		lines := []string{
			`{"time":"2026-03-14T09:16:07Z","worker":"w1","msg":"message received","orderId":"ord-2","messageId":"m-2"` + delivery + `}`,
			`{"time":"2026-03-14T09:16:07.1Z","worker":"w1","msg":"idempotency check miss","orderId":"ord-2","idempotencyKey":"charge:ord-2"}`,
			`{"time":"2026-03-14T09:16:08Z","worker":"w1","msg":"side_effect","orderId":"ord-2"}`,
			`{"time":"2026-03-14T09:16:09Z","worker":"w1","msg":"commit failed","orderId":"ord-2"}`,
			`{"time":"2026-03-14T09:16:09.1Z","worker":"w1","msg":"retrying","orderId":"ord-2","attempt":2}`,
			`{"time":"2026-03-14T09:16:10Z","worker":"w1","msg":"idempotency check miss","orderId":"ord-2","idempotencyKey":"charge:ord-2"}`,
			`{"time":"2026-03-14T09:16:11Z","worker":"w1","msg":"side_effect","orderId":"ord-2"}`,
			`{"time":"2026-03-14T09:16:11.1Z","worker":"w1","msg":"committed","orderId":"ord-2","idempotencyKey":"charge:ord-2"}`,
			`{"time":"2026-03-14T09:16:11.2Z","worker":"w1","msg":"message acked","orderId":"ord-2","messageId":"m-2"` + delivery + `}`,
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
		if len(res.Duplicates) != 1 || res.Duplicates[0].Cause != RuleNonAtomic.Code {
			t.Errorf("received and ack with %q: duplicates %+v, want one %s", delivery, res.Duplicates, RuleNonAtomic.Code)
		}
	}
}
