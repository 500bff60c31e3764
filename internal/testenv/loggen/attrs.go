package loggen

import (
	"slices"
	"strconv"
	"strings"
)

// The formats (formats.go) write one list of the flow's fields per line,
// built here once, and differ only in how they name and write it: JSON
// members, GELF's _fields, OTLP key/value attributes, ECS nested objects,
// logfmt pairs, or key=value words after a console sentence.

// attr is one field of a line: its name in the format's naming and its
// value, a string, a number or a boolean.
type attr struct {
	key, val string
	kind     byte // 's', 'n' or 'b'
}

// The flow's fields (jobId, orderId, lockKey, ...), in the order a line
// carries them.
const (
	aJob = iota
	aMsg
	aOrder
	aJobType
	aIdem
	aLockKey
	aLockToken
	aTTL
	aAttempt
	aRedelivered
	aConsumer
	aErrType
	aDur
	aTrace
	numAttrs
)

// attrNames are a format's names for the flow's fields; an empty name
// leaves the field out (a console layout has no worker field: its thread
// or pid says it).
type attrNames [numAttrs]string

var (
	// snakeAttrs: Python and Go services (python-json-logger, logrus).
	snakeAttrs = attrNames{aJob: "job_id", aMsg: "message_id", aOrder: "order_id", aJobType: "job_type", aIdem: "idempotency_key",
		aLockKey: "lock_key", aLockToken: "lock_token", aTTL: "lock_ttl_ms", aAttempt: "attempt", aRedelivered: "redelivered",
		aConsumer: "worker_id", aErrType: "error_type", aDur: "duration_ms", aTrace: "trace_id"}
	// gelfAttrs: GELF's additional fields, the worker in "host".
	gelfAttrs = prefixed("_", snakeAttrs, aConsumer)
	// camelAttrs: go-kit keyvals as Go services write them.
	camelAttrs = attrNames{aJob: "jobId", aMsg: "messageId", aOrder: "orderId", aJobType: "jobType", aIdem: "idempotencyKey",
		aLockKey: "lockKey", aLockToken: "lockToken", aTTL: "lockTtlMs", aAttempt: "attempt", aRedelivered: "redelivered",
		aConsumer: "instance", aErrType: "errorType", aDur: "durationMs", aTrace: "traceId"}
	// pascalAttrs: Serilog properties, the worker from WithMachineName.
	pascalAttrs = attrNames{aJob: "JobId", aMsg: "MessageId", aOrder: "OrderId", aJobType: "JobType", aIdem: "IdempotencyKey",
		aLockKey: "LockKey", aLockToken: "LockToken", aTTL: "LockTtlMs", aAttempt: "Attempt", aRedelivered: "Redelivered",
		aConsumer: "MachineName", aErrType: "ErrorType", aDur: "DurationMs", aTrace: "TraceId"}
	// otelAttrs: OpenTelemetry log record attributes (the worker is the
	// resource's service.instance.id, the trace the record's traceId).
	otelAttrs = attrNames{aJob: "job.id", aMsg: "messaging.message.id", aOrder: "order.id", aJobType: "job.type", aIdem: "idempotency.key",
		aLockKey: "lock.key", aLockToken: "lock.token", aTTL: "lock.ttl_ms", aAttempt: "attempt",
		aRedelivered: "messaging.rabbitmq.message.redelivered", aErrType: "error.type", aDur: "duration_ms"}
	// ecsAttrs: ECS nested objects; the ids as labels (strings), the lock
	// as a custom object, the worker as service.node.name.
	ecsAttrs = attrNames{aJob: "labels.job_id", aMsg: "labels.message_id", aOrder: "labels.order_id", aJobType: "labels.job_type",
		aIdem: "labels.idempotency_key", aLockKey: "lock.key", aLockToken: "lock.token", aTTL: "lock.ttl_ms", aAttempt: "labels.attempt",
		aRedelivered: "labels.redelivered", aConsumer: "service.node.name", aErrType: "error.type", aDur: "labels.duration_ms",
		aTrace: "trace.id"}
	// textAttrs: the key=value words a developer puts after a console
	// sentence ("charged card order=... key=... attempt=2").
	textAttrs = attrNames{aJob: "job", aMsg: "message_id", aOrder: "order", aIdem: "key", aLockKey: "lock", aLockToken: "token",
		aTTL: "ttl_ms", aAttempt: "attempt", aRedelivered: "redelivered", aErrType: "error_type", aDur: "duration_ms"}
)

// prefixed is n with every name prefixed, without the fields drop.
func prefixed(p string, n attrNames, drop ...int) attrNames {
	for i := range n {
		n[i] = p + n[i]
	}
	for _, i := range drop {
		n[i] = ""
	}
	return n
}

// attrs appends e's fields named by n to dst.
func (g *gen) attrs(dst []attr, e *ev, n *attrNames) []attr {
	for i, name := range n {
		if name == "" {
			continue
		}
		if v, kind := value(i, e); v != "" {
			dst = append(dst, attr{name, v, kind})
		}
	}
	if g.c.Pad > 0 {
		dst = append(dst, attr{"note", g.padding(), 's'})
	}
	return dst
}

// fields is attrs into the generator's scratch list.
func (g *gen) fields(e *ev, n *attrNames) []attr {
	g.as = g.attrs(g.as[:0], e, n)
	return g.as
}

// value is field i of e ("" when the line does not carry it).
func value(i int, e *ev) (string, byte) {
	f := &e.f
	lock := strings.HasPrefix(e.kind, "lock")
	switch i {
	case aJob:
		return f.job, 's'
	case aMsg:
		return f.msg, 's'
	case aOrder:
		return f.order, 's'
	case aJobType:
		return f.jobType, 's'
	case aIdem:
		return f.idem, 's'
	case aLockKey:
		return when(lock, f.lockKey), 's'
	case aLockToken:
		return when(lock, f.lockToken()), 's'
	case aTTL:
		return positive(f.ttl), 'n'
	case aAttempt:
		return strconv.Itoa(f.attempt), 'n'
	case aRedelivered:
		return strconv.FormatBool(f.redelivered), 'b'
	case aConsumer:
		return e.worker, 's'
	case aErrType:
		return f.errType, 's'
	case aDur:
		return positive(f.durMs), 'n'
	case aTrace:
		return traceID(f), 's'
	}
	return "", 's'
}

func when(ok bool, s string) string {
	if ok {
		return s
	}
	return ""
}

func positive(n int) string {
	if n <= 0 {
		return ""
	}
	return strconv.Itoa(n)
}

// padding is Config.Pad bytes of filler.
func (g *gen) padding() string {
	if len(g.padText) != g.c.Pad {
		b := make([]byte, g.c.Pad)
		for i := range b {
			b[i] = 'a' + byte(i%26)
		}
		g.padText = string(b)
	}
	return g.padText
}

// jsonAttrs writes the fields as JSON members, each after a comma (and a
// blank, as Python's json.dumps writes them, when spaced).
func jsonAttrs(b []byte, as []attr, spaced bool) []byte {
	for _, a := range as {
		b = append(b, ',')
		if spaced {
			b = append(b, ' ')
		}
		b = jsonMember(b, a, spaced)
	}
	return b
}

func jsonMember(b []byte, a attr, spaced bool) []byte {
	b = strconv.AppendQuote(b, a.key)
	b = append(b, ':')
	if spaced {
		b = append(b, ' ')
	}
	if a.kind == 's' {
		return strconv.AppendQuote(b, a.val)
	}
	return append(b, a.val...)
}

// nestedAttrs writes dotted names as nested objects ("lock.ttl_ms" as
// "lock":{"ttl_ms":...}), each object where its first member falls; ECS
// labels are strings.
func nestedAttrs(b []byte, as []attr) []byte {
	if len(as) == 0 {
		return b
	}
	return members(append(b, ','), as)
}

// members writes as, comma-separated, grouping the names that share a
// first segment into one object.
func members(b []byte, as []attr) []byte {
	var done []string
	for i, a := range as {
		obj, _, nested := strings.Cut(a.key, ".")
		if nested && slices.Contains(done, obj) {
			continue
		}
		if i > 0 {
			b = append(b, ',')
		}
		if !nested {
			b = jsonMember(b, a, false)
			continue
		}
		done = append(done, obj)
		var inner []attr
		for _, m := range as[i:] {
			if o, leaf, ok := strings.Cut(m.key, "."); ok && o == obj {
				m.key = leaf
				if obj == "labels" {
					m.kind = 's'
				}
				inner = append(inner, m)
			}
		}
		b = strconv.AppendQuote(b, obj)
		b = append(b, ":{"...)
		b = members(b, inner)
		b = append(b, '}')
	}
	return b
}

// logfmtAttrs writes the fields as " key=value" pairs, quoting a value
// as quote says it must be.
func logfmtAttrs(b []byte, as []attr, quote func(string) bool) []byte {
	for _, a := range as {
		b = append(b, ' ')
		b = logfmtPair(b, a.key, a.val, quote)
	}
	return b
}

func logfmtPair(b []byte, k, v string, quote func(string) bool) []byte {
	b = append(b, k...)
	b = append(b, '=')
	if quote(v) {
		return strconv.AppendQuote(b, v)
	}
	return append(b, v...)
}

// kitQuotes: go-kit's logfmt quotes a value with a blank, a quote or an
// equals sign, or an empty one.
func kitQuotes(v string) bool { return v == "" || strings.ContainsAny(v, " =\"") }

// logrusQuotes: logrus' text formatter quotes any value with a byte
// outside letters, digits and -._/@^+ (a colon, a blank).
func logrusQuotes(v string) bool {
	for i := 0; i < len(v); i++ {
		c := v[i]
		if !(c >= 'a' && c <= 'z' || c >= 'A' && c <= 'Z' || c >= '0' && c <= '9' || strings.IndexByte("-._/@^+", c) >= 0) {
			return true
		}
	}
	return v == ""
}

// otlpAttrs writes the fields as an OTLP/JSON attribute list: key/value
// objects, 64-bit integers as strings (the protobuf JSON mapping).
func otlpAttrs(b []byte, as []attr) []byte {
	b = append(b, '[')
	for i, a := range as {
		if i > 0 {
			b = append(b, ',')
		}
		b = append(b, `{"key":`...)
		b = strconv.AppendQuote(b, a.key)
		switch a.kind {
		case 'n':
			b = append(b, `,"value":{"intValue":"`...)
			b = append(b, a.val...)
			b = append(b, `"}}`...)
		case 'b':
			b = append(b, `,"value":{"boolValue":`...)
			b = append(b, a.val...)
			b = append(b, `}}`...)
		default:
			b = append(b, `,"value":{"stringValue":`...)
			b = strconv.AppendQuote(b, a.val)
			b = append(b, `}}`...)
		}
	}
	return append(b, ']')
}
