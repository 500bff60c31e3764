package journal

import (
	"errors"
	"fmt"
	"io"
	"sort"
	"time"
)

// A journal read as a timeline, for the replay's picture: each part of
// the run (a start record, and a --resume appends another) with the time
// it started and how it ended - its end record's reason, or, with none,
// the last record it wrote (the process stopped: killed, or the machine
// went down) - and every publish with its outcome, every skip, every
// resumed ack and every ack that failed, at the times the journal wrote
// them. The journal writes no record of its own for a DLQ ack: it
// follows the "ok" at once, so a confirmed publish's time is its ack's.

// Timeline is a journal's parts, in order.
type Timeline struct {
	Run   string
	Queue string
	File  string
	Parts []Part
}

// Part is one part of the run.
type Part struct {
	N     int // 1 for the first
	Start time.Time
	// End is the end record's time or, without one, the part's last
	// record's.
	End time.Time
	// Ended: an end record closes the part; Why is its reason (the run's
	// stopped_by); Settled that the DLQ showed every ack applied.
	Ended   bool
	Why     string
	Settled bool
	// Count is the DLQ's message count at the start (0 for a file).
	Count int
	// Summary is the end record's counts (replay.Counts' JSON fields).
	Summary map[string]int
	Pubs    []Publish
	// More is how many publishes past MaxPubs the part made (counted in
	// Outcomes, not kept one by one).
	More int
	// Outcomes counts the part's publishes by outcome (OutcomeOK, ...;
	// "" for those with none recorded).
	Outcomes map[string]int
	Skips    []Event
	Acks     []Event // resumed acks of earlier publishes (Seq)
	AckLost  []Event
}

// Publish is one publish and what became of it in its part.
type Publish struct {
	Seq  int64
	ID   string // message id
	Kind string // replay or park
	To   string
	// Of is the earlier publish a --retry-in-doubt publish stands for.
	Of int64
	At time.Time
	// Outcome is its outcome record's type (OK, Returned, Nacked, Doubt);
	// "" when its part wrote none (the part stopped first: in doubt).
	Outcome string
	// OutcomeAt is when; Why the record's reason.
	OutcomeAt time.Time
	Why       string
}

// Event is a record at a time: a skip (Why), a resumed ack or a lost ack
// (Seq).
type Event struct {
	At  time.Time
	Seq int64
	ID  string
	Why string
}

// MaxPubs bounds the publishes a part keeps one by one for the picture;
// past it they are counted (Part.More, Part.Outcomes).
const MaxPubs = 20_000

// ReadTimeline reads a journal into its parts. A torn last line (the
// process was killed mid-write) is left out; any other malformed line is
// an error, as in Read.
func ReadTimeline(r io.Reader) (*Timeline, error) {
	tl := &Timeline{}
	bySeq := map[int64]*pubRef{}
	if err := eachRecord(r, func(rec *Record) error { return tl.apply(rec, bySeq) }); err != nil {
		return nil, err
	}
	if tl.Run == "" {
		return nil, errors.New("journal has no start record: not a dupctl replay journal")
	}
	for i := range tl.Parts {
		p := &tl.Parts[i]
		sort.SliceStable(p.Pubs, func(a, b int) bool { return p.Pubs[a].At.Before(p.Pubs[b].At) })
	}
	return tl, nil
}

// pubRef finds a publish's outcome's part and place.
type pubRef struct {
	part int // index in Parts
	idx  int // index in Pubs; -1 past MaxPubs
	out  string
}

func (tl *Timeline) apply(r *Record, bySeq map[int64]*pubRef) error {
	if r.T == Start {
		if tl.Run == "" {
			tl.Run, tl.Queue, tl.File = r.Run, r.Queue, r.File
		}
		tl.Parts = append(tl.Parts, Part{N: len(tl.Parts) + 1, Start: r.At, End: r.At, Count: r.Count, Outcomes: map[string]int{}})
		return nil
	}
	if len(tl.Parts) == 0 {
		return fmt.Errorf("a %q record before the run's start record", r.T)
	}
	p := &tl.Parts[len(tl.Parts)-1]
	if r.At.After(p.End) {
		p.End = r.At
	}
	switch r.T {
	case Pub:
		ref := &pubRef{part: len(tl.Parts) - 1, idx: -1}
		if len(p.Pubs) < MaxPubs {
			ref.idx = len(p.Pubs)
			p.Pubs = append(p.Pubs, Publish{Seq: r.Seq, ID: r.ID, Kind: r.Kind, To: r.To, Of: r.Of, At: r.At})
		} else {
			p.More++
		}
		p.Outcomes[""]++
		bySeq[r.Seq] = ref
	case OK, Returned, Nacked, Doubt:
		ref := bySeq[r.Seq]
		if ref == nil || ref.part != len(tl.Parts)-1 {
			return nil // an outcome of another part's publish: not this part's to draw
		}
		op := &tl.Parts[ref.part]
		op.Outcomes[ref.out]--
		op.Outcomes[r.T]++
		ref.out = r.T
		if ref.idx >= 0 {
			pb := &op.Pubs[ref.idx]
			pb.Outcome, pb.OutcomeAt, pb.Why = r.T, r.At, r.Why
		}
	case Skip:
		p.Skips = append(p.Skips, Event{At: r.At, ID: r.ID, Why: r.Why})
	case ResumedAck:
		p.Acks = append(p.Acks, Event{At: r.At, Seq: r.Seq})
	case AckLost:
		p.AckLost = append(p.AckLost, Event{At: r.At, Seq: r.Seq, ID: r.ID, Why: r.Why})
	case End:
		p.Ended, p.Why, p.Settled = true, r.Why, r.Settled
		p.Summary = summaryCounts(r.Summary)
	}
	return nil
}

// summaryCounts reads an end record's counts (numbers only).
func summaryCounts(v any) map[string]int {
	m, ok := v.(map[string]any)
	if !ok {
		return nil
	}
	out := map[string]int{}
	for k, x := range m {
		if f, ok := x.(float64); ok {
			out[k] = int(f)
		}
	}
	return out
}
