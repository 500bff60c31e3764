package replay

import (
	"strings"
	"testing"
	"time"

	amqp "github.com/rabbitmq/amqp091-go"
)

func msg(headers amqp.Table, body string) *Message {
	return &Message{Props: Properties{Headers: headers, MessageID: "m"}, Body: []byte(body)}
}

func TestClassifyBuiltinAndUserRules(t *testing.T) {
	rules, err := ParseRules(strings.NewReader("# ours\nnon-retryable error (?i)insufficient funds\nretryable header.x-kind ^transient$\n"), "r.txt")
	must(t, err)
	a := &Analyzer{Rules: rules}
	for _, tc := range []struct {
		h    amqp.Table
		want Class
		rule string
	}{
		{amqp.Table{"x-exception-message": "Order 42 not found"}, NonRetryable, `built-in rule: error matches "not found"`},
		{amqp.Table{"x-exception-message": "read tcp: i/o timeout"}, Retryable, `built-in rule: error matches "timeout"`},
		{amqp.Table{"error": "Insufficient funds on card"}, NonRetryable, `r.txt:2 rule: error matches "Insufficient funds"`},
		{amqp.Table{"x-kind": "transient", "error": "boom"}, Retryable, `r.txt:3 rule: header.x-kind matches "transient"`},
		{amqp.Table{"x-death": []any{amqp.Table{"reason": "expired", "queue": "q", "count": int64(1)}}}, Retryable, `built-in rule: reason matches "expired"`},
		{amqp.Table{"error": "boom"}, Unclassified, ""},
	} {
		in := a.Analyze(msg(tc.h, ""))
		if in.Class != tc.want || in.ClassRule != tc.rule {
			t.Errorf("%v: got %s (%s), want %s (%s)", tc.h, in.Class, in.ClassRule, tc.want, tc.rule)
		}
	}
}

func TestParseRulesErrors(t *testing.T) {
	for in, want := range map[string]string{
		"maybe error x":         `r:1: class "maybe"`,
		"retryable":             "r:1: want CLASS FIELD REGEX",
		"retryable colour x":    `r:1: field "colour"`,
		"\n\nretryable error (": "r:3: error parsing regexp",
	} {
		_, err := ParseRules(strings.NewReader(in), "r")
		if err == nil || !strings.Contains(err.Error(), want) {
			t.Errorf("%q: got %v, want %q", in, err, want)
		}
	}
}

func TestNormalizeErrorGroupsOneFailureMode(t *testing.T) {
	a := NormalizeError("order 1001 not found (id 3f2a9c1b-0000-4000-8000-00000000abcd at 2026-11-30T12:00:00Z)")
	b := NormalizeError("order 77 not found (id 9e6b865f-1111-4000-8000-00000000ffff at 2026-12-01T08:30:01Z)")
	if a != b || a != "order <n> not found (id <uuid> at <time>)" {
		t.Fatalf("%q vs %q", a, b)
	}
}

func TestRouteChoosesOriginAndGuardsTheDLQ(t *testing.T) {
	death := amqp.Table{"x-death": []any{amqp.Table{"queue": "work", "reason": "rejected", "exchange": "orders",
		"routing-keys": []any{"order.created", "audit"}, "count": int64(1), "time": time.Now()}}}
	m := msg(death, "")
	a := &Analyzer{}
	in := a.Analyze(m)
	if tg, ok := (&Router{}).Route(m, &in); !ok || tg.Exchange != "" || tg.RoutingKey != "work" {
		t.Fatalf("queue routing: %+v", tg)
	}
	if tg, _ := (&Router{Via: ViaExchange}).Route(m, &in); tg.Exchange != "orders" || tg.RoutingKey != "order.created" || len(tg.CC) != 1 {
		t.Fatalf("exchange routing: %+v", tg)
	}
	to, keep, err := ParseTo("retry")
	must(t, err)
	if tg, _ := (&Router{To: to, KeepKey: keep}).Route(m, &in); tg.Exchange != "retry" || tg.RoutingKey != "order.created" {
		t.Fatalf("--to without key: %+v", tg)
	}
	spring := msg(amqp.Table{"x-original-exchange": "billing", "x-original-routingKey": "invoice.create"}, "")
	in = a.Analyze(spring)
	if tg, ok := (&Router{}).Route(spring, &in); !ok || tg.Exchange != "billing" || tg.From != "x-original" {
		t.Fatalf("spring: %+v", tg)
	}
	bare := msg(nil, "")
	in = a.Analyze(bare)
	if _, ok := (&Router{}).Route(bare, &in); ok {
		t.Fatal("a message without origin got a destination")
	}
}

func TestRewriteMovesDeathHistory(t *testing.T) {
	h := amqp.Table{"x-death": []any{amqp.Table{"queue": "work"}}, "x-first-death-queue": "work", "retry-count": int16(5),
		"x-exception-message": "boom", HeaderReplayCount: int64(1),
		HeaderDeath: []any{amqp.Table{"x-death": "older"}}, "tenant": "acme"}
	m := &Message{Props: Properties{Headers: h, MessageID: "m", CorrelationID: "c", UserID: "someone"}}
	rw := Rewrite{Run: "r1", ResetAttempts: "retry-count", User: "guest", Now: time.Unix(0, 0)}
	p := rw.Replayed(m, 7, Target{RoutingKey: "work"})
	for _, k := range []string{"x-death", "x-first-death-queue", "x-exception-message"} {
		if _, ok := p.Headers[k]; ok {
			t.Errorf("%s was copied", k)
		}
	}
	hist := p.Headers[HeaderDeath].([]any)
	if len(hist) != 2 || hist[0].(amqp.Table)["x-first-death-queue"] != "work" || hist[1].(amqp.Table)["x-death"] != "older" {
		t.Fatalf("history: %#v", hist)
	}
	if p.Headers[HeaderReplayCount] != int64(2) || p.Headers[HeaderReplayRun] != "r1" || p.Headers[HeaderReplayID] != "r1-7" ||
		p.Headers["retry-count"] != int16(0) || p.Headers["tenant"] != "acme" {
		t.Fatalf("headers: %#v", p.Headers)
	}
	if p.MessageId != "m" || p.CorrelationId != "c" || p.UserId != "" || p.DeliveryMode != amqp.Persistent {
		t.Fatalf("properties: %+v", p)
	}
	if _, ok := m.Props.Headers["x-death"]; !ok {
		t.Fatal("the source message's headers were modified")
	}
}

// A recoverer-style message (Spring's x-exception-message) replayed once
// and dead-lettered again by the broker keeps its error and class: the
// replay moved the exception headers into dupctl-death, and the broker
// added only x-death (issue 21).
func TestReplayedRecovererMessageKeepsItsClass(t *testing.T) {
	m := &Message{Props: Properties{Headers: amqp.Table{"x-exception-message": "order 17 not found",
		"x-original-exchange": "orders", "x-original-routingKey": "order.created"}}}
	rw := Rewrite{Run: "r1", Now: time.Unix(0, 0)}
	p := rw.Replayed(m, 1, Target{Exchange: "orders", RoutingKey: "order.created"})
	p.Headers["x-death"] = []any{amqp.Table{"queue": "orders.work", "reason": "rejected", "count": int64(1)}}
	again := &Message{Props: Properties{Headers: p.Headers}}
	in := (&Analyzer{}).Analyze(again)
	if in.Error != "order 17 not found" || in.Class != NonRetryable {
		t.Fatalf("after one replay: error %q class %s (%s)", in.Error, in.Class, in.ClassRule)
	}
}

func TestWhereMatchesHeadersAndBody(t *testing.T) {
	m := msg(amqp.Table{"tenant": "acme", "meta": amqp.Table{"tries": int32(3)}}, `{"order":{"id":42,"tags":["a","b"]}}`)
	for spec, want := range map[string]bool{
		"header.tenant=acme": true, "header.tenant!=acme": false, "header.meta.tries=3": true,
		"body.order.id=42": true, "body.order.tags.1=b": true, "body.order.id~^4": true,
		"body.missing": false, "body.missing!=x": true, "header.tenant": true, "prop.message_id=m": true,
	} {
		w, err := ParseWhere(spec)
		must(t, err)
		if got := w.Match(m); got != want {
			t.Errorf("%s: got %v, want %v", spec, got, want)
		}
	}
}

func FuzzParseRules(f *testing.F) {
	f.Add("retryable error (?i)timeout\nnon-retryable header.x-kind ^perm")
	f.Add("# c\n\nnon-retryable body.a.b x y z")
	f.Fuzz(func(t *testing.T, s string) {
		rules, err := ParseRules(strings.NewReader(s), "f")
		if err != nil {
			return
		}
		a := &Analyzer{Rules: rules}
		_ = a.Analyze(msg(amqp.Table{"error": s, "x-kind": s}, s))
		// What parses writes back as lines that parse to the same rules.
		var lines []string
		for _, r := range rules {
			lines = append(lines, string(r.Class)+" "+r.Field+" "+r.Pattern.String())
		}
		again, err := ParseRules(strings.NewReader(strings.Join(lines, "\n")), "f")
		if err != nil || len(again) != len(rules) {
			t.Fatalf("the rules written back do not parse: %v\n%s", err, strings.Join(lines, "\n"))
		}
		for i := range rules {
			if again[i].Class != rules[i].Class || again[i].Field != rules[i].Field || again[i].Pattern.String() != rules[i].Pattern.String() {
				t.Fatalf("round trip changed rule %d: %v -> %v", i, rules[i], again[i])
			}
		}
	})
}

func FuzzParseWhere(f *testing.F) {
	f.Add("header.a=b", `{"a":1}`)
	f.Add("body.x.0.y~^z", `[{"y":"z"}]`)
	f.Fuzz(func(t *testing.T, spec, body string) {
		w, err := ParseWhere(spec)
		if err != nil {
			return
		}
		_ = w.Match(msg(amqp.Table{"a": body}, body))
		// ... and writes back a condition that reads the same.
		again, err := ParseWhere(w.String())
		if err != nil || again.String() != w.String() || again.Op != w.Op || again.Value != w.Value {
			t.Fatalf("%q: written back as %q, read as %q (%v)", spec, w.String(), again.String(), err)
		}
	})
}
