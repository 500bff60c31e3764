package logs

import (
	"bytes"
	"compress/gzip"
	"context"
	"errors"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"
)

func scanString(t *testing.T, m *Mapping, in string) ([]Event, Stats) {
	t.Helper()
	var out []Event
	st, err := Scan(context.Background(), []Source{ReaderSource("-", strings.NewReader(in))}, Options{Mapping: m}, func(e *Event) error {
		out = append(out, e.Clone())
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	return out, st
}

func TestDialects(t *testing.T) {
	ts := time.Date(2026, 11, 3, 9, 0, 0, 123_000_000, time.UTC)
	cases := []struct {
		name, line string
		kind       Kind
		ttl        time.Duration
	}{
		{"camel", `{"ts":"2026-11-03T09:00:00.123Z","event":"lock_acquired","jobId":"j1","messageId":"m1","orderId":"o1",` +
			`"idempotencyKey":"payment:o1","lockKey":"lock:o1","lockToken":"tok","lockTtlMs":30000,"attempt":2,"redelivered":true,` +
			`"consumerInstanceId":"w1","jobType":"payment"}`, KindLockAcquired, 30 * time.Second},
		{"snake-zap", `{"level":"info","ts":1793696400.123,"msg":"lock acquired","event":"lock_acquired","job_id":"j1","message_id":"m1",` +
			`"order_id":"o1","idempotency_key":"payment:o1","lock_key":"lock:o1","lock_token":"tok","lock_ttl_ms":30000,"attempt":2,` +
			`"redelivered":true,"consumer_instance_id":"w1","job_type":"payment"}`, KindLockAcquired, 30 * time.Second},
		{"logstash-mdc", `{"@timestamp":"2026-11-03T10:00:00.123+01:00","@version":"1","message":"Lock acquired lock:o1","level":"INFO",` +
			`"HOSTNAME":"w1","mdc":{"jobId":"j1","messaging.message.id":"m1","orderId":"o1","jobType":"payment","idempotencyKey":"payment:o1",` +
			`"lockKey":"lock:o1","lockToken":"tok","lockTtlMs":"30000","attempt":"2","redelivered":"true"}}`, KindLockAcquired, 30 * time.Second},
		{"logstash-top", `{"@timestamp":"2026-11-03T09:00:00.123Z","message":"Acquired lock lock:o1","consumerInstanceId":"w1","jobId":"j1",` +
			`"messageId":"m1","orderId":"o1","jobType":"payment","idempotencyKey":"payment:o1","lockKey":"lock:o1","lockToken":"tok",` +
			`"lockTtl":"PT30S","attempt":"2","redelivered":"true"}`, KindLockAcquired, 30 * time.Second},
		{"slog", `{"time":"2026-11-03T09:00:00.123Z","level":"INFO","msg":"lock_acquired","worker":"w1","job":{"id":"j1","type":"payment"},` +
			`"order":{"id":"o1"},"messaging":{"message":{"id":"m1"}},"idempotency_key":"payment:o1","lock":{"key":"lock:o1","token":"tok",` +
			`"ttl":30000000000},"attempt":2,"redelivered":true}`, KindLockAcquired, 30 * time.Second},
		{"otel-attributes", `{"timeUnixNano":"1793696400123000000","body":"lock acquired","attributes":{"messaging.message.id":"m1",` +
			`"messaging.client.id":"w1","jobId":"j1","orderId":"o1","jobType":"payment","idempotency.key":"payment:o1","lock.key":"lock:o1",` +
			`"lock.token":"tok","lock.ttl":"30s","messaging.servicebus.message.delivery_count":2,"redelivered":true}}`, KindLockAcquired,
			30 * time.Second},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			evs, st := scanString(t, Default(), c.line+"\n")
			if st.Malformed != 0 || len(evs) != 1 {
				t.Fatalf("malformed=%d events=%d %v", st.Malformed, len(evs), st.Samples)
			}
			e := evs[0]
			want := map[Field]string{JobID: "j1", MessageID: "m1", BusinessKey: "o1", IdempotencyKey: "payment:o1", LockKey: "lock:o1",
				LockToken: "tok", Consumer: "w1", JobType: "payment"}
			for f, v := range want {
				if e.Get(f) != v {
					t.Errorf("%s = %q, want %q", f, e.Get(f), v)
				}
			}
			if e.Kind != c.kind || e.LockTTL != c.ttl || e.Attempt != 2 || e.Redelivered != True {
				t.Errorf("kind %s ttl %s attempt %d redelivered %v", e.Kind, e.LockTTL, e.Attempt, e.Redelivered)
			}
			if !e.Time.Equal(ts) {
				t.Errorf("time %s, want %s", e.Time, ts)
			}
			if e.Line != 1 || e.Source != "-" {
				t.Errorf("where %s", e.Where())
			}
		})
	}
}

func TestOverridesAndEvents(t *testing.T) {
	var c Config
	for _, f := range []string{"businessKey=payload.order.ref", "idempotencyKey=headers.Idem"} {
		if err := c.AddFieldFlag(f); err != nil {
			t.Fatal(err)
		}
	}
	if err := c.AddEventFlag("side_effect=charged * EUR"); err != nil {
		t.Fatal(err)
	}
	m, err := Compile(c)
	if err != nil {
		t.Fatal(err)
	}
	line := `{"msg":"charged 12 EUR","orderId":"ignored","payload":{"order":{"ref":"R-1"}},"headers":{"Idem":"k1"}}`
	evs, _ := scanString(t, m, line)
	if evs[0].Kind != KindSideEffect || evs[0].BusinessKey() != "R-1" || evs[0].IdempotencyKey() != "k1" {
		t.Fatalf("got %s %q %q", evs[0].Kind, evs[0].BusinessKey(), evs[0].IdempotencyKey())
	}
	if err := c.AddFieldFlag("nosuch=x"); err == nil {
		t.Fatal("unknown field accepted")
	}
	for _, bad := range []string{"(", "charged 12 EUR", "* charged", "charged *", "[x]"} {
		if _, err := Compile(Config{Events: map[string][]string{"side_effect": {bad}}}); err == nil {
			t.Errorf("phrase %q accepted", bad)
		}
	}
	if _, err := Compile(Config{Events: map[string][]string{"charge": {"charged card"}}}); err == nil {
		t.Error("unknown kind accepted")
	}
	cfg, err := LoadConfig(strings.NewReader(`{"fields":{"businessKey":["tenant.order"]},"eventNames":{"side_effect":["payment.charged"]}}`))
	if err != nil {
		t.Fatal(err)
	}
	m, _ = Compile(cfg)
	evs, _ = scanString(t, m, `{"event":"payment.charged","tenant":{"order":"T-9"}}`)
	if evs[0].Kind != KindSideEffect || evs[0].BusinessKey() != "T-9" {
		t.Fatalf("config: %s %q", evs[0].Kind, evs[0].BusinessKey())
	}
}

func TestMalformedAndStrict(t *testing.T) {
	in := "{\"event\":\"acked\"}\nnot json\n\n[1,2]\n{\"event\":\"acked\"\n{\"event\":\"received\"}"
	evs, st := scanString(t, Default(), in)
	if len(evs) != 2 || st.Malformed != 3 || st.Lines != 6 {
		t.Fatalf("events %d malformed %d lines %d", len(evs), st.Malformed, st.Lines)
	}
	if st.Samples[0].Line != 2 || st.Samples[1].Line != 4 || st.Samples[2].Line != 5 || evs[1].Line != 6 {
		t.Fatalf("samples %+v", st.Samples)
	}
	_, err := Scan(context.Background(), []Source{ReaderSource("x.log", strings.NewReader(in))}, Options{Strict: true},
		func(*Event) error { return nil })
	var me *MalformedError
	if !errors.As(err, &me) || me.Sample.Where() != "x.log:2" {
		t.Fatalf("strict: %v", err)
	}
}

// TestChunksAndLongLines checks that events keep input order and line
// numbers across chunks, files and gzip, with lines far longer than a
// chunk, and that a selective pass sees the same chunk numbers.
func TestChunksAndLongLines(t *testing.T) {
	dir := t.TempDir()
	var want []string
	var plain bytes.Buffer
	for i := 0; i < 3000; i++ {
		pad := ""
		if i%700 == 5 {
			pad = strings.Repeat("x", 300_000)
		}
		id := "j" + itoa(int64(i))
		want = append(want, id)
		plain.WriteString(`{"event":"received","jobId":"` + id + `","pad":"` + pad + "\"}\n")
	}
	half := bytes.IndexByte(plain.Bytes()[plain.Len()/2:], '\n') + plain.Len()/2 + 1
	if err := os.WriteFile(filepath.Join(dir, "a.log"), plain.Bytes()[:half], 0o644); err != nil {
		t.Fatal(err)
	}
	var gz bytes.Buffer
	zw := gzip.NewWriter(&gz)
	zw.Write(plain.Bytes()[half:])
	zw.Close()
	if err := os.WriteFile(filepath.Join(dir, "b.log.gz"), gz.Bytes(), 0o644); err != nil {
		t.Fatal(err)
	}
	srcs, err := Expand([]string{dir}, nil)
	if err != nil || len(srcs) != 2 {
		t.Fatalf("expand: %v %d", err, len(srcs))
	}
	var got []string
	chunks := map[string]int{}
	o := Options{ChunkSize: 64 << 10, Workers: 3}
	st, err := Scan(context.Background(), srcs, o, func(e *Event) error {
		id := strings.Clone(e.JobID()) // events borrow the scanner's buffers
		got = append(got, id)
		chunks[id] = e.Chunk
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	for i := range got {
		if i < len(want) && got[i] != want[i] {
			t.Fatalf("event %d is %s, want %s", i, got[i], want[i])
		}
	}
	if strings.Join(got, ",") != strings.Join(want, ",") || st.Lines != 3000 {
		t.Fatalf("order or count wrong: %d events, %d lines", len(got), st.Lines)
	}
	// Second pass: only odd chunks.
	o.Parse = func(c int) bool { return c%2 == 1 }
	n := 0
	_, err = Scan(context.Background(), srcs, o, func(e *Event) error {
		if chunks[e.JobID()] != e.Chunk || e.Chunk%2 != 1 {
			t.Fatalf("chunk of %s: %d then %d", e.JobID(), chunks[e.JobID()], e.Chunk)
		}
		n++
		return nil
	})
	if err != nil || n == 0 || n == 3000 {
		t.Fatalf("selective pass: %v, %d events", err, n)
	}
}

func TestParseTimeAndDuration(t *testing.T) {
	want := time.Date(2026, 11, 3, 9, 0, 0, 0, time.UTC)
	for _, s := range []string{"2026-11-03T09:00:00Z", "2026-11-03 09:00:00", "2026-11-03T10:00:00+01:00", "2026-11-03T10:00:00+0100",
		"1793696400", "1793696400000", "1793696400000000", "1793696400000000000", "2026-11-03 09:00:00,000", "Tue, 03 Nov 2026 09:00:00 +0000"} {
		got, ok := parseTime(s, unitAuto)
		if !ok || !got.Equal(want) {
			t.Errorf("parseTime(%q) = %v %v", s, got, ok)
		}
	}
	for _, c := range []struct {
		s   string
		u   unit
		ttl bool
		d   time.Duration
	}{
		{"1.5s", unitAuto, false, 1500 * time.Millisecond}, {"PT1M2.5S", unitAuto, false, 62500 * time.Millisecond},
		{"250", unitMs, false, 250 * time.Millisecond}, {"1.5", unitAuto, false, 1500 * time.Millisecond},
		{"30", unitAuto, true, 30 * time.Second}, {"30000", unitAuto, true, 30 * time.Second},
		{"2000000000", unitAuto, false, 2 * time.Second}, {"120", unitAuto, false, 120 * time.Millisecond}, {"-1", unitAuto, false, 0},
	} {
		if got := parseDuration(c.s, c.u, c.ttl); got != c.d {
			t.Errorf("parseDuration(%q) = %s, want %s", c.s, got, c.d)
		}
	}
}

func TestSpellings(t *testing.T) {
	got := strings.Join(spellings("lockTtl"), " ")
	for _, w := range []string{"lockTtl", "lock_ttl", "lock.ttl", "LOCK_TTL", "lockTTL", "LockTtl", "lock-ttl"} {
		if !strings.Contains(" "+got+" ", " "+w+" ") {
			t.Errorf("spellings(lockTtl) lacks %s: %s", w, got)
		}
	}
}

func TestExports(t *testing.T) {
	dir := t.TempDir()
	arr := `  [{"event":"side_effect","orderId":"o1","idempotencyKey":"k1"},
 {"event":"side_effect","order_id":"o2","idempotency_key":"k2"}]`
	csvText := "order_id,idempotency_key,attempt,event\no3,k3,2,side_effect\n\"o4\",\"k,4\",1,received\n"
	os.WriteFile(filepath.Join(dir, "dlq.json"), []byte(arr), 0o644)
	os.WriteFile(filepath.Join(dir, "rows.csv"), []byte(csvText), 0o644)
	srcs, err := Expand([]string{filepath.Join(dir, "*")}, nil)
	if err != nil {
		t.Fatal(err)
	}
	var got []string
	_, err = Scan(context.Background(), srcs, Options{}, func(e *Event) error {
		got = append(got, e.BusinessKey()+"/"+e.IdempotencyKey()+"/"+e.Kind.String()+"/"+itoa(int64(e.Attempt))+"@"+filepath.Base(e.Where()))
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	want := "o1/k1/side_effect/0@dlq.json:1 o2/k2/side_effect/0@dlq.json:2 o3/k3/side_effect/2@rows.csv:2 o4/k,4/received/1@rows.csv:3"
	if strings.Join(got, " ") != want {
		t.Fatalf("got  %s\nwant %s", strings.Join(got, " "), want)
	}
}
