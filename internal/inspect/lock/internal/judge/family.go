package judge

import (
	"cmp"
	"maps"
	"slices"
	"strings"
	"time"

	"github.com/dupctl/dupctl/internal/inspect/lock/internal/keyshape"
	"github.com/dupctl/dupctl/internal/inspect/lock/internal/keyspace"
	"github.com/dupctl/dupctl/internal/inspect/lock/internal/makers"
	"github.com/dupctl/dupctl/internal/platform/findings"
	"github.com/dupctl/dupctl/internal/platform/text"
)

// A family aggregates every key of one template while the scan streams:
// counts, a TTL histogram, per-segment shape counters and bounded example
// lists. Nothing in it grows with the number of keys.

const (
	MaxFamilies  = 2000 // beyond: one "(other families)" bucket
	collapseAt   = 16   // literal variants at one position that make it {name}
	exampleCount = 3
	outlierRatio = 10
	minSiblings  = 5 // TTL outliers need this many keys with a TTL
	mintedWithin = 2 * time.Minute
	// repeatsTracked distinct owner values per family are counted exactly.
	repeatsTracked = 256
)

type Tally struct {
	Tmpl      string
	segs      []keyshape.Segment // the first key's segments: literal texts and labels
	keys      int64
	lockish   int64 // role lock or dedup
	confSum   float64
	confident int64 // keys at or above the minimum confidence
	signals   [numSignals]int64
	reasons   map[string]int64 // skipped families: why, per key
	ones      int64            // string values 0 or 1: a flag, or a counter at its first hit
	noIdle    int64            // candidates read without an idle time
	roles     map[makers.Role]int64
	makers    map[string]int64
	types     map[string]int64
	pos       []posStats
	buckets   [len(bucketEdges) + 1]int64
	remain    logHist
	remMin    int64
	remMax    int64
	granted   logHist
	grMin     int64
	grMax     int64
	overMax   int64 // granted TTL above --max-ttl (exact: the threshold is known up front)
	hiTTL     *TopN[keyTTL]
	loTTL     *TopN[keyTTL] // the lowest lowKept, with their reads (renew.go)
	// reread are the low keys read again, with what that found
	// (renew.go); all but StillLow are no outliers.
	reread   map[string]Reread
	noTTL    int64
	noTTLEx  []string
	owners   map[OwnerClass]int64
	ownerEx  map[OwnerClass][]string
	values   *repeats
	tokens   tokenStats
	Orphans  int64
	OrphanEx []string
	examples []string
	// learned is what --learn saw of the family's keys (one template's
	// words), and how many of its keys it confirmed.
	learned  string
	learnedN int64
	// certain counts the keys by certainty; entries by catalogue entry.
	certain [len(certaintyNames)]int64
	entries map[*makers.Entry]int64
}

type keyTTL struct {
	key string
	ms  int64 // granted
	// What the scan read of a low one, to read it again (renew.go).
	node  string
	pttl  int64
	token uint64
	at    time.Time
}

type posStats struct {
	kinds   [keyshape.NumKinds]int64
	uuidVer [9]int64
	timed   int64 // segments carrying a creation time
	minted  int64 // ... created within mintedWithin of the lock's last write
	aligned int64 // epochs on a whole minute: period buckets
}

// bucketEdges are the remaining-TTL histogram's upper edges (ms).
var bucketEdges = [...]struct {
	ms   int64
	name string
}{{1000, "1s"}, {10_000, "10s"}, {60_000, "1m"}, {600_000, "10m"}, {3_600_000, "1h"}, {86_400_000, "1d"}, {1 << 62, "inf"}}

func newFamily(tmpl string, segs []keyshape.Segment) *Tally {
	return &Tally{
		Tmpl: tmpl, segs: slices.Clone(segs),
		roles: map[makers.Role]int64{}, makers: map[string]int64{}, types: map[string]int64{},
		pos:    make([]posStats, len(segs)),
		hiTTL:  NewTopN(exampleCount, func(a, b keyTTL) bool { return cmp.Or(cmp.Compare(a.ms, b.ms), cmp.Compare(b.key, a.key)) < 0 }),
		loTTL:  NewTopN(lowKept, func(a, b keyTTL) bool { return cmp.Or(cmp.Compare(b.ms, a.ms), cmp.Compare(b.key, a.key)) < 0 }),
		owners: map[OwnerClass]int64{}, ownerEx: map[OwnerClass][]string{},
		values: newRepeats(repeatsTracked), remMin: -1, grMin: -1, reasons: map[string]int64{},
		entries: map[*makers.Entry]int64{},
	}
}

// Certainty is the family's: confirmed when at least half its keys are,
// likely when at least half are likely or confirmed, else possible. A
// likely family under the minimum mean confidence is only possible.
func (f *Tally) Certainty(minConfidence float64) Certainty {
	switch {
	case f.keys == 0:
		return NotLock
	case 2*f.certain[Confirmed] >= f.keys:
		return Confirmed
	case 2*(f.certain[Confirmed]+f.certain[Likely]) >= f.keys && f.confSum/float64(f.keys) >= minConfidence:
		return Likely
	case f.behaviour().Likely:
		return Likely // by what its keys do (behaviour.go)
	}
	return Possible
}

// Keys is how many keys the family has.
func (f *Tally) Keys() int64 { return f.keys }

// MainEntry is the catalogue entry most of the family's keys matched
// (nil when none did).
func (f *Tally) MainEntry() *makers.Entry {
	var best *makers.Entry
	var n int64
	for e, c := range f.entries {
		if c > n || c == n && best != nil && e.ID < best.ID {
			best, n = e, c
		}
	}
	return best
}

// Examples are the first key names the family met, sorted.
func (f *Tally) Examples() []string { return slices.Sorted(slices.Values(f.examples)) }

// NoTTL counts the family's locks without a TTL.
func (f *Tally) NoTTL() int64 { return f.noTTL }

// AddSkipped counts a key that is not a lock candidate: its type, the
// strongest evidence against it and the first names seen.
func (f *Tally) AddSkipped(o *keyspace.Key, why string) {
	f.keys++
	f.types[typeName(o.Type)]++
	f.reasons[why]++
	f.examples = AppendEx(f.examples, o.Key)
}

// countersAtOne is the why of keys holding 0 or 1 among counters.
const countersAtOne = "a counter at 0 or 1: its siblings hold other numbers"

// CountersAtOne reports a family of possible locks whose keys all hold 0
// or 1 while most keys of the same template (twin, skipped) hold other
// numbers: counters at their first hit - a rate limit, a view count -
// not flags held as locks, whose siblings would hold 1 too.
func (f *Tally) CountersAtOne(twin *Tally) bool {
	return twin != nil && f.keys > 0 && f.ones == f.keys && 2*twin.reasons[sigInteger.String()] > twin.keys
}

// AddCounters counts the keys of a family of CountersAtOne into this
// skipped one.
func (f *Tally) AddCounters(o *Tally) {
	f.keys += o.keys
	addMap(f.types, o.types)
	f.reasons[countersAtOne] += o.keys
	for _, e := range o.examples {
		f.examples = AppendEx(f.examples, e)
	}
}

func typeName(t string) string {
	if t == "" {
		return "unknown"
	}
	return t
}

// SkippedReport is the JSON of a skipped family.
func (f *Tally) SkippedReport() SkippedFamily {
	return SkippedFamily{Template: f.Tmpl, Keys: f.keys, Types: f.types, Reasons: f.reasons,
		Examples: slices.Sorted(slices.Values(f.examples))}
}

func AppendEx(list []string, s string) []string {
	if len(list) < exampleCount {
		return append(list, text.Clip(s, MaxShown, "..."))
	}
	return list
}

// Add folds one key into the family and returns its per-key problems.
func (f *Tally) Add(j *Judged, now time.Time, maxTTL time.Duration, minConfidence float64) []string {
	o, r, segs, own := &j.Observed, &j.Recognised, j.Segs, j.Owner
	var problems []string
	f.keys++
	f.certain[j.Certainty]++
	f.addLearned(j.Learned)
	if r.Entry != nil {
		f.entries[r.Entry]++
	}
	f.roles[r.Role]++
	f.makers[r.Maker]++
	f.types[typeName(o.Type)]++
	conf := j.Verdict.Confidence()
	f.confSum += conf
	if conf >= minConfidence {
		f.confident++
	}
	for x := range numSignals {
		if j.Verdict.Set.has(x) {
			f.signals[x]++
		}
	}
	f.examples = AppendEx(f.examples, o.Key)
	if o.Read && o.Type == "string" && (o.Value == "1" || o.Value == "0") {
		f.ones++
	}
	written := now
	if o.Idle >= 0 {
		written = now.Add(-time.Duration(o.Idle) * time.Second)
	}
	f.addSegments(segs, written)
	if r.Role != makers.RoleLock && r.Role != makers.RoleDedup {
		return nil
	}
	f.lockish++
	if g := f.addTTL(o, j.ReadAt); maxTTL > 0 && time.Duration(g)*time.Millisecond > maxTTL+time.Second {
		f.overMax++
	}
	if o.PTTL == -1 {
		f.noTTL++
		f.noTTLEx = AppendEx(f.noTTLEx, o.Key)
		// A key its library keeps without a TTL (BullMQ's deduplication
		// keys) lists no problem the family's findings do not raise.
		if r.Entry == nil || !byDesign(r.Entry, RuleNoTTL.Code) {
			problems = append(problems, RuleNoTTL.Code)
		}
	}
	if r.Role == makers.RoleLock && o.Read {
		f.owners[own.Class]++
		if !own.Class.good() {
			f.ownerEx[own.Class] = AppendEx(f.ownerEx[own.Class], o.Key+" = "+Quote(r.Owner))
			if code := ownerRule(own.Class).Code; r.Entry == nil || !byDesign(r.Entry, code) {
				problems = append(problems, code) // as the family's findings: none where the library stores no owner
			}
		}
		// Two locks taken in one tick of a clock share a timestamp owner:
		// a weak token (LOCK_TOKEN_LOW_ENTROPY), not one process's id.
		if r.Owner != "" && own.Class != OwnerConstant && own.Class != OwnerTimestamp {
			f.values.add(r.Owner)
		}
		f.addToken(o, r.Owner, own)
	}
	return problems
}

// addLearned counts a key --learn confirmed (learned: what it saw).
func (f *Tally) addLearned(learned string) {
	if learned != "" {
		f.learnedN++
		f.learned = learned
	}
}

// addToken counts a string lock's owner value among the family's tokens
// (behaviour.go).
func (f *Tally) addToken(o *keyspace.Key, owner string, own Owner) {
	if o.Type == "string" {
		f.tokens.add(owner, own)
	}
}

// addSegments counts each segment position's shapes, and the times in it
// near when the key was written (minted then, not an old id).
func (f *Tally) addSegments(segs []keyshape.Segment, written time.Time) {
	for i := range min(len(segs), len(f.pos)) {
		sh := segs[i].Shape
		p := &f.pos[i]
		p.kinds[sh.Kind]++
		if sh.Kind == keyshape.KindUUID && sh.Version < len(p.uuidVer) {
			p.uuidVer[sh.Version]++
		}
		if !sh.Time.IsZero() {
			p.timed++
			if d := sh.Time.Sub(written); d < mintedWithin && d > -mintedWithin {
				p.minted++
			}
			if sh.Kind == keyshape.KindEpoch && sh.Time.Unix()%60 == 0 {
				p.aligned++
			}
		}
	}
}

// addTTL counts a lock's TTL (read at at) and returns the TTL it was
// granted (PTTL plus idle time; -1 without a TTL).
func (f *Tally) addTTL(o *keyspace.Key, at time.Time) int64 {
	if o.PTTL < 0 {
		f.buckets[len(bucketEdges)]++
		return -1
	}
	for i, e := range bucketEdges {
		if o.PTTL <= e.ms {
			f.buckets[i]++
			break
		}
	}
	f.remain.add(o.PTTL)
	if f.remMin < 0 || o.PTTL < f.remMin {
		f.remMin = o.PTTL
	}
	f.remMax = max(f.remMax, o.PTTL)
	g := o.PTTL
	if o.Idle > 0 {
		g += o.Idle * 1000
	} else if o.Idle < 0 {
		f.noIdle++
	}
	f.granted.add(g)
	if f.grMin < 0 || g < f.grMin {
		f.grMin = g
	}
	f.grMax = max(f.grMax, g)
	f.hiTTL.Offer(keyTTL{key: o.Key, ms: g})
	if lo := (keyTTL{key: o.Key, ms: g}); f.loTTL.Wants(lo) {
		lo.node, lo.pttl, lo.token, lo.at = o.Node, o.PTTL, o.Token(), at
		f.loTTL.Offer(lo)
	}
	return g
}

// ownerRule maps a bad owner class to its rule.
func ownerRule(c OwnerClass) findings.Rule {
	switch c {
	case OwnerConstant:
		return RuleTokenConstant
	case OwnerHost:
		return RuleTokenHost
	}
	return RuleTokenWeak
}

// merge folds another family (a sibling collapsed into this one) in.
func (f *Tally) merge(o *Tally) {
	f.keys += o.keys
	for i := range f.certain {
		f.certain[i] += o.certain[i]
	}
	f.learnedN += o.learnedN
	f.learned = cmp.Or(f.learned, o.learned)
	addMap(f.entries, o.entries)
	f.lockish += o.lockish
	f.confSum += o.confSum
	f.confident += o.confident
	for x := range f.signals {
		f.signals[x] += o.signals[x]
	}
	addMap(f.reasons, o.reasons)
	f.ones += o.ones
	f.noIdle += o.noIdle
	addMap(f.roles, o.roles)
	addMap(f.makers, o.makers)
	addMap(f.types, o.types)
	for i := range min(len(f.pos), len(o.pos)) {
		p, q := &f.pos[i], &o.pos[i]
		for k := range p.kinds {
			p.kinds[k] += q.kinds[k]
		}
		for v := range p.uuidVer {
			p.uuidVer[v] += q.uuidVer[v]
		}
		p.timed += q.timed
		p.minted += q.minted
		p.aligned += q.aligned
	}
	for i := range f.buckets {
		f.buckets[i] += o.buckets[i]
	}
	f.remain.merge(&o.remain)
	f.granted.merge(&o.granted)
	if o.grMin >= 0 && (f.grMin < 0 || o.grMin < f.grMin) {
		f.grMin = o.grMin
	}
	f.grMax = max(f.grMax, o.grMax)
	f.overMax += o.overMax
	if o.remMin >= 0 && (f.remMin < 0 || o.remMin < f.remMin) {
		f.remMin = o.remMin
	}
	f.remMax = max(f.remMax, o.remMax)
	for _, k := range o.hiTTL.items {
		f.hiTTL.Offer(k)
	}
	for _, k := range o.loTTL.items {
		f.loTTL.Offer(k)
	}
	f.noTTL += o.noTTL
	f.noTTLEx = appendAll(f.noTTLEx, o.noTTLEx)
	addMap(f.owners, o.owners)
	for c, ex := range o.ownerEx {
		f.ownerEx[c] = appendAll(f.ownerEx[c], ex)
	}
	f.values.merge(o.values)
	f.tokens.merge(&o.tokens)
	for k, r := range o.reread {
		f.mark(k, r)
	}
	f.Orphans += o.Orphans
	f.OrphanEx = appendAll(f.OrphanEx, o.OrphanEx)
	f.examples = appendAll(f.examples, o.examples)
}

func addMap[K comparable](dst, src map[K]int64) {
	for k, v := range src {
		dst[k] += v
	}
}

func appendAll(dst, src []string) []string {
	for _, s := range src {
		dst = AppendEx(dst, s)
	}
	return dst
}

// Families indexes Families by template and collapses literal words that
// vary among many siblings (lock:report:alice, lock:report:bob, ...) into
// {name}, like a streaming log-template miner.
type Families struct {
	buf       []byte // scratch for template lookups
	byTmpl    map[string]*Tally
	siblings  map[string]int
	collapsed map[string]bool
	overflow  *Tally
}

func NewFamilies() *Families {
	return &Families{byTmpl: map[string]*Tally{}, siblings: map[string]int{}, collapsed: map[string]bool{}}
}

// wildcard is tmpl with literal position i replaced by {name}.
func wildcard(segs []keyshape.Segment, i int) string {
	saved := segs[i].Shape
	segs[i].Shape = keyshape.Shape{Kind: keyshape.KindName}
	t := keyshape.Template(segs)
	segs[i].Shape = saved
	return t
}

// Resolve applies every collapse already decided to segs (in place) and
// returns the template.
func (fs *Families) Resolve(segs []keyshape.Segment) string {
	for i := 1; i < len(segs); i++ {
		if segs[i].Shape.Kind == keyshape.KindWord && fs.collapsed[wildcard(segs, i)] {
			segs[i].Shape = keyshape.Shape{Kind: keyshape.KindName}
		}
	}
	return keyshape.Template(segs)
}

// Get returns the family of a key, creating it when new.
func (fs *Families) Get(segs []keyshape.Segment) *Tally {
	// Fast path: a known template. A family made before one of its
	// positions collapsed keeps its keys; finish merges it.
	fs.buf = keyshape.AppendTemplate(fs.buf[:0], segs)
	if f, ok := fs.byTmpl[string(fs.buf)]; ok {
		return f
	}
	tmpl := fs.Resolve(segs)
	if f, ok := fs.byTmpl[tmpl]; ok {
		return f
	}
	for i := 1; i < len(segs); i++ {
		if segs[i].Shape.Kind != keyshape.KindWord {
			continue
		}
		w := wildcard(segs, i)
		fs.siblings[w]++
		if fs.siblings[w] >= collapseAt {
			fs.collapsed[w] = true
		}
	}
	tmpl = fs.Resolve(segs)
	if f, ok := fs.byTmpl[tmpl]; ok {
		return f
	}
	if len(fs.byTmpl) >= MaxFamilies {
		if fs.overflow == nil {
			fs.overflow = newFamily("(other families)", nil)
		}
		return fs.overflow
	}
	f := newFamily(tmpl, segs)
	fs.byTmpl[tmpl] = f
	return f
}

// Finish merges families created before their position collapsed into
// the collapsed family, and returns them all, largest first.
func (fs *Families) Finish() []*Tally {
	for _, tmpl := range slices.Sorted(maps.Keys(fs.byTmpl)) {
		f := fs.byTmpl[tmpl]
		segs := slices.Clone(f.segs)
		to := fs.Resolve(segs)
		if to == tmpl {
			continue
		}
		g, ok := fs.byTmpl[to]
		if !ok {
			g = newFamily(to, segs)
			fs.byTmpl[to] = g
		}
		g.merge(f)
		delete(fs.byTmpl, tmpl)
	}
	out := slices.Collect(maps.Values(fs.byTmpl))
	if fs.overflow != nil {
		out = append(out, fs.overflow)
	}
	slices.SortFunc(out, func(a, b *Tally) int { return cmp.Or(cmp.Compare(b.keys, a.keys), cmp.Compare(a.Tmpl, b.Tmpl)) })
	return out
}

// label is the literal word nearest before position i, lowercased: the
// name of what the segment identifies (order, job, user).
func (f *Tally) label(i int) string {
	for j := i - 1; j >= 0; j-- {
		if f.segs[j].Shape.Kind == keyshape.KindWord && f.segs[j].Text != "" {
			return strings.ToLower(f.segs[j].Text)
		}
	}
	return ""
}
