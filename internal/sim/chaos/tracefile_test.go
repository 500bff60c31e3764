package chaos

import (
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"time"
)

// A trace file is a finished trace as a real run recorded it, with the
// effects counted and the verdict the run gave: the judge's fixtures
// (testdata/traces). Set DUPCTL_CHAOS_TRACES=DIR when running the
// package's tests on the services to have every judged run written
// there as DIR/<run id>.json.

func init() {
	dir := os.Getenv("DUPCTL_CHAOS_TRACES")
	if dir == "" {
		return
	}
	onJudged = func(t *trace, effects map[string]effectRow, unsettled string, rr *RunResult) {
		b, err := json.MarshalIndent(encodeTrace(t, effects, unsettled, rr), "", "  ")
		if err == nil {
			err = os.WriteFile(filepath.Join(dir, t.id+".json"), append(b, '\n'), 0o644)
		}
		if err != nil {
			panic(fmt.Sprintf("record the trace of %s: %v", t.id, err))
		}
	}
}

type traceFile struct {
	// Recorded says which test's run this was, when it was saved.
	Recorded string `json:"recorded,omitempty"`

	ID          string              `json:"id"`
	Plan        Plan                `json:"plan"`
	Keys        []string            `json:"keys"`
	Start       time.Time           `json:"start"`
	End         time.Time           `json:"end"`
	Events      []Event             `json:"events"`
	Deliveries  []deliveryFile      `json:"deliveries"`
	Leases      []leaseFile         `json:"leases"`
	Stale       []staleFile         `json:"stale,omitempty"`
	Foreign     []foreignFile       `json:"foreign,omitempty"`
	Repub       map[string]bool     `json:"republished,omitempty"`
	Fired       *Event              `json:"fired"`
	FiredAt     time.Time           `json:"fired_at"`
	FaultLease  int                 `json:"fault_lease,omitempty"` // 1-based in Leases; 0 none
	Unkeyed     int64               `json:"unkeyed,omitempty"`
	EffectLines []EffectLine        `json:"effect_lines,omitempty"`
	EffectsFrom string              `json:"effects_from"`
	Faults      faultsFile          `json:"faults"`
	Effects     map[string]countRow `json:"effects"`
	Unsettled   string              `json:"unsettled,omitempty"`

	// Verdict is what the live run's judge made of it.
	Verdict         *RunResult `json:"verdict"`
	ConditionMissed bool       `json:"condition_missed,omitempty"`
}

type countRow struct {
	N    int  `json:"n"`
	Idem *int `json:"idem,omitempty"`
}

type faultsFile struct {
	CacheLag        time.Duration `json:"cache_lag,omitempty"`
	CacheKeys       string        `json:"cache_keys,omitempty"`
	Master          string        `json:"sentinel_master,omitempty"`
	NewMaster       string        `json:"sentinel_new_master,omitempty"`
	LostSeq         int           `json:"sentinel_lost_seq,omitempty"`
	Sentinel        bool          `json:"sentinel,omitempty"`
	ReplicaPauseSeq int           `json:"replica_pause_seq,omitempty"`
}

// A copy of a worker is its slot's number and its process (inst).
type deliveryFile struct {
	Slot        int       `json:"slot"`
	Inst        int       `json:"inst"`
	Key         string    `json:"key"`
	Redelivered bool      `json:"redelivered,omitempty"`
	From        time.Time `json:"from"`
	To          time.Time `json:"to"`
	End         string    `json:"end"`
	Reads       int       `json:"reads,omitempty"`
	Writes      int       `json:"writes,omitempty"`
	Committed   int       `json:"committed,omitempty"`
	ReadFirst   bool      `json:"read_first,omitempty"`
	Checks      []string  `json:"checks,omitempty"`
	Values      []string  `json:"values,omitempty"`
	Faulted     bool      `json:"faulted,omitempty"`
	CopyN       int       `json:"copy,omitempty"`
	Lagged      bool      `json:"lagged,omitempty"`
	Seq         int       `json:"seq"`
	EndSeq      int       `json:"end_seq,omitempty"`
	CheckSeqs   []int     `json:"check_seqs,omitempty"`
	CommitSeqs  []int     `json:"commit_seqs,omitempty"`
}

type leaseFile struct {
	Lock      string        `json:"lock"`
	Key       string        `json:"key"`
	Slot      int           `json:"slot"`
	Inst      int           `json:"inst"`
	Token     string        `json:"token,omitempty"`
	From      time.Time     `json:"from"`
	TTL       time.Duration `json:"ttl"`
	Expires   time.Time     `json:"expires"`
	Released  time.Time     `json:"released"`
	Deleted   time.Time     `json:"deleted"`
	DeletedBy string        `json:"deleted_by,omitempty"`
	Delivery  int           `json:"delivery,omitempty"` // 1-based in Deliveries; 0 none
	Seq       int           `json:"seq"`
}

type staleFile struct {
	Key      string    `json:"key"`
	Slot     int       `json:"slot"`
	Inst     int       `json:"inst"`
	At       time.Time `json:"at"`
	Seq      int       `json:"seq"`
	Replica  bool      `json:"replica,omitempty"`
	Delivery int       `json:"delivery,omitempty"`
}

type foreignFile struct {
	Lock  string    `json:"lock"`
	Key   string    `json:"key"`
	By    string    `json:"by"`
	Lease int       `json:"lease"` // 1-based in Leases
	At    time.Time `json:"at"`
	Seq   int       `json:"seq"`
}

func encodeTrace(t *trace, effects map[string]effectRow, unsettled string, rr *RunResult) *traceFile {
	f := &traceFile{ID: t.id, Plan: t.plan, Keys: t.keys, Start: t.start, End: t.end, Events: t.events, Repub: t.repub,
		Fired: t.fired, FiredAt: t.firedAt, Unkeyed: t.unkeyed, EffectLines: t.effectLines, EffectsFrom: t.effectsFrom,
		Faults:  faultsFile{CacheLag: t.faults.cacheLag, CacheKeys: t.faults.cacheKeys, ReplicaPauseSeq: t.faults.replicaPauseSeq},
		Effects: map[string]countRow{}, Unsettled: unsettled, Verdict: rr, ConditionMissed: rr.conditionMissed}
	if s := t.faults.sentinel; s != nil {
		f.Faults.Sentinel, f.Faults.Master, f.Faults.NewMaster, f.Faults.LostSeq = true, s.master, s.newMaster, s.lostSeq
	}
	for k, e := range effects {
		f.Effects[k] = countRow{N: e.n, Idem: e.idem}
	}
	dn := func(d *delivery) int { return slices.Index(t.delivs, d) + 1 }
	for _, d := range t.delivs {
		f.Deliveries = append(f.Deliveries, deliveryFile{Slot: d.slot.n, Inst: d.inst, Key: d.key, Redelivered: d.redelivered,
			From: d.from, To: d.to, End: d.end, Reads: d.reads, Writes: d.writes, Committed: d.committed, ReadFirst: d.readFirst,
			Checks: d.checks, Values: d.values, Faulted: d.faulted, CopyN: d.copyN, Lagged: d.lagged, Seq: d.seq, EndSeq: d.endSeq,
			CheckSeqs: d.checkSeqs, CommitSeqs: d.commitSeqs})
	}
	for _, l := range t.leases {
		f.Leases = append(f.Leases, leaseFile{Lock: l.lock, Key: l.key, Slot: l.slot.n, Inst: l.inst, Token: l.token, From: l.from,
			TTL: l.ttl, Expires: l.expires, Released: l.released, Deleted: l.deleted, DeletedBy: l.deletedBy, Delivery: dn(l.deliv),
			Seq: l.seq})
	}
	f.FaultLease = slices.Index(t.leases, t.faultLease) + 1
	for _, s := range t.stale {
		f.Stale = append(f.Stale, staleFile{Key: s.key, Slot: s.slot.n, Inst: s.inst, At: s.at, Seq: s.seq, Replica: s.replica,
			Delivery: dn(s.deliv)})
	}
	for _, u := range t.foreign {
		f.Foreign = append(f.Foreign, foreignFile{Lock: u.lock, Key: u.key, By: u.by, Lease: slices.Index(t.leases, u.of) + 1,
			At: u.at, Seq: u.seq})
	}
	return f
}

// decode rebuilds the trace, one slot per worker number, and the effects
// the run counted.
func (f *traceFile) decode() (*trace, map[string]effectRow) {
	slots := map[int]*slot{}
	slotOf := func(n int) *slot {
		if slots[n] == nil {
			slots[n] = &slot{n: n}
		}
		return slots[n]
	}
	t := &trace{id: f.ID, plan: f.Plan, keys: f.Keys, start: f.Start, end: f.End, events: f.Events, repub: f.Repub,
		fired: f.Fired, firedAt: f.FiredAt, unkeyed: f.Unkeyed, effectLines: f.EffectLines, effectsFrom: f.EffectsFrom,
		faults: faultFacts{cacheLag: f.Faults.CacheLag, cacheKeys: f.Faults.CacheKeys, replicaPauseSeq: f.Faults.ReplicaPauseSeq}}
	if t.repub == nil {
		t.repub = map[string]bool{}
	}
	if f.Faults.Sentinel {
		t.faults.sentinel = &sentinelFacts{master: f.Faults.Master, newMaster: f.Faults.NewMaster, lostSeq: f.Faults.LostSeq}
	}
	for _, d := range f.Deliveries {
		t.delivs = append(t.delivs, &delivery{slot: slotOf(d.Slot), inst: d.Inst, key: d.Key, redelivered: d.Redelivered,
			from: d.From, to: d.To, end: d.End, reads: d.Reads, writes: d.Writes, committed: d.Committed, readFirst: d.ReadFirst,
			checks: d.Checks, values: d.Values, faulted: d.Faulted, copyN: d.CopyN, lagged: d.Lagged, seq: d.Seq, endSeq: d.EndSeq,
			checkSeqs: d.CheckSeqs, commitSeqs: d.CommitSeqs})
	}
	deliv := func(n int) *delivery {
		if n == 0 {
			return nil
		}
		return t.delivs[n-1]
	}
	for _, l := range f.Leases {
		t.leases = append(t.leases, &lease{lock: l.Lock, key: l.Key, slot: slotOf(l.Slot), inst: l.Inst, token: l.Token, from: l.From,
			ttl: l.TTL, expires: l.Expires, released: l.Released, deleted: l.Deleted, deletedBy: l.DeletedBy, deliv: deliv(l.Delivery),
			seq: l.Seq})
	}
	if f.FaultLease > 0 {
		t.faultLease = t.leases[f.FaultLease-1]
	}
	for _, s := range f.Stale {
		t.stale = append(t.stale, staleRead{key: s.Key, slot: slotOf(s.Slot), inst: s.Inst, at: s.At, seq: s.Seq, replica: s.Replica,
			deliv: deliv(s.Delivery)})
	}
	for _, u := range f.Foreign {
		t.foreign = append(t.foreign, foreignUnlock{lock: u.Lock, key: u.Key, by: u.By, of: t.leases[u.Lease-1], at: u.At, seq: u.Seq})
	}
	effects := map[string]effectRow{}
	for k, e := range f.Effects {
		effects[k] = effectRow{n: e.N, idem: e.Idem}
	}
	return t, effects
}

// loadTrace reads a trace file of testdata/traces.
func loadTrace(name string) (*traceFile, error) {
	b, err := os.ReadFile(filepath.Join("testdata", "traces", name))
	if err != nil {
		return nil, fmt.Errorf("read trace: %w", err)
	}
	var f traceFile
	if err := json.Unmarshal(b, &f); err != nil {
		return nil, fmt.Errorf("trace %s: %w", name, err)
	}
	return &f, nil
}
