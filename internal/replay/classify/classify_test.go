package classify

import (
	"strings"
	"testing"
	"time"

	"github.com/dupctl/dupctl/internal/deadletter"
	amqp "github.com/rabbitmq/amqp091-go"
)

func msg(headers amqp.Table, body string) *deadletter.Message {
	return &deadletter.Message{Props: deadletter.Properties{Headers: headers, MessageID: "m"}, Body: []byte(body)}
}

func TestClassifyBuiltinAndUserRules(t *testing.T) {
	const text = "# ours\nnon-retryable error (?i)insufficient funds\nretryable header.x-kind ^transient$\n"
	rules, err := ParseRules(strings.NewReader(text), "r.txt")
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
		{amqp.Table{"x-death": []any{amqp.Table{"reason": "expired", "queue": "q", "count": int64(1)}}}, Retryable,
			`built-in rule: reason matches "expired"`},
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
	a := normalizeError("order 1001 not found (id 3f2a9c1b-0000-4000-8000-00000000abcd at 2026-11-30T12:00:00Z)")
	b := normalizeError("order 77 not found (id 9e6b865f-1111-4000-8000-00000000ffff at 2026-12-01T08:30:01Z)")
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

func TestWhereMatchesHeadersAndBody(t *testing.T) {
	m := msg(amqp.Table{"tenant": "acme", "meta": amqp.Table{"tries": int32(3)}}, `{"order":{"id":42,"tags":["a","b"]}}`)
	for spec, want := range map[string]bool{
		"header.tenant=acme": true, "header.tenant!=acme": false, "header.meta.tries=3": true,
		"body.order.id=42": true, "body.order.tags.1=b": true, "body.order.id~^4": true,
		"body.missing": false, "body.missing!=x": true, "header.tenant": true, "prop.message_id=m": true,
	} {
		w, err := ParseWhere(spec)
		must(t, err)
		if got := w.match(m); got != want {
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
		_ = w.match(msg(amqp.Table{"a": body}, body))
		// ... and writes back a condition that reads the same.
		again, err := ParseWhere(w.String())
		if err != nil || again.String() != w.String() || again.Op != w.Op || again.Value != w.Value {
			t.Fatalf("%q: written back as %q, read as %q (%v)", spec, w.String(), again.String(), err)
		}
	})
}

func must(t testing.TB, err error) {
	t.Helper()
	if err != nil {
		t.Fatal(err)
	}
}
