package judge

import (
	"time"

	"github.com/dupctl/dupctl/internal/inspect/lock/internal/keyshape"
	"github.com/dupctl/dupctl/internal/inspect/lock/internal/keyspace"
	"github.com/dupctl/dupctl/internal/inspect/lock/internal/makers"
)

// Judged is a read key with what dupctl makes of it.
type Judged struct {
	Obs  keyspace.Key
	Segs []keyshape.Segment
	Rec  makers.Recognised
	Own  Owner
	V    Verdict
}

// Page recognises the maker, classifies the owner and weighs the evidence
// of every key of a page read (keyspace.Walk calls it on the reader's
// goroutine).
func Page(p *keyspace.Page, now time.Time) []Judged {
	out := make([]Judged, len(p.Keys))
	var arena []keyshape.Segment
	for i := range p.Keys {
		j := &out[i]
		j.Obs = p.Keys[i]
		if p.Segs != nil {
			j.Segs = p.Segs[j.Obs.Idx]
		} else {
			start := len(arena)
			arena = keyshape.AppendSegments(arena, j.Obs.Key, now)
			j.Segs = arena[start:len(arena):len(arena)]
		}
		judgeKey(j, now)
	}
	return out
}

func judgeKey(j *Judged, now time.Time) {
	o := &j.Obs
	j.Rec = makers.Recognise(o)
	r := &j.Rec
	j.Own = Owner{Class: OwnerNone}
	// A value that is plainly not a token (a number, a status word, a
	// document, text) needs no owner classification unless the key turns
	// out a candidate all the same: this keeps the costly part off most
	// non-lock keys.
	var against []signal
	owned := false
	switch {
	case r.Role == makers.RoleDedup:
		j.Own, owned = Owner{Class: OwnerJobID}, true
	case r.Role != makers.RoleLock || !o.Read:
	case r.Maker == makers.Redsync || r.Maker == makers.Redislock:
		// 16 random bytes, base64 (redsync genValue, redislock randomToken).
		j.Own, owned = Owner{Class: OwnerRandom, Bits: 128}, true
	case (r.Maker == makers.BullMQ || r.Maker == makers.Redisson) && makers.IsUUIDCounter(r.Owner, false):
		// <random UUID>:<counter>: BullMQ's worker token, Redisson's
		// client id and thread.
		j.Own, owned = Owner{Class: OwnerUUID, Bits: 122}, true
	case r.Maker == makers.Sidekiq && len(r.Owner) == 24 && keyshape.IsHex(r.Owner):
		// A Sidekiq JID: SecureRandom.hex(12), even when its 24 hex digits
		// happen to be all decimal ones.
		j.Own, owned = Owner{Class: OwnerRandom, Bits: 96}, true
	case o.Type == "string" && !r.Signature:
		if against = valueSignals(o.Value, now); against == nil {
			j.Own, owned = classifyOwner(r.Owner, o.Key, now), true
		}
	default:
		j.Own, owned = classifyOwner(r.Owner, o.Key, now), true
	}
	// The seed's SET key <token> NX PX ttl: a good token with a TTL.
	if r.Maker == makers.SetNXPX && (o.PTTL <= 0 || !owned || !j.Own.Class.good()) {
		r.Maker = makers.Unknown
	}
	j.V = weigh(o, r, j.Own, j.Segs, against)
	if !owned && r.Role == makers.RoleLock && o.Read && j.V.Candidate() {
		j.Own = classifyOwner(r.Owner, o.Key, now)
	}
}
