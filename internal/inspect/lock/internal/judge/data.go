package judge

import "github.com/dupctl/dupctl/internal/inspect/lock/internal/makers"

// Family is one key family: the keys that share a template.
type Family struct {
	Template string `json:"template"`
	Keys     int64  `json:"keys"`
	// Certainty is confirmed (a catalogue layout or --lock-pattern) or
	// likely (a lock word, a token-shaped value and a TTL).
	Certainty string `json:"certainty"`
	// Library is the catalogue entry most of the family's keys matched.
	Library *Library `json:"library"`
	// Confidence is the mean confidence of the family's keys that they are
	// locks; Confident counts those at or above the minimum.
	Confidence float64 `json:"confidence"`
	Confident  int64   `json:"confident"`
	// Signals counts the evidence seen on the family's keys, by name.
	Signals map[string]int64 `json:"signals"`
	Roles   map[string]int64 `json:"roles"`
	Makers  map[string]int64 `json:"makers"`
	Types   map[string]int64 `json:"types"`
	// KeyClass is business, per-run, hashed, time-bucket, constant,
	// by-design (a library's per-job lock) or unknown.
	KeyClass string           `json:"key_class"`
	Varying  []Segment        `json:"varying"`
	TTL      TTLStats         `json:"ttl"`
	Owners   map[string]int64 `json:"owner_classes"`
	// Behaviour is what the family's keys did as a whole (owner values,
	// one granted TTL, a lease) where it speaks for a lock; it decided a
	// family of no lock word and no catalogue entry (issue 42).
	Behaviour []string `json:"behaviour,omitempty"`
	// MultiKey is the number of keys each lock of the family spans when
	// one token sits on a fixed group of keys (0: one key per lock).
	MultiKey int64 `json:"multi_key,omitempty"`
	// Fencing is present, absent or n/a (not a mutex family).
	Fencing  string   `json:"fencing"`
	Problems []string `json:"problems"`
	Examples []string `json:"examples"`
}

// Segment is one varying segment of a family template.
type Segment struct {
	Position    int     `json:"position"`
	Placeholder string  `json:"placeholder"`
	Label       string  `json:"label"`
	Shape       string  `json:"shape"`
	Share       float64 `json:"share"`
	Class       string  `json:"class"`
	Why         string  `json:"why"`
}

// TTLStats describes a family's TTLs. Remaining TTLs are PTTL at the read.
// A lock's granted TTL is its PTTL plus its idle time: the TTL it had at
// its last write (exact to Redis's one-second idle clock when nothing read
// it since, lower when something did), never below its PTTL;
// GrantedFrom says how the family's figure was derived.
type TTLStats struct {
	NoTTL           int64    `json:"no_ttl"`
	MinMs           int64    `json:"remaining_min_ms"`
	MedianMs        int64    `json:"remaining_median_ms"`
	MaxMs           int64    `json:"remaining_max_ms"`
	GrantedMedianMs int64    `json:"granted_median_ms"`
	GrantedFrom     string   `json:"granted_from"`
	Histogram       []Bucket `json:"histogram"`
	OutliersAbove   int64    `json:"outliers_above"`
	OutliersBelow   int64    `json:"outliers_below"`
	// Renewed, Retaken and Gone are the locks far below the family's TTL
	// that were read again a moment after the scan and found renewed (the
	// same owner, a TTL that went up), held by another owner, or gone:
	// none of them is counted in OutliersBelow.
	Renewed          int64 `json:"renewed"`
	Retaken          int64 `json:"retaken"`
	Gone             int64 `json:"gone"`
	OrphansConfirmed int64 `json:"orphans"`
}

// Bucket is one bar of the remaining-TTL histogram: keys with a remaining
// TTL up to Le (or "none": no TTL).
type Bucket struct {
	Le    string `json:"le"`
	Count int64  `json:"count"`
}

// Library is a catalogue entry, as a family names it.
type Library struct {
	ID      string          `json:"id"`
	Name    string          `json:"name"`
	Object  string          `json:"object"`
	TTL     string          `json:"ttl"`
	Sources []makers.Source `json:"sources"`
	User    bool            `json:"user,omitempty"`
}

// PossibleFamily is a family of keys shaped like locks that nothing
// confirms: one info line, and the pattern that would confirm it.
type PossibleFamily struct {
	Template string           `json:"template"`
	Keys     int64            `json:"keys"`
	NoTTL    int64            `json:"no_ttl"`
	Makers   map[string]int64 `json:"makers"`
	Signals  map[string]int64 `json:"signals"`
	Examples []string         `json:"examples"`
	Suggest  string           `json:"suggest"`
	// SuggestMatches is how many keys Suggest matches today (of the
	// families read, by their examples); SuggestOther how many of them
	// are not the family's.
	SuggestMatches int64 `json:"suggest_matches"`
	SuggestOther   int64 `json:"suggest_other"`
}

// SkippedFamily is one family of keys read and not taken for locks.
type SkippedFamily struct {
	Template string           `json:"template"`
	Keys     int64            `json:"keys"`
	Types    map[string]int64 `json:"types"`
	// Reasons counts, per key, the strongest evidence against a lock.
	Reasons  map[string]int64 `json:"reasons"`
	Examples []string         `json:"examples"`
}
