package keys

import (
	"bytes"
	"context"
	"errors"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/dupctl/dupctl/internal/deadletter"
	"github.com/dupctl/dupctl/internal/logs"
	amqp "github.com/rabbitmq/amqp091-go"
)

// TestDLQExport reads a `dupctl dlq export` file - records written by
// replay's own encoder - as keys unstable's input: keys in a JSON body or
// in typed headers, retries told by the message id and the attempt.
func TestDLQExport(t *testing.T) {
	at := time.Date(2026, 11, 3, 9, 0, 0, 0, time.UTC)
	death := amqp.Table{"x-death": []any{amqp.Table{"count": int64(3), "queue": "payments", "reason": "rejected"}}}
	msgs := []*deadletter.Message{
		// The producer minted a new key per attempt: the body says so.
		{Props: deadletter.Properties{MessageID: "m-1", Headers: death},
			Body: []byte(`{"orderId":"o-1","idempotencyKey":"payment:o-1:1","attempt":1}`)},
		{Props: deadletter.Properties{MessageID: "m-1", Headers: death},
			Body: []byte(`{"orderId":"o-1","idempotencyKey":"payment:o-1:2","attempt":2}`), Redelivered: true},
		// Keys in headers, a body that is not JSON.
		{Props: deadletter.Properties{MessageID: "m-2",
			Headers: amqp.Table{"orderId": "o-2", "Idempotency-Key": "refund:o-2:1793696400000", "x-retry-count": int32(0)}},
			Body: []byte{0xff, 0xfe}},
		{Props: deadletter.Properties{MessageID: "m-2",
			Headers: amqp.Table{"orderId": "o-2", "Idempotency-Key": "refund:o-2:1793696403000", "x-retry-count": int32(1)}},
			Body: []byte("not json")},
	}
	var b bytes.Buffer
	for _, m := range msgs {
		rec, err := m.MarshalRecord(at, "payments.dlq", "/")
		if err != nil {
			t.Fatal(err)
		}
		b.Write(append(rec, '\n'))
	}
	b.WriteString(`{"format":"dupctl-dlq/1","body":"x","body_encoding":"rot13","body_bytes":1}` + "\n")
	path := filepath.Join(t.TempDir(), "dlq-export.jsonl")
	if err := os.WriteFile(path, b.Bytes(), 0o644); err != nil {
		t.Fatal(err)
	}
	src, err := logs.File(path)
	if err != nil {
		t.Fatal(err)
	}
	res, err := Run(context.Background(), []logs.Source{src}, Options{})
	if err != nil {
		t.Fatal(err)
	}
	got := map[string]Unstable{}
	for _, u := range res.Unstable {
		got[u.BusinessKey] = u
	}
	if u := got["o-1"]; u.Class != ClassAttempt || !u.Confirmed || u.Template != "payment:{businessKey}:{attempt}" ||
		u.Uses[0].Where != path+":1" {
		t.Errorf("o-1: %+v", u)
	}
	if u := got["o-2"]; u.Class != ClassUnixTime || !u.Confirmed {
		t.Errorf("o-2: %+v", u)
	}
	if res.Input.Malformed != 1 || res.Input.Samples[0].Line != 5 ||
		!strings.Contains(res.Input.Samples[0].Text, "dlq export record: body_encoding") {
		t.Errorf("malformed %d %+v", res.Input.Malformed, res.Input.Samples)
	}
}

// An export record longer than the limit stops the read with the input
// error naming its line and where it starts: its message is not read in
// memory whole, and the next records are not judged without it.
func TestExportRecordOverTheLimit(t *testing.T) {
	at := time.Date(2026, 11, 3, 9, 0, 0, 0, time.UTC)
	var b bytes.Buffer
	for _, body := range []string{`{"orderId":"o-1"}`, `{"orderId":"` + strings.Repeat("x", 2<<20) + `"}`} {
		m := &deadletter.Message{Props: deadletter.Properties{MessageID: "m-1"}, Body: []byte(body)}
		rec, err := m.MarshalRecord(at, "payments.dlq", "/")
		if err != nil {
			t.Fatal(err)
		}
		b.Write(append(rec, '\n'))
	}
	first := bytes.IndexByte(b.Bytes(), '\n') + 1
	path := filepath.Join(t.TempDir(), "dlq-export.jsonl")
	if err := os.WriteFile(path, b.Bytes(), 0o644); err != nil {
		t.Fatal(err)
	}
	src, err := logs.File(path)
	if err != nil {
		t.Fatal(err)
	}
	_, err = Run(context.Background(), []logs.Source{src}, Options{MaxLine: 1 << 20})
	var lt *logs.LineTooLongError
	if !errors.As(err, &lt) || lt.Line != 2 || lt.Offset != int64(first) {
		t.Fatalf("want record 2 from byte %d too long, got %v", first, err)
	}
}
