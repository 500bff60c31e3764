package judge

import (
	"testing"

	"github.com/dupctl/dupctl/internal/inspect/lock/internal/keyshape"
	"github.com/dupctl/dupctl/internal/inspect/lock/internal/keyspace"
	"github.com/dupctl/dupctl/internal/inspect/lock/internal/makers"
)

// The exact bytes each library writes, from its source (see maker.go for
// the file each rule cites). redsync and bsm/redislock are also exercised
// with the real libraries in inspect_test.go.
func TestRecogniseLibraries(t *testing.T) {
	type want struct {
		maker string
		role  makers.Role
		owner string
		class OwnerClass
	}
	for _, c := range []struct {
		name string
		o    keyspace.Key
		want want
	}{
		{"seed SET NX PX uuid", keyspace.Key{Key: "lock:payment:order:42", Type: "string", PTTL: 30000, Read: true,
			Value: "8d0c5a1e-3b2a-4c1d-9e8f-0a1b2c3d4e5f"},
			want{makers.SetNXPX, makers.RoleLock, "8d0c5a1e-3b2a-4c1d-9e8f-0a1b2c3d4e5f", OwnerUUID}},
		{"redsync genValue", keyspace.Key{Key: "mutex:order:42", Type: "string", PTTL: 8000, Read: true, Value: "MCiQIxzoyJVISKvLAwhztw=="},
			want{makers.Redsync, makers.RoleLock, "MCiQIxzoyJVISKvLAwhztw==", OwnerRandom}},
		{"redislock token", keyspace.Key{Key: "lock:order:42", Type: "string", PTTL: 8000, Read: true, Value: "Xk3_9aQ-zP1mN8bV2cL7wR"},
			want{makers.Redislock, makers.RoleLock, "Xk3_9aQ-zP1mN8bV2cL7wR", OwnerRandom}},
		{"redislock token+metadata", keyspace.Key{Key: "lock:order:42", Type: "string", PTTL: 8000, Read: true,
			Value: `Xk3_9aQ-zP1mN8bV2cL7wR{"host":"w1"}`},
			want{makers.Redislock, makers.RoleLock, "Xk3_9aQ-zP1mN8bV2cL7wR", OwnerRandom}},
		{"redisson RLock hash", keyspace.Key{Key: "myLock", Type: "hash", PTTL: 30000, Read: true,
			Fields: []string{"6a4c2d1e-1234-4abc-9def-0123456789ab:57", "2"}},
			want{makers.Redisson, makers.RoleLock, "6a4c2d1e-1234-4abc-9def-0123456789ab:57", OwnerUUID}},
		{"redisson fencing counter", keyspace.Key{Key: "redisson_lock_token:{myLock}", Type: "string", PTTL: -1, Read: true, Value: "17"},
			want{makers.Redisson, makers.RoleFence, "", OwnerNone}},
		{"spring RedisLockRegistry", keyspace.Key{Key: "registry:order-42", Type: "string", PTTL: 60000, Read: true,
			Value: "3f2504e0-4f89-41d3-9a0c-0305e82c3301"},
			want{makers.SetNXPX, makers.RoleLock, "3f2504e0-4f89-41d3-9a0c-0305e82c3301", OwnerUUID}},
		{"shedlock current", keyspace.Key{Key: "job-lock:default:report", Type: "string", PTTL: 60000, Read: true,
			Value: "ADDED:2026-12-01T11:59:00.123Z@web-1.example.internal:3f2504e0-4f89-41d3-9a0c-0305e82c3301"},
			want{makers.ShedLock, makers.RoleLock, "ADDED:2026-12-01T11:59:00.123Z@web-1.example.internal:3f2504e0-4f89-41d3-9a0c-0305e82c3301",
				OwnerUUID}},
		{"shedlock old", keyspace.Key{Key: "job-lock:default:report", Type: "string", PTTL: 60000, Read: true,
			Value: "ADDED:2021-05-12T13:31:45.006Z@lixin-macbook.local"},
			want{makers.ShedLock, makers.RoleLock, "ADDED:2021-05-12T13:31:45.006Z@lixin-macbook.local", OwnerHost}},
		{"bullmq job lock", keyspace.Key{Key: "bull:emails:123:lock", Type: "string", PTTL: 30000, Read: true,
			Value: "0a1b2c3d-1234-4abc-9def-0123456789ab:7"},
			want{makers.BullMQ, makers.RoleLock, "0a1b2c3d-1234-4abc-9def-0123456789ab:7", OwnerUUID}},
		{"bullmq dedup", keyspace.Key{Key: "bull:emails:de:order-42", Type: "string", PTTL: 5000, Read: true, Value: "123"},
			want{makers.BullMQ, makers.RoleDedup, "123", OwnerJobID}},
		{"sidekiq LOCKED", keyspace.Key{Key: "uniquejobs:9e107d9d372bb6826bd81d3542a419d6:LOCKED", Type: "hash", PTTL: -1, Read: true,
			Fields: []string{"fe3a4bd1c2e9a8b7c6d5e4f3", "1764590400.123"}},
			want{makers.Sidekiq, makers.RoleLock, "fe3a4bd1c2e9a8b7c6d5e4f3", OwnerRandom}},
		{"sidekiq INFO", keyspace.Key{Key: "uniquejobs:9e107d9d372bb6826bd81d3542a419d6:INFO", Type: "string", PTTL: -1, Read: true,
			Value: `{"worker":"X"}`},
			want{makers.Sidekiq, makers.RoleMeta, "", OwnerNone}},
		{"sidekiq digests", keyspace.Key{Key: "uniquejobs:digests", Type: "zset", PTTL: -1},
			want{makers.Sidekiq, makers.RoleMeta, "", OwnerNone}},
		{"asynq unique", keyspace.Key{Key: "asynq:{default}:unique:email:send:9e107d9d372bb6826bd81d3542a419d6", Type: "string", PTTL: 3600000,
			Read: true, Value: "8d0c5a1e-3b2a-4c1d-9e8f-0a1b2c3d4e5f"},
			want{makers.Asynq, makers.RoleDedup, "8d0c5a1e-3b2a-4c1d-9e8f-0a1b2c3d4e5f", OwnerJobID}},
		{"generic fence counter", keyspace.Key{Key: "lock:order:42:fence", Type: "string", PTTL: -1, Read: true, Value: "9"},
			want{makers.Unknown, makers.RoleFence, "9", OwnerNone}},
		{"constant", keyspace.Key{Key: "lock:order:42", Type: "string", PTTL: 30000, Read: true, Value: "locked"},
			want{makers.Unknown, makers.RoleLock, "locked", OwnerConstant}},
	} {
		t.Run(c.name, func(t *testing.T) {
			j := Judged{Observed: c.o, Segs: keyshape.Split(c.o.Key, testNow)}
			judgeKey(&j, testNow)
			got := want{j.Recognised.Maker, j.Recognised.Role, j.Recognised.Owner, j.Owner.Class}
			if got != c.want {
				t.Errorf("got %+v, want %+v", got, c.want)
			}
		})
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
