package lock

import (
	"cmp"
	"maps"
	"slices"
	"strings"
	"time"

	"github.com/dupctl/dupctl/internal/platform/findings"
)

// A family aggregates every key of one template while the scan streams:
// counts, a TTL histogram, per-segment shape counters and bounded example
// lists. Nothing in it grows with the number of keys.

const (
	maxFamilies  = 2000 // beyond: one "(other families)" bucket
	collapseAt   = 16   // literal variants at one position that make it {name}
	exampleCount = 3
	outlierRatio = 10
	minSiblings  = 5 // TTL outliers need this many keys with a TTL
	mintedWithin = 2 * time.Minute
	// repeatsTracked distinct owner values per family are counted exactly.
	repeatsTracked = 256
)

type family struct {
	tmpl      string
	segs      []segment // the first key's segments: literal texts and labels
	keys      int64
	lockish   int64 // role lock or dedup
	confSum   float64
	confident int64 // keys at or above the minimum confidence
	signals   [numSignals]int64
	reasons   map[string]int64 // skipped families: why, per key
	noIdle    int64            // candidates read without an idle time
	roles     map[Role]int64
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
	hiTTL     *topN[keyTTL]
	loTTL     *topN[keyTTL]
	noTTL     int64
	noTTLEx   []string
	owners    map[OwnerClass]int64
	ownerEx   map[OwnerClass][]string
	values    *repeats
	orphans   int64
	orphanEx  []string
	examples  []string
}

type keyTTL struct {
	key string
	ms  int64
}

type posStats struct {
	kinds   [numKinds]int64
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

func newFamily(tmpl string, segs []segment) *family {
	return &family{
		tmpl: tmpl, segs: slices.Clone(segs),
		roles: map[Role]int64{}, makers: map[string]int64{}, types: map[string]int64{},
		pos:    make([]posStats, len(segs)),
		hiTTL:  newTopN(exampleCount, func(a, b keyTTL) bool { return cmp.Or(cmp.Compare(a.ms, b.ms), cmp.Compare(b.key, a.key)) < 0 }),
		loTTL:  newTopN(exampleCount, func(a, b keyTTL) bool { return cmp.Or(cmp.Compare(b.ms, a.ms), cmp.Compare(b.key, a.key)) < 0 }),
		owners: map[OwnerClass]int64{}, ownerEx: map[OwnerClass][]string{},
		values: newRepeats(repeatsTracked), remMin: -1, grMin: -1, reasons: map[string]int64{},
	}
}

// addSkipped counts a key that is not a lock candidate: its type, the
// strongest evidence against it and the first names seen.
func (f *family) addSkipped(o *observed, why string) {
	f.keys++
	f.types[typeName(o.typ)]++
	f.reasons[why]++
	f.examples = appendEx(f.examples, o.key)
}

func typeName(t string) string {
	if t == "" {
		return "unknown"
	}
	return t
}

// skippedReport is the JSON of a skipped family.
func (f *family) skippedReport() SkippedFamily {
	return SkippedFamily{Template: f.tmpl, Keys: f.keys, Types: f.types, Reasons: f.reasons, Examples: slices.Sorted(slices.Values(f.examples))}
}

func appendEx(list []string, s string) []string {
	if len(list) < exampleCount {
		return append(list, clip(s, maxShown))
	}
	return list
}

// add folds one key into the family and returns its per-key problems.
func (f *family) add(j *judged, now time.Time, maxTTL time.Duration, minConfidence float64) []string {
	o, r, segs, own := &j.o, &j.r, j.segs, j.own
	var problems []string
	f.keys++
	f.roles[r.role]++
	f.makers[r.maker]++
	f.types[typeName(o.typ)]++
	conf := j.v.confidence()
	f.confSum += conf
	if conf >= minConfidence {
		f.confident++
	}
	for x := range numSignals {
		if j.v.set.has(x) {
			f.signals[x]++
		}
	}
	f.examples = appendEx(f.examples, o.key)
	written := now
	if o.idle >= 0 {
		written = now.Add(-time.Duration(o.idle) * time.Second)
	}
	for i := range min(len(segs), len(f.pos)) {
		sh := segs[i].shape
		p := &f.pos[i]
		p.kinds[sh.Kind]++
		if sh.Kind == KindUUID && sh.Version < len(p.uuidVer) {
			p.uuidVer[sh.Version]++
		}
		if !sh.Time.IsZero() {
			p.timed++
			if d := sh.Time.Sub(written); d < mintedWithin && d > -mintedWithin {
				p.minted++
			}
			if sh.Kind == KindEpoch && sh.Time.Unix()%60 == 0 {
				p.aligned++
			}
		}
	}
	if r.role != RoleLock && r.role != RoleDedup {
		return nil
	}
	f.lockish++
	if g := f.addTTL(o); maxTTL > 0 && time.Duration(g)*time.Millisecond > maxTTL+time.Second {
		f.overMax++
	}
	if o.pttl == -1 {
		f.noTTL++
		f.noTTLEx = appendEx(f.noTTLEx, o.key)
		problems = append(problems, RuleNoTTL.Code)
	}
	if r.role == RoleLock && o.read {
		f.owners[own.Class]++
		if !own.Class.good() {
			f.ownerEx[own.Class] = appendEx(f.ownerEx[own.Class], o.key+" = "+quote(r.owner))
			problems = append(problems, ownerRule(own.Class).Code)
		}
		if r.owner != "" && own.Class != OwnerConstant {
			f.values.add(r.owner)
		}
	}
	return problems
}

// addTTL counts a lock's TTL and returns the TTL it was granted (PTTL plus
// idle time; -1 without a TTL).
func (f *family) addTTL(o *observed) int64 {
	if o.pttl < 0 {
		f.buckets[len(bucketEdges)]++
		return -1
	}
	for i, e := range bucketEdges {
		if o.pttl <= e.ms {
			f.buckets[i]++
			break
		}
	}
	f.remain.add(o.pttl)
	if f.remMin < 0 || o.pttl < f.remMin {
		f.remMin = o.pttl
	}
	f.remMax = max(f.remMax, o.pttl)
	g := o.pttl
	if o.idle > 0 {
		g += o.idle * 1000
	} else if o.idle < 0 {
		f.noIdle++
	}
	f.granted.add(g)
	if f.grMin < 0 || g < f.grMin {
		f.grMin = g
	}
	f.grMax = max(f.grMax, g)
	f.hiTTL.offer(keyTTL{o.key, g})
	f.loTTL.offer(keyTTL{o.key, g})
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
func (f *family) merge(o *family) {
	f.keys += o.keys
	f.lockish += o.lockish
	f.confSum += o.confSum
	f.confident += o.confident
	for x := range f.signals {
		f.signals[x] += o.signals[x]
	}
	addMap(f.reasons, o.reasons)
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
		f.hiTTL.offer(k)
	}
	for _, k := range o.loTTL.items {
		f.loTTL.offer(k)
	}
	f.noTTL += o.noTTL
	f.noTTLEx = appendAll(f.noTTLEx, o.noTTLEx)
	addMap(f.owners, o.owners)
	for c, ex := range o.ownerEx {
		f.ownerEx[c] = appendAll(f.ownerEx[c], ex)
	}
	f.values.merge(o.values)
	f.orphans += o.orphans
	f.orphanEx = appendAll(f.orphanEx, o.orphanEx)
	f.examples = appendAll(f.examples, o.examples)
}

func addMap[K comparable](dst, src map[K]int64) {
	for k, v := range src {
		dst[k] += v
	}
}

func appendAll(dst, src []string) []string {
	for _, s := range src {
		dst = appendEx(dst, s)
	}
	return dst
}

// families indexes families by template and collapses literal words that
// vary among many siblings (lock:report:alice, lock:report:bob, ...) into
// {name}, like a streaming log-template miner.
type families struct {
	buf       []byte // scratch for template lookups
	byTmpl    map[string]*family
	siblings  map[string]int
	collapsed map[string]bool
	overflow  *family
}

func newFamilies() *families {
	return &families{byTmpl: map[string]*family{}, siblings: map[string]int{}, collapsed: map[string]bool{}}
}

// wildcard is tmpl with literal position i replaced by {name}.
func wildcard(segs []segment, i int) string {
	saved := segs[i].shape
	segs[i].shape = Shape{Kind: KindName}
	t := template(segs)
	segs[i].shape = saved
	return t
}

// resolve applies every collapse already decided to segs (in place) and
// returns the template.
func (fs *families) resolve(segs []segment) string {
	for i := 1; i < len(segs); i++ {
		if segs[i].shape.Kind == KindWord && fs.collapsed[wildcard(segs, i)] {
			segs[i].shape = Shape{Kind: KindName}
		}
	}
	return template(segs)
}

// get returns the family of a key, creating it when new.
func (fs *families) get(segs []segment) *family {
	// Fast path: a known template. A family made before one of its
	// positions collapsed keeps its keys; finish merges it.
	fs.buf = appendTemplate(fs.buf[:0], segs)
	if f, ok := fs.byTmpl[string(fs.buf)]; ok {
		return f
	}
	tmpl := fs.resolve(segs)
	if f, ok := fs.byTmpl[tmpl]; ok {
		return f
	}
	for i := 1; i < len(segs); i++ {
		if segs[i].shape.Kind != KindWord {
			continue
		}
		w := wildcard(segs, i)
		fs.siblings[w]++
		if fs.siblings[w] >= collapseAt {
			fs.collapsed[w] = true
		}
	}
	tmpl = fs.resolve(segs)
	if f, ok := fs.byTmpl[tmpl]; ok {
		return f
	}
	if len(fs.byTmpl) >= maxFamilies {
		if fs.overflow == nil {
			fs.overflow = newFamily("(other families)", nil)
		}
		return fs.overflow
	}
	f := newFamily(tmpl, segs)
	fs.byTmpl[tmpl] = f
	return f
}

// finish merges families created before their position collapsed into
// the collapsed family, and returns them all, largest first.
func (fs *families) finish() []*family {
	for _, tmpl := range slices.Sorted(maps.Keys(fs.byTmpl)) {
		f := fs.byTmpl[tmpl]
		segs := slices.Clone(f.segs)
		to := fs.resolve(segs)
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
	slices.SortFunc(out, func(a, b *family) int { return cmp.Or(cmp.Compare(b.keys, a.keys), cmp.Compare(a.tmpl, b.tmpl)) })
	return out
}

// label is the literal word nearest before position i, lowercased: the
// name of what the segment identifies (order, job, user).
func (f *family) label(i int) string {
	for j := i - 1; j >= 0; j-- {
		if f.segs[j].shape.Kind == KindWord && f.segs[j].text != "" {
			return strings.ToLower(f.segs[j].text)
		}
	}
	return ""
}
