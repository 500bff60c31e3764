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
			got, st := scanFormat(t, c.file, c.format)
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
			if st.Malformed != 0 || int64(len(evs)) != st.Lines-st.Continuations {
				t.Fatalf("%d events of %d lines (%d continuations), %d malformed %v", len(evs), st.Lines, st.Continuations, st.Malformed, st.Samples)
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
	{
		// A stack trace's exception line is a continuation when its class
		// ends in Exception or Error - but Spring's nested exceptions do
		// not ("HttpServerErrorException$ServiceUnavailable: 503 ..."),
		// and such a line was malformed; any package-qualified class is one.
		name: "java exception of a nested class", format: "text (spring-boot)",
		lines: "2026-12-02T09:07:50.115Z ERROR 1 --- [ntContainer#0-1] c.e.PaymentListener                      : handler failed order=ORD-1\n" +
			"org.springframework.web.client.HttpServerErrorException$ServiceUnavailable: 503 Service Unavailable\n" +
			"\tat com.example.PaymentListener.handle(PaymentListener.java:88)\n" +
			"java.lang.IllegalStateException\n" +
			"2026-12-02T09:07:50.215Z  INFO 1 --- [ntContainer#0-1] c.e.PaymentListener                      : payment charged order=ORD-1\n",
		check: func(t *testing.T, evs []Event) { wantKinds(t, evs, KindFailed, KindSideEffect) },
	},
	{
		// Ruby's Logger writes an exception's backtrace a frame a line,
		// unindented; every frame was a malformed line.
		name: "ruby backtrace", format: "text (ruby-logger)",
		lines: "E, [2026-12-02T09:07:50.115123 #1234] ERROR -- PaymentJob: charge timed out (Timeout::Error)\n" +
			"/app/jobs/payment_job.rb:88:in `perform'\n" +
			"/usr/local/bundle/gems/sidekiq-7.2.4/lib/sidekiq/processor.rb:202:in 'Sidekiq::Processor#execute_job'\n" +
			"I, [2026-12-02T09:07:50.215123 #1234]  INFO -- PaymentJob: payment charged order=ORD-1\n",
		check: func(t *testing.T, evs []Event) { wantKinds(t, evs[1:], KindSideEffect) },
	},
}

// scanCase reads lines as one source with no flags.
func scanCase(t *testing.T, lines string) ([]Event, Stats) {
	t.Helper()
	return scanSource(t, ReaderSource("case.log", strings.NewReader(lines)))
}

// scanFormat reads testdata/formats/file with no flags and checks it was
// read as format.
func scanFormat(t *testing.T, file, format string) ([]Event, Stats) {
	t.Helper()
	src, err := File(filepath.Join("testdata", "formats", file))
	if err != nil {
		t.Fatal(err)
	}
	evs, st := scanSource(t, src)
	if len(st.Formats) != 1 || st.Formats[0].String() != format {
		t.Errorf("read as %v, want %s", st.Formats, format)
	}
	return evs, st
}

func scanSource(t *testing.T, src Source) ([]Event, Stats) {
	t.Helper()
	var evs []Event
	st, err := Scan(context.Background(), []Source{src}, Options{}, func(e *Event) error {
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

// TestRealSamples reads one or two lines of each format in the exact shape
// its library's documentation or test suite shows (testdata/formats/
// *.doc.*; the words are ours, the layout theirs), with no flags: the
// format is detected, every line read, the first line's time, level and
// worker as written.
func TestRealSamples(t *testing.T) {
	at := time.Date(2026, 3, 2, 10, 15, 4, 120e6, time.UTC)
	for _, c := range []struct {
		file, format string
		time         time.Time // of the first line, to the millisecond (zero: the layout has no date)
		level        string
		worker       string
	}{
		// docs.spring.io/spring-boot/reference/features/logging.html, "Log Format" (3.x)
		{"spring-boot-3.doc.log", "text (spring-boot)", at, "INFO", "main"},
		// docs.spring.io/spring-boot/docs/2.1.x/reference/html/boot-features-logging.html, "Log Format" (2.x)
		{"spring-boot-2.doc.log", "text (spring-boot)", at, "INFO", "main"},
		// logback.qos.ch/manual/layouts.html: %d is ISO 8601, "2006-10-20 14:06:49,812"; [%thread] %-5level %logger{36} - %msg
		{"logback.doc.log", "text (logback/log4j2)", at, "INFO", "main"},
		// logging.apache.org/log4j/2.x/manual/layouts.html, PatternLayout "%d{yyyy-MM-dd HH:mm:ss.SSS} [%t] %-5level %logger{36} - %msg%n"
		{"log4j2.doc.log", "text (logback/log4j2)", at, "INFO", "main"},
		// logback.qos.ch/manual/configuration.html, the console pattern "%d{HH:mm:ss.SSS} [%thread] %-5level %logger{36} - %msg%n":
		// a time of day and no date, so no time is read
		{"logback-time-of-day.doc.log", "text (logback/log4j2)", time.Time{}, "INFO", "main"},
		// docs.python.org/3/howto/logging.html, "%(asctime)s - %(name)s - %(levelname)s - %(message)s"
		{"python-asctime.doc.log", "text (python-logging)", at, "INFO", ""},
		// docs.python.org/3/howto/logging.html, basicConfig's "WARNING:root:Watch out!"
		{"python-basic.doc.log", "text (python-logging)", time.Time{}, "INFO", ""},
		// ruby-doc.org Logger::Formatter: "I, [1999-03-03T02:34:24.895701 #19074]  INFO -- Main: info."
		{"ruby-logger.doc.log", "text (ruby-logger)", at, "INFO", "4187"},
		// sidekiq/sidekiq lib/sidekiq/logger.rb, Formatters::Pretty: "<time> pid=... tid=...<context> INFO: start", elapsed= on done
		{"sidekiq.doc.log", "text (sidekiq)", at, "INFO", "bq3k"},
		// github.com/sirupsen/logrus README: time="2015-03-26T01:27:38-04:00" level=debug msg="Started observing beach" animal=walrus number=8
		{"logrus.doc.log", "logfmt", at.Add(5*time.Hour - 120*time.Millisecond), "info", ""},
		// github.com/go-kit/log README: "ts=2016-01-01T12:34:56Z caller=main.go:15 msg=hello", level= from its level package
		{"gokit.doc.log", "logfmt", at, "info", ""},
		// github.com/serilog/serilog-formatting-compact README: {"@t":"2016-06-07T03:44:57.8532799Z","@mt":"Hello, {User}","User":"nblumhardt"}
		// and RenderedCompactJsonFormatter's @m and @i
		{"clef.doc.json", "clef", at, "", ""},
		// go2docs.graylog.org/current/getting_in_log_data/gelf_format.html, the GELF payload specification's example
		{"gelf.doc.json", "gelf", at, "6", "billing-1"},
		// open-telemetry/opentelemetry-proto examples/logs.json (times and intValue as JSON numbers, every value type)
		{"otlp.doc.json", "otlp", at, "Information", "billing-1"},
		// open-telemetry/opentelemetry-java exporters/logging-otlp/src/test/resources/expected-logs.json (one ResourceLogs a line)
		{"otlp-java.doc.json", "otlp", at, "INFO", "billing-1"},
		// github.com/nhairs/python-json-logger README (JsonFormatter("%(asctime)s %(levelname)s %(name)s %(message)s"), extra=)
		{"python-json-logger.doc.json", "json", at, "INFO", ""},
		// elastic.co/guide/en/ecs-logging/python/current/installation.html (StdlibFormatter), and Spring Boot's
		// "logging.structured.format.console=ecs" example in docs.spring.io/spring-boot/reference/features/logging.html
		{"ecs.doc.json", "json", at, "info", ""},
		// docs.docker.com/engine/logging/drivers/json-file/:
		// {"log":"Log line is here\n","stream":"stdout","time":"2019-01-01T11:11:11.111111111Z"}
		{"docker.doc.json", "docker+text (message)", at, "", ""},
		// grafana.com/docs/loki/latest/send-data/promtail/stages/cri/: "2019-01-01T01:00:00.000000001Z stderr P test\ngood"
		{"cri.doc.log", "cri+text (message)", at, "", ""},
		// man 7 systemd.journal-fields and journalctl -o json (one entry a line)
		{"journald.doc.json", "journald+text (message)", at, "", "node-1/4187"},
	} {
		t.Run(c.file, func(t *testing.T) {
			got, st := scanFormat(t, c.file, c.format)
			if st.Malformed != 0 || len(got) == 0 || int64(len(got)) < st.Lines-st.Partial { // an OTLP line may hold several
				t.Fatalf("%d events of %d lines (%d partial), %d malformed %v", len(got), st.Lines, st.Partial, st.Malformed, st.Samples)
			}
			e := got[0]
			if !e.Time.Truncate(time.Millisecond).Equal(c.time) {
				t.Errorf("time %s, want %s", e.Time, c.time)
			}
			wantField(t, e, Level, c.level)
			wantField(t, e, Consumer, c.worker)
			if e.Get(Message) == "" {
				t.Errorf("no message")
			}
		})
	}
}
