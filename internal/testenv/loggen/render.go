package loggen

import (
	"strconv"
	"strings"
	"time"
)

// render appends one JSON line for e in the configured dialect. Values
// are plain ASCII, so they are written without escaping.
func (g *gen) render(b []byte, e *ev) []byte {
	t := e.t.Add(g.skew[e.worker])
	if w, ok := formatWriters[g.c.Dialect]; ok {
		return append(w(g, b, t, e), '\n')
	}
	switch g.c.Dialect {
	case Snake:
		b = g.renderSnake(b, t, e)
	case Logstash:
		b = g.renderLogstash(b, t, e)
	case Slog:
		b = g.renderSlog(b, t, e)
	case SlogMsg:
		b = g.renderSlogMsg(b, t, e)
	case Zap:
		b = g.renderZap(b, t, e)
	case Logback:
		b = g.renderLogback(b, t, e)
	case ECS:
		b = g.renderECS(b, t, e)
	case Pino:
		b = g.renderPino(b, t, e)
	case Structlog:
		b = g.renderStructlog(b, t, e)
	case CamelMsg:
		b = g.renderCamelMsg(b, t, e)
	default:
		b = g.renderCamel(b, t, e)
	}
	return append(b, '\n')
}

func str(b []byte, k, v string) []byte {
	if v == "" {
		return b
	}
	b = append(b, ',', '"')
	b = append(b, k...)
	b = append(b, '"', ':', '"')
	b = append(b, v...)
	return append(b, '"')
}

func num(b []byte, k string, v int) []byte {
	b = append(b, ',', '"')
	b = append(b, k...)
	b = append(b, '"', ':')
	return strconv.AppendInt(b, int64(v), 10)
}

func boolean(b []byte, k string, v bool) []byte {
	b = append(b, ',', '"')
	b = append(b, k...)
	b = append(b, '"', ':')
	return strconv.AppendBool(b, v)
}

func (g *gen) pad(b []byte, k string) []byte {
	if g.c.Pad <= 0 {
		return b
	}
	b = append(b, ',', '"')
	b = append(b, k...)
	b = append(b, '"', ':', '"')
	for i := 0; i < g.c.Pad; i++ {
		b = append(b, 'a'+byte(i%26))
	}
	return append(b, '"')
}

func level(kind string) string {
	switch kind {
	case "failed", "crash", "dead_lettered":
		return "error"
	case "lock_failed", "retry":
		return "warn"
	}
	return "info"
}

// token returns the lock token to log: none for a plain DEL.
func (f *fields) lockToken() string {
	if f.noToken {
		return ""
	}
	return f.token
}

// flatNames are a flat dialect's field names.
type flatNames struct {
	job, msg, order, jobType, idem, lockKey, lockToken, ttl, consumer, source, errType, dur string
}

var (
	camelNames = flatNames{"jobId", "messageId", "orderId", "jobType", "idempotencyKey", "lockKey", "lockToken", "lockTtlMs",
		"consumerInstanceId", "checkSource", "errorType", "durationMs"}
	snakeNames = flatNames{"job_id", "message_id", "order_id", "job_type", "idempotency_key", "lock_key", "lock_token", "lock_ttl_ms",
		"consumer_instance_id", "check_source", "error_type", "duration_ms"}
)

func (g *gen) renderCamel(b []byte, t time.Time, e *ev) []byte {
	b = append(b, `{"ts":"`...)
	b = t.AppendFormat(b, "2006-01-02T15:04:05.000Z07:00")
	b = append(b, '"')
	b = str(b, "level", level(e.kind))
	b = str(b, "event", e.kind)
	return g.flatFields(b, e, &camelNames)
}

// renderCamelMsg is Camel with the event only in a message.
func (g *gen) renderCamelMsg(b []byte, t time.Time, e *ev) []byte {
	b = append(b, `{"ts":"`...)
	b = t.AppendFormat(b, "2006-01-02T15:04:05.000Z07:00")
	b = append(b, '"')
	b = str(b, "level", level(e.kind))
	what := "step recorded"
	if e.kind == "side_effect" {
		what = e.f.jobType + " capture sent"
	}
	b = append(b, `,"msg":"`...)
	b = append(b, e.kind...)
	b = append(b, ": "...)
	b = append(b, what...)
	b = append(b, " for order, provider="...)
	b = append(b, providers[len(e.f.order)%len(providers)]...)
	b = append(b, ` see span for details"`...)
	return g.flatFields(b, e, &camelNames)
}

// renderSnake is zap's production layout: epoch-seconds "ts", "msg",
// snake_case fields.
func (g *gen) renderSnake(b []byte, t time.Time, e *ev) []byte {
	b = append(b, `{"level":"`...)
	b = append(b, level(e.kind)...)
	b = append(b, `","ts":`...)
	b = strconv.AppendFloat(b, float64(t.UnixMilli())/1e3, 'f', 3, 64)
	b = str(b, "caller", "worker/handler.go:88")
	b = str(b, "msg", strings.ReplaceAll(e.kind, "_", " "))
	b = str(b, "event", e.kind)
	return g.flatFields(b, e, &snakeNames)
}

// flatFields writes the flow's fields at the top level and closes the line.
func (g *gen) flatFields(b []byte, e *ev, n *flatNames) []byte {
	f := &e.f
	b = str(b, n.job, f.job)
	b = str(b, n.msg, f.msg)
	b = str(b, n.order, f.order)
	b = str(b, n.jobType, f.jobType)
	b = str(b, n.idem, f.idem)
	if strings.HasPrefix(e.kind, "lock") {
		b = str(b, n.lockKey, f.lockKey)
		b = str(b, n.lockToken, f.lockToken())
	}
	if f.ttl > 0 {
		b = num(b, n.ttl, f.ttl)
	}
	b = num(b, "attempt", f.attempt)
	b = boolean(b, "redelivered", f.redelivered)
	b = str(b, n.consumer, e.worker)
	b = str(b, "result", f.result)
	b = str(b, n.source, f.source)
	b = str(b, n.errType, f.errType)
	if f.durMs > 0 {
		b = num(b, n.dur, f.durMs)
	}
	b = g.pad(b, "note")
	return append(b, '}')
}

// renderLogstash is Spring Boot's logstash-logback-encoder: @timestamp,
// the event only in the message text, MDC nested under "mdc" as strings,
// the host in HOSTNAME.
func (g *gen) renderLogstash(b []byte, t time.Time, e *ev) []byte {
	f := &e.f
	b = append(b, `{"@timestamp":"`...)
	b = t.AppendFormat(b, "2006-01-02T15:04:05.000-07:00")
	b = append(b, `","@version":"1"`...)
	b = str(b, "message", logstashMessage(e))
	b = str(b, "logger_name", "com.acme.jobs."+strings.ToUpper(f.jobType[:1])+f.jobType[1:]+"Worker")
	b = str(b, "thread_name", "amqp-consumer-3")
	b = str(b, "level", strings.ToUpper(level(e.kind)))
	b = str(b, "HOSTNAME", e.worker)
	b = append(b, `,"mdc":{"jobId":"`...)
	b = append(b, f.job...)
	b = append(b, '"')
	b = str(b, "messaging.message.id", f.msg)
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
	b = str(b, "dedupResult", f.result)
	b = str(b, "dedupSource", f.source)
	b = str(b, "errorType", f.errType)
	if f.durMs > 0 {
		b = str(b, "durationMs", strconv.Itoa(f.durMs))
	}
	b = append(b, '}')
	b = g.pad(b, "stack_hash")
	return append(b, '}')
}

func logstashMessage(e *ev) string {
	f := &e.f
	switch e.kind {
	case "received":
		return "Received message " + f.msg + " for order " + f.order
	case "lock_acquired":
		return "Lock acquired " + f.lockKey
	case "lock_failed":
		return "Lock busy " + f.lockKey + ", requeueing"
	case "lock_released":
		return "Lock released " + f.lockKey
	case "lock_lost":
		return "Failed to release lock " + f.lockKey + ": token mismatch"
	case "idempotency_check":
		return "Idempotency check for " + f.idem
	case "duplicate_caught":
		return "Duplicate skipped: " + f.idem + " already processed"
	case "claimed":
		return "Reserved " + f.idem + " as PROCESSING"
	case "side_effect":
		switch f.jobType {
		case "payment":
			return "Charged payment for order " + f.order
		case "email":
			return "Email sent for order " + f.order
		}
		return "Side effect: settlement posted for order " + f.order
	case "committed":
		return "Committed status SUCCEEDED for " + f.idem
	case "acked":
		return "Acked message " + f.msg
	case "retry":
		return "Retry scheduled for message " + f.msg
	case "failed":
		return "Handler failed: " + f.errType
	case "dead_lettered":
		return "Dead-lettered message " + f.msg
	case "crash":
		return "Worker crashed: killed by OOM"
	case "completed":
		return "Job completed"
	}
	return e.kind
}

// renderSlog is Go log/slog's JSON handler with groups: the event is the
// message, durations are nanoseconds.
func (g *gen) renderSlog(b []byte, t time.Time, e *ev) []byte {
	f := &e.f
	b = append(b, `{"time":"`...)
	b = t.AppendFormat(b, time.RFC3339Nano)
	b = append(b, '"')
	b = str(b, "level", strings.ToUpper(level(e.kind)))
	b = str(b, "msg", e.kind)
	b = str(b, "worker", e.worker)
	b = append(b, `,"job":{"id":"`...)
	b = append(b, f.job...)
	b = append(b, '"')
	b = str(b, "type", f.jobType)
	b = append(b, `},"order":{"id":"`...)
	b = append(b, f.order...)
	b = append(b, `"}`...)
	b = append(b, `,"messaging":{"message":{"id":"`...)
	b = append(b, f.msg...)
	b = append(b, `"}}`...)
	b = str(b, "idempotency_key", f.idem)
	if strings.HasPrefix(e.kind, "lock") {
		b = append(b, `,"lock":{"key":"`...)
		b = append(b, f.lockKey...)
		b = append(b, '"')
		b = str(b, "token", f.lockToken())
		if f.ttl > 0 {
			b = num(b, "ttl", f.ttl*1e6)
		}
		b = append(b, '}')
	}
	b = num(b, "attempt", f.attempt)
	b = boolean(b, "redelivered", f.redelivered)
	b = str(b, "result", f.result)
	b = str(b, "source", f.source)
	b = str(b, "error_type", f.errType)
	if f.durMs > 0 {
		b = num(b, "duration", f.durMs*1e6)
	}
	b = g.pad(b, "note")
	return append(b, '}')
}
