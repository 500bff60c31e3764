package lock

import (
	"github.com/dupctl/dupctl/internal/inspect/lock/internal/judge"
	"github.com/dupctl/dupctl/internal/inspect/lock/internal/keyspace"
	"github.com/dupctl/dupctl/internal/inspect/lock/internal/makers"
)

// The JSON "data" of `dupctl inspect lock` (documented in
// docs/inspect-lock.md). Field names are a public contract.

// Data is everything one inspection found besides its findings.
type Data struct {
	Target   Target    `json:"target"`
	Scan     ScanStats `json:"scan"`
	Families []Family  `json:"families"`
	// Skipped are the families of keys read and not taken for locks, with
	// why (what their shape said) and the first names seen.
	Skipped []SkippedFamily `json:"skipped"`
	// Possible are the families shaped like locks that nothing confirms
	// (one LOCK_POSSIBLE_FAMILY info finding each).
	Possible []PossibleFamily `json:"possible"`
	Locks    []Lock           `json:"locks"`
	Servers  []Server         `json:"servers"`
	Observe  *Observations    `json:"observe"`
	// NotChecked are checks a missing permission (or a setting) kept from
	// running, with why; they are not among the report's checks.
	NotChecked []NotChecked `json:"not_checked"`
	// Notes say what else limited the inspection (keys the ACL hid, ...).
	Notes []string `json:"notes"`
	// Failovers are cluster nodes whose scan went on after a failure: on
	// the replica promoted in their place, or on the same node once the
	// cluster was up again. Unread are nodes whose keys were not all read
	// (one LOCK_SCAN_INCOMPLETE each).
	Failovers []Failover   `json:"failovers"`
	Unread    []UnreadNode `json:"unread"`
	// SlotMap is which hash slots a cluster scan read, per master (empty
	// outside a cluster and for one key).
	SlotMap []SlotsRead `json:"slot_map"`
}

type (
	// Failover is a node's scan going on after a failure.
	Failover = keyspace.Move
	// UnreadNode is a node whose scan could not go on.
	UnreadNode = keyspace.Unread
	// SlotRange is a range of cluster hash slots, both ends included.
	SlotRange = keyspace.SlotRange
)

// The summaries of a family of keys, judged at the end of the scan
// (internal/judge builds them).
type (
	// Family is one key family: the keys that share a template.
	Family = judge.Family
	// Segment is one varying segment of a family template.
	Segment = judge.Segment
	// TTLStats describes a family's TTLs.
	TTLStats = judge.TTLStats
	// Bucket is one bar of the remaining-TTL histogram.
	Bucket = judge.Bucket
	// SkippedFamily is one family of keys read and not taken for locks.
	SkippedFamily = judge.SkippedFamily
	// PossibleFamily is a family of keys shaped like locks that nothing
	// confirms.
	PossibleFamily = judge.PossibleFamily
	// Library is the catalogue entry a family's keys matched.
	Library = judge.Library
)

// NotChecked is one or more checks that did not run, and why.
type NotChecked struct {
	Checks []string `json:"checks"`
	Why    string   `json:"why"`
}

// Target is what was inspected.
type Target struct {
	URL      string   `json:"url"`
	Nodes    []string `json:"nodes"`
	Cluster  bool     `json:"cluster"`
	Patterns []string `json:"patterns"`
	All      bool     `json:"all"`
	Key      string   `json:"key,omitempty"`
	Values   bool     `json:"values"`
	// MinConfidence is the confidence a family of candidates needs for
	// its findings to keep their warn or error severity.
	MinConfidence float64 `json:"min_confidence"`
}

// ScanStats counts the keyspace walk: every key SCAN returned is scanned;
// those matching the patterns are read (matched); each read key is either
// a lock candidate or skipped by shape; candidates in confirmed or likely
// families are locks, those in families of possible locks uncertain.
type ScanStats struct {
	KeysScanned int64 `json:"keys_scanned"`
	KeysMatched int64 `json:"keys_matched"`
	Candidates  int64 `json:"candidates"`
	Locks       int64 `json:"locks"`
	Uncertain   int64 `json:"uncertain"`
	Skipped     int64 `json:"skipped_by_shape"`
	// Denied are keys the ACL user may not read (key patterns).
	Denied   int64 `json:"denied"`
	Families int   `json:"families"`
	// Repeats are keys SCAN returned more than once (skipped).
	Repeats int64 `json:"repeats_skipped"`
	// FalseDrops estimates distinct keys the fixed-size dedupe filter may
	// have taken for repeats (see docs/inspect-lock.md).
	FalseDrops float64 `json:"dedupe_false_drop_estimate"`
	// SecondReads are keys whose value took a second round trip: their
	// template was new or mixed (TYPE first), or the read their batch asked
	// for did not fit their type (a hash in a family that had only had
	// strings so far).
	SecondReads int64 `json:"second_reads"`
	// Vanished keys expired or were deleted between SCAN and the read.
	Vanished  int64 `json:"vanished"`
	ElapsedMs int64 `json:"elapsed_ms"`
	// NoTouch is true when reads used CLIENT NO-TOUCH (Redis 7.2+), so
	// they left the keys' idle times alone.
	NoTouch bool `json:"no_touch"`
}

// Lock is one key in full.
type Lock struct {
	Key string `json:"key"`
	// KeyBase64 is the key's exact bytes when they are not UTF-8: JSON
	// writes each such byte of Key as U+FFFD, so Key alone cannot name it.
	KeyBase64  string          `json:"key_base64,omitempty"`
	Node       string          `json:"node"`
	Family     string          `json:"family"`
	Type       string          `json:"type"`
	Role       string          `json:"role"`
	Maker      string          `json:"maker"`
	Certainty  string          `json:"certainty"`
	Confidence float64         `json:"confidence"`
	Signals    []string        `json:"signals"`
	PTTLMs     int64           `json:"pttl_ms"`
	IdleS      int64           `json:"idle_s"`
	Owner      string          `json:"owner"`
	OwnerClass string          `json:"owner_class"`
	OwnerBits  int             `json:"owner_entropy_bits"`
	Holders    []makers.Holder `json:"holders"`
	Metadata   string          `json:"metadata"`
	AcquiredAt string          `json:"acquired_at"`
	Fencing    string          `json:"fencing,omitempty"`
	Problems   []string        `json:"problems"`
}

// Server is what INFO (and CONFIG GET, where permitted) said of a node.
type Server struct {
	Node        string `json:"node"`
	Version     string `json:"version"`
	Role        string `json:"role"`
	Keys        int64  `json:"keys"`
	MaxMemory   int64  `json:"maxmemory"`
	Policy      string `json:"maxmemory_policy"`
	EvictedKeys int64  `json:"evicted_keys"`
	AOF         bool   `json:"aof_enabled"`
	AppendFsync string `json:"appendfsync"`
	// Info is ok, or denied when the ACL refused INFO (nothing above but
	// the node is known then).
	Info      string `json:"info"`
	ConfigGet string `json:"config_get"` // ok, denied (ACL) or not tried
}

// Observations describes an --observe run.
type Observations struct {
	Count      int   `json:"count"`
	IntervalMs int64 `json:"interval_ms"`
	IdleAfterS int64 `json:"idle_after_s"`
	Candidates int64 `json:"candidates"`
	Dropped    int64 `json:"candidates_dropped"`
	Orphans    int64 `json:"orphans"`
	Touched    int64 `json:"touched_between"`
}
