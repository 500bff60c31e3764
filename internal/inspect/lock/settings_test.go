package lock

import (
	"fmt"
	"testing"
)

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
