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
	for _, seqs := range b.byFP {
		sort.Slice(seqs, func(i, j int) bool { return b.rank(seqs[i], seqs[j]) })
	}
	return b
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
