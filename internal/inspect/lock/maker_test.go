package lock

import (
	"fmt"
	"testing"
)

// The exact bytes each library writes, from its source (see maker.go for
// the file each rule cites). redsync and bsm/redislock are also exercised
// with the real libraries in inspect_test.go.
func TestRecogniseLibraries(t *testing.T) {
	type want struct {
		maker string
		role  Role
		owner string
		class OwnerClass
	}
	for _, c := range []struct {
		name string
		o    observed
		want want
	}{
		{"seed SET NX PX uuid", observed{key: "lock:payment:order:42", typ: "string", pttl: 30000, read: true, value: "8d0c5a1e-3b2a-4c1d-9e8f-0a1b2c3d4e5f"},
			want{MakerSetNXPX, RoleLock, "8d0c5a1e-3b2a-4c1d-9e8f-0a1b2c3d4e5f", OwnerUUID}},
		{"redsync genValue", observed{key: "mutex:order:42", typ: "string", pttl: 8000, read: true, value: "MCiQIxzoyJVISKvLAwhztw=="},
			want{MakerRedsync, RoleLock, "MCiQIxzoyJVISKvLAwhztw==", OwnerRandom}},
		{"redislock token", observed{key: "lock:order:42", typ: "string", pttl: 8000, read: true, value: "Xk3_9aQ-zP1mN8bV2cL7wR"},
			want{MakerRedislock, RoleLock, "Xk3_9aQ-zP1mN8bV2cL7wR", OwnerRandom}},
		{"redislock token+metadata", observed{key: "lock:order:42", typ: "string", pttl: 8000, read: true, value: `Xk3_9aQ-zP1mN8bV2cL7wR{"host":"w1"}`},
			want{MakerRedislock, RoleLock, "Xk3_9aQ-zP1mN8bV2cL7wR", OwnerRandom}},
		{"redisson RLock hash", observed{key: "myLock", typ: "hash", pttl: 30000, read: true, fields: []string{"6a4c2d1e-1234-4abc-9def-0123456789ab:57", "2"}},
			want{MakerRedisson, RoleLock, "6a4c2d1e-1234-4abc-9def-0123456789ab:57", OwnerUUID}},
		{"redisson fencing counter", observed{key: "redisson_lock_token:{myLock}", typ: "string", pttl: -1, read: true, value: "17"},
			want{MakerRedisson, RoleFence, "", OwnerNone}},
		{"spring RedisLockRegistry", observed{key: "registry:order-42", typ: "string", pttl: 60000, read: true, value: "3f2504e0-4f89-41d3-9a0c-0305e82c3301"},
			want{MakerSetNXPX, RoleLock, "3f2504e0-4f89-41d3-9a0c-0305e82c3301", OwnerUUID}},
		{"shedlock current", observed{key: "job-lock:default:report", typ: "string", pttl: 60000, read: true, value: "ADDED:2026-12-01T11:59:00.123Z@web-1.example.internal:3f2504e0-4f89-41d3-9a0c-0305e82c3301"},
			want{MakerShedLock, RoleLock, "ADDED:2026-12-01T11:59:00.123Z@web-1.example.internal:3f2504e0-4f89-41d3-9a0c-0305e82c3301", OwnerUUID}},
		{"shedlock old", observed{key: "job-lock:default:report", typ: "string", pttl: 60000, read: true, value: "ADDED:2021-05-12T13:31:45.006Z@lixin-macbook.local"},
			want{MakerShedLock, RoleLock, "ADDED:2021-05-12T13:31:45.006Z@lixin-macbook.local", OwnerHost}},
		{"bullmq job lock", observed{key: "bull:emails:123:lock", typ: "string", pttl: 30000, read: true, value: "0a1b2c3d-1234-4abc-9def-0123456789ab:7"},
			want{MakerBullMQ, RoleLock, "0a1b2c3d-1234-4abc-9def-0123456789ab:7", OwnerUUID}},
		{"bullmq dedup", observed{key: "bull:emails:de:order-42", typ: "string", pttl: 5000, read: true, value: "123"},
			want{MakerBullMQ, RoleDedup, "123", OwnerJobID}},
		{"sidekiq LOCKED", observed{key: "uniquejobs:9e107d9d372bb6826bd81d3542a419d6:LOCKED", typ: "hash", pttl: -1, read: true, fields: []string{"fe3a4bd1c2e9a8b7c6d5e4f3", "1764590400.123"}},
			want{MakerSidekiq, RoleLock, "fe3a4bd1c2e9a8b7c6d5e4f3", OwnerRandom}},
		{"sidekiq INFO", observed{key: "uniquejobs:9e107d9d372bb6826bd81d3542a419d6:INFO", typ: "string", pttl: -1, read: true, value: `{"worker":"X"}`},
			want{MakerSidekiq, RoleMeta, "", OwnerNone}},
		{"sidekiq digests", observed{key: "uniquejobs:digests", typ: "zset", pttl: -1},
			want{MakerSidekiq, RoleIndex, "", OwnerNone}},
		{"asynq unique", observed{key: "asynq:{default}:unique:email:send:9e107d9d372bb6826bd81d3542a419d6", typ: "string", pttl: 3600000, read: true, value: "8d0c5a1e-3b2a-4c1d-9e8f-0a1b2c3d4e5f"},
			want{MakerAsynq, RoleDedup, "8d0c5a1e-3b2a-4c1d-9e8f-0a1b2c3d4e5f", OwnerJobID}},
		{"generic fence counter", observed{key: "lock:order:42:fence", typ: "string", pttl: -1, read: true, value: "9"},
			want{MakerUnknown, RoleFence, "9", OwnerNone}},
		{"constant", observed{key: "lock:order:42", typ: "string", pttl: 30000, read: true, value: "locked"},
			want{MakerUnknown, RoleLock, "locked", OwnerConstant}},
	} {
		t.Run(c.name, func(t *testing.T) {
			j := judged{o: c.o, segs: splitKey(c.o.key, testNow)}
			judgeKey(&j, testNow)
			got := want{j.r.maker, j.r.role, j.r.owner, j.own.Class}
			if got != c.want {
				t.Errorf("got %+v, want %+v", got, c.want)
			}
		})
	}
}

func TestFencedKey(t *testing.T) {
	for key, want := range map[string]string{
		"lock:order:42:fence":         "lock:order:42",
		"fence:lock:order:42":         "lock:order:42",
		"lock:fencing_token:order:42": "lock:order:42",
		"lock:order:42":               "lock:order:42",
	} {
		if got := fencedKey(key); got != want {
			t.Errorf("fencedKey(%q) = %q, want %q", key, got, want)
		}
	}
}

func TestClassifyOwner(t *testing.T) {
	for v, want := range map[string]OwnerClass{
		"1":                                    OwnerConstant,
		"LOCKED":                               OwnerConstant,
		"":                                     OwnerConstant,
		"lock:order:42":                        OwnerConstant, // the key itself
		"8d0c5a1e-3b2a-4c1d-9e8f-0a1b2c3d4e5f": OwnerUUID,
		"9e107d9d372bb6826bd81d3542a419d6":     OwnerRandom,
		"MCiQIxzoyJVISKvLAwhztw==":             OwnerRandom,
		"web-7f9c8d6b5-x2x9k":                  OwnerHost,
		"10.0.3.4":                             OwnerHost,
		"worker-0":                             OwnerHost,
		"web1:31337":                           OwnerHost,
		"31337@web1":                           OwnerHost,
		"1764590400123":                        OwnerTimestamp,
		"2026-12-01T11:59:00Z":                 OwnerTimestamp,
		"12345":                                OwnerCounter,
		"deadbeef":                             OwnerLowEntropy,
		"my-service-worker-instance-01":        OwnerHost,
		"job-runner":                           OwnerLowEntropy,
		"host-a:8d0c5a1e-3b2a-4c1d-9e8f-0a1b2c3d4e5f": OwnerUUID,
	} {
		if got := classifyOwner(v, "lock:order:42", testNow).Class; got != want {
			t.Errorf("classifyOwner(%q) = %s, want %s", v, got, want)
		}
	}
}

func TestSettingsFindings(t *testing.T) {
	type got struct {
		code string
		sev  string
	}
	for _, c := range []struct {
		s    Server
		want []got
	}{
		{Server{Policy: "noeviction", AOF: true, Role: "master"}, nil},
		{Server{Policy: "allkeys-lru", MaxMemory: 1 << 30, AOF: true, Role: "master"}, []got{{"LOCK_REDIS_EVICTION", "error"}}},
		{Server{Policy: "volatile-ttl", AOF: true, Role: "master"}, []got{{"LOCK_REDIS_EVICTION", "warn"}}},
		{Server{Policy: "noeviction", EvictedKeys: 3, AOF: true, Role: "master"}, []got{{"LOCK_REDIS_EVICTED_KEYS", "error"}}},
		{Server{Policy: "noeviction", AOF: true, Role: "slave"}, []got{{"LOCK_REDIS_REPLICA", "warn"}}},
		{Server{Policy: "noeviction", Role: "master"}, []got{{"LOCK_REDIS_PERSISTENCE", "info"}}},
	} {
		var out []got
		for _, f := range settingsFindings(c.s) {
			out = append(out, got{f.Code, f.Severity.String()})
		}
		if fmt.Sprint(out) != fmt.Sprint(c.want) {
			t.Errorf("%+v: %v, want %v", c.s, out, c.want)
		}
	}
}
