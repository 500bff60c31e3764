package judge

import (
	"testing"
	"time"

	"github.com/dupctl/dupctl/internal/inspect/lock/internal/keyshape"
	"github.com/dupctl/dupctl/internal/inspect/lock/internal/keyspace"
	"github.com/dupctl/dupctl/internal/inspect/lock/internal/makers"
)

func TestFamiliesCollapseVaryingWords(t *testing.T) {
	fs := NewFamilies()
	names := []string{"alice", "bob", "carol", "dave", "erin", "frank", "grace", "heidi", "ivan", "judy", "mallory",
		"niaj", "olivia", "peggy", "rupert", "sybil", "trent", "victor", "walter"}
	for _, n := range names {
		fs.Get(keyshape.Split("lock:report:"+n, testNow)).keys++
	}
	fs.Get(keyshape.Split("lock:other", testNow)).keys++
	got := map[string]int64{}
	for _, f := range fs.Finish() {
		got[f.Tmpl] = f.keys
	}
	if len(got) != 2 || got["lock:report:{name}"] != int64(len(names)) || got["lock:other"] != 1 {
		t.Errorf("families = %v, want lock:report:{name} with %d keys and lock:other", got, len(names))
	}
}

func TestFormatMs(t *testing.T) {
	for ms, want := range map[int64]string{
		-1: "none", 0: "0ms", 250: "250ms", 8123: "8.1s", 30_000: "30s", 90_000: "1.5m", 599_950: "10m",
		3_599_950: "1h", 5_400_000: "1.5h", 86_400_000: "24h", 86_400_000 * 12: "12d",
	} {
		if got := FormatMs(ms); got != want {
			t.Errorf("FormatMs(%d) = %q, want %q", ms, got, want)
		}
	}
}

func TestJudgePositions(t *testing.T) {
	type tc struct {
		key, class string
	}
	now := testNow
	for _, c := range []tc{
		{"lock:payment:order:8d0c5a1e-3b2a-4c1d-9e8f-0a1b2c3d4e5f", ClassBusiness},
		{"lock:job:8d0c5a1e-3b2a-4c1d-9e8f-0a1b2c3d4e5f", ClassPerRun},
		{"lock:8d0c5a1e-3b2a-4c1d-9e8f-0a1b2c3d4e5f", ClassPerRun},
		{"lock:order:" + uuidV7(now), ClassPerRun}, // minted with the lock
		{"lock:order:" + uuidV7(now.Add(-48*time.Hour)), ClassBusiness},
		{"lock:task:123", ClassPerRun},
		{"lock:order:123", ClassBusiness},
		{"lock:sync:2026-12-01", ClassTimeBucket},
		{"uniquejobs:9e107d9d372bb6826bd81d3542a419d6:LOCKED", ClassHashed},
		{"lock:nightly", ClassConstant},
		{"lock:fe3a4bd1c2e9a8b7c6d5e4f3", ClassPerRun},
		{"lock:Xk3_9aQ-zP1mN8bV2cL7wR", ClassPerRun},
		// A session's lock is keyed by the session it protects
		// (phpredis: PHPREDIS_SESSION:<session id>_LOCK).
		{"PHPREDIS_SESSION:k3v0a9b1c2d3e4f5g6h7i8j9k0l1m2n3_LOCK", ClassBusiness},
		{"lock:session:Xk3_9aQ-zP1mN8bV2cL7wR", ClassBusiness},
		{"lock:sync_job:123", ClassPerRun}, // the label's last word names a job
	} {
		segs := keyshape.Split(c.key, testNow)
		f := newFamily(keyshape.Template(segs), segs)
		j := Judged{Observed: keyspace.Key{Key: c.key, PTTL: 1000, Idle: 0}, Segs: segs, Recognised: makers.Recognised{Role: makers.RoleLock,
			Maker: makers.Unknown}, Owner: Owner{Class: OwnerUUID}}
		f.Add(&j, now, 0, DefaultMinConfidence)
		if got, _ := f.keyClass(); got != c.class {
			t.Errorf("%s: key class %s, want %s", c.key, got, c.class)
		}
	}
}
