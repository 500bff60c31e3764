package lock

import (
	"strings"
	"testing"

	"github.com/dupctl/dupctl/internal/platform/findings"
)

func TestNameWords(t *testing.T) {
	for key, want := range map[string][2]bool{
		"lock:payment:order:42":   {true, false},
		"myLock":                  {true, false},
		"HTTPLock":                {true, false},
		"job-lock:default:x":      {true, false},
		"distributed_mutex:a":     {true, false},
		"leases:node-1":           {true, false},
		"clock:offset_ms":         {false, true}, // "offset"
		"deadlock_count":          {false, true}, // "count"
		"user:42:blockedBy":       {false, false},
		"account:7:locked":        {false, false}, // a state, not a lock
		"stats:lock_wait_ms":      {true, true},
		"session:abc":             {false, true},
		"cache:lock_screen":       {true, true},
		"orders:42":               {false, false},
		"redisson_lock_token:{x}": {true, true},
	} {
		l, o := nameWords(key)
		if [2]bool{l, o} != want {
			t.Errorf("nameWords(%q) = lock %v, other %v; want %v", key, l, o, want)
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
		o    observed
		lock bool // candidate at or above DefaultMinConfidence
	}{
		{"redisson hash, no lock word", observed{key: "orders:42", typ: "hash", pttl: 30000, idle: 0, read: true, fields: []string{"6a4c2d1e-1234-4abc-9def-0123456789ab:57", "1"}}, true},
		{"seed SET NX PX, no lock word", observed{key: "payment:order:42", typ: "string", pttl: 30000, read: true, value: "8d0c5a1e-3b2a-4c1d-9e8f-0a1b2c3d4e5f"}, true},
		{"redsync with an 8s expiry", observed{key: "order-42", typ: "string", pttl: 8000, read: true, value: "MCiQIxzoyJVISKvLAwhztw=="}, true},
		{"redislock with metadata, 3h", observed{key: "reindex:tenant:7", typ: "string", pttl: 3 * 3_600_000, read: true, value: `Xk3_9aQ-zP1mN8bV2cL7wR{"worker":"w-1"}`}, true},
		{"shedlock", observed{key: "job-lock:default:report", typ: "string", pttl: 600000, read: true, value: "ADDED:2021-05-12T13:31:45.006Z@lixin-macbook.local"}, true},
		{"bullmq", observed{key: "bull:emails:123:lock", typ: "string", pttl: 30000, read: true, value: "0a1b2c3d-1234-4abc-9def-0123456789ab:7"}, true},
		{"asynq unique", observed{key: "asynq:{default}:unique:email:send:9e107d9d372bb6826bd81d3542a419d6", typ: "string", pttl: 3600000, read: true, value: "8d0c5a1e-3b2a-4c1d-9e8f-0a1b2c3d4e5f"}, true},
		{"sidekiq LOCKED, no TTL", observed{key: "uniquejobs:9e107d9d372bb6826bd81d3542a419d6:LOCKED", typ: "hash", pttl: -1, read: true, fields: []string{"fe3a4bd1c2e9a8b7c6d5e4f3", "1764590400.123"}}, true},
		{"named lock holding 1, no TTL", observed{key: "lock:report:1", typ: "string", pttl: -1, read: true, value: "1"}, true},
		{"old SETNX pattern: expiry time as value", observed{key: "lock.foo", typ: "string", pttl: -1, read: true, value: "1764680400"}, true},

		{"clock offset", observed{key: "clock:offset_ms", typ: "string", pttl: -1, read: true, value: "-12"}, false},
		{"deadlock counter", observed{key: "deadlock_count", typ: "string", pttl: -1, read: true, value: "3"}, false},
		{"lock-wait metric", observed{key: "stats:lock_wait_ms", typ: "string", pttl: -1, read: true, value: "250"}, false},
		{"blockedBy set", observed{key: "user:42:blockedBy", typ: "set", pttl: -1}, false},
		{"session JSON", observed{key: "session:cHUDWMGAO65f8ofCpbiMKgo3jVRl", typ: "string", pttl: 1_800_000, read: true, value: `{"user_id":42}`}, false},
		{"session token", observed{key: "sess:1f22d598dd93cd43d99afd0c61ad3ea9", typ: "string", pttl: 7_200_000, read: true, value: "8d0c5a1e-3b2a-4c1d-9e8f-0a1b2c3d4e5f"}, false},
		{"user hash", observed{key: "user:42", typ: "hash", pttl: -1, read: true, fields: []string{"name", "Ada", "email", "ada@example.com"}}, false},
		{"status cache", observed{key: "status:payment:42", typ: "string", pttl: 86_400_000, read: true, value: "SUCCEEDED"}, false},
		{"status cache, no data word", observed{key: "payment:42", typ: "string", pttl: 86_400_000, read: true, value: "SUCCEEDED"}, false},
		{"csrf token shaped like redsync's", observed{key: "csrf:1669fad0ad5c6e0cd194ae34", typ: "string", pttl: 7_200_000, read: true, value: "MCiQIxzoyJVISKvLAwhztw=="}, false},
		{"feature flag", observed{key: "feature:dark_mode", typ: "string", pttl: -1, read: true, value: "true"}, false},
		{"big hash", observed{key: "orders:index", typ: "hash", pttl: -1, read: true, moreFields: true, fields: []string{"6a4c2d1e-1234-4abc-9def-0123456789ab:57", "1"}}, false},
		{"cache with lock in the name", observed{key: "cache:lock_screen", typ: "string", pttl: -1, read: true, value: `{"enabled":true}`}, false},
	} {
		j := judged{o: c.o, segs: splitKey(c.o.key, testNow)}
		judgeKey(&j, testNow)
		isLock := (j.r.role == RoleLock || j.r.role == RoleDedup) && j.v.confidence() >= DefaultMinConfidence
		if isLock != c.lock || (!c.lock && j.v.candidate()) {
			t.Errorf("%s: confidence %.2f (%s), want a lock: %v", c.name, j.v.confidence(), strings.Join(j.v.set.names(), ", "), c.lock)
		}
	}
}

func TestSplitRedislock(t *testing.T) {
	for v, want := range map[string][2]string{
		"Xk3_9aQ-zP1mN8bV2cL7wR":               {"Xk3_9aQ-zP1mN8bV2cL7wR", ""},
		`Xk3_9aQ-zP1mN8bV2cL7wR{"host":"w1"}`:  {"Xk3_9aQ-zP1mN8bV2cL7wR", `{"host":"w1"}`},
		"Xk3_9aQ-zP1mN8bV2cL7wRworker-7":       {"Xk3_9aQ-zP1mN8bV2cL7wR", "worker-7"},
		"-GJRaH90V3OCf50wfmNK0w|batch-0":       {"-GJRaH90V3OCf50wfmNK0w", "|batch-0"},
		"rLPBLQLG-NmrFSpsbcbecw{}":             {"rLPBLQLG-NmrFSpsbcbecw", "{}"},
		"Xk3_9aQ-zP1mN8bV2cL7wRq8ZtY2pLx0Vb":   {}, // a 34-character random token
		"8d0c5a1e-3b2a-4c1d-9e8f-0a1b2c3d4e5f": {}, // a UUID
		"9e107d9d372bb6826bd81d3542a419d6":     {}, // hex
		"MyServiceWorkerInstanc":               {}, // a CamelCase word
		"short":                                {},
	} {
		tok, meta, ok := splitRedislock(v)
		if got := [2]string{tok, meta}; ok != (want != [2]string{}) || ok && got != want {
			t.Errorf("splitRedislock(%q) = %q %q %v, want %q", v, tok, meta, ok, want)
		}
	}
}

// TestGrantedNeverBelowRemaining: every lock's granted TTL (PTTL + idle)
// is at least its PTTL, so the family's median must be too, though the
// histogram's bins alone put it below (59s falls in a bin whose middle
// is 57s).
func TestGrantedNeverBelowRemaining(t *testing.T) {
	segs := splitKey("lock:order:1", testNow)
	f := newFamily(template(segs), segs)
	for range 9 {
		j := judged{o: observed{key: "lock:order:1", typ: "string", pttl: 59_000, idle: 0, read: true, value: "x"}, segs: segs, r: recognised{role: RoleLock}}
		f.add(&j, testNow, 0, DefaultMinConfidence)
	}
	ts := f.ttlStats()
	if ts.MedianMs != 59_000 || ts.GrantedMedianMs < ts.MedianMs || ts.GrantedMedianMs != 59_000 {
		t.Errorf("remaining median %d, granted %d: want both 59000", ts.MedianMs, ts.GrantedMedianMs)
	}
	if ts.GrantedFrom != "pttl + idle time, median over 9 locks" {
		t.Errorf("granted_from %q", ts.GrantedFrom)
	}
}

// TestUncertainFamiliesAreInfoOnly: below the minimum confidence a
// family's findings are info, worded as conditional.
func TestUncertainFamiliesAreInfoOnly(t *testing.T) {
	segs := splitKey("payment:order:1", testNow)
	f := newFamily(template(segs), segs)
	for range 3 {
		j := judged{o: observed{key: "payment:order:1", typ: "string", pttl: -1, read: true, value: "1"}, segs: segs, r: recognised{role: RoleLock},
			own: Owner{Class: OwnerConstant}, v: verdict{logit: 0.2}}
		f.add(&j, testNow, 0, DefaultMinConfidence)
	}
	_, fs := f.report(judgeOptions{minConfidence: DefaultMinConfidence})
	if len(fs) == 0 {
		t.Fatal("no findings")
	}
	for _, x := range fs {
		if x.Severity != findings.Info || !strings.HasPrefix(x.Message, "if these are locks (confidence 0.55, under 0.70)") {
			t.Errorf("%s %s: %s", x.Severity, x.Code, x.Message)
		}
	}
	_, fs = f.report(judgeOptions{minConfidence: 0.5})
	for _, x := range fs {
		if x.Code == RuleNoTTL.Code && x.Severity != findings.Error {
			t.Errorf("at 0.5, %s is %s", x.Code, x.Severity)
		}
	}
}
