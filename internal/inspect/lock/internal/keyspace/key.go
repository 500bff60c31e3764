package keyspace

import "github.com/cespare/xxhash/v2"

// Key is what one pipeline read of a key returned.
type Key struct {
	Key, Node string
	Type      string // "string", "hash", ...; "" when not read
	PTTL      int64  // ms; -1 no TTL
	Idle      int64  // s; -1 not tracked (LFU policy), not permitted, or not the key's own (sharedInteger)
	Value     string // string value (first maxValue bytes)
	Read      bool   // the value was read
	// Fields are a hash's first HSCAN page (field, value, ...);
	// moreFields is set when the hash has more (HSCAN's cursor was not 0).
	Fields     []string
	MoreFields bool
	Idx        int // the key's place in its batch
}

// Token is a digest of who holds the key, to tell a renewal (the same
// holder, a new TTL) from a new holder between two reads: a string's
// value, the names of a hash's fields or of a sorted set's members - not
// their values or scores, which change under one holder (Redisson's
// reentrant count, an expiry score). 0 when the value was not read.
func (k *Key) Token() uint64 {
	if !k.Read {
		return 0
	}
	d := xxhash.New()
	_, _ = d.WriteString(k.Type)
	_, _ = d.WriteString(k.Value)
	for i := 0; i < len(k.Fields); i += 2 {
		_, _ = d.WriteString("\x00")
		_, _ = d.WriteString(k.Fields[i])
	}
	return d.Sum64() | 1 // never 0
}
