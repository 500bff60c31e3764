// Package journal is the replay journal: an append-only JSON Lines file,
// one record per event of a replay run. It is written before each publish
// ("pub") and after each outcome, so after a crash or a lost connection a --resume run knows which
// messages are already at their destination (acked without republishing),
// which are in doubt (published, confirm never seen: reported, never
// silently retried) and which failed (replayed again). It is also the
// audit trail: who ran what, with which filters, and what happened to every
// message id.
//
// State reads a journal back; Book matches the DLQ copies a resumed run
// reads to the publishes its earlier parts journaled (resume.go).
package journal

import (
	"bufio"
	"bytes"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"sort"
	"strings"
	"sync"
	"time"
)

// Journal record types.
const (
	Start    = "start"
	Pub      = "pub"      // about to publish (replay or park)
	OK       = "ok"       // confirmed and not returned: at the destination
	Returned = "returned" // unroutable (mandatory return): still in the DLQ
	Nacked   = "nacked"   // broker nack: still in the DLQ
	Doubt    = "in-doubt" // connection lost before the confirm
	AckLost  = "ack-lost" // at the destination, but the DLQ ack failed
	Skip     = "skip"     // not replayed, and why (idempotency, no destination)
	// ResumedAck: a resume acks the DLQ copy of an earlier publish (seq)
	// whose own ack never left; written before the ack is sent.
	ResumedAck = "ack"
	// Found and Absent settle a publish in doubt by reading its
	// destination queue: its copy is there (at the destination; its DLQ
	// copy, never acked, is still in the DLQ), or it is not while every
	// confirmed publish to that queue is (it never arrived).
	Found  = "found"
	Absent = "absent"
	End    = "end"
)

// Record is one line of the journal.
type Record struct {
	T   string    `json:"t"`
	At  time.Time `json:"at"`
	Run string    `json:"run,omitempty"`
	Seq int64     `json:"seq,omitempty"`
	FP  string    `json:"fp,omitempty"`
	// Occ is which copy of FP this is in its part of the run's read (1 for
	// the first): byte-identical dead letters are told apart by it.
	Occ int `json:"occ,omitempty"`
	// Of is the earlier publish (seq) a --retry-in-doubt publish stands for.
	Of int64 `json:"of,omitempty"`
	// Unsent (ack-lost): the DLQ ack was refused before it left, so the
	// DLQ still holds the copy.
	Unsent bool   `json:"unsent,omitempty"`
	ID     string `json:"message_id,omitempty"`
	Kind   string `json:"kind,omitempty"` // replay or park
	To     string `json:"to,omitempty"`
	Why    string `json:"why,omitempty"`
	// Start only.
	Queue   string   `json:"queue,omitempty"`
	File    string   `json:"file,omitempty"`
	Vhost   string   `json:"vhost,omitempty"`
	Args    []string `json:"args,omitempty"`
	Count   int      `json:"count_at_start,omitempty"`
	Version string   `json:"version,omitempty"`
	// FileDigest is the SHA-256 of a replayed export file, so a later run
	// can tell the same file was replayed before (Find).
	FileDigest string `json:"file_sha256,omitempty"`
	// End only.
	Summary any `json:"summary,omitempty"` // the run's counts
	// Settled: the DLQ showed every ack and requeue of this part applied.
	Settled bool `json:"settled,omitempty"`
	// AcksLostMax, when not settled, bounds how many of the DLQ acks this
	// part sent (and did not see refused) may have been lost, as the DLQ's
	// depth read back after its consumer's connection went away says (0:
	// no bound). A resume holds at most that many copies of one content in
	// doubt for this part's acks: the others' acks were applied.
	AcksLostMax int `json:"acks_lost_max,omitempty"`
}

// Journal appends records. Writes are buffered; Flush pushes them to the
// file (so they survive the process being killed) and Sync to the disk.
type Journal struct {
	mu  sync.Mutex
	w   *bufio.Writer
	f   File
	err error
	now func() time.Time
	run string
}

// File is what the journal writes to (an *os.File).
type File interface {
	io.Writer
	Sync() error
}

// New writes to f.
func New(f File, run string, now func() time.Time) *Journal {
	return &Journal{w: bufio.NewWriterSize(f, 256<<10), f: f, now: now, run: run}
}

// Add appends a record (the first write error sticks and is returned by
// Flush).
func (j *Journal) Add(r Record) {
	if j == nil {
		return
	}
	j.mu.Lock()
	defer j.mu.Unlock()
	if j.err != nil {
		return
	}
	r.At = j.now().UTC()
	if r.T == Start || r.T == End {
		r.Run = j.run
	}
	b, err := json.Marshal(r)
	if err != nil {
		j.err = err
		return
	}
	b = append(b, '\n')
	if _, err := j.w.Write(b); err != nil {
		j.err = err
	}
}

// Flush writes buffered records to the file.
func (j *Journal) Flush() error {
	if j == nil {
		return nil
	}
	j.mu.Lock()
	defer j.mu.Unlock()
	if j.err == nil {
		j.err = j.w.Flush()
	}
	return j.err
}

// Sync flushes and fsyncs.
func (j *Journal) Sync() error {
	if j == nil {
		return nil
	}
	if err := j.Flush(); err != nil {
		return err
	}
	return j.f.Sync()
}

// Outcome of one publish in an earlier part of the run.
type Outcome string

const (
	OutcomeDone   Outcome = "done"     // confirmed at the destination (replayed or parked)
	OutcomeDoubt  Outcome = "in-doubt" // may or may not be at the destination
	OutcomeFailed Outcome = "failed"   // returned, nacked or not published: not delivered
)

// ackState is what an earlier part of the run knows of the DLQ copy of a
// confirmed publish. The journal cannot know more: a DLQ ack has no reply,
// and a process killed after sending one cannot write down that it did.
type ackState uint8

const (
	ackNone    ackState = iota // not confirmed (in doubt or failed): the copy stays in the DLQ
	ackUnsent                  // confirmed; its DLQ ack never left (refused on a closed channel): the copy is in the DLQ
	ackSent                    // confirmed; its DLQ ack was sent, and may or may not have been applied
	ackApplied                 // confirmed; the part of the run that sent its ack saw the DLQ settle
)

// published is one publish the journal records: the DLQ copy it took
// (fingerprint, and which copy of that fingerprint in its part of the
// run's read) and what became of it.
type published struct {
	fp      string
	occ     int
	id      string
	to      string // the destination, as Target.String() says it
	part    int    // which part of the run (start record) published or last acked it
	outcome Outcome
	ack     ackState
	// superseded: a later part republished this copy (--retry-in-doubt),
	// so the later publish speaks for it.
	superseded bool
}

// State is what a journal says about a run so far. Every publish is
// its own item (a sequence number), so byte-identical dead letters are
// as many items as copies were published, never one.
type State struct {
	Run     string
	Queue   string
	File    string
	MaxSeq  int64
	Records int
	pubs    map[int64]*published
	parts   int
	skipped int
	// lostMax bounds, per part (1 for the first), the acks it sent that
	// may have been lost (Record.AcksLostMax).
	lostMax map[int]int
}

// Read replays a journal into its state. A torn last line (the
// process was killed mid-write) is ignored; any other malformed line is an
// error.
func Read(r io.Reader) (*State, error) {
	st := &State{pubs: map[int64]*published{}, lostMax: map[int]int{}}
	err := eachRecord(r, func(rec *Record) error {
		st.Records++
		st.apply(rec)
		return nil
	})
	if err != nil {
		return nil, err
	}
	if st.Run == "" {
		return nil, errors.New("journal has no start record: not a dupctl replay journal")
	}
	return st, nil
}

// eachRecord calls fn with each record of a journal, in order. A torn
// last line (the process was killed mid-write) is ignored; any other
// malformed line, or an error from fn, is an error naming its line.
func eachRecord(r io.Reader, fn func(*Record) error) error {
	br := bufio.NewReaderSize(r, 1<<20)
	var pending error
	for n := 1; ; n++ {
		line, err := readLine(br)
		if errors.Is(err, errLineTooLong) {
			return fmt.Errorf("journal line %d: %w", n, err)
		}
		if len(line) > 0 {
			if pending != nil {
				return pending
			}
			var rec Record
			if jerr := json.Unmarshal(line, &rec); jerr != nil {
				// Only the last line may be torn.
				pending = fmt.Errorf("journal line %d: %w", n, jerr)
				if !errors.Is(err, io.EOF) && line[len(line)-1] == '\n' {
					return pending
				}
				continue
			}
			if ferr := fn(&rec); ferr != nil {
				return fmt.Errorf("journal line %d: %w", n, ferr)
			}
		}
		if errors.Is(err, io.EOF) {
			return nil
		}
		if err != nil {
			return err
		}
	}
}

func (st *State) apply(r *Record) {
	switch r.T {
	case Start:
		if st.Run == "" {
			st.Run, st.Queue, st.File = r.Run, r.Queue, r.File
		}
		st.parts++
	case Pub:
		st.MaxSeq = max(st.MaxSeq, r.Seq)
		// Until an outcome is recorded, a publish is in doubt.
		st.pubs[r.Seq] = &published{fp: r.FP, occ: r.Occ, id: r.ID, to: r.To, part: st.parts, outcome: OutcomeDoubt}
		if old := st.pubs[r.Of]; r.Of != 0 && old != nil {
			old.superseded = true
		}
	case Skip:
		st.skipped++
	case End:
		st.end(r)
	default:
		if p := st.pubs[r.Seq]; p != nil {
			st.outcome(p, r)
		}
	}
}

// outcome applies a record about one publish: its outcome, or its DLQ
// ack's.
func (st *State) outcome(p *published, r *Record) {
	switch r.T {
	case OK:
		// The DLQ ack follows the "ok" line at once.
		p.outcome, p.ack = OutcomeDone, ackSent
	case ResumedAck:
		p.ack, p.part = ackSent, st.parts
	case AckLost:
		if r.Unsent {
			p.ack = ackUnsent
		}
	case Returned, Nacked, Absent:
		p.outcome = OutcomeFailed
	case Found:
		if p.outcome == OutcomeDoubt {
			p.outcome, p.ack = OutcomeDone, ackUnsent
		}
	case Doubt:
		p.outcome = OutcomeDoubt
	}
}

// end applies a part's end record: every ack it sent seen applied, or a
// bound on those lost.
func (st *State) end(r *Record) {
	if !r.Settled && r.AcksLostMax > 0 {
		st.lostMax[st.parts] = r.AcksLostMax
	}
	if r.Settled {
		// The DLQ showed every ack of this part applied.
		for _, q := range st.pubs {
			if q.part == st.parts && q.ack == ackSent {
				q.ack = ackApplied
			}
		}
	}
}

// Count tallies publishes by outcome (a republished copy counts once).
func (st *State) Count(o Outcome) int {
	n := 0
	for _, p := range st.pubs {
		if !p.superseded && p.outcome == o {
			n++
		}
	}
	return n
}

// AckUnknown counts confirmed publishes whose DLQ ack was sent by a part of
// the run that did not see the DLQ settle: their DLQ copies may still be
// there.
func (st *State) AckUnknown() int {
	n := 0
	for _, p := range st.pubs {
		if !p.superseded && p.outcome == OutcomeDone && p.ack == ackSent {
			n++
		}
	}
	return n
}

// Describe says what the journal holds for a fingerprint (for a person
// reading a test failure or a problem list).
func (st *State) Describe(fp string) string {
	var parts []string
	for seq, p := range st.pubs {
		if p.fp == fp {
			parts = append(parts, fmt.Sprintf("seq %d copy %d %s ack %d superseded %v", seq, p.occ, p.outcome, p.ack, p.superseded))
		}
	}
	sort.Strings(parts)
	if len(parts) == 0 {
		return "not published"
	}
	return strings.Join(parts, "; ")
}

// Resolve settles a publish in doubt once its destination was read (found
// there, or proven absent), and returns the record to journal.
func (st *State) Resolve(seq int64, found bool) Record {
	r := Record{T: Absent, Seq: seq, Why: "not at its destination, where every confirmed publish of the run is"}
	if found {
		r = Record{T: Found, Seq: seq, Why: "found at its destination"}
	}
	st.apply(&r)
	return r
}

// Destinations are, per destination, the publishes in doubt to it and
// the confirmed ones.
type Destinations map[string]*DestPubs

// DestPubs are one destination's publishes, by sequence.
type DestPubs struct {
	Doubt, Confirmed []int64
}

// InDoubtTo groups the publishes still in doubt by destination, with the
// confirmed publishes to each (which a reading of the destination must
// find there before it may call one in doubt absent).
func (st *State) InDoubtTo() Destinations {
	out := Destinations{}
	for seq, p := range st.pubs {
		if p.superseded || p.outcome != OutcomeDoubt || p.to == "" {
			continue
		}
		if out[p.to] == nil {
			out[p.to] = &DestPubs{}
		}
		out[p.to].Doubt = append(out[p.to].Doubt, seq)
	}
	for seq, p := range st.pubs {
		if d := out[p.to]; d != nil && !p.superseded && p.outcome == OutcomeDone {
			d.Confirmed = append(d.Confirmed, seq)
		}
	}
	return out
}

// PublishedIDs are the message ids of publishes with outcome o.
func (st *State) PublishedFPs(o Outcome) []string {
	var out []string
	for _, p := range st.pubs {
		if !p.superseded && p.outcome == o {
			out = append(out, p.fp)
		}
	}
	sort.Strings(out)
	return out
}

// FileDigest is the hex SHA-256 of an export file's content.
func FileDigest(r io.Reader) (string, error) {
	h := sha256.New()
	if _, err := io.Copy(h, r); err != nil {
		return "", err
	}
	return hex.EncodeToString(h.Sum(nil)), nil
}

// maxLine bounds one journal line: a record names a message by its id and
// fingerprint, never its body (a hostile 300 MiB line took 639 MB).
const maxLine = 1 << 20

var errLineTooLong = fmt.Errorf("longer than %d bytes: not a dupctl journal line", maxLine)

// readLine reads one line (with its newline, when it has one) of at most
// maxLine bytes.
func readLine(br *bufio.Reader) ([]byte, error) {
	var out []byte
	for {
		chunk, err := br.ReadSlice('\n')
		out = append(out, chunk...)
		if len(out) > maxLine {
			return nil, errLineTooLong
		}
		if errors.Is(err, bufio.ErrBufferFull) {
			continue
		}
		return out, err
	}
}

// Find returns the journals in dirs (any file whose first line is
// a start record) whose run replayed an export file with this digest:
// replaying the same file again under a new journal would publish every
// message a second time.
func Find(dirs []string, digest string) []string {
	var out []string
	seen := map[string]bool{}
	for _, dir := range dirs {
		entries, _ := os.ReadDir(dir)
		for _, ent := range entries {
			if !ent.Type().IsRegular() {
				continue
			}
			p := filepath.Join(dir, ent.Name())
			if seen[p] {
				continue
			}
			seen[p] = true
			if startDigest(p) == digest {
				out = append(out, p)
			}
		}
	}
	return out
}

// startDigest is the file digest in a journal's start record ("" when it
// has none or is not a journal).
func startDigest(path string) string {
	f, err := os.Open(path)
	if err != nil {
		return ""
	}
	defer f.Close()
	head := make([]byte, 16)
	if _, err := io.ReadFull(f, head); err != nil || !bytes.HasPrefix(head, []byte(`{"t":"start"`)) {
		return "" // not a journal: read no further
	}
	line, err := bufio.NewReaderSize(io.MultiReader(bytes.NewReader(head), io.LimitReader(f, 1<<20)), 64<<10).ReadBytes('\n')
	if err != nil && len(line) == 0 {
		return ""
	}
	var rec Record
	if json.Unmarshal(line, &rec) != nil || rec.T != Start {
		return ""
	}
	return rec.FileDigest
}

// TrimTornLine cuts a journal back to its last complete line: a process
// killed mid-write leaves a fragment without its newline, which Read
// skips only while it is the last line. f must be open for reading and
// writing.
func TrimTornLine(f *os.File) error {
	st, err := f.Stat()
	if err != nil || st.Size() == 0 {
		return err
	}
	end := st.Size()
	buf := make([]byte, 64<<10)
	for pos := end; pos > 0; {
		n := min(int64(len(buf)), pos)
		pos -= n
		if _, err := f.ReadAt(buf[:n], pos); err != nil {
			return err
		}
		if i := bytes.LastIndexByte(buf[:n], '\n'); i >= 0 {
			if cut := pos + int64(i) + 1; cut != end {
				return f.Truncate(cut)
			}
			return nil
		}
	}
	return f.Truncate(0)
}
