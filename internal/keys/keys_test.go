package keys

import (
	"context"
	"strings"
	"testing"
	"time"

	"github.com/dupctl/dupctl/internal/logs"
	"github.com/dupctl/dupctl/internal/testenv/loggen"
)

var t0 = time.Date(2026, 11, 3, 9, 0, 0, 0, time.UTC)

func TestClassify(t *testing.T) {
	at := func(n int, d time.Duration) attemptCtx {
		return attemptCtx{attempt: n, time: t0.Add(d), consumer: "worker-" + string(rune('0'+n)), delivery: "msg-" + string(rune('a'+n))}
	}
	ctx := []attemptCtx{at(1, 0), at(2, 3*time.Second)}
	cases := []struct {
		name     string
		keys     []string
		class    Class
		template string
	}{
		{"attempt", []string{"payment:ord-1:1", "payment:ord-1:2"}, ClassAttempt, "payment:{businessKey}:{attempt}"},
		{"attempt-zero-based", []string{"payment:ord-1:try0", "payment:ord-1:try1"}, ClassAttempt, "payment:{businessKey}:{attempt}"},
		{"uuid4", []string{"payment:ord-1:38cc500d-cb6a-4bea-98ef-98ef0b570a19", "payment:ord-1:356d885d-f76c-42a0-8010-6010bed80645"},
			ClassUUID4, "payment:{businessKey}:{uuid4}"},
		{"uuid7", []string{"ord-1/" + uuid7(t0), "ord-1/" + uuid7(t0.Add(3*time.Second))}, ClassTimeID, "{businessKey}/{time-id}"},
		{"ulid", []string{"pay_ord-1_" + ulid(t0), "pay_ord-1_" + ulid(t0.Add(3*time.Second))}, ClassTimeID, "pay_{businessKey}_{time-id}"},
		{"objectid", []string{"ord-1:" + objectID(t0), "ord-1:" + objectID(t0.Add(3*time.Second))}, ClassTimeID, "{businessKey}:{time-id}"},
		{"unix-ms", []string{"payment:ord-1:1793696400000", "payment:ord-1:1793696403000"}, ClassUnixTime, "payment:{businessKey}:{unix-time}"},
		{"unix-s-suffix", []string{"1793696400-payment-ord-1", "1793696403-payment-ord-1"}, ClassUnixTime, "{unix-time}-payment-{businessKey}"},
		{"iso", []string{"payment-ord-1-2026-11-03T09:00:00.100Z", "payment-ord-1-2026-11-03T09:00:03.100Z"}, ClassTimestamp,
			"payment-{businessKey}-{timestamp}"},
		{"compact-ts", []string{"payment-ord-1-20261103T090000.100", "payment-ord-1-20261103T090000.800"}, ClassTimestamp,
			"payment-{businessKey}-{timestamp}"},
		{"delivery", []string{"payment:ord-1:msg-b", "payment:ord-1:msg-c"}, ClassDelivery, "payment:{businessKey}:{delivery-id}"},
		{"instance", []string{"payment:ord-1:worker-1", "payment:ord-1:worker-2"}, ClassInstance, "payment:{businessKey}:{instance}"},
		{"sha256", []string{"e3b0c44298fc1c149afbf4c8996fb92427ae41e4649b934ca495991b7852b855",
			"9f86d081884c7d659a2feaa0c55ad015a3bf4f1b2b0b822cd15d6c15b0f00a08"}, ClassHash, "{hash}"},
		{"nonce", []string{"pay:ord-1:Zk3qP9xW2mLr8TbV", "pay:ord-1:Qa7Yt2NcXe5Rw1Ju"}, ClassRandom, "pay:{businessKey}:{random}"},
		{"other", []string{"pay:ord-1:alpha", "pay:ord-1:beta"}, ClassOther, "pay:{businessKey}:{?}"},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			seg := analyse(c.keys, ctx)
			if seg.verdict.class != c.class {
				t.Errorf("class %s (%s), want %s; values %q", seg.verdict.class, seg.verdict.detail, c.class, seg.values)
			}
			if got := seg.template("ord-1"); got != c.template {
				t.Errorf("template %q, want %q", got, c.template)
			}
		})
	}
	if s := analyse([]string{"payment:ord-1:1", "payment:ord-1:2"}, ctx).stable("ord-1"); s != "payment:{businessKey}" {
		t.Errorf("stable key %q", s)
	}
}

func uuid7(t time.Time) string {
	ms := uint64(t.UnixMilli())
	return strings.ToLower(hex48(ms)[:8] + "-" + hex48(ms)[8:] + "-7abc-9def-0123456789ab")
}

func hex48(v uint64) string {
	const h = "0123456789abcdef"
	b := make([]byte, 12)
	for i := 11; i >= 0; i-- {
		b[i] = h[v&15]
		v >>= 4
	}
	return string(b)
}

func ulid(t time.Time) string {
	const a = "0123456789ABCDEFGHJKMNPQRSTVWXYZ"
	ms := uint64(t.UnixMilli())
	b := make([]byte, 26)
	for i := 9; i >= 0; i-- {
		b[i] = a[ms&31]
		ms >>= 5
	}
	for i := 10; i < 26; i++ {
		b[i] = a[(i*7)%32]
	}
	return string(b)
}

func objectID(t time.Time) string {
	return hex48(uint64(t.Unix()))[4:] + "aabbccddeeff0011"
}

// TestCorpusKeys: on the generated fleet, every unstable-key incident is
// found, confirmed as retries, classified by what actually varies, and
// nothing else is flagged.
func TestCorpusKeys(t *testing.T) {
	for _, d := range loggen.Dialects() {
		t.Run(string(d), func(t *testing.T) {
			var b strings.Builder
			sum, err := loggen.Write(loggen.Config{Seed: 11, Jobs: 3200, IncidentEvery: 20, Dialect: d}, loggen.Single(&b))
			if err != nil {
				t.Fatal(err)
			}
			want := map[string]bool{}
			for _, in := range sum.Incidents {
				if in.Cause == loggen.UnstableKey {
					want[in.BusinessKey] = true
				}
			}
			res, err := Run(context.Background(), []logs.Source{logs.ReaderSource("-", strings.NewReader(b.String()))}, Options{})
			if err != nil {
				t.Fatal(err)
			}
			classes := map[Class]int{}
			for _, u := range res.Unstable {
				if !want[u.BusinessKey] || !u.Confirmed || u.Effects != 2 {
					t.Errorf("unexpected %s confirmed=%v effects=%d: %v", u.BusinessKey, u.Confirmed, u.Effects, u.Uses)
				}
				classes[u.Class]++
				delete(want, u.BusinessKey)
			}
			if len(want) > 0 {
				t.Errorf("missed %v", want)
			}
			for _, c := range []Class{ClassAttempt, ClassUnixTime, ClassUUID4, ClassTimestamp} {
				if classes[c] == 0 {
					t.Errorf("no %s found: %v", c, classes)
				}
			}
			if len(classes) != 4 {
				t.Errorf("classes %v", classes)
			}
			if len(res.Reused)+len(res.Missing)+len(res.CaseVariants) != 0 {
				t.Errorf("hygiene findings on a clean corpus: %+v %+v %+v", res.Reused, res.Missing, res.CaseVariants)
			}
		})
	}
}

func TestHygiene(t *testing.T) {
	in := strings.Join([]string{
		`{"event":"side_effect","orderId":"o1","idempotencyKey":"k1","payloadHash":"p1"}`,
		`{"event":"side_effect","orderId":"o2","idempotencyKey":"k1","payloadHash":"p1"}`,
		`{"event":"side_effect","orderId":"o3","idempotencyKey":"k3","payloadHash":"p1"}`,
		`{"event":"received","orderId":"o3","idempotencyKey":"k3","payloadHash":"p2"}`,
		`{"event":"side_effect","orderId":"o4","jobType":"email"}`,
		`{"event":"received","orderId":"o5","idempotencyKey":"Pay-O5"}`,
		`{"event":"received","orderId":"o6","idempotencyKey":"pay-o5 "}`,
	}, "\n")
	res, err := Run(context.Background(), []logs.Source{logs.ReaderSource("in.log", strings.NewReader(in))}, Options{})
	if err != nil {
		t.Fatal(err)
	}
	if len(res.Reused) != 2 || res.Reused[0].Key != "k1" || len(res.Reused[0].BusinessKeys) != 2 || res.Reused[1].Key != "k3" ||
		len(res.Reused[1].Payloads) != 2 {
		t.Errorf("reused: %+v", res.Reused)
	}
	if len(res.Missing) != 1 || res.Missing[0].JobType != "email" || res.Missing[0].Where[0] != "in.log:5" {
		t.Errorf("missing: %+v", res.Missing)
	}
	if len(res.CaseVariants) != 1 {
		t.Errorf("case variants: %+v", res.CaseVariants)
	}
	rep := res.Report()
	codes := map[string]int{}
	for _, f := range rep.Findings {
		codes[f.Code]++
	}
	if codes["KEY_REUSED"] != 2 || codes["KEY_MISSING"] != 1 || codes["KEY_CASE_VARIANT"] != 1 {
		t.Errorf("codes %v", codes)
	}
}

// FuzzAnalyse: any pair of keys is split, classified and templated
// without a panic, and the split puts the keys back together.
func FuzzAnalyse(f *testing.F) {
	f.Add("payment:ord-1:1", "payment:ord-1:2", 1, 2)
	f.Add("a-2026-11-03T09:00:00Z", "a-2026-11-03T09:00:03Z", 0, 0)
	f.Add("", "x", 0, 1)
	f.Add("::::", ":::", 3, 3)
	f.Fuzz(func(t *testing.T, a, b string, n1, n2 int) {
		keys := []string{a, b}
		ctx := []attemptCtx{{attempt: n1, time: t0}, {attempt: n2, time: t0.Add(time.Second)}}
		seg := analyse(keys, ctx)
		for i, k := range keys {
			if seg.prefix+seg.values[i]+seg.suffix != k {
				t.Fatalf("split of %q: %q + %q + %q", k, seg.prefix, seg.values[i], seg.suffix)
			}
		}
		_ = seg.template(a)
		_ = seg.stable(b)
	})
}
