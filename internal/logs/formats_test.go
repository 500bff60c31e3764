package logs

import (
	"context"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"
)

// TestFormatsReadWithNoFlags reads one line of every format a real stack
// writes (testdata/formats, each in the shape its library documents; see
// format.go, console.go, wrap.go, otlp.go and clef.go for the sources) with
// no flags: the format is detected and the side effect, its keys, the
// attempt and the time are read.
func TestFormatsReadWithNoFlags(t *testing.T) {
	at := time.Date(2026, 12, 2, 9, 7, 50, 215e6, time.UTC)
	for _, c := range []struct {
		file, format string
		noTime       bool
		noIdem       bool
	}{
		{"spring-boot-3.log", "text (spring-boot)", false, false},
		{"spring-boot-2.log", "text (spring-boot)", false, false},
		{"logback.log", "text (logback/log4j2)", false, false},
		{"python-basic.log", "text (python-logging)", true, false},
		{"python-asctime.log", "text (python-logging)", false, false},
		{"ruby-logger.log", "text (ruby-logger)", false, false},
		{"sidekiq.log", "text (sidekiq)", false, false},
		{"logrus.log", "logfmt", false, false},
		{"gokit.log", "logfmt", false, false},
		{"clef.json", "clef", false, false},
		{"gelf.json", "gelf", false, false},
		{"otlp.json", "otlp", false, false},
		{"docker.json", "docker+json", false, false},
		{"cri.log", "cri+text (spring-boot)", false, false},
		{"journald.json", "journald+text (message)", false, false},
		{"python-json-logger.json", "json", false, false},
		{"ecs.json", "json", false, false},
	} {
		t.Run(c.file, func(t *testing.T) {
			src, err := File(filepath.Join("testdata", "formats", c.file))
			if err != nil {
				t.Fatal(err)
			}
			var got []Event
			st, err := Scan(context.Background(), []Source{src}, Options{}, func(e *Event) error {
				got = append(got, e.Clone())
				return nil
			})
			if err != nil {
				t.Fatal(err)
			}
			if len(st.Formats) != 1 || st.Formats[0].String() != c.format {
				t.Errorf("read as %v, want %s", st.Formats, c.format)
			}
			if len(got) != 1 || st.Malformed != 0 {
				t.Fatalf("%d events, %d malformed %v", len(got), st.Malformed, st.Samples)
			}
			e := got[0]
			if e.Kind != KindSideEffect {
				t.Errorf("kind %s (name %q)", e.Kind, e.Name)
			}
			if e.BusinessKey() != "ORD-1" {
				t.Errorf("business key %q", e.BusinessKey())
			}
			if !c.noIdem && e.IdempotencyKey() != "pay-ORD-1" {
				t.Errorf("idempotency key %q", e.IdempotencyKey())
			}
			if !e.HasAttempt || e.Attempt != 2 {
				t.Errorf("attempt %d %v", e.Attempt, e.HasAttempt)
			}
			if !c.noTime && !e.Time.Equal(at) && !e.Time.Truncate(time.Second).Equal(at.Truncate(time.Second)) {
				t.Errorf("time %s", e.Time)
			}
		})
	}
}

func TestMain(m *testing.M) { os.Exit(m.Run()) }

// readerCase is lines in a real shape that a reader once got wrong, and
// what they must read as.
type readerCase struct {
	name, format string
	lines        string // one source; a name ending in /N.log names several (see scanCase)
	check        func(t *testing.T, evs []Event)
}

// TestReaderBugs holds a real-shaped case for each reader bug the
// generated fleets of every format (loggen, audit logs' TestCorpusFormats)
// found: each must now read with no flags, every line an event, none
// malformed.
func TestReaderBugs(t *testing.T) {
	for _, c := range readerBugs {
		t.Run(c.name, func(t *testing.T) {
			evs, st := scanCase(t, c.lines)
			if len(st.Formats) == 0 || st.Formats[0].String() != c.format {
				t.Errorf("read as %v, want %s", st.Formats, c.format)
			}
			if st.Malformed != 0 || int64(len(evs)) != st.Lines {
				t.Fatalf("%d events of %d lines, %d malformed %v", len(evs), st.Lines, st.Malformed, st.Samples)
			}
			c.check(t, evs)
		})
	}
}

var readerBugs = []readerCase{
	{
		// A wrapper's payloads were read as a console layout as soon as
		// one sentence of the sample began with a level word, and every
		// other sentence was then malformed; that sentence lost its
		// first word ("Error processing message" read as a received).
		name: "journald sentences, one starting with a level word", format: "journald+text (message)",
		lines: `{"__REALTIME_TIMESTAMP":"1796202470115000","_HOSTNAME":"node-1","_PID":"4242",` +
			`"MESSAGE":"Error processing message msg-7 for order ORD-1: TimeoutError","PRIORITY":"3"}
{"__REALTIME_TIMESTAMP":"1796202470215000","_HOSTNAME":"node-1","_PID":"4242",` +
			`"MESSAGE":"payment charged order=ORD-1 key=pay-ORD-1 attempt=2","PRIORITY":"6"}
`,
		check: func(t *testing.T, evs []Event) {
			wantKinds(t, evs, KindFailed, KindSideEffect)
		},
	},
	{
		// The worker of a Serilog line is its WithMachineName enricher's
		// MachineName; it was not read, so every evidence line named no
		// worker and one file's workers were one.
		name: "clef MachineName", format: "clef",
		lines: `{"@t":"2026-12-02T09:07:50.2150000Z","@mt":"Charged card for order {OrderId}","OrderId":"ORD-1","Attempt":2,` +
			`"MachineName":"pod-a"}
`,
		check: func(t *testing.T, evs []Event) { wantField(t, evs[0], Consumer, "pod-a") },
	},
	{
		// ECS names a service's instance service.node.name (Spring Boot's
		// ECS structured logging writes it); it was not read.
		name: "ecs service.node.name", format: "json",
		lines: `{"@timestamp":"2026-12-02T09:07:50.215Z","log.level":"INFO","message":"Charged card for order ORD-1",` +
			`"service":{"name":"payments","node":{"name":"pod-a"}},"ecs":{"version":"8.11"}}
`,
		check: func(t *testing.T, evs []Event) { wantField(t, evs[0], Consumer, "pod-a") },
	},
	{
		// ECS and OpenTelemetry nest a service's own fields with a
		// snake_case leaf: "lock":{"ttl_ms":300} is lock.ttl_ms, which no
		// spelling of the lockTtlMs alias wrote, so findings spoke of an
		// unlogged TTL on lines that log it (issue 29).
		name: "ecs lock.ttl_ms", format: "json",
		lines: `{"@timestamp":"2026-12-02T09:07:50.215Z","log.level":"INFO","message":"Lock acquired for order ORD-1",` +
			`"lock":{"key":"lock:ORD-1","ttl_ms":300},"labels":{"order_id":"ORD-1"}}
`,
		check: func(t *testing.T, evs []Event) {
			if evs[0].LockTTL != 300*time.Millisecond || evs[0].LockKey() != "lock:ORD-1" {
				t.Errorf("lock %q ttl %s, want lock:ORD-1 300ms", evs[0].LockKey(), evs[0].LockTTL)
			}
		},
	},
	{
		name: "otlp lock.ttl_ms attribute", format: "otlp",
		lines: `{"resourceLogs":[{"resource":{"attributes":[]},"scopeLogs":[{"scope":{},"logRecords":[{"timeUnixNano":"1796202470215000000",` +
			`"body":{"stringValue":"lock acquired"},"attributes":[{"key":"lock.ttl_ms","value":{"intValue":"5000"}}]}]}]}]}
`,
		check: func(t *testing.T, evs []Event) {
			if evs[0].LockTTL != 5*time.Second {
				t.Errorf("lock ttl %s, want 5s", evs[0].LockTTL)
			}
		},
	},
	{
		// Sidekiq's pid= was read as the consumer field: every thread of
		// a process was one worker (its runs merged), and the pid of
		// every pod ("pid=1") was not qualified by its file. The worker
		// is the thread, tid=, qualified by the file like any thread.
		name: "sidekiq threads", format: "text (sidekiq)",
		lines: `2026-12-02T09:07:50.115Z pid=1 tid=oxhc6h4vc class=PaymentJob jid=1b2c3d INFO: payment charged order=ORD-1 attempt=1
2026-12-02T09:07:50.215Z pid=1 tid=ow5j2mpzk class=PaymentJob jid=4e5f6a INFO: payment charged order=ORD-1 attempt=2
`,
		check: func(t *testing.T, evs []Event) {
			wantField(t, evs[0], Consumer, "oxhc6h4vc")
			wantField(t, evs[1], Consumer, "ow5j2mpzk")
		},
	},
	{
		// With tracing on and no spring.application.name, Spring Boot 3
		// writes [thread] [traceId-spanId]: the second bracket was read
		// as the thread, so every trace (every message) was a worker.
		name: "spring boot 3 correlation id", format: "text (spring-boot)",
		lines: "2026-12-02T09:07:50.215Z  INFO 1 --- [ntContainer#0-1] [803b448a0489f84084905d3093480352-3425f23bb2432450] " +
			"c.e.PaymentListener                      : payment charged order=ORD-1 key=pay-ORD-1 attempt=2\n",
		check: func(t *testing.T, evs []Event) { wantField(t, evs[0], Consumer, "ntContainer#0-1") },
	},
	{
		// OpenTelemetry Java's logging-otlp exporter writes one
		// ResourceLogs a line ({"resource":...,"scopeLogs":[...]}; its test
		// data, open-telemetry/opentelemetry-java
		// exporters/logging-otlp/src/test/resources/expected-logs.json):
		// neither a LogsData nor a record, it was read as nothing.
		name: "otlp ResourceLogs a line", format: "otlp",
		lines: `{"resource":{"attributes":[{"key":"service.instance.id","value":{"stringValue":"pod-a"}}]},` +
			`"scopeLogs":[{"scope":{"name":"payments","version":"1","attributes":[]},"logRecords":[{"timeUnixNano":"1796202470215000000",` +
			`"observedTimeUnixNano":"1796202470216000000","severityNumber":9,"severityText":"INFO","body":{"stringValue":"payment charged"},` +
			`"attributes":[{"key":"order.id","value":{"stringValue":"ORD-1"}},{"key":"attempt","value":{"intValue":"2"}}],` +
			`"traceId":"12345678876543211234567887654322","spanId":"8765432112345876"}]}]}
`,
		check: func(t *testing.T, evs []Event) {
			wantKinds(t, evs, KindSideEffect)
			wantField(t, evs[0], Consumer, "pod-a")
			wantField(t, evs[0], BusinessKey, "ORD-1")
		},
	},
}

// scanCase reads lines as one source with no flags.
func scanCase(t *testing.T, lines string) ([]Event, Stats) {
	t.Helper()
	var evs []Event
	st, err := Scan(context.Background(), []Source{ReaderSource("case.log", strings.NewReader(lines))}, Options{}, func(e *Event) error {
		evs = append(evs, e.Clone())
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	return evs, st
}

func wantKinds(t *testing.T, evs []Event, kinds ...Kind) {
	t.Helper()
	for i, e := range evs {
		if i < len(kinds) && e.Kind != kinds[i] {
			t.Errorf("line %d %q: kind %s, want %s", e.Line, e.Get(Message), e.Kind, kinds[i])
		}
	}
}

func wantField(t *testing.T, e Event, f Field, want string) {
	t.Helper()
	if got := e.Fields[f]; got != want {
		t.Errorf("line %d: %s %q, want %q", e.Line, f, got, want)
	}
}
