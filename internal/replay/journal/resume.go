package journal

import "sort"

// Claim is what a resumed run does with a DLQ copy (or an export record)
// an earlier part of the run may already have handled.
type Claim uint8

const (
	ClaimNone    Claim = iota // no earlier publish stands for it: decide it afresh
	ClaimDone                 // at its destination; its copy is still in the DLQ: settle it
	ClaimDoubt                // published, confirm never seen
	ClaimAckSent              // confirmed, its DLQ ack sent: this copy may be that one, or an identical one
)

// Book hands each copy read by a resumed run at most one earlier
// publish to stand for, so N byte-identical dead letters are N items: a
// copy is settled without publishing only where the journal proves a
// published copy of that content is still in the DLQ.
//
// A file is read again from its start, in the same order, so its k-th
// record with a fingerprint is the k-th copy the earlier parts read: the
// book matches (fingerprint, copy) exactly. A queue gives no such
// position, so the book holds, per fingerprint, the publishes whose DLQ
// copy may still be there, the certain ones first.
type Book struct {
	byCopy map[copyKey]int64
	byFP   map[string][]int64
	pubs   map[int64]*published
}

type copyKey struct {
	fp  string
	occ int
}

// NewBook is the book of a journal's publishes, for a resumed run reading
// an export file again (file) or the DLQ.
func NewBook(st *State, file bool) *Book {
	b := &Book{pubs: st.pubs}
	if file {
		b.byCopy = map[copyKey]int64{}
		for seq, p := range st.pubs {
			if !p.superseded {
				b.byCopy[copyKey{p.fp, p.occ}] = seq
			}
		}
		return b
	}
	b.byFP = map[string][]int64{}
	for seq, p := range st.pubs {
		if p.superseded || p.outcome == OutcomeFailed || p.ack == ackApplied {
			continue // its DLQ copy is gone, or it is no one's: decided afresh
		}
		b.byFP[p.fp] = append(b.byFP[p.fp], seq)
	}
	b.boundAcksLost(st)
	for _, seqs := range b.byFP {
		sort.Slice(seqs, func(i, j int) bool { return b.rank(seqs[i], seqs[j]) })
	}
	return b
}

// boundAcksLost keeps, per content, at most as many of a part's sent acks
// open as that part may have lost (State.lostMax): when a part that sent
// 540 acks for 540 identical copies can have lost at most 4 of them, at
// most 4 of the copies found are that part's copies come back; the others'
// acks were applied, so their copies are gone and the copies found beyond
// those 4 are other copies, decided afresh. It is a bound per content: the
// lost acks may all be of one content, so a content with fewer sent acks
// than the bound keeps all of them.
func (b *Book) boundAcksLost(st *State) {
	if len(st.lostMax) == 0 {
		return
	}
	type key struct {
		fp   string
		part int
	}
	sent := map[key][]int64{}
	for fp, seqs := range b.byFP {
		for _, seq := range seqs {
			if p := b.pubs[seq]; b.kind(p) == ClaimAckSent && st.lostMax[p.part] > 0 {
				sent[key{fp, p.part}] = append(sent[key{fp, p.part}], seq)
			}
		}
	}
	drop := map[int64]bool{}
	for k, seqs := range sent {
		if n := len(seqs) - st.lostMax[k.part]; n > 0 {
			// The acks sent last are the ones a loss can have cut: keep those.
			sort.Slice(seqs, func(i, j int) bool { return seqs[i] < seqs[j] })
			for _, seq := range seqs[:n] {
				drop[seq] = true
			}
		}
	}
	for fp, seqs := range b.byFP {
		kept := seqs[:0]
		for _, seq := range seqs {
			if !drop[seq] {
				kept = append(kept, seq)
			}
		}
		b.byFP[fp] = kept
	}
}

// rank orders the publishes a queue copy may stand for: an ack that never
// left first (that copy is certainly there), then in doubt, then an ack
// sent (the copy may be gone); by sequence within each.
func (b *Book) rank(x, y int64) bool {
	kx, ky := b.kind(b.pubs[x]), b.kind(b.pubs[y])
	if kx != ky {
		return kx < ky
	}
	return x < y
}

func (b *Book) kind(p *published) Claim {
	switch {
	case p.outcome == OutcomeDoubt:
		return ClaimDoubt
	case p.ack == ackUnsent:
		return ClaimDone
	default:
		return ClaimAckSent
	}
}

// Take gives the earlier publish that the copy (fingerprint fp, the occ-th
// copy of it read, redelivered as the broker says) stands for, and what to
// do with it. A queue copy the broker never delivered before cannot be one
// an earlier part read, so it stands for none.
func (b *Book) Take(fp string, occ int, redelivered bool) (int64, Claim) {
	if b == nil {
		return 0, ClaimNone
	}
	if b.byCopy != nil {
		seq, ok := b.byCopy[copyKey{fp, occ}]
		if !ok {
			return 0, ClaimNone
		}
		switch p := b.pubs[seq]; p.outcome {
		case OutcomeDone:
			return seq, ClaimDone
		case OutcomeDoubt:
			return seq, ClaimDoubt
		}
		return 0, ClaimNone
	}
	seqs := b.byFP[fp]
	if len(seqs) == 0 || !redelivered {
		return 0, ClaimNone
	}
	seq := seqs[0]
	b.byFP[fp] = seqs[1:]
	return seq, b.kind(b.pubs[seq])
}

// Untaken counts the earlier publishes a queue read found no copy for, by
// what the journal says of their copy: certainly still in the DLQ (an ack
// that never left: Done; no confirm: Doubt), or perhaps (an ack sent and
// not seen applied: AckSent). A read that read the whole DLQ takes every
// copy there is, so what it leaves untaken is either gone (AckSent: the
// ack was applied) or in the DLQ unread.
type Untaken struct {
	Done, Doubt, AckSent int
}

// Untaken is what the book still holds (zero for a file's book).
func (b *Book) Untaken() Untaken {
	var u Untaken
	if b == nil {
		return u
	}
	for _, seqs := range b.byFP {
		for _, seq := range seqs {
			switch b.kind(b.pubs[seq]) {
			case ClaimDone:
				u.Done++
			case ClaimDoubt:
				u.Doubt++
			default:
				u.AckSent++
			}
		}
	}
	return u
}
