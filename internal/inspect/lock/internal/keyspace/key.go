package keyspace

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
