package logs

import (
	"context"
	"hash/maphash"
	"slices"

	"github.com/dupctl/dupctl/internal/cause"
	logread "github.com/dupctl/dupctl/internal/logs"
)

// secondPass re-reads the chunks of the chosen keys (a duplicated side
// effect, or the incident asked for) and judges each key as soon as the
// scan is past its last chunk: memory holds the keys still being read,
// not every duplicated key's lines (a 1 GB log in which a tenth of the
// jobs ran twice held 1.3 GB before).
type secondPass struct {
	seed maphash.Seed
	o    Options
	res  *Result
	// chosen is the set of chosen keys, read by the parsing goroutines
	// (never written during the scan); last is each open key's last chunk.
	chosen  map[uint64]bool
	last    map[uint64]uint32
	parse   []bool
	groups  map[uint64]*group
	orphans map[string][]logread.Event // lines with only a job or message id
	// orphanAt is the chunk each orphan id was last seen in, so old ones go.
	orphanAt map[string]int
	// keyless are the lock lines that name no business or idempotency key
	// (a lock key of a random id), by file: which run took them may not be
	// told, so no run they stand among is said to have no lock.
	keyless map[string][]keylessLine
	chunk   int
	causes  map[string]int
	// pf, when set, passes over the lines of re-read chunks that hold no
	// chosen key (prefilter.go).
	pf *prefilter
}

// lateLines is how many chunks after a key's last one lines with only its
// job or message id (an ack logged by id alone) may still join it.
const lateLines = 4

func newSecondPass(seed maphash.Seed, o Options, res *Result) *secondPass {
	return &secondPass{seed: seed, o: o, res: res, chosen: map[uint64]bool{}, last: map[uint64]uint32{}, groups: map[uint64]*group{},
		orphans: map[string][]logread.Event{}, orphanAt: map[string]int{}, causes: map[string]int{}, keyless: map[string][]keylessLine{}}
}

// mark chooses a key: its chunks are read again.
func (p *secondPass) mark(h uint64, s keyStat) {
	p.chosen[h], p.last[h] = true, s.last
	for len(p.parse) <= int(s.last) {
		p.parse = append(p.parse, false)
	}
	s.chunks(func(c uint32) { p.parse[c] = true })
}

func (p *secondPass) run(ctx context.Context, sources []logread.Source, scan logread.Options) error {
	if len(p.chosen) == 0 {
		return nil
	}
	for _, on := range p.parse {
		if on {
			p.res.ReadAgain++
		}
	}
	scan.Progress = nil
	scan.Strict = false
	scan.Parse = func(c int) bool { return c < len(p.parse) && p.parse[c] }
	// Read in full only the lines of the chosen keys (and the lines with
	// only a job or message id, which may join them): the others cost the
	// scan alone.
	// (A learned mapping may find the message a line is about inside its
	// lock key or its message: those are read too.)
	scan.KeepFields = logread.Fields(logread.BusinessKey, logread.IdempotencyKey, logread.JobID, logread.MessageID, logread.LockKey,
		logread.Message, logread.EventName)
	scan.Keep = func(e *logread.Event) bool {
		kind, key := groupKey(e)
		if kind == kJob || kind == kMessage || kind == 0 && isLockKind(e.Kind) {
			return true
		}
		return kind != 0 && p.chosen[hashKey(p.seed, kind, key)]
	}
	if p.pf != nil {
		chosen := func(key string) bool {
			h := maphash.String(p.seed, key)
			return p.chosen[kindHash(h, kBusiness)] || p.chosen[kindHash(h, kIdem)]
		}
		scan.Prefilter = func(chunk int, line []byte) bool { return p.pf.candidate(chunk, line, chosen) }
	}
	_, err := logread.Scan(ctx, sources, scan, p.event)
	return err
}

func (p *secondPass) event(e *logread.Event) error {
	if e.Chunk > p.chunk {
		p.chunk = e.Chunk
		p.judgeDone()
	}
	kind, key := groupKey(e)
	if kind != kBusiness && kind != kIdem && isLockKind(e.Kind) {
		src := string([]byte(e.Source))
		p.keyless[src] = append(p.keyless[src], keylessLine{line: e.Line, chunk: e.Chunk})
	}
	if kind == 0 {
		return nil
	}
	h := hashKey(p.seed, kind, key)
	if !p.chosen[h] {
		if kind == kJob || kind == kMessage {
			// A line with only a job id: kept a while in case a chosen
			// key's run has the same job.
			k := string([]byte(key)) // the event's strings are borrowed
			p.orphans[k] = append(p.orphans[k], e.Clone())
			p.orphanAt[k] = e.Chunk
		}
		return nil
	}
	if _, open := p.last[h]; !open {
		return nil // judged already (its lines end before this chunk)
	}
	g := p.groups[h]
	if g == nil {
		g = &group{kind: kind, key: string([]byte(key))}
		p.groups[h] = g
	}
	g.events = append(g.events, e.Clone())
	return nil
}

// judgeDone judges the keys whose last chunk the scan is past (by
// lateLines), and drops orphans too old to join any key still read.
func (p *secondPass) judgeDone() {
	for h, g := range p.groups {
		if int(p.last[h])+lateLines < p.chunk {
			p.judge(g)
			delete(p.groups, h)
			delete(p.last, h)
		}
	}
	for k, at := range p.orphanAt {
		if at+2*lateLines < p.chunk {
			delete(p.orphans, k)
			delete(p.orphanAt, k)
		}
	}
	for src, lines := range p.keyless {
		p.keyless[src] = slices.DeleteFunc(lines, func(l keylessLine) bool { return l.chunk+2*lateLines < p.chunk })
	}
}

// keylessLine is a lock line that names no key: its file's line number
// and chunk.
type keylessLine struct {
	line  int64
	chunk int
}

func isLockKind(k logread.Kind) bool {
	return k == logread.KindLockAcquired || k == logread.KindLockReleased || k == logread.KindLockFailed || k == logread.KindLockLost
}

func (p *secondPass) judge(g *group) {
	o, res := p.o, p.res
	g.adopt(p.orphans)
	g.keyless = p.keyless
	g.build(o.ClockSkew)
	if g.effects() > 1 {
		res.Untimed += g.untimed
		res.TimedLines += len(g.events)
		d := g.classify(o.ClockSkew)
		res.Duplicates = append(res.Duplicates, d)
		p.causes[d.Cause]++
		if o.Timelines {
			res.Timelines = append(res.Timelines, g.timeline())
		}
	}
	if o.Incident != "" && g.key == o.Incident && !(o.Timelines && g.effects() > 1) {
		res.Timelines = append(res.Timelines, g.timeline())
	}
}

// finish judges the keys still open and orders the result by key.
func (p *secondPass) finish() {
	for h, g := range p.groups {
		p.judge(g)
		delete(p.groups, h)
	}
	res := p.res
	slices.SortFunc(res.Duplicates, func(a, b Duplicate) int { return compareStrings(a.Key, b.Key) })
	slices.SortStableFunc(res.Timelines, func(a, b Timeline) int { return compareStrings(a.Key, b.Key) })
	if res.Duplicates == nil {
		res.Duplicates = []Duplicate{}
	}
	if res.Timelines == nil {
		res.Timelines = []Timeline{}
	}
	res.Causes = []CauseCount{}
	for _, r := range cause.Rules() {
		if n := p.causes[r.Code]; n > 0 {
			res.Causes = append(res.Causes, CauseCount{Cause: r.Code, Count: n})
		}
	}
}
