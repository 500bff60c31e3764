package config

import (
	"bytes"

	"strings"
	"testing"
	"time"

	"go.yaml.in/yaml/v3"

	"github.com/dupctl/dupctl/internal/platform/findings"
)

const example = `
version: 1
connections:
  redis_url: redis://127.0.0.1:6379/0
  amqp_url: amqp://guest:guest@127.0.0.1:5672/
jobs:
  - name: payment
    queue: payments
    dlq: payments.dlq
    lock_pattern: "lock:payment:order:*"
    lock_ttl: 2m
    idempotency: {table: job_execution, key_column: idempotency_key, status_column: status}
    cache_pattern: "job:status:{key}"
    worker:
      command: ./payments-worker
      env: ["AMQP_URL={amqp}"]
      publish: "payments:charge"
      effects_sql: "select order_id, count(*) from charges group by 1"
allow:
  - code: LOCK_NO_TTL
    subject: "lock:legacy:*"
    reason: legacy cron lock, removed with the cron in Q1
    expires: 2027-03-31
`

func TestParse(t *testing.T) {
	c, err := Parse(strings.NewReader(example))
	if err != nil {
		t.Fatal(err)
	}
	j, ok := c.Job("payment")
	if !ok || j.Queue != "payments" || time.Duration(j.LockTTL) != 2*time.Minute || j.Idempotency.KeyColumn != "idempotency_key" {
		t.Fatalf("job: %+v", j)
	}
	if j.Worker == nil || j.Worker.Command != "./payments-worker" || j.Worker.Env[0] != "AMQP_URL={amqp}" ||
		j.Worker.Publish != "payments:charge" {
		t.Fatalf("worker: %+v", j.Worker)
	}
	if c.Connections.RedisURL != "redis://127.0.0.1:6379/0" {
		t.Fatalf("connections: %+v", c.Connections)
	}
}

// TestAMQPURLList: amqp_url is one URL, or a cluster's addresses as a
// YAML list, kept as the comma-separated list --amqp-url takes.
func TestAMQPURLList(t *testing.T) {
	for in, want := range map[string]string{
		"connections: {amqp_url: amqp://u:p@h1:5672/}\n":                                 "amqp://u:p@h1:5672/",
		"connections:\n  amqp_url: [amqp://u:p@h1:5672/, amqp://u:p@h2:5673/]\n":         "amqp://u:p@h1:5672/,amqp://u:p@h2:5673/",
		"connections:\n  amqp_url:\n    - amqp://u:p@h1:5672/\n    - amqps://h2:5671/\n": "amqp://u:p@h1:5672/,amqps://h2:5671/",
	} {
		c, err := Parse(strings.NewReader(in))
		if err != nil || string(c.Connections.AMQPURL) != want {
			t.Errorf("Parse(%q): %q %v, want %q", in, c.Connections.AMQPURL, err, want)
		}
	}
	for _, in := range []string{"connections: {amqp_url: {a: b}}\n", "connections: {amqp_url: [[a]]}\n",
		"connections: {amqp_url: [\"\"]}\n"} {
		if _, err := Parse(strings.NewReader(in)); err == nil || !strings.Contains(err.Error(), "URL") {
			t.Errorf("Parse(%q): %v, want an error about the URL", in, err)
		}
	}
}

func TestParseErrors(t *testing.T) {
	for _, tt := range []struct{ in, want string }{
		{"jobs:\n  - name: a\n    queeu: x\n", "field queeu not found"},
		{"jobs:\n  - name: a\n    worker: {comand: x}\n", "field comand not found"},
		{"jobs:\n  - queue: x\n", "name is required"},
		{"jobs:\n  - name: a\n  - name: a\n", "defined twice"},
		{"jobs:\n  - name: a\n    lock_ttl: soon\n", `"soon" is not a duration`},
		{"allow:\n  - code: X\n    expires: 2027-01-01\n", "a reason is required"},
		{"allow:\n  - code: X\n    reason: r\n", "an expiry date is required"},
		{"allow:\n  - code: X\n    reason: r\n    expires: tomorrow\n", "is not a date"},
		{"version: 7\n", "reads version 1"},
		{"jobs: [\n", "did not find expected"},
	} {
		_, err := Parse(strings.NewReader(tt.in))
		if err == nil || !strings.Contains(err.Error(), tt.want) {
			t.Errorf("Parse(%q) = %v, want %q", tt.in, err, tt.want)
		}
		if err != nil && strings.Contains(err.Error(), "\n") {
			t.Errorf("Parse(%q): error is not one line: %q", tt.in, err)
		}
	}
}

func TestAllowMatch(t *testing.T) {
	c, _ := Parse(strings.NewReader(example))
	f := findings.Finding{Code: "LOCK_NO_TTL", Subject: "lock:legacy:nightly"}
	day := func(s string) time.Time { t, _ := time.Parse(time.DateOnly, s); return t.Add(12 * time.Hour) }
	if _, expired, ok := c.Match(f, day("2027-03-31")); !ok || expired {
		t.Fatal("an entry must hold through its expiry day")
	}
	if _, expired, ok := c.Match(f, day("2027-04-01")); !ok || !expired {
		t.Fatal("an entry must expire the day after")
	}
	if _, _, ok := c.Match(findings.Finding{Code: "LOCK_NO_TTL", Subject: "lock:payment:1"}, day("2027-01-01")); ok {
		t.Fatal("subject glob ignored")
	}
	if _, _, ok := (*Config)(nil).Match(f, day("2027-01-01")); ok {
		t.Fatal("nil config allowed something")
	}
}

func FuzzParse(f *testing.F) {
	f.Add(example)
	f.Add("allow: [{code: X, reason: y, expires: 2027-01-01, subject: '['}]")
	f.Fuzz(func(t *testing.T, s string) {
		c, err := Parse(strings.NewReader(s)) // must not panic
		if err != nil {
			return
		}
		// What parses writes back to YAML that parses to the same config.
		out, err := yaml.Marshal(c)
		if err != nil {
			t.Fatalf("marshal %+v: %v", c, err)
		}
		again, err := Parse(bytes.NewReader(out))
		if err != nil {
			t.Fatalf("the config written back does not parse: %v\n%s", err, out)
		}
		// (Compared as written: an empty list and a missing one are the
		// same config.)
		if out2, _ := yaml.Marshal(again); !bytes.Equal(out, out2) {
			t.Fatalf("round trip changed the config:\n%s\n%s", out, out2)
		}
	})
}
