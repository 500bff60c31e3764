package logs

import (
	"strings"
	"testing"
	"time"
	"unicode/utf8"
)

// TestMessageOnlyShapes reads lines in the output shapes of the logging
// libraries real services use, with the step only in the message (or, for
// structlog, in an "event" sentence), and checks the kind, a check's
// answer and source, and the flow's fields beside them.
//
// Shapes, as the libraries document them:
//   - Go log/slog JSONHandler: {"time":"2022-11-08T15:28:26.000000000-05:00",
//     "level":"INFO","msg":"hello","count":3} (pkg.go.dev/log/slog), groups
//     as nested objects;
//   - zap NewProduction: {"level":"info","ts":1607095287.638658,
//     "caller":"log-demo/zap_demo.go:14","msg":"failed to fetch URL",
//     "url":"...","attempt":3,"backoff":1} (zap's README example);
//   - logstash-logback-encoder (Spring Boot's usual JSON): "@timestamp",
//     "@version":"1", "message", "logger_name", "thread_name", "level",
//     "level_value", the MDC at the top level;
//   - Spring Boot 3.4+ structured logging, ECS format:
//     {"@timestamp":...,"log":{"level":"INFO","logger":"..."},"process":
//     {"pid":39599,"thread":{"name":"main"}},"service":{"name":"simple"},
//     "message":"...","ecs":{"version":"8.11"}} plus the MDC;
//   - pino: {"level":30,"time":1643365551573,"pid":5673,"hostname":"Kreig",
//     "msg":"Hello, world!"} (numeric level, epoch milliseconds);
//   - structlog JSONRenderer: {"event": "user.logged_in", "level": "info",
//     "timestamp": "..."} - the message is the "event" key.
func TestMessageOnlyShapes(t *testing.T) {
	cases := []struct {
		name, line string
		kind       Kind
		hit, cache Tri
		key        string // business key expected
	}{
		{"slog", `{"time":"2026-11-03T09:00:00.123456789Z","level":"INFO","msg":"lock acquired","order":{"id":"ord-42"},` +
			`"lock":{"key":"lock:payment:order:ord-42","token":"9f2c"}}`, KindLockAcquired, Unknown, Unknown, "ord-42"},
		{"slog-check", `{"time":"2026-11-03T09:00:00.2Z","level":"INFO","msg":"status read from cache: order not processed yet, ` +
			`proceeding","order":{"id":"ord-42"}}`, KindCheck, False, True, "ord-42"},
		{"zap", `{"level":"info","ts":1793696400.123,"caller":"worker/handler.go:88","msg":"payment captured","order_id":"ord-42","attempt":2}`,
			KindSideEffect, Unknown, Unknown, "ord-42"},
		{"zap-check", `{"level":"info","ts":1793696400.2,"caller":"worker/handler.go:61","msg":"idempotency check: ` +
			`already processed","order_id":"ord-42","source":"postgres"}`, KindCheck, True, False, "ord-42"},
		{"logstash", `{"@timestamp":"2026-11-03T09:00:00.123+00:00","@version":"1","message":"Acquired lock for order ord-42",` +
			`"logger_name":"com.acme.jobs.PaymentWorker","thread_name":"amqp-consumer-3","level":"INFO","level_value":20000,"orderId":"ord-42"}`,
			KindLockAcquired, Unknown, Unknown, "ord-42"},
		{"logstash-commit", `{"@timestamp":"2026-11-03T09:00:00.456+00:00","@version":"1","message":"Marked payment:ord-42 as SUCCEEDED",` +
			`"logger_name":"com.acme.jobs.PaymentWorker","thread_name":"amqp-consumer-3","level":"INFO","level_value":20000,"orderId":"ord-42"}`,
			KindCommitted, Unknown, Unknown, "ord-42"},
		{"ecs", `{"@timestamp":"2026-11-03T09:00:00.067462556Z","log":{"level":"INFO","logger":"com.acme.jobs.PaymentWorker"},` +
			`"process":{"pid":39599,"thread":{"name":"amqp-consumer-3"}},"service":{"name":"payments"},"message":"Card charged for order ord-42",` +
			`"ecs":{"version":"8.11"},"orderId":"ord-42"}`, KindSideEffect, Unknown, Unknown, "ord-42"},
		{"ecs-cache", `{"@timestamp":"2026-11-03T09:00:00.1Z","log":{"level":"INFO","logger":"com.acme.jobs.PaymentWorker"},` +
			`"process":{"pid":39599,"thread":{"name":"main"}},"service":{"name":"payments"},"message":"Cache miss for payment:ord-42, ` +
			`calling provider","ecs":{"version":"8.11"},"orderId":"ord-42"}`, KindCheck, False, True, "ord-42"},
		{"pino", `{"level":30,"time":1793696400123,"pid":5673,"hostname":"worker-3","msg":"Email sent for order ord-42","orderId":"ord-42"}`,
			KindSideEffect, Unknown, Unknown, "ord-42"},
		{"pino-dlq", `{"level":50,"time":1793696400123,"pid":5673,"hostname":"worker-3","msg":"Moved to DLQ after 3 attempts",` +
			`"orderId":"ord-42"}`, KindDeadLettered, Unknown, Unknown, "ord-42"},
		{"structlog", `{"event": "lock.acquired", "level": "info", "timestamp": "2026-11-03T09:00:00.123Z", "order_id": "ord-42"}`,
			KindLockAcquired, Unknown, Unknown, "ord-42"},
		{"structlog-sentence", `{"event": "Checked idempotency table: key not found", "level": "info", "timestamp": "2026-11-03T09:00:00.2Z", ` +
			`"order_id": "ord-42"}`, KindCheck, False, False, "ord-42"},
		{"structlog-snake", `{"event": "payment_captured", "level": "info", "timestamp": "2026-11-03T09:00:00.3Z", "order_id": "ord-42"}`,
			KindSideEffect, Unknown, Unknown, "ord-42"},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			evs, st := scanString(t, Default(), c.line)
			if st.Malformed != 0 || len(evs) != 1 {
				t.Fatalf("%d events, %d malformed", len(evs), st.Malformed)
			}
			e := evs[0]
			if e.Kind != c.kind || e.Hit != c.hit || e.FromCache != c.cache || e.BusinessKey() != c.key {
				t.Errorf("kind %s hit %d cache %d key %q; want %s %d %d %q", e.Kind, e.Hit, e.FromCache, e.BusinessKey(), c.kind, c.hit, c.cache,
					c.key)
			}
			if e.Time.IsZero() {
				t.Error("no time read")
			}
		})
	}
}

// TestLibraryPhrasings classifies what queue and lock libraries write
// themselves, from their sources:
//   - celery, app/trace.py: LOG_RECEIVED "Task %(name)s[%(id)s] received",
//     LOG_SUCCESS "Task %(name)s[%(id)s] succeeded in %(runtime)ss:
//     %(return_value)s", LOG_RETRY "Task %(name)s[%(id)s] retry: %(exc)s",
//     LOG_FAILURE with "raised unexpected", LOG_IGNORED's "Task already
//     completed successfully.";
//   - sidekiq, JobLogger#call: "start", "done", "fail";
//   - asynq, processor: "Retry exhausted for task id=%s" before archiving,
//     "Retrying task(Type: %q, ID: %v) in %v";
//   - Spring AMQP RejectAndDontRequeueRecoverer: "Retries exhausted for
//     message " + message;
//   - ShedLock DefaultLockingTaskExecutor: "Locked '{}', lock will be held
//     at most until {}", "Task finished, lock '{}' released", "Not
//     executing '{}'. It's locked.".
func TestLibraryPhrasings(t *testing.T) {
	expectKinds(t, Default(), map[string]Kind{
		"Task tasks.charge_card[8f3c2a51-7d1e-4c3a-9b0e-1d2f3a4b5c6d] received":                   KindReceived,
		"Task tasks.charge_card[8f3c2a51-7d1e-4c3a-9b0e-1d2f3a4b5c6d] succeeded in 0.52s: None":   KindCompleted,
		"Task tasks.charge_card[8f3c2a51-7d1e-4c3a-9b0e-1d2f3a4b5c6d] retry: Retry in 5s":         KindRetry,
		"Task tasks.charge_card[8f3c2a51-7d1e-4c3a-9b0e-1d2f3a4b5c6d] raised unexpected: Timeout": KindFailed,
		"Task already completed successfully.":                                                    KindDuplicate,
		"start":                                                                                   KindReceived,
		"done":                                                                                    KindCompleted,
		"fail":                                                                                    KindFailed,
		"Retry exhausted for task id=payment:charge:ord-42":                                       KindDeadLettered,
		`Retrying task(Type: "payment:charge", ID: "6f2a") in 10s`:                                KindRetry,
		"Retries exhausted for message (Body:'[B@5c5c0bd6(byte[42])' MessageProperties [headers={}])": KindDeadLettered,
		"Locked 'paymentSweep', lock will be held at most until 2026-11-03T09:00:30Z":                 KindLockAcquired,
		"Task finished, lock 'paymentSweep' released":                                                 KindLockReleased,
		"Not executing 'paymentSweep'. It's locked.":                                                  KindLockFailed,
	})
}

// expectKinds checks the kind each message is read as.
func expectKinds(t *testing.T, m *Mapping, want map[string]Kind) {
	t.Helper()
	for msg, k := range want {
		evs, _ := scanString(t, m, `{"msg":`+quote(msg)+`}`)
		if got := evs[0].Kind; got != k {
			text, _ := m.Phrase(evs[0].Match)
			t.Errorf("%q: %s (phrase %q), want %s", msg, got, text, k)
		}
	}
}

// TestPhrasingsOfOwnSteps covers how services word the safe consumer flow's steps
// themselves, including the ones that must not count: about to act is not
// acting ("charging card" then "charged card" is one side effect).
func TestPhrasingsOfOwnSteps(t *testing.T) {
	expectKinds(t, Default(), map[string]Kind{
		"Received message msg-41ca87fe for order ord-1":               KindReceived,
		"Failed to acquire lock lock:payment:order:ord-1, requeueing": KindLockFailed,
		"could not acquire lock for order ord-1: held by worker-2":    KindLockFailed,
		"Lock for order ord-1 acquired (ttl 30s)":                     KindLockAcquired,
		"lock not acquired":                                                     KindLockFailed,
		"Released lock lock:payment:order:ord-1":                                KindLockReleased,
		"lock expired while still working":                                      KindLockLost,
		"Failed to release lock: token mismatch":                                KindLockLost,
		"Reserved payment:ord-1 as PROCESSING":                                  KindClaimed,
		"side_effect: payment capture sent for order, provider=stripe see span": KindSideEffect,
		"PaymentCaptured":                                                       KindSideEffect,
		"Committed status SUCCEEDED for payment:ord-1":                          KindCommitted,
		"ack sent":                       KindAcked,
		"Handler failed: TimeoutError":   KindFailed,
		"Worker crashed: killed by OOM":  KindCrash,
		"Job completed":                  KindCompleted,
		"Duplicate received, skipping":   KindDuplicate,
		"acquiring lock for order ord-1": KindOther,
		"Charging card for order ord-1":  KindOther,
		"lock renewed for another 30s":   KindOther,
		"GET /healthz 200":               KindOther,
	})
}

// TestChecksAsSentences reads a check's answer and source from its
// sentence: the last answer said, the first source.
func TestChecksAsSentences(t *testing.T) {
	m := Default()
	for _, c := range []struct {
		msg        string
		kind       Kind
		hit, cache Tri
	}{
		{"Status cache says order ord-1 not processed yet, proceeding", KindCheck, False, True},
		{"Idempotency check for payment:ord-1: already processed", KindCheck, True, Unknown},
		{"checked database: idempotency key not found", KindCheck, False, False},
		{"Cache hit for payment:ord-1 (SUCCEEDED), skipping", KindCheck, True, True},
		{"status check for new message msg-1 in redis: found", KindCheck, True, True},
		{"Duplicate skipped: payment:ord-1 already processed", KindDuplicate, True, Unknown},
	} {
		evs, _ := scanString(t, m, `{"msg":`+quote(c.msg)+`}`)
		if e := evs[0]; e.Kind != c.kind || e.Hit != c.hit || e.FromCache != c.cache {
			t.Errorf("%q: %s hit %d cache %d, want %s %d %d", c.msg, e.Kind, e.Hit, e.FromCache, c.kind, c.hit, c.cache)
		}
	}
	// An event field names the kind; the message still says the answer.
	evs, _ := scanString(t, m, `{"event":"idempotency_check","msg":"status from redis: not found"}`)
	if e := evs[0]; e.Kind != KindCheck || e.Hit != False || e.FromCache != True {
		t.Errorf("named check: %s hit %d cache %d", e.Kind, e.Hit, e.FromCache)
	}
}

// TestUserPhrases: --event phrases win over the vocabulary, on the event
// name and the message; qualifier phrases add answers.
func TestUserPhrases(t *testing.T) {
	var c Config
	for _, e := range []string{"side_effect=ledger * booked", "other=received webhook", "cache=from the edge store", "side_effect=^ done $"} {
		if err := c.AddEventFlag(e); err != nil {
			t.Fatal(err)
		}
	}
	m, err := Compile(c)
	if err != nil {
		t.Fatal(err)
	}
	for line, want := range map[string]Kind{
		`{"msg":"Ledger entry 42 booked"}`:                           KindSideEffect,
		`{"msg":"Received webhook for order 1"}`:                     KindOther,
		`{"msg":"done"}`:                                             KindSideEffect,
		`{"msg":"Received message for order 1"}`:                     KindReceived,
		`{"event":"ledger_entry_booked","msg":"Received message 1"}`: KindSideEffect,
	} {
		evs, _ := scanString(t, m, line)
		if got := evs[0].Kind; got != want {
			t.Errorf("%s: %s, want %s", line, got, want)
		}
		if text, user := m.Phrase(evs[0].Match); want != KindReceived && (!user || text == "") {
			t.Errorf("%s: matched %q (user %v), want a user phrase", line, text, user)
		}
	}
	evs, _ := scanString(t, m, `{"msg":"status check: not found, read from the edge store"}`)
	if e := evs[0]; e.Kind != KindCheck || e.FromCache != True || e.Hit != False {
		t.Errorf("qualifier phrase: %s hit %d cache %d", e.Kind, e.Hit, e.FromCache)
	}
}

// TestMessageRemapRefused: a --field that takes the message (or event)
// field's path away from the vocabulary is an input error; naming where
// the message is now makes it fine.
func TestMessageRemapRefused(t *testing.T) {
	var c Config
	if err := c.AddFieldFlag("checkSource=msg"); err != nil {
		t.Fatal(err)
	}
	_, err := Compile(c)
	if err == nil || !strings.Contains(err.Error(), "msg is where the message is read from") || !strings.Contains(err.Error(), "{Fields}") {
		t.Fatalf("checkSource=msg: %v", err)
	}
	if err := c.AddFieldFlag("message=text"); err != nil {
		t.Fatal(err)
	}
	if _, err := Compile(c); err != nil {
		t.Fatalf("with message=text: %v", err)
	}
	c = Config{}
	if err := c.AddFieldFlag("jobType=event"); err != nil {
		t.Fatal(err)
	}
	if _, err := Compile(c); err == nil {
		t.Fatal("jobType=event accepted")
	}
}

// TestLongMessageIsBounded: only the first KiB of a message is read for
// its kind, so a 12 MB message (near the longest line read,
// DefaultMaxLine) costs what a short one does (a phrase beyond it is not
// seen), and the line is still read whole.
func TestLongMessageIsBounded(t *testing.T) {
	long := strings.Repeat("x ", 6<<20) // 12 MB of words
	line := `{"msg":"` + long + `payment captured","orderId":"ord-9"}`
	start := time.Now()
	evs, st := scanString(t, Default(), line)
	if st.Malformed != 0 || len(evs) != 1 || evs[0].BusinessKey() != "ord-9" || evs[0].Kind != KindOther {
		t.Fatalf("%d events, %d malformed, key %q, kind %s", len(evs), st.Malformed, evs[0].BusinessKey(), evs[0].Kind)
	}
	t.Logf("12 MB message line: %s", time.Since(start)) // a figure, not asserted
	evs, _ = scanString(t, Default(), `{"msg":"payment captured `+strings.Repeat("y ", 1000)+`"}`)
	if evs[0].Kind != KindSideEffect {
		t.Fatalf("a phrase at the start of a long message: %s", evs[0].Kind)
	}
}

// TestVocabularyParses checks the embedded file's own syntax errors are
// caught (a broken vocabulary must not ship) and every kind has phrases.
func TestVocabularyParses(t *testing.T) {
	v, err := compileVocab(nil)
	if err != nil {
		t.Fatal(err)
	}
	per := map[Kind]int{}
	for _, p := range v.phrases {
		if !p.other && !p.isQualOnly() {
			per[p.kind]++
		}
	}
	for k := KindReceived; k < numKinds; k++ {
		if per[k] == 0 {
			t.Errorf("no phrase for %s", k)
		}
	}
	for _, bad := range []string{"[nosuch]\nx\n", "phrase before section\n", "[+hit extra]\nx\n", "[check sideways]\nx\n"} {
		w := &vocab{words: map[string]uint32{}, user: newTrie(), kinds: newTrie(), quals: newTrie()}
		if err := w.parse(vocabSource{name: "t", text: bad}); err == nil {
			t.Errorf("%q parsed", bad)
		}
	}
}

// FuzzClassify: a verdict depends on the message's template only, so the
// cache is exact: after any other message, a message gets the verdict a
// fresh classifier decides; and digits changed do not change it.
func FuzzClassify(f *testing.F) {
	for _, s := range [][2]string{{"lock acquired", "locka cquired"}, {"Lock acquired lock:payment:order:ord-1", "x"},
		{"Task t[1] received", "Task t[2] received"},
		{"cache miss for k9", "cache miss for k"}, {"ÅccountLocked 42", "accountLocked"}, {"a * b", ""},
		{"id 90d80b9a-6632-adee-4a41 ok", "id 1-adee ok"}, {"id 9:adee ok", "id 9 adee ok"}, {"lockAcquired", "lock acquired"},
		{"ab 12 34", "ab 12"}} {
		f.Add(s[0], s[1])
	}
	m := Default()
	f.Fuzz(func(t *testing.T, a, b string) {
		c := &classifier{v: m.vocab}
		c.classify(a)
		c.classify(b)
		got := c.classify(b) // from either cache
		fresh := (&classifier{v: m.vocab}).decide([]byte(b))
		if got != fresh {
			t.Fatalf("%q after %q: cached %+v, fresh %+v", b, a, got, fresh)
		}
		// The cache key is the template wordIter reads, no more, no less.
		ha, _ := templateHash([]byte(a))
		hb, _ := templateHash([]byte(b))
		if same := ha == hb; same != (TemplateOf(a) == TemplateOf(b)) {
			t.Fatalf("%q and %q: templates %q and %q, hashes equal: %v", a, b, TemplateOf(a), TemplateOf(b), same)
		}
		shifted := []byte(b)
		for i, x := range shifted {
			if x >= '0' && x <= '8' {
				shifted[i] = x + 1
			}
		}
		if other := (&classifier{v: m.vocab}).decide(shifted); other != fresh && utf8.ValidString(b) {
			t.Fatalf("%q and %q differ only in digits: %+v vs %+v", b, shifted, fresh, other)
		}
	})
}

func quote(s string) string {
	var b strings.Builder
	b.WriteByte('"')
	for _, r := range s {
		switch r {
		case '"', '\\':
			b.WriteByte('\\')
		}
		b.WriteRune(r)
	}
	b.WriteByte('"')
	return b.String()
}
