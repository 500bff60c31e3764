package loggen

import (
	"bytes"
	"slices"
	"strconv"
	"strings"
	"time"
)

// The formats: the one event stream written in the shape each logging
// library, shipper or runtime writes it, every step worded as a sentence
// (msgrender.go) and the flow's fields named and placed as the format
// does (attrs.go). Shapes, as the libraries document them:
//
//	Serilog CLEF       {"@t":"2016-06-07T03:44:57.8532799Z","@mt":"Hello, {User}","User":"nblumhardt"}   (serilog-formatting-compact)
//	GELF 1.1           {"version":"1.1","host":"...","short_message":"...","timestamp":1385053862.307,"level":1,"_user_id":9001}
//	OTLP/JSON          {"resourceLogs":[{"resource":{"attributes":[...]},"scopeLogs":[{"scope":{...},"logRecords":[{...}]}]}]}
//	python-json-logger {"asctime": "2003-07-08 16:49:45,896", "levelname": "INFO", "name": "...", "message": "..."}
//	ECS (ecs-logging)  {"@timestamp":"...","log.level":"info","message":"...","ecs":{"version":"1.6.0"},"log":{"logger":"..."},...}
//	logrus text        time="2015-03-26T01:27:38-04:00" level=debug msg="Started observing beach" animal=walrus number=8
//	go-kit logfmt      ts=2016-01-01T12:34:56Z caller=main.go:15 level=info msg="..."
//	Spring Boot 3.x    2025-05-10T01:34:33.608Z  INFO 88909 --- [myapp] [           main] o.s.b.d.f.logexample.MyApplication       : ...
//	Spring Boot 2.x    2019-03-05 10:57:51.112  INFO 45469 --- [           main] org.apache.catalina.core.StandardEngine  : ...
//	logback %d         2026-12-02 09:07:50,215 [main] INFO  c.e.PaymentListener - ...   (%d [%thread] %-5level %logger{36} - %msg%n)
//	log4j2             2026-12-02 09:07:50.215 [main] INFO  c.e.PaymentListener - ...   (%d{yyyy-MM-dd HH:mm:ss.SSS} [%t] %-5level ...)
//	Python logging     2003-07-08 16:49:45,896 - payments - INFO - ...   (%(asctime)s - %(name)s - %(levelname)s - %(message)s)
//	Ruby Logger        I, [2026-12-02T09:07:50.215123 #1234]  INFO -- PaymentJob: ...
//	Sidekiq            2025-10-09T03:37:38.923Z pid=592396 tid=bojw class=ScanJob jid=81cbb05de7ee751ba0e183fd INFO: start
//	Docker json-file   {"log":"<line>\n","stream":"stdout","time":"2026-12-02T09:07:50.215731Z"}
//	Kubernetes CRI     2026-12-02T09:07:50.215731000Z stdout F <line>
//	journald export    {"__REALTIME_TIMESTAMP":"1796202470215000","_HOSTNAME":"node-1","_PID":"4242","MESSAGE":"...",...}
const (
	CLEF Dialect = "clef"
	GELF Dialect = "gelf"
	// OTLP is the collector's file exporter: one LogsData a line, each a
	// batch of records grouped by resource (worker).
	OTLP Dialect = "otlp"
	// OTLPRecord is the same exporter flushing every record on its own.
	OTLPRecord  Dialect = "otlp-record"
	PythonJSON  Dialect = "python-json-logger"
	ECSNested   Dialect = "ecs-nested"
	Logrus      Dialect = "logrus"
	GoKit       Dialect = "go-kit"
	Spring3     Dialect = "spring-boot-3"
	Spring2     Dialect = "spring-boot-2"
	LogbackText Dialect = "logback-text"
	Log4j2Text  Dialect = "log4j2-text"
	PythonText  Dialect = "python-logging"
	RubyLogger  Dialect = "ruby-logger"
	Sidekiq     Dialect = "sidekiq"
	// Docker is Docker's json-file driver around pino's lines.
	Docker Dialect = "docker"
	// CRI is a Kubernetes CRI log around Spring Boot 3's console lines.
	CRI Dialect = "cri"
	// Journald is journalctl -o json of services that print sentences.
	Journald Dialect = "journald"
)

var formats = []Dialect{CLEF, GELF, OTLP, OTLPRecord, PythonJSON, ECSNested, Logrus, GoKit, Spring3, Spring2,
	LogbackText, Log4j2Text, PythonText, RubyLogger, Sidekiq, Docker, CRI, Journald}

// Formats lists them.
func Formats() []Dialect { return slices.Clone(formats) }

// WorkerInLine reports whether d's lines say which worker wrote them when
// the whole fleet writes one file: Python's console layout names no pid
// or thread, so only a file per worker tells its workers apart.
func WorkerInLine(d Dialect) bool { return d != PythonText }

type lineWriter func(g *gen, b []byte, t time.Time, e *ev) []byte

var formatWriters = map[Dialect]lineWriter{
	CLEF: (*gen).renderCLEF, GELF: (*gen).renderGELF, PythonJSON: (*gen).renderPythonJSON, ECSNested: (*gen).renderECSNested,
	Logrus: (*gen).renderLogrus, GoKit: (*gen).renderGoKit, Spring3: (*gen).renderSpring3, Spring2: (*gen).renderSpring2,
	LogbackText: (*gen).renderLogbackText, Log4j2Text: (*gen).renderLog4j2Text, PythonText: (*gen).renderPythonText,
	RubyLogger: (*gen).renderRuby, Sidekiq: (*gen).renderSidekiq, Docker: (*gen).renderDocker, CRI: (*gen).renderCRI,
	Journald: (*gen).renderJournald,
}

// batched reports whether d writes several events a line (OTLP's
// LogsData), and how many at most.
func batched(d Dialect) (int, bool) {
	switch d {
	case OTLP:
		return 7, true
	case OTLPRecord:
		return 1, true
	}
	return 0, false
}

// release is which of two releases of the service a worker runs, in the
// formats: the later one words some steps its own way, so every wording
// shows up in every format.
func release(e *ev, d Dialect) int {
	if !slices.Contains(formats, d) {
		return 0
	}
	return workerNum(e.worker) % 2
}

// workerNum is N of "worker-N".
func workerNum(w string) int {
	n, _ := strconv.Atoi(w[strings.LastIndexByte(w, '-')+1:])
	return n
}

// The levels as each library writes them.
func upperLevel(kind string) string { return strings.ToUpper(level(kind)) }

// syslogLevel is a level as syslog numbers it (GELF, journald's
// PRIORITY): info 6, warn 4, error 3.
func syslogLevel(kind string) int { return levelNumbers[level(kind)][0] }

// otlpSeverity is OpenTelemetry's SeverityNumber: INFO 9, WARN 13, ERROR 17.
func otlpSeverity(kind string) int { return levelNumbers[level(kind)][1] }

var levelNumbers = map[string][2]int{"info": {6, 9}, "warn": {4, 13}, "error": {3, 17}}

// provider is the payment provider a message names.
func provider(f *fields) string {
	return providers[(jobTypeIndex(f.jobType)+len(f.order))%len(providers)]
}

// clefProps are the Serilog properties a template's holes name.
var clefProps = strings.NewReplacer("{order}", "{OrderId}", "{msg}", "{MessageId}", "{idem}", "{IdempotencyKey}",
	"{lock}", "{LockKey}", "{err}", "{ErrorType}", "{ms}", "{DurationMs}")

// renderCLEF is Serilog's CompactJsonFormatter: @t with .NET's seven
// fraction digits, the message template in @mt (no rendered @m), @l only
// when not Information, the properties PascalCase.
func (g *gen) renderCLEF(b []byte, t time.Time, e *ev) []byte {
	b = append(b, `{"@t":"`...)
	b = t.AppendFormat(b, "2006-01-02T15:04:05.0000000Z07:00")
	b = append(b, `","@mt":`...)
	tmpl := clefProps.Replace(phrasing(e, CLEF))
	b = strconv.AppendQuote(b, strings.ReplaceAll(tmpl, "{provider}", provider(&e.f)))
	switch level(e.kind) {
	case "error":
		b = append(b, `,"@l":"Error"`...)
	case "warn":
		b = append(b, `,"@l":"Warning"`...)
	}
	b = jsonAttrs(b, withTrace(g.fields(e, &pascalAttrs), e, "@x", dotnetTraceText), false)
	b = append(b, `,"SourceContext":"Acme.Jobs.`...)
	b = append(b, javaName(e.f.jobType)...)
	return append(b, `Consumer"}`...)
}

// renderGELF is GELF 1.1 as a GELF appender writes it: host, epoch
// seconds, a syslog level, the fields as _additional ones.
func (g *gen) renderGELF(b []byte, t time.Time, e *ev) []byte {
	b = append(b, `{"version":"1.1","host":`...)
	b = strconv.AppendQuote(b, e.worker)
	b = append(b, `,"short_message":`...)
	b = strconv.AppendQuote(b, g.sentence(e, GELF))
	b = append(b, `,"timestamp":`...)
	b = strconv.AppendFloat(b, float64(t.UnixMilli())/1e3, 'f', 3, 64)
	b = append(b, `,"level":`...)
	b = strconv.AppendInt(b, int64(syslogLevel(e.kind)), 10)
	b = jsonAttrs(b, withTrace(g.fields(e, &gelfAttrs), e, "full_message", javaTraceText), false)
	b = append(b, `,"_logger_name":"com.acme.jobs.`...)
	b = append(b, javaName(e.f.jobType)...)
	return append(b, `Consumer"}`...)
}

// renderPythonJSON is python-json-logger's JsonFormatter with
// "%(asctime)s %(levelname)s %(name)s %(message)s" and the fields passed
// as extra=, written by json.dumps (", " and ": ").
func (g *gen) renderPythonJSON(b []byte, t time.Time, e *ev) []byte {
	b = append(b, `{"asctime": "`...)
	b = t.AppendFormat(b, "2006-01-02 15:04:05,000")
	b = append(b, `", "levelname": "`...)
	b = append(b, pythonLevel(e.kind)...)
	b = append(b, `", "name": "jobs.`...)
	b = append(b, e.f.jobType...)
	b = append(b, `", "message": `...)
	b = strconv.AppendQuote(b, g.sentence(e, PythonJSON))
	n := snakeAttrs
	n[aConsumer] = "hostname"
	b = jsonAttrs(b, withTrace(g.fields(e, &n), e, "exc_info", pythonTraceText), true)
	return append(b, '}')
}

func pythonLevel(kind string) string {
	if l := upperLevel(kind); l != "WARN" {
		return l
	}
	return "WARNING"
}

// renderECSNested is ecs-logging's JSON: log.level dotted at the top,
// the rest nested (ecs, log, service, labels, and the service's own lock
// object).
func (g *gen) renderECSNested(b []byte, t time.Time, e *ev) []byte {
	b = append(b, `{"@timestamp":"`...)
	b = t.AppendFormat(b, "2006-01-02T15:04:05.000Z07:00")
	b = append(b, `","log.level":"`...)
	b = append(b, level(e.kind)...)
	b = append(b, `","message":`...)
	b = strconv.AppendQuote(b, g.sentence(e, ECSNested))
	b = append(b, `,"ecs":{"version":"1.6.0"},"log":{"logger":"jobs.`...)
	b = append(b, e.f.jobType...)
	b = append(b, `"}`...)
	as := append(g.fields(e, &ecsAttrs), attr{"service.name", "jobs", 's'})
	return append(nestedAttrs(b, withTrace(as, e, "error.stack_trace", pythonTraceText)), '}')
}

// renderLogrus is logrus' TextFormatter (no TTY, TimestampFormat set to
// milliseconds): time, level, msg, then the fields sorted by name.
func (g *gen) renderLogrus(b []byte, t time.Time, e *ev) []byte {
	b = append(b, `time="`...)
	b = t.AppendFormat(b, "2006-01-02T15:04:05.000Z07:00")
	b = append(b, `" level=`...)
	b = append(b, logrusLevel(e.kind)...)
	b = append(b, ' ')
	b = logfmtPair(b, "msg", g.sentence(e, Logrus), logrusQuotes)
	n := snakeAttrs
	n[aConsumer] = "worker"
	as := g.fields(e, &n)
	slices.SortFunc(as, func(x, y attr) int { return strings.Compare(x.key, y.key) })
	return logfmtAttrs(b, as, logrusQuotes)
}

func logrusLevel(kind string) string {
	if l := level(kind); l != "warn" {
		return l
	}
	return "warning"
}

// renderGoKit is go-kit's logfmt logger with DefaultTimestampUTC and
// DefaultCaller, the keyvals in call order.
func (g *gen) renderGoKit(b []byte, t time.Time, e *ev) []byte {
	b = append(b, "ts="...)
	b = t.UTC().AppendFormat(b, time.RFC3339Nano)
	b = append(b, " caller=consumer/"...)
	b = append(b, e.f.jobType...)
	b = append(b, ".go:"...)
	b = strconv.AppendInt(b, int64(40+len(e.kind)), 10)
	b = append(b, " level="...)
	b = append(b, level(e.kind)...)
	b = append(b, ' ')
	b = logfmtPair(b, "msg", g.sentence(e, GoKit), kitQuotes)
	return logfmtAttrs(b, g.fields(e, &camelAttrs), kitQuotes)
}

// message is a console line's message: the sentence, then the ids as
// key=value words.
func (g *gen) message(b []byte, e *ev) []byte {
	b = append(b, g.sentence(e, g.c.Dialect)...)
	return logfmtAttrs(b, g.fields(e, &textAttrs), kitQuotes)
}

// thread is the worker's listener thread as the JVM names it: the
// threads of one process's container, or in a pod its first one - every
// pod's is ntContainer#0-1.
func (g *gen) thread(w string) string {
	n := 1
	if !g.c.Pods {
		n = workerNum(w)
	}
	return "org.springframework.amqp.rabbit.RabbitListenerEndpointContainer#0-" + strconv.Itoa(n)
}

// pid is the worker's process: 1 in a pod (the container's first
// process), else one process for the fleet (threads), or one per worker
// when perProcess (Ruby's forked workers).
func (g *gen) pid(w string, perProcess bool) int {
	switch {
	case g.c.Pods:
		return 1
	case perProcess:
		return 4200 + workerNum(w)
	}
	return 4242
}

func javaLogger(jobType string) string { return "com.acme.jobs." + javaName(jobType) + "Consumer" }

// renderSpring3 is Spring Boot 3's default console layout,
// %d{yyyy-MM-dd'T'HH:mm:ss.SSSXXX} %5p PID --- [app] [%15.15t] [correlation] %-40.40logger{39} : %m,
// here of a service with tracing on (Micrometer puts each message's
// [traceId-spanId] after the thread) and no spring.application.name.
func (g *gen) renderSpring3(b []byte, t time.Time, e *ev) []byte {
	b = t.AppendFormat(b, "2006-01-02T15:04:05.000Z07:00")
	return g.springTail(b, e, "", true)
}

// renderSpring2 is Spring Boot 2's: a zone-less time, no application name.
func (g *gen) renderSpring2(b []byte, t time.Time, e *ev) []byte {
	b = t.AppendFormat(b, "2006-01-02 15:04:05.000")
	return g.springTail(b, e, "", false)
}

func (g *gen) springTail(b []byte, e *ev, app string, traced bool) []byte {
	b = append(b, ' ')
	b = padLeft(b, upperLevel(e.kind), 5)
	b = append(b, ' ')
	b = strconv.AppendInt(b, int64(g.pid(e.worker, false)), 10)
	b = append(b, " --- "...)
	b = append(b, app...)
	b = append(b, '[')
	th := g.thread(e.worker)
	b = padLeft(b, th[max(0, len(th)-15):], 15)
	b = append(b, "] "...)
	if traced {
		b = cat(b, "[", traceID(&e.f), "a3ce929d-", e.f.job[len(e.f.job)-8:], e.f.msg[len(e.f.msg)-8:], "] ")
	}
	b = padRight(b, javaLogger(e.f.jobType), 40)
	b = append(b, " : "...)
	return javaTrace(g.message(b, e), e)
}

// renderLogbackText is logback's "%d [%thread] %-5level %logger{36} -
// %msg%n" (%d is ISO 8601 with a comma).
func (g *gen) renderLogbackText(b []byte, t time.Time, e *ev) []byte {
	return g.threadLayout(b, t.AppendFormat(nil, "2006-01-02 15:04:05,000"), e)
}

// renderLog4j2Text is log4j2's "%d{yyyy-MM-dd HH:mm:ss.SSS} [%t]
// %-5level %logger{36} - %msg%n".
func (g *gen) renderLog4j2Text(b []byte, t time.Time, e *ev) []byte {
	return g.threadLayout(b, t.AppendFormat(nil, "2006-01-02 15:04:05.000"), e)
}

func (g *gen) threadLayout(b, ts []byte, e *ev) []byte {
	b = cat(append(b, ts...), " [", g.thread(e.worker), "] ")
	b = padRight(b, upperLevel(e.kind), 5)
	return javaTrace(g.message(cat(b, " ", javaLogger(e.f.jobType), " - "), e), e)
}

// renderPythonText is Python logging's "%(asctime)s - %(name)s -
// %(levelname)s - %(message)s": no pid or thread.
func (g *gen) renderPythonText(b []byte, t time.Time, e *ev) []byte {
	b = t.AppendFormat(b, "2006-01-02 15:04:05,000")
	b = g.message(cat(b, " - jobs.", e.f.jobType, " - ", pythonLevel(e.kind), " - "), e)
	if e.f.errType == "" {
		return b
	}
	return cat(b, "\n", pythonTraceText(e)) // logger.exception: the traceback follows the line
}

// renderRuby is Ruby's Logger::Formatter: "%s, [%s #%d] %5s -- %s: %s",
// one process per worker.
func (g *gen) renderRuby(b []byte, t time.Time, e *ev) []byte {
	lv := upperLevel(e.kind)
	b = append(b, lv[0], ',', ' ', '[')
	b = t.AppendFormat(b, "2006-01-02T15:04:05.000000")
	b = append(b, " #"...)
	b = strconv.AppendInt(b, int64(g.pid(e.worker, true)), 10)
	b = append(b, "] "...)
	b = padLeft(b, lv, 5)
	b = g.message(cat(b, " -- ", javaName(e.f.jobType), "Job: "), e)
	if e.f.errType == "" {
		return b
	}
	// logger.error(exception): its backtrace, a frame a line, unindented.
	return cat(b, "\n/app/jobs/", e.f.jobType, "_job.rb:88:in `perform'",
		"\n/usr/local/bundle/gems/sidekiq-7.2.4/lib/sidekiq/processor.rb:202:in `execute_job'")
}

// renderSidekiq is Sidekiq's pretty formatter: time, pid, tid, the job's
// context, level, message; one process, a thread per worker.
func (g *gen) renderSidekiq(b []byte, t time.Time, e *ev) []byte {
	b = t.AppendFormat(b, "2006-01-02T15:04:05.000Z07:00")
	b = append(b, " pid="...)
	b = strconv.AppendInt(b, int64(g.pid(e.worker, false)), 10)
	b = append(b, " tid="...)
	b = strconv.AppendInt(b, int64(46656+workerNum(e.worker)*7919), 36)
	b = cat(b, " class=", javaName(e.f.jobType), "Job jid=", e.f.job, " ", upperLevel(e.kind), ": ")
	return g.message(b, e)
}

// renderDocker is Docker's json-file driver: pino's line, with its
// newline, as a JSON string, the stream and the daemon's time.
func (g *gen) renderDocker(b []byte, t time.Time, e *ev) []byte {
	inner := g.renderPino(g.inner[:0], t, e)
	g.inner = append(inner, '\n')
	b = append(b, `{"log":`...)
	b = strconv.AppendQuote(b, string(g.inner))
	b = append(b, `,"stream":"stdout","time":"`...)
	b = t.Add(shipLag).UTC().AppendFormat(b, time.RFC3339Nano)
	return append(b, `"}`...)
}

// shipLag is how long after a line a runtime stamps it.
const shipLag = 183 * time.Microsecond

// renderCRI is the kubelet's CRI log line around Spring Boot 3's, of a
// service named by spring.application.name, without tracing; each line of
// a stack trace is a CRI line of its own.
func (g *gen) renderCRI(b []byte, t time.Time, e *ev) []byte {
	inner := t.AppendFormat(g.inner[:0], "2006-01-02T15:04:05.000Z07:00")
	g.inner = g.springTail(inner, e, "[jobs-worker] ", false)
	for i, l := range bytes.Split(g.inner, []byte{'\n'}) {
		if i > 0 {
			b = append(b, '\n')
		}
		b = t.Add(shipLag).UTC().AppendFormat(b, time.RFC3339Nano)
		b = append(append(b, " stdout F "...), l...)
	}
	return b
}

// javaTrace appends the stack trace a Java service logs under a failed
// line (log.error(msg, exception)).
func javaTrace(b []byte, e *ev) []byte {
	if e.f.errType == "" {
		return b
	}
	return cat(b, "\n", javaTraceText(e))
}

// javaTraceText is a Java stack trace: the exception, two frames, the rest
// omitted.
func javaTraceText(e *ev) string {
	return javaExceptions[e.f.errType] + "\n\tat " + javaLogger(e.f.jobType) + ".handle(" + javaName(e.f.jobType) + "Consumer.java:88)" +
		"\n\tat org.springframework.amqp.rabbit.listener.AbstractMessageListenerContainer" +
		".doInvokeListener(AbstractMessageListenerContainer.java:1682)" +
		"\n\t... 12 common frames omitted"
}

// pythonTraceText is the traceback logger.exception writes.
func pythonTraceText(e *ev) string {
	return "Traceback (most recent call last):\n  File \"/app/jobs/" + e.f.jobType + ".py\", line 88, in handle\n" +
		"    provider.submit(order)\n" + errorClass(e.f.errType) + ": upstream call failed"
}

// withTrace adds a failed line's stack trace to its fields as key.
func withTrace(as []attr, e *ev, key string, text func(*ev) string) []attr {
	if e.f.errType == "" {
		return as
	}
	return append(as, attr{key, text(e), 's'})
}

var javaExceptions = map[string]string{
	"TimeoutError":        "java.util.concurrent.TimeoutException: provider did not answer in 5000 ms",
	"ConnectionReset":     "java.net.SocketException: Connection reset",
	"UpstreamUnavailable": "org.springframework.web.client.HttpServerErrorException$ServiceUnavailable: 503 Service Unavailable",
	"ValidationError":     "jakarta.validation.ConstraintViolationException: amount: must be greater than 0",
}

// dotnetTraceText is an exception as Serilog writes it in @x.
func dotnetTraceText(e *ev) string {
	return "System." + errorClass(e.f.errType) + ": upstream call failed\n   at Acme.Jobs." + javaName(e.f.jobType) +
		"Consumer.Handle(Message message) in /src/Jobs/" + javaName(e.f.jobType) + "Consumer.cs:line 88"
}

// errorClass is an error type as a Python exception class.
func errorClass(t string) string {
	if strings.HasSuffix(t, "Error") {
		return t
	}
	return t + "Error"
}

// renderJournald is one entry of journalctl -o json: the sentence in
// MESSAGE, the journal's time in microseconds, host and pid (one host's
// template units, or a host per worker in pods).
func (g *gen) renderJournald(b []byte, t time.Time, e *ev) []byte {
	host := "node-1"
	if g.c.Pods {
		host = e.worker
	}
	us := t.Add(shipLag).UnixMicro()
	b = append(b, `{"__REALTIME_TIMESTAMP":"`...)
	b = strconv.AppendInt(b, us, 10)
	b = append(b, `","__MONOTONIC_TIMESTAMP":"`...)
	b = strconv.AppendInt(b, us-g.c.Start.UnixMicro()+86_400_000_000, 10)
	b = append(b, `","_BOOT_ID":"9f8a1c2b3d4e5f60718293a4b5c6d7e8","PRIORITY":"`...)
	b = strconv.AppendInt(b, int64(syslogLevel(e.kind)), 10)
	b = append(b, `","SYSLOG_FACILITY":"3","SYSLOG_IDENTIFIER":"jobs-worker","_TRANSPORT":"stdout",`...)
	b = append(b, `"_UID":"998","_GID":"998","_COMM":"jobs-worker","_PID":"`...)
	b = strconv.AppendInt(b, int64(800+workerNum(e.worker)), 10)
	b = append(b, `","_SYSTEMD_UNIT":"jobs-worker@`...)
	b = strconv.AppendInt(b, int64(workerNum(e.worker)), 10)
	b = append(b, `.service","_HOSTNAME":`...)
	b = strconv.AppendQuote(b, host)
	b = append(b, `,"MESSAGE":`...)
	b = strconv.AppendQuote(b, string(g.message(g.inner[:0], e)))
	return append(b, '}')
}

// renderOTLP writes a batch of events as one LogsData line: a
// ResourceLogs per worker (service.instance.id), in the order each first
// appears, its records in time order.
func (g *gen) renderOTLP(b []byte, evs []*ev) []byte {
	b = append(b, `{"resourceLogs":[`...)
	for i := 0; i < len(evs); {
		w := evs[i].worker
		j := i
		for j < len(evs) && evs[j].worker == w {
			j++
		}
		if i > 0 {
			b = append(b, ',')
		}
		b = append(b, `{"resource":{"attributes":`...)
		b = otlpAttrs(b, []attr{{"service.name", "jobs-worker", 's'}, {"service.instance.id", w, 's'}, {"telemetry.sdk.language", "java", 's'}})
		b = append(b, `},"scopeLogs":[{"scope":{"name":"com.acme.jobs"},"logRecords":[`...)
		for k, e := range evs[i:j] {
			if k > 0 {
				b = append(b, ',')
			}
			b = g.otlpRecord(b, e)
		}
		b = append(b, `]}]}`...)
		i = j
	}
	return append(b, "]}\n"...)
}

// otlpRecord is one LogRecord: times in nanoseconds as strings, the
// severity, the sentence as a string body, the fields as attributes.
func (g *gen) otlpRecord(b []byte, e *ev) []byte {
	t := e.t.Add(g.skew[e.worker])
	b = append(b, `{"timeUnixNano":"`...)
	b = strconv.AppendInt(b, t.UnixNano(), 10)
	b = append(b, `","observedTimeUnixNano":"`...)
	b = strconv.AppendInt(b, t.Add(shipLag).UnixNano(), 10)
	b = append(b, `","severityNumber":`...)
	b = strconv.AppendInt(b, int64(otlpSeverity(e.kind)), 10)
	b = append(b, `,"severityText":"`...)
	b = append(b, upperLevel(e.kind)...)
	b = append(b, `","body":{"stringValue":`...)
	b = strconv.AppendQuote(b, g.sentence(e, g.c.Dialect))
	b = append(b, `},"attributes":`...)
	b = otlpAttrs(b, g.fields(e, &otelAttrs))
	b = append(b, `,"traceId":"`...)
	b = append(b, traceID(&e.f)...)
	b = append(b, `a3ce929d","spanId":"`...)
	b = append(b, e.f.job[len(e.f.job)-8:]...)
	b = append(b, e.f.msg[len(e.f.msg)-8:]...)
	return append(b, `"}`...)
}

// byWorker orders a batch as a LogsData holds it: grouped by worker in
// the order each first appears, each worker's events in time order.
func byWorker(evs []*ev) []*ev {
	var order []string
	for _, e := range evs {
		if !slices.Contains(order, e.worker) {
			order = append(order, e.worker)
		}
	}
	slices.SortStableFunc(evs, func(x, y *ev) int {
		return slices.Index(order, x.worker) - slices.Index(order, y.worker)
	})
	return evs
}

// cat appends the parts.
func cat(b []byte, parts ...string) []byte {
	for _, p := range parts {
		b = append(b, p...)
	}
	return b
}

func padLeft(b []byte, s string, n int) []byte {
	for i := len(s); i < n; i++ {
		b = append(b, ' ')
	}
	return append(b, s...)
}

func padRight(b []byte, s string, n int) []byte {
	b = append(b, s...)
	for i := len(s); i < n; i++ {
		b = append(b, ' ')
	}
	return b
}
