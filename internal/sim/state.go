package sim

import (
	"github.com/dupctl/dupctl/internal/worker"
)

// Ledger statuses.
const (
	stAbsent uint8 = iota
	stProcessing
	stSucceeded
	stFailed
)

var statusNames = [...]string{"absent", "PROCESSING", "SUCCEEDED", "FAILED"}

// Message states in the broker.
const (
	msgReady uint8 = iota
	msgDelayed
	msgUnacked
	msgAcked
	msgDead
)

type message struct {
	Job         int32
	Key         int32
	Attempt     uint8
	Deliveries  uint8
	State       uint8
	Worker      int8
	Redelivered bool
	Dup         bool  // a publisher duplicate
	At          int64 // ready time when delayed, ack deadline when unacked
	Reason      uint8 // dead-letter reason
}

type lockEntry struct {
	Token    uint32 // 0: free
	Exp      int64
	Holder   int8
	Renewals uint8
}

type cacheEntry struct {
	Visible uint8 // what GET returns
	Pending uint8 // the write not yet visible
	At      int64 // when Pending becomes visible; 0: nothing pending
}

type workerState struct {
	Msg      int32 // -1: idle
	Op       worker.Op
	Flow     worker.Flow
	At       worker.Points // fault points reached, decision pending
	Until    int64         // blocked until (work or pause)
	Paused   bool
	Owned    bool // still owns its delivery (no ack deadline or drop since)
	Instance uint8
	Token    uint32
	Fence    uint32
	LockID   int32
	IdemKey  int32
	Delivery int32 // global delivery sequence number of the current delivery
	// Received counts this worker slot's deliveries. It only labels faults
	// ("on W1's 2nd delivery") for replays and is left out of fingerprints.
	Received uint8
}

// State is the whole simulated world. It is copied, hashed and reset by
// the explorers; every field is a value or a slice reused across runs.
type State struct {
	Now        int64
	Msgs       []message
	Locks      []lockEntry
	FenceCtr   []uint32
	Ledger     []uint8 // status by idempotency key id
	Attempts   []uint8
	Cache      []cacheEntry
	Effects    []uint8  // side effects by business key
	FenceMax   []uint32 // highest fencing token the sink accepted, by business key
	W          []workerState
	NextToken  uint32
	Deliveries int32
	Steps      int32

	Crash, Pause, Drop, Dup, Fail int8  // fault budget left
	Failover                      int8  // failovers left
	DupAt                         int64 // a timed duplicate still to come; 0: none

	Dups            uint16 // side effects beyond the first
	NonOwnerUnlocks uint16
	LockExpiries    uint16
	AckTimeouts     uint16
	Renewals        uint16
	Fenced          uint16
	Caught          uint16 // duplicates stopped by the idempotency layer
	Overwrites      uint16 // SUCCEEDED overwritten by FAILED
	LocksLost       uint16 // locks a failover took before they replicated

	// Derived from the fields above, kept so a step does not scan every
	// message, lock and cache entry; left out of fingerprints.
	readyLo int32   // no message below this index is ready
	delayed int32   // messages waiting out a retry backoff
	held    []int32 // locks with a token (expired or not), in no order
	pending []int32 // cache entries with a write not yet visible, in no order
}

// reset puts s in the initial state of cfg, reusing its slices.
func (s *State) reset(cfg *Config) {
	s.Now, s.NextToken, s.Deliveries, s.Steps = 0, 0, 0, 0
	s.Dups, s.NonOwnerUnlocks, s.LockExpiries, s.AckTimeouts, s.Renewals, s.Fenced, s.Caught, s.Overwrites = 0, 0, 0, 0, 0, 0, 0, 0
	s.LocksLost = 0
	s.readyLo, s.delayed, s.held, s.pending = 0, 0, s.held[:0], s.pending[:0]
	s.Msgs = fit(s.Msgs, cfg.Jobs)
	for j, k := 0, 0; j < len(s.Msgs); j, k = j+1, k+1 {
		if k == cfg.Keys {
			k = 0 // job j's key is j % Keys, without a division per job
		}
		s.Msgs[j] = message{Job: int32(j), Key: int32(k), Attempt: 1, Worker: -1}
	}
	s.Locks = resize(s.Locks, cfg.numLocks())
	s.FenceCtr = resize(s.FenceCtr, cfg.numLocks())
	s.Ledger = resize(s.Ledger, cfg.Keys)
	s.Attempts = resize(s.Attempts, cfg.Keys)
	s.Cache = resize(s.Cache, cfg.Keys)
	s.Effects = resize(s.Effects, cfg.Keys)
	s.FenceMax = resize(s.FenceMax, cfg.Keys)
	s.W = fit(s.W, cfg.Workers)
	for i := range s.W {
		s.W[i] = workerState{Msg: -1, LockID: -1, IdemKey: -1}
	}
	s.DupAt = cfg.DupAt
	f := cfg.Faults
	s.Crash, s.Pause, s.Drop, s.Dup, s.Fail = int8(f.Crash), int8(f.Pause), int8(f.DropAck), int8(f.DupPublish), int8(f.EffectFail)
	s.Failover = int8(f.Failover)
}

// resize makes s n zero values, reusing its array.
func resize[T any](s []T, n int) []T {
	s = fit(s, n)
	clear(s)
	return s
}

// fit makes s n long, reusing its array, for a caller that writes every
// element (a clear first would be wasted).
func fit[T any](s []T, n int) []T {
	if cap(s) < n {
		return make([]T, n)
	}
	return s[:n]
}

// copyFrom makes s a deep copy of o, reusing s's slices.
func (s *State) copyFrom(o *State) {
	msgs, locks, fc, led, att, cache, eff, fm, ws := s.Msgs, s.Locks, s.FenceCtr, s.Ledger, s.Attempts, s.Cache, s.Effects, s.FenceMax, s.W
	held, pending := s.held, s.pending
	*s = *o
	s.held = append(held[:0], o.held...)
	s.pending = append(pending[:0], o.pending...)
	s.Msgs = append(msgs[:0], o.Msgs...)
	s.Locks = append(locks[:0], o.Locks...)
	s.FenceCtr = append(fc[:0], o.FenceCtr...)
	s.Ledger = append(led[:0], o.Ledger...)
	s.Attempts = append(att[:0], o.Attempts...)
	s.Cache = append(cache[:0], o.Cache...)
	s.Effects = append(eff[:0], o.Effects...)
	s.FenceMax = append(fm[:0], o.FenceMax...)
	s.W = append(ws[:0], o.W...)
}

// fingerprint hashes everything that decides the future of a state. Step
// counts and statistics are left out: two states that differ only there
// have the same futures.
func (s *State) fingerprint() uint64 {
	h := uint64(14695981039346656037)
	mixIn := func(v uint64) {
		h ^= v
		h *= 1099511628211
		h ^= h >> 29
	}
	mixIn(uint64(s.Now))
	mixIn(uint64(s.NextToken))
	mixIn(uint64(uint8(s.Crash)) | uint64(uint8(s.Pause))<<8 | uint64(uint8(s.Drop))<<16 | uint64(uint8(s.Dup))<<24 |
		uint64(uint8(s.Fail))<<32 | uint64(uint8(s.Failover))<<40)
	mixIn(uint64(s.Dups)<<32 | uint64(s.NonOwnerUnlocks))
	mixIn(uint64(s.DupAt))
	for _, m := range s.Msgs {
		mixIn(uint64(m.Job) | uint64(m.Key)<<20 | uint64(m.Attempt)<<40 | uint64(m.Deliveries)<<48 | uint64(m.State)<<56)
		mixIn(uint64(m.At) ^ uint64(uint8(m.Worker))<<56 ^ b2u(m.Redelivered)<<62 ^ uint64(m.Reason)<<60)
	}
	for i, l := range s.Locks {
		mixIn(uint64(l.Token) | uint64(l.Renewals)<<32 | uint64(uint8(l.Holder))<<40 | uint64(s.FenceCtr[i])<<48)
		mixIn(uint64(l.Exp))
	}
	for i, st := range s.Ledger {
		mixIn(uint64(st) | uint64(s.Attempts[i])<<8)
	}
	for _, c := range s.Cache {
		mixIn(uint64(c.Visible) | uint64(c.Pending)<<8 | uint64(c.At)<<16)
	}
	for i, e := range s.Effects {
		mixIn(uint64(e) | uint64(s.FenceMax[i])<<8)
	}
	for _, w := range s.W {
		mixIn(uint64(uint32(w.Msg)) | uint64(w.Op)<<32 | uint64(w.At)<<40 | b2u(w.Paused)<<56 | b2u(w.Owned)<<57)
		mixIn(uint64(w.Until) ^ uint64(w.Token)<<40)
		mixIn(uint64(w.Fence) | uint64(uint32(w.LockID))<<32)
		mixIn(uint64(uint32(w.IdemKey)) | uint64(w.Flow.Attempt)<<32 | uint64(w.Instance)<<40)
		mixIn(uint64(w.Flow.Bits()))
	}
	return h
}

func b2u(b bool) uint64 {
	if b {
		return 1
	}
	return 0
}
