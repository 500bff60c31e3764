package judge

import (
	"strings"
	"testing"

	"github.com/dupctl/dupctl/internal/inspect/lock/internal/keyshape"
	"github.com/dupctl/dupctl/internal/inspect/lock/internal/keyspace"
	"github.com/dupctl/dupctl/internal/inspect/lock/internal/makers"
	"github.com/dupctl/dupctl/internal/platform/findings"
)

// TestBinaryTokensStayTokens: raw random bytes as a lock's owner (16 and
// 32 bytes: no run of five letters, not MessagePack) are no document.
func TestBinaryTokensStayTokens(t *testing.T) {
	for _, v := range []string{"\x9f\x03\xc4\x8eZq\x01\xe2\x7f\xb0\x11k\xd3\x00\x8a\xfe",
		"\x84\xa2\x10\x01\xa4\xff\x9c\x03Xy\x11\xe0\xd4\x8b\x02\x90\xb3\xee\x07\x1dQ\xc8\x94\x01\x8f\xa3\x06\x5e\xf1\x02\x99\xd0"} {
		if got := valueSignals(v, testNow); got != nil {
			t.Errorf("%q taken for data: %v", v, got)
		}
		if c := classifyOwner(v, "k", testNow).Class; c != OwnerRandom {
			t.Errorf("%q: owner %s, want random", v, c)
		}
	}
}

// TestWeigh: one key at a time, what its shape makes of it. Each case is
// a key as a real system holds it; the first group are locks (makers'
// formats as maker.go cites them), the second the data the issue saw
// called locks.
func TestWeigh(t *testing.T) {
	for _, c := range []struct {
		name string
		o    keyspace.Key
		lock bool // candidate at or above DefaultMinConfidence
	}{
		{"redisson hash, no lock word", keyspace.Key{Key: "orders:42", Type: "hash", PTTL: 30000, Idle: 0, Read: true,
			Fields: []string{"6a4c2d1e-1234-4abc-9def-0123456789ab:57", "1"}}, true},
		{"seed SET NX PX, no lock word", keyspace.Key{Key: "payment:order:42", Type: "string", PTTL: 30000, Read: true,
			Value: "8d0c5a1e-3b2a-4c1d-9e8f-0a1b2c3d4e5f"}, true},
		{"redsync with an 8s expiry", keyspace.Key{Key: "order-42", Type: "string", PTTL: 8000, Read: true,
			Value: "MCiQIxzoyJVISKvLAwhztw=="}, true},
		{"redislock with metadata, 3h", keyspace.Key{Key: "reindex:tenant:7", Type: "string", PTTL: 3 * 3_600_000, Read: true,
			Value: `Xk3_9aQ-zP1mN8bV2cL7wR{"worker":"w-1"}`}, true},
		{"shedlock", keyspace.Key{Key: "job-lock:default:report", Type: "string", PTTL: 600000, Read: true,
			Value: "ADDED:2021-05-12T13:31:45.006Z@lixin-macbook.local"}, true},
		{"bullmq", keyspace.Key{Key: "bull:emails:123:lock", Type: "string", PTTL: 30000, Read: true,
			Value: "0a1b2c3d-1234-4abc-9def-0123456789ab:7"}, true},
		{"asynq unique", keyspace.Key{Key: "asynq:{default}:unique:email:send:9e107d9d372bb6826bd81d3542a419d6", Type: "string", PTTL: 3600000,
			Read: true, Value: "8d0c5a1e-3b2a-4c1d-9e8f-0a1b2c3d4e5f"}, true},
		{"sidekiq LOCKED, no TTL", keyspace.Key{Key: "uniquejobs:9e107d9d372bb6826bd81d3542a419d6:LOCKED", Type: "hash", PTTL: -1, Read: true,
			Fields: []string{"fe3a4bd1c2e9a8b7c6d5e4f3", "1764590400.123"}}, true},
		{"named lock holding 1, no TTL", keyspace.Key{Key: "lock:report:1", Type: "string", PTTL: -1, Read: true, Value: "1"}, true},
		{"old SETNX pattern: expiry time as value", keyspace.Key{Key: "lock.foo", Type: "string", PTTL: -1, Read: true,
			Value: "1764680400"}, true},
		// A token in its client's wrapping: Spring's RedisTemplate with
		// its default JDK serializer, Django's cache.add (the Celery
		// cookbook's lock).
		{"RedisTemplate lock, JDK-serialized UUID", keyspace.Key{Key: "lock:order:42", Type: "string", PTTL: 30000, Read: true,
			Value: "\xac\xed\x00\x05t\x00$8d0c5a1e-3b2a-4c1d-9e8f-0a1b2c3d4e5f"}, true},
		{"cache.add lock, pickled oid", keyspace.Key{Key: ":1:feeds.tasks.import_feed-lock-9e107d9d372bb6826bd81d3542a419d6",
			Type: "string", PTTL: 600000, Read: true,
			Value: "\x80\x05\x95(\x00\x00\x00\x00\x00\x00\x00\x8c$8d0c5a1e-3b2a-3c1d-9e8f-0a1b2c3d4e5f\x94."}, true},

		// A lock of the application's own under a library's bare
		// namespace: rate-limit-redis keeps its counters at "rl:<client
		// key>", which says nothing of what else lives under "rl:".
		{"lock holding 1 under rate-limit-redis's rl: namespace", keyspace.Key{Key: "rl:lock:nightly-report", Type: "string",
			PTTL: 30000, Read: true, Value: "1"}, true},
		// resque-lock (defunkt/resque-lock lib/resque/plugins/lock.rb):
		// SETNX "lock:#{name}-#{args.to_s}" true through Resque's
		// "resque" namespace, no TTL; node-resque's "resque:*" used to
		// take it for queue data.
		{"resque-lock's lock under the resque: namespace", keyspace.Key{Key: `resque:lock:UpdateNetworkGraph-["42"]`, Type: "string",
			PTTL: -1, Read: true, Value: "true"}, true},
		{"rate-limit-redis counter", keyspace.Key{Key: "rl:203.0.113.7", Type: "string", PTTL: 60000, Read: true, Value: "3"}, false},
		{"rate-limit-redis counter of a client named lockhart", keyspace.Key{Key: "rl:lockhart", Type: "string", PTTL: 60000,
			Read: true, Value: "1"}, false},

		{"clock offset", keyspace.Key{Key: "clock:offset_ms", Type: "string", PTTL: -1, Read: true, Value: "-12"}, false},
		{"deadlock counter", keyspace.Key{Key: "deadlock_count", Type: "string", PTTL: -1, Read: true, Value: "3"}, false},
		{"lock-wait metric", keyspace.Key{Key: "stats:lock_wait_ms", Type: "string", PTTL: -1, Read: true, Value: "250"}, false},
		{"blockedBy set", keyspace.Key{Key: "user:42:blockedBy", Type: "set", PTTL: -1}, false},
		{"session JSON", keyspace.Key{Key: "session:cHUDWMGAO65f8ofCpbiMKgo3jVRl", Type: "string", PTTL: 1_800_000, Read: true,
			Value: `{"user_id":42}`}, false},
		{"session token", keyspace.Key{Key: "sess:1f22d598dd93cd43d99afd0c61ad3ea9", Type: "string", PTTL: 7_200_000, Read: true,
			Value: "8d0c5a1e-3b2a-4c1d-9e8f-0a1b2c3d4e5f"}, false},
		{"user hash", keyspace.Key{Key: "user:42", Type: "hash", PTTL: -1, Read: true, Fields: []string{"name", "Ada", "email",
			"ada@example.com"}}, false},
		{"status cache", keyspace.Key{Key: "status:payment:42", Type: "string", PTTL: 86_400_000, Read: true, Value: "SUCCEEDED"}, false},
		{"status cache, no data word", keyspace.Key{Key: "payment:42", Type: "string", PTTL: 86_400_000, Read: true, Value: "SUCCEEDED"}, false},
		{"csrf token shaped like redsync's", keyspace.Key{Key: "csrf:1669fad0ad5c6e0cd194ae34", Type: "string", PTTL: 7_200_000, Read: true,
			Value: "MCiQIxzoyJVISKvLAwhztw=="}, false},
		{"feature flag", keyspace.Key{Key: "feature:dark_mode", Type: "string", PTTL: -1, Read: true, Value: "true"}, false},
		{"big hash", keyspace.Key{Key: "orders:index", Type: "hash", PTTL: -1, Read: true, MoreFields: true,
			Fields: []string{"6a4c2d1e-1234-4abc-9def-0123456789ab:57", "1"}}, false},
		{"cache with lock in the name", keyspace.Key{Key: "cache:lock_screen", Type: "string", PTTL: -1, Read: true,
			Value: `{"enabled":true}`}, false},
		// Binary documents, as go-redis/cache v9 (MessagePack; s2 past 64
		// bytes) and gorilla sessions in rbcervilla/redisstore (gob) wrote
		// them in testdata/go-heldout: not random tokens.
		{"go-redis/cache msgpack entry", keyspace.Key{Key: "product:1", Type: "string", PTTL: 3_600_000, Read: true,
			Value: "\x84\xa2ID\x01\xa4Name\xa9Product 1\xa5Price\xcb@#\x00\x00\x00\x00\x00\x00\xa4Tags\xc0"}, false},
		{"go-redis/cache s2-compressed entry", keyspace.Key{Key: "product:0", Type: "string", PTTL: 3_600_000, Read: true,
			Value: "U\xf0T\x84\xa2ID\x00\xa4Name\xa9Product 0\xa5Price\xcb\x00\x00\x00\x00\x00\x00\x00\x00\xa4Tags\x95" +
				"\xa7kitchen\xa6garden\xa9clearance\xabspring-sale\xa6bundle\x01"}, false},
		{"gob session under a neutral name", keyspace.Key{Key: "web:LT7BSIIWWYLPUJ522HYRZBSRY5", Type: "string", PTTL: 60_000,
			Read: true, Value: "\r\x7f\x04\x01\x02\xff\x80\x00\x01\x10\x01\x10\x00\x00;\xff\x80\x00\x02\x06string\x0c\t\x00" +
				"\auser_id\x03int\x04\x02\x00R"}, false},
		// Cache entries of other ecosystems under a lease-like TTL and a
		// name that says nothing (appdata_test.go writes them in full).
		{"PHP serialize() of true (Symfony cache)", keyspace.Key{Key: "app:feature_enabled_3", Type: "string", PTTL: 60000, Read: true,
			Value: "b:1;"}, false},
		{"PHP serialize() of an int", keyspace.Key{Key: "app:product_stock_3", Type: "string", PTTL: 60000, Read: true, Value: "i:3;"}, false},
		{"Rails 7.1 cache entry of a UUID", keyspace.Key{Key: "assigned_driver/71", Type: "string", PTTL: 60000, Read: true,
			Value: "\x00\x11\x02\x00\x00\x40\x1f\xa0\x28\xda\x41\xff\xff\xff\xff8d0c5a1e-3b2a-4c1d-9e8f-0a1b2c3d4e5f"}, false},
		{"Ruby Marshal of a String", keyspace.Key{Key: "shop/featured/7", Type: "string", PTTL: 60000, Read: true,
			Value: "\x04\bI\"\nhello\x06:\x06ET"}, false},
		{"JDK-serialized UUID, no lock word", keyspace.Key{Key: "couriers::1002", Type: "string", PTTL: 60000, Read: true,
			Value: "\xac\xed\x00\x05t\x00$8d0c5a1e-3b2a-4c1d-9e8f-0a1b2c3d4e5f"}, false},
		{"Flask-Caching: ! and a pickled UUID", keyspace.Key{Key: "dispatch:300:assignee", Type: "string", PTTL: 60000, Read: true,
			Value: "!\x80\x05\x95(\x00\x00\x00\x00\x00\x00\x00\x8c$8d0c5a1e-3b2a-4c1d-9e8f-0a1b2c3d4e5f\x94."}, false},
	} {
		j := Judged{Observed: c.o, Segs: keyshape.Split(c.o.Key, testNow)}
		judgeKey(&j, testNow)
		isLock := (j.Recognised.Role == makers.RoleLock || j.Recognised.Role == makers.RoleDedup) &&
			j.Verdict.Confidence() >= DefaultMinConfidence
		if isLock != c.lock || (!c.lock && j.Verdict.Candidate()) {
			t.Errorf("%s: confidence %.2f (%s), want a lock: %v", c.name, j.Verdict.Confidence(), strings.Join(j.Verdict.Set.Names(), ", "), c.lock)
		}
	}
}

// TestGrantedNeverBelowRemaining: every lock's granted TTL (PTTL + idle)
// is at least its PTTL, so the family's median must be too, though the
// histogram's bins alone put it below (59s falls in a bin whose middle
// is 57s).
func TestGrantedNeverBelowRemaining(t *testing.T) {
	segs := keyshape.Split("lock:order:1", testNow)
	f := newFamily(keyshape.Template(segs), segs)
	for range 9 {
		j := Judged{Observed: keyspace.Key{Key: "lock:order:1", Type: "string", PTTL: 59_000, Idle: 0, Read: true, Value: "x"}, Segs: segs,
			Recognised: makers.Recognised{Role: makers.RoleLock}}
		f.Add(&j, testNow, 0, DefaultMinConfidence)
	}
	ts := f.ttlStats()
	if ts.MedianMs != 59_000 || ts.GrantedMedianMs < ts.MedianMs || ts.GrantedMedianMs != 59_000 {
		t.Errorf("remaining median %d, granted %d: want both 59000", ts.MedianMs, ts.GrantedMedianMs)
	}
	if ts.GrantedFrom != "pttl + idle time, median over 9 locks" {
		t.Errorf("granted_from %q", ts.GrantedFrom)
	}
}

// TestPossibleFamiliesAreOneInfoLine: a family of possible locks (shape
// only) is not judged; it is one info line naming the pattern that would
// confirm it.
func TestPossibleFamiliesAreOneInfoLine(t *testing.T) {
	segs := keyshape.Split("payment:order:1", testNow)
	f := newFamily(keyshape.Template(segs), segs)
	for range 3 {
		j := Judged{Observed: keyspace.Key{Key: "payment:order:1", Type: "string", PTTL: -1, Read: true, Value: "1"}, Segs: segs,
			Recognised: makers.Recognised{Role: makers.RoleLock}, Owner: Owner{Class: OwnerConstant}, Verdict: Verdict{logit: 0.2},
			Certainty: Possible}
		f.Add(&j, testNow, 0, DefaultMinConfidence)
	}
	if _, fs := f.Report(Options{MinConfidence: DefaultMinConfidence}); len(fs) != 0 {
		t.Fatalf("a possible family judged: %v", fs)
	}
	p, fi := f.PossibleReport(Suggestion{Glob: f.Suggest(false), Matches: f.Keys()})
	if fi.Severity != findings.Info || fi.Code != RulePossible.Code || p.Suggest != "payment:order:*" ||
		!strings.Contains(fi.Message, "confirm with {LockPatterns} 'payment:order:*' (it matches ") {
		t.Errorf("%s %s: %s (%+v)", fi.Severity, fi.Code, fi.Message, p)
	}
}

// TestSuggestionNeverConfirmsEverything: a family of one-segment names
// (gocron-redis-lock's redsync mutexes, named by the job) has the template
// {id}, whose glob "*" would confirm every key in Redis as a lock: the
// suggestion keeps what its examples start with.
func TestSuggestionNeverConfirmsEverything(t *testing.T) {
	for _, c := range []struct {
		tmpl     string
		examples []string
		want     string
	}{
		{"{id}", []string{"cleanup-tenant-0", "cleanup-tenant-1", "cleanup-tenant-2"}, "cleanup-tenant-*"},
		{"{id}:{int}", []string{"job[a]:1", "job[a]:2"}, `job\[a\]:*`},
		{"{id}", []string{"alpha", "beta"}, "*"}, // nothing in common: nothing narrower to say
		{"payment:order:{int}", []string{"payment:order:1", "payment:order:2"}, "payment:order:*"},
		// A collapsed library prefix keeps what its keys start with: never
		// *:*:invoice:*, which confirms any a:b:invoice:c key (issue 42).
		{"{name}:{name}:invoice:{int}", []string{"acme:billing:invoice:1", "acme:crm:invoice:2"}, "acme:*:invoice:*"},
	} {
		if got := suggestFor(c.tmpl, c.examples, false); got != c.want {
			t.Errorf("suggestFor(%q, %q) = %q, want %q", c.tmpl, c.examples, got, c.want)
		}
	}
}

// TestTightPattern: placeholders keep their shape where a glob can say it,
// so a suggestion need not catch a counter of another shape beside the
// locks under the same prefix.
func TestTightPattern(t *testing.T) {
	for tmpl, want := range map[string]string{
		"lock:{uuid}":          "lock:????????-????-????-????-????????????",
		"order:pay:{int}":      "order:pay:[0-9]*",
		"lock:{name}:{base64}": "lock:*:*",
	} {
		if got := TightPattern(tmpl); got != want {
			t.Errorf("TightPattern(%q) = %q, want %q", tmpl, got, want)
		}
	}
}

// TestCountersAtOne: keys holding 1 whose siblings hold other numbers are
// counters at their first hit (Rack::Attack's throttle counts); beside
// siblings skipped for anything else, or holding another constant, they
// stay possible locks.
func TestCountersAtOne(t *testing.T) {
	segs := keyshape.Split("rack::attack:29847123:req/ip:10.0.0.1", testNow)
	tmpl := keyshape.Template(segs)
	possible := func(vals ...string) *Tally {
		f := newFamily(tmpl, segs)
		for _, v := range vals {
			j := Judged{Observed: keyspace.Key{Key: "rack::attack:29847123:req/ip:10.0.0.1", Type: "string", PTTL: 60000, Read: true,
				Value: v}, Segs: segs, Recognised: makers.Recognised{Role: makers.RoleLock}, Owner: Owner{Class: OwnerConstant},
				Certainty: Possible}
			f.Add(&j, testNow, 0, DefaultMinConfidence)
		}
		return f
	}
	skipped := func(whys ...string) *Tally {
		f := newFamily(tmpl, segs)
		for _, why := range whys {
			f.AddSkipped(&keyspace.Key{Key: "rack::attack:29847123:req/ip:10.0.0.2", Type: "string"}, why)
		}
		return f
	}
	counters := skipped(sigInteger.String(), sigInteger.String(), "no TTL")
	if !possible("1", "1", "0").CountersAtOne(counters) {
		t.Error("1s among counters not taken for counters")
	}
	for name, c := range map[string]struct {
		f, twin *Tally
	}{
		"no twin":               {possible("1"), nil},
		"twin of other data":    {possible("1"), skipped("no TTL", "no TTL", sigInteger.String())},
		"a constant not 0 or 1": {possible("1", "locked"), counters},
	} {
		if c.f.CountersAtOne(c.twin) {
			t.Errorf("%s: taken for counters", name)
		}
	}
	counters.AddCounters(possible("1", "1"))
	if r := counters.SkippedReport(); r.Keys != 5 || r.Reasons[countersAtOne] != 2 {
		t.Errorf("after AddCounters: %+v", r)
	}
}
