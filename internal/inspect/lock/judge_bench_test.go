package lock

import (
	"strconv"
	"testing"

	"github.com/dupctl/dupctl/internal/inspect/lock/internal/keyspace"
	"github.com/dupctl/dupctl/internal/inspect/lock/lockbench"
)

// BenchmarkJudgeKeyspace measures dupctl's own work on the keyspace of
// bench/inspect-lock (lockbench), without Redis: each page judged, folded
// into families, and the report made, as Run does after the reads. On the
// full 1,200,000 keys dupctl's CPU is as much as Redis's on two cores
// (docs/benchmarks.md), so what this saves is wall time there.
//
//	go test ./internal/inspect/lock -run '^$' -bench JudgeKeyspace -benchtime 5x
func BenchmarkJudgeKeyspace(b *testing.B) {
	ks := readKeyspace(100_000, 20_000)
	o := Options{All: true, Top: 20}
	o.defaults()
	cfg, err := o.judgeConfig()
	if err != nil {
		b.Fatal(err)
	}
	now := o.Now()
	b.ReportAllocs()
	for b.Loop() {
		a := newAggregator(o)
		a.cfg = cfg
		for start := 0; start < len(ks.keys); start += 1000 {
			p := &keyspace.Page{Keys: append([]keyspace.Key(nil), ks.keys[start:min(start+1000, len(ks.keys))]...), ReadAt: now}
			js := cfg.Page(p, now)
			for i := range js {
				a.add(&js[i])
			}
		}
		a.finish(newResult(o, nil, false))
	}
	b.ReportMetric(float64(b.Elapsed().Nanoseconds())/float64(b.N*len(ks.keys)), "ns/key")
}

// keyspaceReads is a lockbench keyspace as the reader hands it to the
// judge: every key's type, TTL and value read, idle 30 s.
type keyspaceReads struct {
	keys []keyspace.Key
	at   map[string]int
}

func readKeyspace(locks, others int) *keyspaceReads {
	ks := &keyspaceReads{at: map[string]int{}}
	lockbench.Write(ks, locks, others)
	return ks
}

// key is the key named k, added on its first write.
func (ks *keyspaceReads) key(k, typ string) *keyspace.Key {
	i, ok := ks.at[k]
	if !ok {
		i = len(ks.keys)
		ks.at[k] = i
		ks.keys = append(ks.keys, keyspace.Key{Key: k, Node: "127.0.0.1:6379", Type: typ, PTTL: -1, Idle: 30, Read: true, Idx: i % 1000})
	}
	return &ks.keys[i]
}

// Cmd applies the commands lockbench writes: SET [PX], HSET, PEXPIRE,
// SADD, RPUSH and ZADD (the reader reads a sorted set's first members
// with their scores, and no value of a set or list).
func (ks *keyspaceReads) Cmd(args ...string) {
	switch args[0] {
	case "SET":
		k := ks.key(args[1], "string")
		k.Value = args[2][:min(len(args[2]), maxValueRead)]
		if len(args) == 5 && args[3] == "PX" {
			k.PTTL, _ = strconv.ParseInt(args[4], 10, 64)
		}
	case "HSET":
		k := ks.key(args[1], "hash")
		k.Fields = append(k.Fields, args[2:]...)
	case "PEXPIRE":
		ks.key(args[1], "").PTTL, _ = strconv.ParseInt(args[2], 10, 64)
	case "ZADD":
		k := ks.key(args[1], "zset")
		for i := 2; i+1 < len(args); i += 2 {
			k.Fields = append(k.Fields, args[i+1], args[i])
		}
	case "SADD":
		ks.key(args[1], "set").Read = false
	case "RPUSH":
		ks.key(args[1], "list").Read = false
	default:
		panic("lockbench wrote " + args[0])
	}
}

// maxValueRead is the reader's GETRANGE bound (keyspace.maxValue).
const maxValueRead = 1024
