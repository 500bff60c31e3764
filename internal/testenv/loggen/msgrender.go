package loggen

import (
	"strconv"
	"strings"
	"time"
)

// The message-only dialects write what services running these libraries
// write: the step only in a sentence, the flow's fields beside it under
// the library's usual keys. Shapes, as the libraries document them:
//
//	slog JSONHandler  {"time":"2022-11-08T15:28:26.000000000-05:00","level":"INFO","msg":"hello","count":3}
//	zap production    {"level":"info","ts":1607095287.638658,"caller":"log-demo/zap_demo.go:14","msg":"failed to fetch URL",
//	                  "url":"...","attempt":3}
//	logstash-logback  {"@timestamp":"...","@version":"1","message":"...","logger_name":"...","thread_name":"...","level":"INFO",
//	                  "level_value":20000, MDC...}
//	Spring Boot ECS   {"@timestamp":"...","log":{"level":"INFO","logger":"..."},"process":{"pid":39599,"thread":{"name":"main"}},
//	                  "service":{"name":"simple"},"message":"...","ecs":{"version":"8.11"}, MDC...}
//	pino              {"level":30,"time":1643365551573,"pid":5673,"hostname":"Kreig","msg":"Hello, world!"}
//	structlog JSON    {"event": "user logged in", "level": "info", "timestamp": "...", ...}
//
// The words vary by library (Go and Node services log lower case, Java
// ones capitalised sentences with the ids in them) and by job type (each
// handler was written by someone else), as in a real fleet.

// phrasings are the ways a step is worded: {order}, {msg}, {idem},
// {lock}, {err}, {ms} and {provider} are filled in. A check is worded by
// what it found and where it looked.
var phrasings = map[string][]string{
	"received": {
		"received message {msg} for order {order}",
		"message received",
		"processing message {msg}",
		"got delivery {msg} for order {order}",
	},
	"lock_acquired": {
		"lock acquired {lock}",
		"acquired lock for order {order}",
		"lock {lock} acquired",
		"obtained lock {lock}",
	},
	"lock_failed": {
		"lock busy {lock}, requeueing",
		"could not acquire lock for order {order}: held by another worker",
		"failed to acquire lock {lock}",
		"lock {lock} already held by another worker",
	},
	"lock_released": {
		"lock released {lock}",
		"released lock for order {order}",
		"unlocked {lock}",
		"lock released",
	},
	"lock_lost": {
		"failed to release lock {lock}: token mismatch",
		"lock expired for order {order} while still working",
		"lost lock {lock}",
		"lock lost",
	},
	"check miss db": {
		"idempotency check for {idem}: not found",
		"checked database for {idem}: not processed yet",
		"status lookup {idem} in postgres: not found",
		"idempotency key {idem} not found in db, proceeding",
	},
	"check miss cache": {
		"status cache says {idem} not processed yet, proceeding",
		"cache miss for {idem}",
		"read status from cache: {idem} not processed",
		"status from redis for {idem}: not found",
	},
	"duplicate_caught": {
		"duplicate skipped: {idem} already processed",
		"already processed {idem}, skipping",
		"idempotency hit for {idem}, skipping",
		"duplicate delivery of {msg} ignored",
	},
	"claimed": {
		"reserved {idem} as processing",
		"claimed idempotency key {idem}",
		"marked {idem} as processing",
		"inserted idempotency key {idem}",
	},
	"side_effect payment": {
		"side_effect: payment capture sent for order, provider={provider} see span for details",
		"charged card for order {order}",
		"payment captured for order {order}",
		"card charged, order {order}",
	},
	"side_effect email": {
		"email sent for order {order}",
		"sent email to customer of order {order}",
		"side effect: confirmation email sent",
		"notification sent for order {order}",
	},
	"side_effect settlement": {
		"settlement posted for order {order}",
		"side effect: settlement posted for {order}",
		"posted settlement for order {order}",
		"transfer sent for order {order}",
	},
	"committed": {
		"committed status succeeded for {idem}",
		"marked {idem} as succeeded",
		"status saved: succeeded for {idem}",
		"result saved for {idem}",
	},
	"acked": {
		"acked message {msg}",
		"ack sent",
		"message {msg} acknowledged",
		"acked",
	},
	"retry": {
		"retry scheduled for message {msg}",
		"requeued {msg} with backoff",
		"will retry message {msg}",
		"retrying in 2s",
	},
	"failed": {
		"handler failed: {err}",
		"processing failed for order {order}: {err}",
		"error processing message {msg}: {err}",
		"job failed: {err}",
	},
	"dead_lettered": {
		"dead-lettered message {msg}",
		"moved to dlq after 3 attempts",
		"retries exhausted for message {msg}",
		"sent to dlq: {msg}",
	},
	"crash": {
		"worker crashed: killed by oom",
		"panic: runtime error: invalid memory address",
		"worker died unexpectedly",
		"worker crashed",
	},
	"completed": {
		"job completed in {ms}ms",
		"done",
		"finished processing order {order}",
		"job done",
	},
}

// dialectWords shifts the phrasing per library, so each one words a step
// its own way.
var dialectWords = map[Dialect]int{SlogMsg: 0, Zap: 1, Logback: 2, ECS: 3, Pino: 1, Structlog: 2, Logstash: 0,
	CLEF: 0, GELF: 1, OTLP: 2, OTLPRecord: 3, PythonJSON: 0, ECSNested: 1, Logrus: 2, GoKit: 3, Spring3: 0, Spring2: 1,
	LogbackText: 2, Log4j2Text: 3, PythonText: 0, RubyLogger: 1, Sidekiq: 2, CRI: 0, Journald: 3}

// capitalised are the dialects of Java and .NET services, which write
// sentences.
var capitalised = map[Dialect]bool{Logback: true, ECS: true, CLEF: true, GELF: true, ECSNested: true, Spring3: true, Spring2: true,
	LogbackText: true, Log4j2Text: true, CRI: true}

var providers = []string{"stripe", "adyen", "braintree"}

// sentence words step e for dialect d.
func (g *gen) sentence(e *ev, d Dialect) string {
	f := &e.f
	jt := jobTypeIndex(f.jobType)
	r := strings.NewReplacer("{order}", f.order, "{msg}", f.msg, "{idem}", f.idem, "{lock}", f.lockKey, "{err}", f.errType,
		"{ms}", strconv.Itoa(f.durMs), "{provider}", providers[(jt+len(f.order))%len(providers)])
	return r.Replace(phrasing(e, d))
}

// phrasing is the way dialect d words step e, with its {placeholders}:
// one per library and job type (each handler was written by someone
// else) and, in the formats, per release of the service (formats.go).
func phrasing(e *ev, d Dialect) string {
	f := &e.f
	key := e.kind
	switch e.kind {
	case "idempotency_check":
		key = "check miss db"
		if f.source == "cache" {
			key = "check miss cache"
		}
	case "side_effect":
		key = "side_effect " + f.jobType
	}
	ways := phrasings[key]
	if len(ways) == 0 {
		return strings.ReplaceAll(e.kind, "_", " ")
	}
	w := ways[(dialectWords[d]+jobTypeIndex(f.jobType)+release(e, d))%len(ways)]
	if capitalised[d] {
		w = strings.ToUpper(w[:1]) + w[1:] // Java and .NET services write sentences
	}
	return w
}

func jobTypeIndex(jt string) int {
	for i, t := range jobTypes {
		if t == jt {
			return i
		}
	}
	return 0
}

// renderSlogMsg is slog's JSONHandler with groups, the step in "msg".
func (g *gen) renderSlogMsg(b []byte, t time.Time, e *ev) []byte {
	f := &e.f
	b = append(b, `{"time":"`...)
	b = t.AppendFormat(b, time.RFC3339Nano)
	b = append(b, '"')
	b = str(b, "level", strings.ToUpper(level(e.kind)))
	b = str(b, "msg", g.sentence(e, SlogMsg))
	b = str(b, "worker", e.worker)
	b = append(b, `,"job":{"id":"`...)
	b = append(b, f.job...)
	b = append(b, '"')
	b = str(b, "type", f.jobType)
	b = append(b, `},"order":{"id":"`...)
	b = append(b, f.order...)
	b = append(b, `"},"messaging":{"message":{"id":"`...)
	b = append(b, f.msg...)
	b = append(b, `"}}`...)
	b = str(b, "idempotency_key", f.idem)
	b = g.lockGroup(b, e)
	b = num(b, "attempt", f.attempt)
	b = boolean(b, "redelivered", f.redelivered)
	b = str(b, "error_type", f.errType)
	if f.durMs > 0 {
		b = num(b, "duration", f.durMs*1e6)
	}
	b = str(b, "trace_id", traceID(f))
	b = g.pad(b, "note")
	return append(b, '}')
}

// lockGroup writes slog's "lock" group on lock lines.
func (g *gen) lockGroup(b []byte, e *ev) []byte {
	f := &e.f
	if !strings.HasPrefix(e.kind, "lock") {
		return b
	}
	b = append(b, `,"lock":{"key":"`...)
	b = append(b, f.lockKey...)
	b = append(b, '"')
	b = str(b, "token", f.lockToken())
	if f.ttl > 0 {
		b = num(b, "ttl", f.ttl*1e6)
	}
	return append(b, '}')
}

// renderZap is zap's production encoder: level, epoch-seconds ts, caller,
// msg, then the fields in snake_case.
func (g *gen) renderZap(b []byte, t time.Time, e *ev) []byte {
	f := &e.f
	b = append(b, `{"level":"`...)
	b = append(b, level(e.kind)...)
	b = append(b, `","ts":`...)
	b = strconv.AppendFloat(b, float64(t.UnixMicro())/1e6, 'f', 6, 64)
	b = str(b, "caller", "consumer/"+f.jobType+".go:"+strconv.Itoa(40+len(e.kind)))
	b = str(b, "msg", g.sentence(e, Zap))
	b = g.snakeFields(b, e, f.attempt)
	b = g.pad(b, "note")
	return append(b, '}')
}

// snakeFields are the flow's fields as Go and Python services name them.
func (g *gen) snakeFields(b []byte, e *ev, attempt int) []byte {
	f := &e.f
	b = str(b, "job_id", f.job)
	b = str(b, "message_id", f.msg)
	b = str(b, "order_id", f.order)
	b = str(b, "job_type", f.jobType)
	b = str(b, "idempotency_key", f.idem)
	if strings.HasPrefix(e.kind, "lock") {
		b = str(b, "lock_key", f.lockKey)
		b = str(b, "lock_token", f.lockToken())
	}
	if f.ttl > 0 {
		b = num(b, "lock_ttl_ms", f.ttl)
	}
	b = num(b, "attempt", attempt)
	b = boolean(b, "redelivered", f.redelivered)
	b = str(b, "worker_id", e.worker)
	b = str(b, "error_type", f.errType)
	if f.durMs > 0 {
		b = num(b, "duration_ms", f.durMs)
	}
	return str(b, "trace_id", traceID(f))
}

// renderLogback is logstash-logback-encoder's default JSON with the MDC at
// the top level (its default), values as strings.
func (g *gen) renderLogback(b []byte, t time.Time, e *ev) []byte {
	f := &e.f
	b = append(b, `{"@timestamp":"`...)
	b = t.AppendFormat(b, "2006-01-02T15:04:05.000-07:00")
	b = append(b, `","@version":"1"`...)
	b = str(b, "message", g.sentence(e, Logback))
	b = str(b, "logger_name", "com.acme.jobs."+javaName(f.jobType)+"Consumer")
	b = str(b, "thread_name", "org.springframework.amqp.rabbit.RabbitListenerEndpointContainer#0-1")
	lv := strings.ToUpper(level(e.kind))
	b = str(b, "level", lv)
	b = num(b, "level_value", levelValue(lv))
	b = g.javaMDC(b, e)
	b = g.pad(b, "stack_hash")
	return append(b, '}')
}

// javaMDC is the MDC a Spring service puts its ids in (strings).
func (g *gen) javaMDC(b []byte, e *ev) []byte {
	f := &e.f
	b = str(b, "jobId", f.job)
	b = str(b, "messageId", f.msg)
	b = str(b, "orderId", f.order)
	b = str(b, "jobType", f.jobType)
	b = str(b, "idempotencyKey", f.idem)
	if strings.HasPrefix(e.kind, "lock") {
		b = str(b, "lockKey", f.lockKey)
		b = str(b, "lockToken", f.lockToken())
	}
	if f.ttl > 0 {
		b = str(b, "lockTtlMs", strconv.Itoa(f.ttl))
	}
	b = str(b, "attempt", strconv.Itoa(f.attempt))
	b = str(b, "redelivered", strconv.FormatBool(f.redelivered))
	b = str(b, "consumerInstanceId", e.worker)
	b = str(b, "errorType", f.errType)
	if f.durMs > 0 {
		b = str(b, "durationMs", strconv.Itoa(f.durMs))
	}
	return str(b, "traceId", traceID(f))
}

// renderECS is Spring Boot's structured logging in the ECS format
// (nested since 3.5), plus the MDC.
func (g *gen) renderECS(b []byte, t time.Time, e *ev) []byte {
	f := &e.f
	b = append(b, `{"@timestamp":"`...)
	b = t.AppendFormat(b, "2006-01-02T15:04:05.000000000Z07:00")
	b = append(b, `","log":{"level":"`...)
	b = append(b, strings.ToUpper(level(e.kind))...)
	b = append(b, `","logger":"com.acme.jobs.`...)
	b = append(b, javaName(f.jobType)...)
	b = append(b, `Consumer"},"process":{"pid":39599,"thread":{"name":"rabbit-consumer-2"}},"service":{"name":"`...)
	b = append(b, f.jobType...)
	b = append(b, `-service","node":{"name":"`...)
	b = append(b, e.worker...)
	b = append(b, `"}}`...)
	b = str(b, "message", g.sentence(e, ECS))
	b = append(b, `,"ecs":{"version":"8.11"}`...)
	b = g.javaMDC(b, e)
	b = g.pad(b, "note")
	return append(b, '}')
}

// renderPino is pino's JSON: numeric level, epoch milliseconds, pid and
// hostname, msg; attempts counted from 0 as Node queue libraries do.
func (g *gen) renderPino(b []byte, t time.Time, e *ev) []byte {
	f := &e.f
	b = append(b, `{"level":`...)
	b = strconv.AppendInt(b, pinoLevel(level(e.kind)), 10)
	b = append(b, `,"time":`...)
	b = strconv.AppendInt(b, t.UnixMilli(), 10)
	b = append(b, `,"pid":4242`...)
	b = str(b, "hostname", e.worker)
	b = str(b, "msg", g.sentence(e, Pino))
	b = str(b, "jobId", f.job)
	b = str(b, "messageId", f.msg)
	b = str(b, "orderId", f.order)
	b = str(b, "queue", f.jobType)
	b = str(b, "idempotencyKey", f.idem)
	if strings.HasPrefix(e.kind, "lock") {
		b = str(b, "lockKey", f.lockKey)
		b = str(b, "lockToken", f.lockToken())
	}
	if f.ttl > 0 {
		b = num(b, "lockTtlMs", f.ttl)
	}
	b = num(b, "attempt", f.attempt-1)
	b = str(b, "errorType", f.errType)
	if f.durMs > 0 {
		b = num(b, "durationMs", f.durMs)
	}
	b = g.pad(b, "note")
	return append(b, '}')
}

// renderStructlog is structlog's JSONRenderer after add_log_level and
// TimeStamper(fmt="iso"): the sentence is "event"; 0-based retries.
func (g *gen) renderStructlog(b []byte, t time.Time, e *ev) []byte {
	b = append(b, `{"event":"`...)
	b = append(b, g.sentence(e, Structlog)...)
	b = append(b, '"')
	b = str(b, "level", level(e.kind))
	b = str(b, "timestamp", t.UTC().Format("2006-01-02T15:04:05.000000Z"))
	b = g.snakeFields(b, e, e.f.attempt-1)
	b = g.pad(b, "note")
	return append(b, '}')
}

func javaName(s string) string { return strings.ToUpper(s[:1]) + s[1:] }

func levelValue(l string) int {
	switch l {
	case "ERROR":
		return 40000
	case "WARN":
		return 30000
	}
	return 20000
}

func pinoLevel(l string) int64 {
	switch l {
	case "error":
		return 50
	case "warn":
		return 40
	}
	return 30
}

// traceID is a per-message trace id, the kind of other field every line
// carries in a real fleet.
func traceID(f *fields) string {
	return "4bf92f3577b34da6" + strings.TrimPrefix(f.msg, "msg-")
}
