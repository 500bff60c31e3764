package judge

import (
	"time"

	"github.com/dupctl/dupctl/internal/inspect/lock/internal/keyshape"
	"github.com/dupctl/dupctl/internal/inspect/lock/internal/keyspace"
	"github.com/dupctl/dupctl/internal/inspect/lock/internal/makers"
)

// Judged is a read key with what dupctl makes of it.
type Judged struct {
	Observed   keyspace.Key
	Segs       []keyshape.Segment
	Recognised makers.Recognised
	Owner      Owner
	Verdict    Verdict
	// Certainty is how sure dupctl is that the key is a lock; DataShape
	// says what application data it is when a data shape decided.
	Certainty Certainty
	DataShape string
	// ReadAt is when its page's replies had arrived (keyspace.Page).
	ReadAt time.Time
	// Learned says what --learn saw written to its template, when that
	// made it a lock.
	Learned string
}

// Page judges a page with the built-in catalogue and no lock patterns.
func Page(p *keyspace.Page, now time.Time) []Judged { return defaultConfig.Page(p, now) }

// Page recognises the maker, classifies the owner and weighs the evidence
// of every key of a page read (keyspace.Walk calls it on the reader's
// goroutine).
func (c *Config) Page(p *keyspace.Page, now time.Time) []Judged {
	out := make([]Judged, len(p.Keys))
	var arena []keyshape.Segment
	if p.Segs == nil {
		arena = make([]keyshape.Segment, 0, 6*len(p.Keys)) // as the reader's split sizes it
	}
	for i := range p.Keys {
		j := &out[i]
		j.Observed = p.Keys[i]
		j.ReadAt = p.ReadAt
		if p.Segs != nil {
			j.Segs = p.Segs[j.Observed.Idx]
		} else {
			start := len(arena)
			arena = keyshape.AppendSegments(arena, j.Observed.Key, now)
			j.Segs = arena[start:len(arena):len(arena)]
		}
		c.judgeKey(j, now)
	}
	return out
}

func judgeKey(j *Judged, now time.Time) { defaultConfig.judgeKey(j, now) }

func (c *Config) judgeKey(j *Judged, now time.Time) {
	o := &j.Observed
	j.Recognised = c.Catalogue.Recognise(o)
	r := &j.Recognised
	// A value that is plainly not a token (a number, a status word, a
	// document, text) needs no owner classification unless the key turns
	// out a candidate all the same: this keeps the costly part off most
	// non-lock keys.
	var against []signal
	var owned bool
	j.Owner, against, owned = ownerOf(o, r, now)
	// The safe flow's SET key <token> NX PX ttl: a good token with a TTL.
	if r.Maker == makers.SetNXPX && (o.PTTL <= 0 || !owned || !j.Owner.Class.good()) {
		r.Maker = makers.Unknown
	}
	j.Verdict = weigh(o, r, j.Owner, j.Segs, against)
	j.Certainty = c.certainty(j, against)
	if !owned && r.Role == makers.RoleLock && o.Read && j.Certainty > NotLock {
		j.Owner = classifyOwner(r.Owner, o.Key, now)
	}
}

// ownerOf classifies the key's owner value where its maker or its value
// says what it is; owned is false where that is left until the key turns
// out a candidate (against: what the value says against a lock).
func ownerOf(o *keyspace.Key, r *makers.Recognised, now time.Time) (own Owner, against []signal, owned bool) {
	switch {
	case r.Role == makers.RoleDedup:
		return Owner{Class: OwnerJobID}, nil, true
	case r.Role != makers.RoleLock || !o.Read:
	case r.Maker == makers.Redsync || r.Maker == makers.Redislock:
		// 16 random bytes, base64 (redsync genValue, redislock randomToken).
		return Owner{Class: OwnerRandom, Bits: 128}, nil, true
	case (r.Maker == makers.BullMQ || r.Maker == makers.Redisson) && makers.IsUUIDCounter(r.Owner, false):
		// <random UUID>:<counter>: BullMQ's worker token, Redisson's
		// client id and thread.
		return Owner{Class: OwnerUUID, Bits: 122}, nil, true
	case r.Maker == makers.Sidekiq && len(r.Owner) == 24 && keyshape.IsHex(r.Owner):
		// A Sidekiq JID: SecureRandom.hex(12), even when its 24 hex digits
		// happen to be all decimal ones.
		return Owner{Class: OwnerRandom, Bits: 96}, nil, true
	case o.Type == "hash" && len(r.Holders) == 1 && r.Owner == r.Holders[0].Value && keyshape.AllDigits(r.Owner):
		// A number under a named field ({index: 1}) is what the field
		// names - an index, a count - never a "1" sentinel.
		return Owner{Class: OwnerCounter}, nil, true
	case o.Type == "string" && !r.Confirmed:
		if against = stringAgainst(o, r, now); against == nil {
			return classifyOwner(r.Owner, o.Key, now), nil, true
		}
		return Owner{Class: OwnerNone}, against, false
	default:
		return classifyOwner(r.Owner, o.Key, now), nil, true
	}
	return Owner{Class: OwnerNone}, nil, false
}

// stringAgainst is what an unconfirmed string's value says against a
// lock; a lock's token in its client's serializer wrapping, under a lock
// word, is judged as the token inside (wrapped.go) and becomes the owner.
func stringAgainst(o *keyspace.Key, r *makers.Recognised, now time.Time) []signal {
	against := valueSignals(o.Value, now)
	if len(against) != 1 || against[0] != sigStructured {
		return against
	}
	if lock, _ := keyshape.NameWords(o.Key); !lock {
		return against // a cached document, not a lock's wrapped token
	}
	if inner, ok := wrappedString(o.Value); ok {
		r.Owner, against = inner, valueSignals(inner, now)
	}
	return against
}
