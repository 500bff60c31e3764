package logs

import (
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"maps"
	"slices"
	"strings"
	"sync"
	"unicode"

	"github.com/dupctl/dupctl/internal/platform/problem"
)

// Field is one normalized field of an Event.
type Field uint8

// The normalized fields. Raw text of numeric fields (Attempt, LockTTL,
// Duration, Timestamp) is kept too, for display.
const (
	EventName Field = iota
	Message
	Timestamp
	JobID
	MessageID
	BusinessKey
	IdempotencyKey
	LockKey
	LockToken
	LockTTL
	Attempt
	RetryCount
	Redelivered
	Consumer
	JobType
	Destination
	Duration
	ErrorType
	ErrorText
	Level
	Result
	CacheHit
	CheckSource
	DeliveryTag
	PayloadHash
	Status
	// Process names the process inside the worker's instance (a pid): the
	// worker is "instance/process" where both are known.
	Process
	// Lane is a thread or consumer index inside a process: it keeps two
	// concurrent jobs of one process apart, and is never the worker.
	Lane
	NumFields
)

// fieldSpec is a field's canonical name and its built-in aliases, best
// first. Each alias also matches in camelCase, PascalCase, snake_case,
// dotted, kebab-case and SCREAMING_SNAKE forms, with a trailing ID/TTL in
// capitals, and inside MDC/context containers.
type fieldSpec struct {
	name    string
	aliases []string
}

var fieldSpecs = [NumFields]fieldSpec{
	EventName: {"event", []string{"event", "eventName", "event.name", "event.action", "evt", "action", "eventType", "event.type"}},
	// @m and @mt: Serilog's compact JSON (CLEF); short_message: GELF.
	Message: {"message", []string{"msg", "message", "@message", "body", "log.message", "@m", "short_message", "@mt"}},
	// time: slog; ts: zap (epoch seconds); @timestamp: logstash.
	// @t: CLEF; asctime: python-json-logger; __REALTIME_TIMESTAMP: journald.
	Timestamp: {"timestamp", []string{"@timestamp", "timestamp", "time", "ts", "t", "@t", "timeUnixNano", "asctime", "observedTimeUnixNano",
		"date", "datetime", "eventTime", "createdAt", "insertedAt", "receivedAt", "__REALTIME_TIMESTAMP"}},
	JobID:     {"jobId", []string{"jobId", "job.id", "taskId", "task.id", "jid"}},
	MessageID: {"messageId", []string{"messaging.message.id", "messageId", "message.id", "msgId", "JMSMessageID", "amqp.messageId"}},
	BusinessKey: {"businessKey", []string{"businessKey", "orderId", "order.id", "entityId", "aggregateId", "accountId", "merchantId",
		"paymentId", "customerId", "messaging.message.conversation_id", "messaging.kafka.message.key", "messaging.rocketmq.message.keys",
		"correlationId"}},
	IdempotencyKey: {"idempotencyKey", []string{"idempotencyKey", "Idempotency-Key", "idempotency", "idemKey", "idempotencyId", "dedupKey",
		"dedupeKey", "deduplicationId", "requestKey"}},
	LockKey:   {"lockKey", []string{"lockKey", "lock.key", "lockName", "lock.name", "lock", "mutexKey"}},
	LockToken: {"lockToken", []string{"lockToken", "lock.token", "fencingToken", "lockValue", "lockOwner"}},
	LockTTL: {"lockTtl", []string{"lockTtl", "lock.ttl", "lockTtlMs", "lockTtlMillis", "lockTtlSeconds", "lockTimeout", "lockLease",
		"lockLeaseMs", "leaseMs", "ttlMs", "ttl"}},
	Attempt: {"attempt", []string{"attempt", "attemptNumber", "attempts", "deliveryCount", "deliveryAttempt",
		"messaging.servicebus.message.delivery_count", "messaging.gcp_pubsub.message.delivery_attempt", "ApproximateReceiveCount",
		"receiveCount", "tryNumber", "attemptsStarted", "attemptsMade"}},
	RetryCount: {"retryCount", []string{"retryCount", "retries", "retry", "x-retry-count"}},
	Redelivered: {"redelivered", []string{"redelivered", "isRedelivered", "redelivery", "JMSRedelivered",
		"messaging.rabbitmq.message.redelivered"}},
	Consumer: {"consumerInstanceId", []string{"consumerInstanceId", "consumerId", "consumer", "workerId", "worker", "instanceId",
		"instance", "service.instance.id", "service.node.name", "messaging.client.id", "messaging.client_id", "k8s.pod.name", "pod", "host.name",
		"hostname", "HOSTNAME", "machineName", "host", "process.pid", "pid"}},
	JobType: {"jobType", []string{"jobType", "job.type", "jobName", "taskType", "taskName", "task", "handler", "operation",
		"messaging.destination.name", "queue"}},
	Destination: {"destination", []string{"messaging.destination.name", "destination", "queue", "queueName", "routingKey",
		"messaging.rabbitmq.destination.routing_key", "topic"}},
	Duration: {"duration", []string{"duration", "durationMs", "durationMillis", "durationSeconds", "durationNs", "elapsed", "elapsedMs",
		"latency", "latencyMs", "took", "tookMs", "jobDuration", "jobDurationMs"}},
	ErrorType: {"errorType", []string{"error.type", "errorType", "exception.type", "errorClass", "exceptionClass", "errorKind",
		"errorCode"}},
	ErrorText: {"error", []string{"error", "err", "error.message", "exception.message", "errorMessage", "stack_trace", "@x", "exc_info",
		"full_message"}},
	Level:       {"level", []string{"level", "severity", "lvl", "log.level", "severityText", "levelname", "@l"}},
	Result:      {"result", []string{"result", "outcome", "checkResult", "dedupResult", "found", "alreadyProcessed"}},
	CacheHit:    {"cacheHit", []string{"cache.hit", "cacheHit"}},
	CheckSource: {"checkSource", []string{"checkSource", "dedupSource", "statusSource", "source", "store"}},
	DeliveryTag: {"deliveryTag", []string{"deliveryTag", "messaging.rabbitmq.message.delivery_tag", "messaging.gcp_pubsub.message.ack_id",
		"receiptHandle", "ackId"}},
	PayloadHash: {"payloadHash", []string{"payloadHash", "payload.hash", "payloadDigest", "requestHash", "bodyHash",
		"payloadFingerprint"}},
	Status: {"status", []string{"status", "jobStatus", "state"}},
	// Process has no alias of its own: a pid is a worker's (Consumer's)
	// last resort until the layout inference says it names the process
	// inside an instance.
	Process: {"process", nil},
	Lane:    {"lane", []string{"thread", "thread.name", "threadName", "tid", "goroutine"}},
}

// Name is the field's canonical name.
func (f Field) String() string {
	if f < NumFields {
		return fieldSpecs[f].name
	}
	return fmt.Sprintf("field(%d)", uint8(f))
}

// FieldNames lists the canonical field names.
func FieldNames() []string {
	out := make([]string, NumFields)
	for i := range out {
		out[i] = fieldSpecs[i].name
	}
	return out
}

// ParseField reads a canonical field name in any spelling (business_key,
// businessKey), plus a few obvious synonyms (orderId, worker, time).
func ParseField(s string) (Field, bool) {
	n := normName(s)
	for i, sp := range fieldSpecs {
		if normName(sp.name) == n {
			return Field(i), true
		}
	}
	switch n { // common synonyms of canonical names
	case "orderid", "business", "key":
		return BusinessKey, true
	case "consumer", "worker", "instance", "instanceid":
		return Consumer, true
	case "time", "ts":
		return Timestamp, true
	case "msg":
		return Message, true
	}
	return 0, false
}

// containers hold MDC-like fields one level down: logstash's "mdc",
// OpenTelemetry's "attributes" and "resource", zap/logrus "fields", ...
var containers = map[string]bool{
	"mdc": true, "MDC": true, "context": true, "ctx": true, "fields": true, "@fields": true,
	"attributes": true, "attrs": true, "labels": true, "extra": true, "data": true, "kv": true,
	"tags": true, "properties": true, "props": true, "args": true, "resource": true, "attr": true,
}

// unit says how a bare number of a duration field is read.
type unit uint8

const (
	unitAuto unit = iota // field name gives no unit: see parseDuration
	unitNs
	unitUs
	unitMs
	unitS
)

type slot struct {
	field Field
	rank  uint16 // lower wins when several aliases are present
	unit  unit
}

// Mapping is a compiled field and event mapping. It is safe for
// concurrent use.
type Mapping struct {
	paths map[string]slot
	// folded are the built-in aliases by their letters and digits alone,
	// for the nested paths no spelling names: ECS and OpenTelemetry nest
	// a snake_case leaf under an object ("lock":{"ttl_ms":300} is
	// lock.ttl_ms, which no spelling of lockTtlMs writes).
	folded  map[string]slot
	names   map[string]Kind // normalized event names
	vocab   *vocab
	changes []string // what the user changed, as {Fields} name=path, {Events} kind=phrase, ...
	// overrides are the fields the user mapped to paths of their own.
	overrides map[Field][]string
	// learned is what a sample of the input taught (Learn): applied on
	// every line; nil for a mapping compiled from a config alone.
	learned *readHints
	// config is what the mapping was compiled from (Learn recompiles it
	// with what it learned).
	config Config
	// learning, when set, makes the first scan with this mapping learn
	// from its input (LearnFromInput).
	learning *learning
	// explicit are the paths the user or the learning named.
	explicit map[string]bool
}

// Overrides are the fields the user mapped to paths of their own (--field,
// --mapping), with those paths.
func (m *Mapping) Overrides() map[Field][]string { return m.overrides }

// Config is the user's mapping: a JSON file (--mapping), the --field and
// --event flags and dupctl.yaml's logs.events.
type Config struct {
	// Fields replaces a field's built-in aliases with these JSON paths
	// (dotted: "payload.order.id" matches nested objects and dotted keys).
	Fields map[string][]string `json:"fields"`
	// Events adds phrases per kind (or per qualifier: hit, miss, cache,
	// db; or other, for lines that name no step), tried on the event name
	// and the message before the built-in vocabulary: words, "*" for up to
	// four other words, ^ and $ to anchor (vocabulary.txt).
	Events map[string][]string `json:"events"`
	// EventNames adds exact event names per kind.
	EventNames map[string][]string `json:"eventNames"`
}

// LoadConfig reads a JSON mapping file.
func LoadConfig(r io.Reader) (Config, error) {
	var c Config
	dec := json.NewDecoder(r)
	dec.DisallowUnknownFields()
	if err := dec.Decode(&c); err != nil {
		return Config{}, fmt.Errorf("%w (want {\"fields\": {\"businessKey\": [\"order.id\"]}, \"events\": {\"side_effect\": "+
			"[\"charged card\"]}, \"eventNames\": {...}})", err)
	}
	return c, nil
}

// AddFieldFlag adds one --field name=path.
func (c *Config) AddFieldFlag(s string) error {
	name, path, ok := strings.Cut(s, "=")
	if !ok || name == "" || path == "" {
		return problem.Inputf("Fields", "want name=json.path, e.g. businessKey=payload.orderId").WithValue(s)
	}
	if _, ok := ParseField(name); !ok {
		return problem.Inputf("Fields", "unknown field %q: want one of %s", name, strings.Join(FieldNames(), ", ")).WithValue(s)
	}
	if c.Fields == nil {
		c.Fields = map[string][]string{}
	}
	c.Fields[name] = append(c.Fields[name], strings.TrimPrefix(path, "$."))
	return nil
}

// AddEventFlag adds one --event kind=PHRASE.
func (c *Config) AddEventFlag(s string) error {
	name, phrase, ok := strings.Cut(s, "=")
	if !ok || name == "" || strings.TrimSpace(phrase) == "" {
		return problem.Inputf("Events", "want kind=PHRASE, e.g. side_effect='charged card'").WithValue(s)
	}
	if c.Events == nil {
		c.Events = map[string][]string{}
	}
	c.Events[name] = append(c.Events[name], phrase)
	return nil
}

// Merge adds o's entries to c (flags after the file).
func (c *Config) Merge(o Config) {
	for _, m := range []struct {
		dst *map[string][]string
		src map[string][]string
	}{{&c.Fields, o.Fields}, {&c.Events, o.Events}, {&c.EventNames, o.EventNames}} {
		for k, v := range m.src {
			if *m.dst == nil {
				*m.dst = map[string][]string{}
			}
			(*m.dst)[k] = append((*m.dst)[k], v...)
		}
	}
}

// Compile builds the mapping: built-ins with the config applied.
func Compile(c Config) (*Mapping, error) { return compile(c, learnedFields{}, nil) }

// learnedFields are the field paths a sample taught: replace takes a
// field's aliases away (the worker the inference chose, not any field a
// worker alias names), add keeps them (a key found in an MDC bracket).
// The user's own --field of a field wins over both.
type learnedFields struct {
	replace, add map[Field][]string
}

// compile builds a mapping from the user's config, the fields and the
// phrases learned from the input (learned: kind -> phrases, tried after the
// user's and before the vocabulary's).
func compile(c Config, lf learnedFields, learned map[string][]string) (*Mapping, error) {
	m := &Mapping{paths: map[string]slot{}, folded: map[string]slot{}, names: map[string]Kind{}, config: c}
	for _, ch := range []struct {
		placeholder string
		entries     map[string][]string
	}{{"{Fields}", c.Fields}, {"{Events}", c.Events}, {"eventNames", c.EventNames}} {
		for _, k := range slices.Sorted(maps.Keys(ch.entries)) {
			for _, v := range ch.entries[k] {
				m.changes = append(m.changes, ch.placeholder+" "+k+"="+v)
			}
		}
	}
	overridden := map[Field][]string{}
	for _, name := range slices.Sorted(maps.Keys(c.Fields)) {
		paths := c.Fields[name]
		f, ok := ParseField(name)
		if !ok {
			return nil, problem.Inputf("Fields", "unknown field %q: want one of %s", name, strings.Join(FieldNames(), ", "))
		}
		for _, p := range paths {
			if strings.TrimSpace(p) == "" {
				return nil, problem.Inputf("Fields", "empty path for field %s", name)
			}
		}
		overridden[f] = append(overridden[f], paths...)
	}
	if err := keepsText(overridden); err != nil {
		return nil, err
	}
	m.overrides = overridden
	overridden = lf.merge(overridden)
	// Built-ins first, so an override of one field can claim a path that
	// another field's alias also uses.
	for i := range fieldSpecs {
		f := Field(i)
		if _, ok := overridden[f]; ok {
			continue
		}
		for r, a := range fieldSpecs[i].aliases {
			for _, v := range spellings(a) {
				m.add(v, slot{field: f, rank: uint16(r), unit: unitOf(v)}, false)
			}
			if n := normName(a); len(n) > 3 {
				if old, ok := m.folded[n]; !ok || old.rank > uint16(r) {
					m.folded[n] = slot{field: f, rank: uint16(r), unit: unitOf(a)}
				}
			}
		}
	}
	for f, paths := range lf.add {
		if _, mine := m.overrides[f]; !mine {
			m.addPaths(f, paths)
		}
	}
	for f, paths := range overridden {
		m.addPaths(f, paths)
	}
	if err := m.addEventNames(c.EventNames); err != nil {
		return nil, err
	}
	v, err := compileVocabWith(c.Events, learned)
	if err != nil {
		var pe *PhraseError
		if errors.As(err, &pe) {
			return nil, &problem.Input{Field: "Events", Value: pe.Kind + "=" + pe.Phrase, Quote: true, Why: pe.Err.Error(), Err: err}
		}
		return nil, err
	}
	m.vocab = v
	return m, nil
}

// keepsText refuses an override that takes the message or event field's
// built-in path for another field while the message vocabulary reads it:
// every line would lose its kind and the audit would see no step at all.
func keepsText(overridden map[Field][]string) error {
	for _, text := range []Field{Message, EventName} {
		if _, moved := overridden[text]; moved {
			continue // the user says where the text is now
		}
		own := map[string]bool{}
		for _, a := range fieldSpecs[text].aliases {
			for _, sp := range spellings(a) {
				own[sp] = true
			}
		}
		for f, paths := range overridden {
			for _, p := range paths {
				if f != text && own[p] {
					return &problem.Input{Field: "Fields", Value: fieldSpecs[f].name + "=" + p, Quote: true,
						Why: fmt.Sprintf("%s is where the %s is read from, and event recognition reads it: mapped to %s, no line would have a kind",
							p, fieldSpecs[text].name, fieldSpecs[f].name),
						Hint: fmt.Sprintf("map %s elsewhere too ({Fields} %s=PATH), or map %s to another path",
							fieldSpecs[text].name, fieldSpecs[text].name, fieldSpecs[f].name)}
				}
			}
		}
	}
	return nil
}

// Changes lists what the user changed in the built-in mapping, with the
// options named as {Fields} and {Events} placeholders.
func (m *Mapping) Changes() []string { return m.changes }

// Phrase returns the text of the phrase a line's Match names and whether
// a user wrote it ("" for an exact event name).
func (m *Mapping) Phrase(match Match) (text string, user bool) {
	i := int(match.Phrase) - 1
	if i < 0 || i >= len(m.vocab.phrases) {
		return "", false
	}
	p := &m.vocab.phrases[i]
	return p.text, p.user
}

// Learned reports whether a line's Match is a phrase learned from the
// input (Learn) rather than the vocabulary's or the user's.
func (m *Mapping) Learned(match Match) bool {
	i := int(match.Phrase) - 1
	return i >= 0 && i < len(m.vocab.phrases) && m.vocab.phrases[i].learned
}

var (
	defaultOnce    sync.Once
	defaultMapping *Mapping
)

// Default is the built-in mapping (compiled once).
func Default() *Mapping {
	defaultOnce.Do(func() {
		m, err := Compile(Config{})
		if err != nil {
			panic(err) // the embedded vocabulary is tested
		}
		defaultMapping = m
	})
	return defaultMapping
}

// addEventNames adds the built-in exact event names and the config's.
func (m *Mapping) addEventNames(user map[string][]string) error {
	for k, names := range defaultEventNames {
		for _, n := range names {
			m.names[normName(n)] = k
		}
	}
	for kind, names := range user {
		k, ok := ParseKind(kind)
		if !ok {
			return problem.Inputf("Mapping", "eventNames: unknown event kind %q: want one of %s", kind, strings.Join(KindNames(), ", "))
		}
		for _, n := range names {
			m.names[normName(n)] = k
		}
	}
	return nil
}

// merge is the user's overrides with the learned fields that replace
// built-in aliases, where the user said nothing of the field.
func (lf learnedFields) merge(user map[Field][]string) map[Field][]string {
	out := maps.Clone(user)
	for f, paths := range lf.replace {
		if _, mine := user[f]; !mine {
			out[f] = paths
		}
	}
	return out
}

// addPaths maps explicit paths to f: taken as written, in every spelling
// of their last segment, beating any alias.
func (m *Mapping) addPaths(f Field, paths []string) {
	for r, p := range paths {
		m.add(p, slot{field: f, rank: uint16(r), unit: unitOf(p)}, true)
	}
}

func (m *Mapping) add(path string, s slot, explicit bool) {
	if explicit {
		s.rank = 0
		m.paths[path] = s
		if m.explicit == nil {
			m.explicit = map[string]bool{}
		}
		m.explicit[path] = true
		return
	}
	if old, ok := m.paths[path]; ok && old.rank <= s.rank {
		return // an earlier, better alias of some field keeps the path
	}
	m.paths[path] = s
}

// lookup finds the slot of a dotted path, directly or inside containers,
// as an alias spells it or else by its letters and digits (lock.ttl_ms).
func (m *Mapping) lookup(path []byte) (slot, bool) {
	if s, ok := m.paths[string(path)]; ok {
		return s, true
	}
	// Strip leading containers (mdc., attributes., resource.attributes.).
	p := path
	for {
		i := indexDot(p)
		if i < 0 || !containers[string(p[:i])] {
			break
		}
		p = p[i+1:]
		if s, ok := m.paths[string(p)]; ok {
			s.rank += 500 // a top-level field wins over a container's
			return s, true
		}
	}
	// Only a nested path is folded: a flat name spelled in no known way
	// (amqp_messageId) is someone's own field until a mapping says so.
	var buf [64]byte
	if len(p) > len(buf) || indexDot(p) < 0 {
		return slot{}, false
	}
	s, ok := m.folded[string(normNameInto(buf[:0], p))]
	if ok {
		s.rank += 250 // a spelling an alias names wins
		if len(p) < len(path) {
			s.rank += 500
		}
	}
	return s, ok
}

func indexDot(b []byte) int {
	for i, c := range b {
		if c == '.' {
			return i
		}
	}
	return -1
}

// unitOf reads a duration unit from a field name's suffix.
func unitOf(name string) unit {
	n := strings.ToLower(name)
	switch {
	case strings.HasSuffix(n, "ms") || strings.HasSuffix(n, "millis") || strings.HasSuffix(n, "milliseconds"):
		return unitMs
	case strings.HasSuffix(n, "ns") || strings.HasSuffix(n, "nanos") || strings.HasSuffix(n, "nanoseconds") ||
		strings.HasSuffix(n, "unixnano"):
		return unitNs
	case strings.HasSuffix(n, "us") || strings.HasSuffix(n, "micros") || strings.HasSuffix(n, "microseconds"):
		return unitUs
	case strings.HasSuffix(n, "seconds") || strings.HasSuffix(n, "secs") || strings.HasSuffix(n, "_s") || strings.HasSuffix(n, "sec"):
		return unitS
	}
	return unitAuto
}

// words splits camelCase, snake_case, dotted and kebab names.
func words(s string) []string {
	var out []string
	var cur []rune
	rs := []rune(s)
	flush := func() {
		if len(cur) > 0 {
			out = append(out, strings.ToLower(string(cur)))
			cur = cur[:0]
		}
	}
	for i, r := range rs {
		switch {
		case r == '_' || r == '.' || r == '-' || r == ' ':
			flush()
		case unicode.IsUpper(r) && len(cur) > 0 && (unicode.IsLower(cur[len(cur)-1]) || (i+1 < len(rs) && unicode.IsLower(rs[i+1]))):
			flush()
			cur = append(cur, r)
		default:
			cur = append(cur, r)
		}
	}
	flush()
	return out
}

// spellings returns an alias as written and in the usual case styles. A
// name with dots keeps its dots (OpenTelemetry names are exact) and adds
// the camel/snake forms of its last segment only when it is not a
// namespaced attribute.
func spellings(a string) []string {
	set := []string{a}
	if strings.HasPrefix(a, "messaging.") || strings.HasPrefix(a, "@") || strings.Contains(a, "-") && strings.ToUpper(a[:1]) == a[:1] {
		return set
	}
	w := words(a)
	if len(w) == 0 {
		return set
	}
	title := func(s string) string { return strings.ToUpper(s[:1]) + s[1:] }
	camel, pascal := w[0], title(w[0])
	for _, x := range w[1:] {
		camel += title(x)
		pascal += title(x)
	}
	set = append(set, camel, pascal,
		strings.Join(w, "_"), strings.Join(w, "."), strings.Join(w, "-"),
		strings.ToUpper(strings.Join(w, "_")))
	if last := w[len(w)-1]; len(w) > 1 && len(last) <= 3 {
		// jobID, lockTTL, messageID
		up := w[0]
		for _, x := range w[1 : len(w)-1] {
			up += title(x)
		}
		set = append(set, up+strings.ToUpper(last))
	}
	slices.Sort(set)
	return slices.Compact(set)
}

// normName folds an event or kind name: lower case, letters and digits
// only, so side_effect, side-effect, sideEffect and SIDE.EFFECT agree.
func normName(s string) string { return string(normNameInto(nil, s)) }

// normNameInto is normName into a scratch buffer (no allocation).
func normNameInto[T string | []byte](dst []byte, s T) []byte {
	dst = dst[:0]
	for i := 0; i < len(s); i++ {
		c := s[i]
		switch {
		case c >= 'a' && c <= 'z', c >= '0' && c <= '9':
			dst = append(dst, c)
		case c >= 'A' && c <= 'Z':
			dst = append(dst, c+'a'-'A')
		}
	}
	return dst
}

// defaultEventNames are the event-field values each kind is known by.
var defaultEventNames = map[Kind][]string{
	KindReceived: {"received", "message_received", "job_received", "delivery", "delivered", "consume", "consumed", "job_started",
		"started", "start", "processing_started", "process", "dequeued", "picked_up"},
	KindLockAcquired: {"lock_acquired", "lock_acquire", "acquired_lock", "lock_ok", "locked", "lock_obtained", "lock_granted", "lock_taken"},
	KindLockFailed:   {"lock_failed", "lock_busy", "lock_not_acquired", "lock_contended", "lock_timeout", "lock_unavailable", "lock_denied"},
	KindLockReleased: {"lock_released", "lock_release", "unlock", "unlocked", "released_lock", "lock_deleted", "lock_freed"},
	KindCheck: {"idempotency_check", "dedup_check", "dedupe_check", "status_check", "duplicate_check", "cache_check",
		"idempotency_lookup", "check"},
	KindDuplicate: {"duplicate_caught", "dedup_hit", "idempotency_hit", "already_processed", "duplicate_skipped", "skipped_duplicate",
		"duplicate", "idempotent_replay", "duplicate_detected", "skip_duplicate"},
	KindClaimed: {"claimed", "reserved", "idempotency_reserved", "claim", "status_processing", "marked_processing", "reservation"},
	KindSideEffect: {"side_effect", "effect", "side_effect_done", "side_effect_executed", "effect_applied", "charged", "payment_charged",
		"email_sent", "charge_created", "payment_captured"},
	KindCommitted: {"committed", "commit", "status_committed", "succeeded", "status_succeeded", "marked_succeeded", "marked_done",
		"status_saved", "result_saved"},
	KindAcked:        {"acked", "ack", "message_acked", "acknowledged", "ack_sent"},
	KindRetry:        {"retry", "retry_scheduled", "retrying", "requeued", "requeue", "nack", "nacked", "rejected", "redeliver"},
	KindFailed:       {"failed", "job_failed", "handler_failed", "error", "exception", "processing_failed"},
	KindDeadLettered: {"dead_lettered", "dlq", "sent_to_dlq", "dead_letter", "moved_to_dlq", "dlq_routed", "deadlettered"},
	KindCrash:        {"crash", "crashed", "worker_crashed", "panic", "killed", "worker_killed", "oom_killed"},
	KindCompleted:    {"completed", "done", "finished", "job_completed", "job_finished", "job_done", "success", "processed"},
	KindLockLost:     {"lock_lost", "lock_expired", "lost_lock", "lease_expired", "lock_extension_failed", "lock_release_failed"},
}
