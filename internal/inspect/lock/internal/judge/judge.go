package judge

import (
	"cmp"
	"fmt"
	"maps"
	"slices"
	"strings"
	"time"

	"github.com/dupctl/dupctl/internal/inspect/lock/internal/keyshape"
	"github.com/dupctl/dupctl/internal/inspect/lock/internal/makers"
	"github.com/dupctl/dupctl/internal/platform/english"
	"github.com/dupctl/dupctl/internal/platform/findings"
)

// Judging a family once the scan is over: what its varying segments are,
// whether its TTLs agree, what its owner values are worth.

// entityLabels name business entities: an id after them is a business key.
var entityLabels = wordSet(`order orders user users account accounts customer customers payment payments
invoice invoices merchant merchants tenant tenants sku product products cart carts subscription subscriptions
wallet wallets transfer transfers settlement settlements shipment shipments booking bookings reservation
reservations ticket tickets org orgs organization organizations company companies device devices member
members contract contracts loan loans refund refunds charge charges entity entities item items store stores
shop shops vendor vendors supplier suppliers patient patients student students employee employees report
reports document documents file files repo repos project projects team teams workspace workspaces session sessions sess`)

// jobLabels name jobs, runs and messages: an id after them changes per
// delivery or per retry.
var jobLabels = wordSet(`job jobs task tasks jid run runs attempt attempts exec execution executions worker
workers message messages msg msgs request requests req trace traces span spans nonce delivery deliveries
consumer consumers process processes thread threads invocation invocations correlation`)

// lastWord is a snake_case or kebab-case name's last word.
func lastWord(s string) string { return s[strings.LastIndexAny(s, "_-")+1:] }

func wordSet(s string) map[string]bool {
	m := map[string]bool{}
	for _, w := range strings.Fields(s) {
		m[w] = true
	}
	return m
}

// Key classes of a family.
const (
	ClassBusiness   = "business"
	ClassPerRun     = "per-run"
	ClassHashed     = "hashed"
	ClassTimeBucket = "time-bucket"
	ClassConstant   = "constant"
	ClassByDesign   = "by-design"
	ClassUnknown    = "unknown"
)

// Options are the thresholds of a run.
type Options struct {
	MaxTTL        time.Duration
	Fenced        bool
	MinConfidence float64
}

// dominant returns the most common kind at a position and its share.
func (p *posStats) dominant() (keyshape.Kind, float64) {
	var best keyshape.Kind
	var total int64
	for k, n := range p.kinds {
		total += n
		if n > p.kinds[best] {
			best = keyshape.Kind(k)
		}
	}
	if total == 0 {
		return keyshape.KindWord, 0
	}
	return best, float64(p.kinds[best]) / float64(total)
}

func (p *posStats) uuidVersion() int {
	best := 0
	for v, n := range p.uuidVer {
		if n > p.uuidVer[best] {
			best = v
		}
	}
	return best
}

// judgePosition classifies one varying segment from its counters and the
// label before it.
func judgePosition(p *posStats, label string) (shape, class, why string) {
	k, _ := p.dominant()
	pos := newPosition(p, label)
	shape = k.String()
	switch k {
	case keyshape.KindUUID:
		return pos.uuid()
	case keyshape.KindULID, keyshape.KindObjectID, keyshape.KindSnowflake:
		class, why = pos.timeBased()
		return
	case keyshape.KindJID:
		if pos.entity {
			return shape, ClassBusiness, "a 24-hex entity id" + pos.under
		}
		return shape, ClassPerRun, "24 random hex digits" + pos.under + ": the shape of a Sidekiq JID (SecureRandom.hex(12))"
	case keyshape.KindInt:
		if pos.job {
			return shape, ClassPerRun, "a job counter" + pos.under
		}
		return shape, ClassBusiness, "an integer id" + pos.under
	case keyshape.KindEpoch:
		class, why = pos.epoch()
		return
	case keyshape.KindMD5, keyshape.KindSHA1, keyshape.KindSHA256:
		return shape, ClassHashed, "a digest: stable only if what it hashes holds no per-run field (trace id, timestamp, attempt)"
	case keyshape.KindBase64:
		if pos.entity { // a session's lock: PHPREDIS_SESSION:<id>_LOCK
			return shape, ClassBusiness, "a random entity id" + pos.under
		}
		return shape, ClassPerRun, "a random token in the key name"
	case keyshape.KindDate:
		return shape, ClassTimeBucket, "a date: a period bucket"
	case keyshape.KindHex:
		class, why = pos.hex()
		return
	}
	if pos.job {
		return shape, ClassPerRun, "a per-job id" + pos.under
	}
	return shape, ClassBusiness, "a name or code" + pos.under
}

// position is what judging one varying segment goes by: its counters,
// what the label before it names, and how many of its times were minted
// with the lock.
type position struct {
	p           *posStats
	entity, job bool
	under       string // ` after "label"`, or ""
	mintedShare float64
}

func newPosition(p *posStats, label string) position {
	// The label's last word names the entity: PHPREDIS_SESSION, user_orders.
	w := lastWord(label)
	pos := position{p: p, entity: entityLabels[label] || entityLabels[w], job: jobLabels[label] || jobLabels[w]}
	if label != "" {
		pos.under = fmt.Sprintf(" after %q", label)
	}
	if p.timed > 0 {
		pos.mintedShare = float64(p.minted) / float64(p.timed)
	}
	return pos
}

// timeBased classifies an id that carries its creation time.
func (pos position) timeBased() (class, why string) {
	switch {
	case pos.job:
		return ClassPerRun, "a per-job id" + pos.under
	case pos.mintedShare >= 0.5:
		return ClassPerRun, fmt.Sprintf("a time-based id minted when the lock was taken (%.0f%% within %s of the lock's write)",
			100*pos.mintedShare, mintedWithin)
	}
	return ClassBusiness, "an id created long before its lock" + pos.under + ": an entity's id"
}

// uuid classifies a UUID position by its version: time-based or random.
func (pos position) uuid() (shape, class, why string) {
	v := pos.p.uuidVersion()
	shape = fmt.Sprintf("uuid v%d", v)
	if v == 1 || v == 6 || v == 7 {
		class, why = pos.timeBased()
		return
	}
	switch {
	case pos.entity:
		return shape, ClassBusiness, "a random entity id" + pos.under
	case pos.job:
		return shape, ClassPerRun, "a random per-job id" + pos.under
	}
	return shape, ClassPerRun, "a random UUID v4" + pos.under + ": a per-job or per-message id unless it is the entity's own id"
}

// epoch classifies a timestamp position: a period bucket or a per-run
// time.
func (pos position) epoch() (class, why string) {
	p := pos.p
	switch {
	case p.timed > 0 && float64(p.aligned)/float64(p.timed) >= 0.8:
		return ClassTimeBucket, "a timestamp on whole minutes: a period bucket"
	case pos.mintedShare >= 0.5:
		return ClassPerRun, "a timestamp taken when the lock was: every run makes a new key"
	}
	return ClassTimeBucket, "a timestamp" + pos.under
}

// hex classifies a hex id by the label before it.
func (pos position) hex() (class, why string) {
	switch {
	case pos.entity:
		return ClassBusiness, "a hex id" + pos.under
	case pos.job:
		return ClassPerRun, "a hex per-job id" + pos.under
	}
	return ClassUnknown, "a hex id" + pos.under
}

// mainMaker is the family's most common maker.
func (f *Tally) mainMaker() string {
	best, n := makers.Unknown, int64(-1)
	for _, m := range slices.Sorted(maps.Keys(f.makers)) {
		if f.makers[m] > n {
			best, n = m, f.makers[m]
		}
	}
	return best
}

// keyClass judges the family's key shape from its varying segments.
func (f *Tally) keyClass() (string, []Segment) {
	var segs []Segment
	rank := map[string]int{ClassPerRun: 5, ClassHashed: 4, ClassUnknown: 3, ClassBusiness: 2, ClassTimeBucket: 1}
	class := ClassConstant
	for i, s := range f.segs {
		if s.Shape.Kind == keyshape.KindWord || s.Shape.Kind == keyshape.KindEmpty {
			continue
		}
		p := &f.pos[i]
		_, share := p.dominant()
		label := f.label(i)
		shape, c, why := judgePosition(p, label)
		segs = append(segs, Segment{Position: i, Placeholder: s.Shape.Kind.Placeholder(), Label: label, Shape: shape, Share: Round2(share),
			Class: c, Why: why})
		if class == ClassConstant || rank[c] > rank[class] {
			class = c
		}
	}
	if f.mainMaker() == makers.BullMQ && f.roles[makers.RoleLock] > 0 {
		class = ClassByDesign
	}
	return class, segs
}

func Round2(x float64) float64 { return float64(int(x*100+0.5)) / 100 }

// mutexMakers are the makers whose locks are mutexes (fencing applies);
// the others are uniqueness keys or job locks checked by their library.
var mutexMakers = map[string]bool{makers.SetNXPX: true, makers.Redsync: true, makers.Redislock: true, makers.Redisson: true,
	makers.Spring: true, makers.ShedLock: true, makers.Unknown: true}

// Report turns a family into its JSON summary and findings. Only
// confirmed and likely families are judged; the catalogue entry most of
// them matched says what is by design (a TTL-less dedup key, a token
// shared by a process) and what a finding means for that library.
func (f *Tally) Report(o Options) (Family, []findings.Finding) {
	out := f.summary()
	cert := f.Certainty(o.MinConfidence)
	out.Certainty = cert.String()
	if b := f.behaviour(); len(b.Why) > 0 {
		out.Behaviour = b.Why
	}
	if f.learnedN > 0 {
		out.Behaviour = append(out.Behaviour, fmt.Sprintf("%s (%s of the family's keys)", f.learned, english.Number(f.learnedN)))
	}
	if k, ok := f.values.multiKey(); ok {
		out.MultiKey = k
	}
	entry := f.MainEntry()
	if entry != nil {
		out.Library = &Library{ID: entry.ID, Name: entry.Library, Object: entry.Object, TTL: entry.TTL.Behaviour, Sources: entry.Sources,
			User: entry.User}
	}
	if f.lockish == 0 {
		out.KeyClass = "n/a" // fence counters, metadata, indexes
		return out, nil
	}
	if cert < Likely {
		return out, nil // a key shown with --key that is no lock: nothing to judge
	}
	var fs []findings.Finding
	add := func(fi findings.Finding) {
		if entry != nil {
			if byDesign(entry, fi.Code) {
				return
			}
			if note := entry.Note(fi.Code); note != "" {
				fi.Evidence = append(fi.Evidence, entry.Library+": "+note)
			}
		}
		fs = append(fs, fi)
		if !slices.Contains(out.Problems, fi.Code) {
			out.Problems = append(out.Problems, fi.Code)
		}
	}
	maker := f.mainMaker()
	f.keyFindings(add, &out)
	if m := f.ownerFindings(add, maker, entry); m != "" {
		out.Makers = map[string]int64{m: f.keys}
		maker = m
	}
	f.ttlFindings(add, out.TTL, o)
	if mutexMakers[maker] && f.roles[makers.RoleLock] > 0 || entry != nil && entry.Role == makers.RoleLock && mutexEntry(entry) {
		out.Fencing = "absent"
		if o.Fenced {
			out.Fencing = "present"
		}
	}
	if f.Orphans > 0 {
		add(RuleIdleOrphan.New(f.Tmpl, fmt.Sprintf("untouched across the observations and idle past {IdleAfter} (%s)", locks(f.Orphans)),
			f.OrphanEx...))
	}
	return out, fs
}

// PossibleReport is the one info line of a family of possible locks,
// with the pattern that would confirm it.
// Suggest is the pattern that would confirm the family (tight: its
// placeholders keep their shape where a glob can say it).
func (f *Tally) Suggest(tight bool) string { return suggestFor(f.Tmpl, f.Examples(), tight) }

// Suggestion is a pattern that would confirm a family, and how many keys
// it matches today: the family's, and others (of the families seen, by
// their examples).
type Suggestion struct {
	Glob           string
	Matches, Other int64
}

func (f *Tally) PossibleReport(sg Suggestion) (PossibleFamily, findings.Finding) {
	ex := f.Examples()
	p := PossibleFamily{Template: f.Tmpl, Keys: f.keys, NoTTL: f.noTTL, Makers: f.makers, Signals: map[string]int64{}, Examples: ex,
		Suggest: sg.Glob, SuggestMatches: sg.Matches, SuggestOther: sg.Other}
	for x, n := range f.signals {
		if n > 0 {
			p.Signals[signal(x).String()] = n
		}
	}
	eg := ""
	if len(ex) > 0 {
		eg = ", e.g. " + strings.Join(ex[:min(len(ex), 2)], ", ")
	}
	ev := []string{fmt.Sprintf("shape: %s", strings.Join(topSignals(p.Signals, 3), ", "))}
	if f.noTTL > 0 {
		ev = append(ev, fmt.Sprintf("%s of them without a TTL", english.Number(f.noTTL)))
	}
	if m := f.mainMaker(); m != makers.Unknown && m != makers.SetNXPX {
		ev = append(ev, "values shaped like "+m+"'s")
	}
	if b := f.behaviour(); len(b.Why) > 0 {
		ev = append(ev, b.Why...)
	}
	matches := fmt.Sprintf("it matches %s today", english.Count(sg.Matches, "key", "keys"))
	if sg.Other > 0 {
		matches += fmt.Sprintf(", %s of other families among them", english.Number(sg.Other))
	}
	fi := RulePossible.New(f.Tmpl, fmt.Sprintf("possible lock family, %s%s; confirm with {LockPatterns} '%s' (%s)",
		english.Count(f.keys, "key", "keys"), eg, p.Suggest, matches), ev...)
	return p, fi
}

// PossibleDefects are the defects of a possible family that do not depend
// on what wrote it - a lock without a TTL, a TTL far from its siblings', a
// constant owner value - at the family's certainty: info, each with the
// pattern that would confirm the family beside it, so a defect does not
// disappear until someone confirms the family.
func (f *Tally) PossibleDefects(o Options, suggest string) []findings.Finding {
	if f.lockish == 0 {
		return nil
	}
	var out []findings.Finding
	add := func(fi findings.Finding) {
		switch fi.Code {
		case RuleNoTTL.Code, RuleTTLOutlier.Code, RuleTokenConstant.Code:
		default:
			return
		}
		fi.Severity = findings.Info
		fi.Message = fmt.Sprintf("if these are locks (possible; confirm with {LockPatterns} '%s'): %s", suggest, fi.Message)
		out = append(out, fi)
	}
	out1 := f.summary()
	f.keyFindings(add, &out1)
	f.ownerFindings(add, f.mainMaker(), nil)
	f.ttlFindings(add, out1.TTL, o)
	return out
}

// SuggestPattern is the Redis glob of a family template: its
// placeholders become *.
func SuggestPattern(tmpl string) string { return globOf(tmpl, false) }

// TightPattern is the Redis glob of a family template whose placeholders
// keep their shape where a glob can say it: {int} is [0-9]*, a uuid
// ????????-????-????-????-????????????, a digest its length in ?.
func TightPattern(tmpl string) string { return globOf(tmpl, true) }

// tightGlobs are the placeholders a glob can shape.
var tightGlobs = map[string]string{
	"{int}": "[0-9]*", "{date}": "[0-9]*", "{uuid}": "????????-????-????-????-????????????",
	"{hex24}": strings.Repeat("?", 24), "{hex32}": strings.Repeat("?", 32), "{hex40}": strings.Repeat("?", 40),
	"{hex64}": strings.Repeat("?", 64), "{ulid}": strings.Repeat("?", 26),
}

func globOf(tmpl string, tight bool) string {
	var b strings.Builder
	for i := 0; i < len(tmpl); i++ {
		if tmpl[i] == '{' {
			if j := strings.IndexByte(tmpl[i:], '}'); j > 0 && !strings.ContainsAny(tmpl[i+1:i+j], ":{") {
				if g, ok := tightGlobs[tmpl[i:i+j+1]]; ok && tight {
					b.WriteString(g)
				} else {
					b.WriteByte('*')
				}
				i += j
				continue
			}
		}
		if strings.IndexByte(`*?[]\`, tmpl[i]) >= 0 {
			b.WriteByte('\\')
		}
		b.WriteByte(tmpl[i])
	}
	return b.String()
}

// suggestFor is the pattern that would confirm a family: its template's
// glob, its leading placeholders - a collapsed library or app prefix
// ({name}:{name}:invoice:{int}), whose * would confirm any a:b:invoice:c
// key, or a template of no literal text at all ({id}) - replaced by what
// its examples start with (acme:*:invoice:*, cleanup-tenant-*).
func suggestFor(tmpl string, examples []string, tight bool) string {
	g := globOf(tmpl, tight)
	if g == "" || g[0] != '*' && g[0] != '?' && g[0] != '[' || len(examples) == 0 {
		return g
	}
	prefix := strings.TrimSuffix(examples[0], "...") // a long name is clipped
	for _, e := range examples[1:] {
		n := 0
		for n < len(prefix) && n < len(e) && prefix[n] == e[n] {
			n++
		}
		prefix = prefix[:n]
	}
	// Whole segments of the prefix stand for the template's first ones.
	cut := strings.LastIndexAny(prefix, ":/|.")
	if cut < 0 {
		if prefix == "" || strings.Trim(g, "*:/|{}.") != "" {
			return g
		}
		return escapeGlob(prefix) + "*" // one-segment names: cleanup-tenant-*
	}
	seps := strings.Count(prefix[:cut+1], ":") + strings.Count(prefix[:cut+1], "/") + strings.Count(prefix[:cut+1], "|") +
		strings.Count(prefix[:cut+1], ".")
	rest := g
	for ; seps > 0 && rest != ""; seps-- {
		i := strings.IndexAny(rest, ":/|.")
		if i < 0 {
			return g
		}
		rest = rest[i+1:]
	}
	return escapeGlob(prefix[:cut+1]) + rest
}

func escapeGlob(s string) string {
	var b strings.Builder
	for i := 0; i < len(s); i++ {
		if strings.IndexByte(`*?[]\`, s[i]) >= 0 {
			b.WriteByte('\\')
		}
		b.WriteByte(s[i])
	}
	return b.String()
}

// topSignals names the n most common signals, most first.
func topSignals(m map[string]int64, n int) []string {
	names := slices.Sorted(maps.Keys(m))
	slices.SortStableFunc(names, func(a, b string) int { return cmp.Compare(m[b], m[a]) })
	return names[:min(len(names), n)]
}

// byDesign reports findings a library's layout makes by design: no TTL
// on a key it keeps without one, one token on many locks where the
// library shares it, owner checks (a shared value too) where it stores no
// owner (unless that is the library's documented problem).
func byDesign(e *makers.Entry, code string) bool {
	switch code {
	case RuleNoTTL.Code:
		return e.TTL.Behaviour == makers.TTLNone
	case RuleTokenShared.Code:
		return e.Token.Shared || e.NoToken() && e.Note(code) == ""
	case RuleTokenConstant.Code, RuleTokenHost.Code, RuleTokenWeak.Code:
		return e.NoToken() && e.Note(code) == ""
	}
	return false
}

// mutexEntry reports catalogue locks that are mutexes (fencing applies),
// not a job library's own locks (per job, a concurrency count, its
// scheduler's leader), which its users' code cannot fence.
func mutexEntry(e *makers.Entry) bool {
	switch e.Maker {
	case makers.BullMQ, "bull", makers.Sidekiq, makers.Asynq, "gocraft-work", "node-resque":
		return false
	}
	return true
}

// summary is the family's JSON summary before its findings: counts,
// confidence, key class, TTLs and examples.
func (f *Tally) summary() Family {
	class, varying := f.keyClass()
	out := Family{
		Template: f.Tmpl, Keys: f.keys, KeyClass: class, Varying: varying, Confident: f.confident, Signals: map[string]int64{},
		Roles: map[string]int64{}, Makers: f.makers, Types: f.types, Owners: map[string]int64{},
		Fencing: "n/a", Problems: []string{}, Examples: slices.Sorted(slices.Values(f.examples)),
	}
	if f.keys > 0 {
		out.Confidence = Round2(f.confSum / float64(f.keys))
	}
	for x, n := range f.signals {
		if n > 0 {
			out.Signals[signal(x).String()] = n
		}
	}
	// Which keys were kept follows SCAN order; sorted, small families read
	// the same on every server.
	slices.Sort(f.noTTLEx)
	for _, ex := range f.ownerEx {
		slices.Sort(ex)
	}
	slices.Sort(f.OrphanEx)
	for r, n := range f.roles {
		out.Roles[string(r)] = n
	}
	for c, n := range f.owners {
		out.Owners[string(c)] = n
	}
	if out.Varying == nil {
		out.Varying = []Segment{}
	}
	out.TTL = f.ttlStats()
	return out
}

// keyFindings judges the keys themselves: missing TTLs, and a name that
// varies per run.
func (f *Tally) keyFindings(add func(findings.Finding), out *Family) {
	if f.noTTL > 0 {
		add(RuleNoTTL.New(f.Tmpl, fmt.Sprintf("%s of %s %s no TTL: a crashed holder blocks %s forever", english.Number(f.noTTL),
			locks(f.lockish),
			english.Plural(f.noTTL, "has", "have"), english.Plural(f.noTTL, "it", "them")), Prefixed("no TTL: ", f.noTTLEx)...))
	}
	if out.KeyClass != ClassPerRun {
		return
	}
	for _, s := range out.Varying {
		if s.Class == ClassPerRun {
			ev := append([]string{fmt.Sprintf("%s keys; %.0f%% of them have a %s there", english.Number(f.keys), 100*s.Share, s.Shape)},
				Prefixed("e.g. ", out.Examples)...)
			add(RuleRandomKey.New(f.Tmpl, fmt.Sprintf("segment %d %s varies per run: %s", s.Position+1, s.Placeholder, s.Why), ev...))
			return
		}
	}
}

// locks says "1 lock" or "N locks".
func locks(n int64) string { return english.Count(n, "lock", "locks") }

func Prefixed(p string, list []string) []string {
	out := make([]string, len(list))
	for i, s := range list {
		out[i] = p + s
	}
	return out
}

// ownerFindings judges the family's owner values; it returns
// MakerSpring when they are Spring Integration's RedisLockRegistry
// clientIds (spring-projects/spring-integration RedisLockRegistry.java:
// the lock key is registryKey + ':' + path, its value the registry's
// clientId = UUID.randomUUID().toString(), SET with PX expireAfter,
// 60000 ms by default; every lock one registry holds has that value).
func (f *Tally) ownerFindings(add func(findings.Finding), maker string, entry *makers.Entry) string {
	var weak []string
	var weakN int64
	owners := f.reclassified()
	for _, c := range []OwnerClass{OwnerConstant, OwnerHost, OwnerTimestamp, OwnerCounter, OwnerLowEntropy} {
		n := owners[c]
		if n == 0 {
			continue
		}
		switch c {
		case OwnerConstant:
			add(RuleTokenConstant.New(f.Tmpl, fmt.Sprintf("owner value is a constant, not a token (%s)", locks(n)), f.ownerEx[c]...))
		case OwnerHost:
			add(RuleTokenHost.New(f.Tmpl, fmt.Sprintf("owner names a host or process with nothing random (%s)", locks(n)), f.ownerEx[c]...))
		default:
			weakN += n
			weak = append(weak, fmt.Sprintf("%d %s", n, c))
			for _, e := range f.ownerEx[c] {
				weak = AppendEx(weak, e)
			}
		}
	}
	if weakN > 0 {
		add(RuleTokenWeak.New(f.Tmpl, fmt.Sprintf("owner token has under %d random bits (%s)", MinTokenBits, locks(weakN)), weak...))
	}
	if maker == makers.Redisson || entry != nil && entry.Token.Shared { // per client thread, or one per process by design
		return ""
	}
	if _, ok := f.values.multiKey(); ok {
		return "" // one token on each lock's fixed group of keys: the lock's design
	}
	if rep := f.values.repeated(2); len(rep) > 0 {
		ev := []string{}
		allUUID := true
		for i, it := range rep {
			if _, ok := keyshape.ParseUUID(it.value); !ok {
				allUUID = false
			}
			if i < exampleCount {
				ev = append(ev, fmt.Sprintf("%s on %s live locks", Quote(it.value), english.Number(it.count)))
			}
		}
		if allUUID {
			ev = append(ev, "UUID values shared across locks: the shape of Spring Integration's RedisLockRegistry clientId "+
				"(safe there only because a local lock serialises threads)")
		}
		add(RuleTokenShared.New(f.Tmpl, english.Count(len(rep), "owner value is", "owner values are each")+" held on several live locks", ev...))
		if allUUID && (maker == makers.SetNXPX || maker == makers.Unknown) {
			for _, e := range defaultConfig.Catalogue.Shared() {
				return e.Maker // Spring Integration's clientId, named per family
			}
		}
	}
	return ""
}

// ttlStats sums up the family's TTLs. Both medians come from log
// histograms (within ~9%), clamped to the values seen; the granted median
// is never below the remaining one, as no lock's granted TTL (PTTL + idle)
// is below its PTTL - a histogram's rounding could say otherwise.
func (f *Tally) ttlStats() TTLStats {
	t := TTLStats{NoTTL: f.noTTL, MinMs: max(f.remMin, 0), MaxMs: f.remMax, OrphansConfirmed: f.Orphans}
	if f.remain.count > 0 {
		t.MedianMs = min(max(f.remain.quantile(0.5), t.MinMs), t.MaxMs)
		t.GrantedMedianMs = max(min(max(f.granted.quantile(0.5), f.grMin), f.grMax), t.MedianMs)
		switch {
		case f.noIdle == f.granted.count:
			t.GrantedFrom = "pttl: no idle time (an LFU maxmemory-policy or the ACL hides it), so the granted TTL is the remaining one"
		case f.noIdle > 0:
			t.GrantedFrom = fmt.Sprintf("pttl + idle time, median over %d locks (%d without an idle time counted at their pttl)",
				f.granted.count, f.noIdle)
		default:
			t.GrantedFrom = fmt.Sprintf("pttl + idle time, median over %d locks", f.granted.count)
		}
	}
	for i, e := range bucketEdges {
		t.Histogram = append(t.Histogram, Bucket{Le: e.name, Count: f.buckets[i]})
	}
	t.Histogram = append(t.Histogram, Bucket{Le: "none", Count: f.buckets[len(bucketEdges)]})
	t.Renewed, t.Retaken, t.Gone = f.rereads()
	if f.granted.count >= minSiblings {
		med := t.GrantedMedianMs
		t.OutliersAbove = max(f.granted.countAbove(med*outlierRatio), int64(len(f.ttlOutliers(med, true))))
		t.OutliersBelow = int64(len(f.ttlOutliers(med, false)))
		if below := med/outlierRatio - idleClock; below > 0 {
			// The histogram counts the keys read again and cleared too.
			t.OutliersBelow = max(f.granted.countBelow(below)-(t.Renewed+t.Retaken+t.Gone), t.OutliersBelow)
		}
	}
	return t
}

// idleClock is the resolution of Redis's idle time (seconds): a granted
// TTL (PTTL + idle) may be up to this much longer than it reads, so a
// lease re-granted every 50 ms is never taken for a TTL far below its
// siblings' - judged below only when even its longest reading is.
const idleClock = 1000

// ttlOutliers returns the kept extreme keys beyond the outlier ratio.
func (f *Tally) ttlOutliers(med int64, above bool) []keyTTL {
	var out []keyTTL
	if above {
		for _, k := range f.hiTTL.Sorted() {
			if k.ms > med*outlierRatio {
				out = append(out, k)
			}
		}
		return out
	}
	for _, k := range f.loTTL.Sorted() {
		if r, read := f.reread[k.key]; (k.ms+idleClock)*outlierRatio < med && (!read || r == StillLow) {
			out = append(out, k)
		}
	}
	return out
}

func (f *Tally) ttlFindings(add func(findings.Finding), t TTLStats, o Options) {
	med := t.GrantedMedianMs
	if t.OutliersAbove+t.OutliersBelow > 0 {
		ev := []string{fmt.Sprintf("family median TTL %s over %s locks with a TTL", FormatMs(med), english.Number(f.granted.count))}
		for _, k := range f.ttlOutliers(med, true) {
			ev = append(ev, fmt.Sprintf("%s: TTL %s, %.0fx the median", k.key, FormatMs(k.ms), float64(k.ms)/float64(max(med, 1))))
		}
		low := f.ttlOutliers(med, false)
		for _, k := range low[:min(len(low), exampleCount)] {
			e := fmt.Sprintf("%s: TTL %s, 1/%.0f of the median", k.key, FormatMs(k.ms), float64(med)/float64(max(k.ms, 1)))
			if _, read := f.reread[k.key]; read {
				e += "; read again, its TTL had only fallen"
			}
			ev = append(ev, e)
		}
		if n := t.Renewed + t.Retaken + t.Gone; n > 0 {
			ev = append(ev, fmt.Sprintf("not counted: %s far below, read again: %s", locks(n), f.rereadText()))
		}
		add(RuleTTLOutlier.New(f.Tmpl, fmt.Sprintf("%s locks far above and %s far below the family's TTL (over %dx apart)",
			english.Number(t.OutliersAbove),
			english.Number(t.OutliersBelow), outlierRatio), ev...))
	}
	if n := f.granted.count; o.MaxTTL > 0 && n > 0 && 2*f.overMax > n {
		add(RuleTTLLong.New(f.Tmpl, fmt.Sprintf("%s of %s locks were given a TTL above {MaxTTL} %s (median %s): "+
			"a crashed holder blocks its key that long",
			english.Number(f.overMax), english.Number(n), FormatMs(o.MaxTTL.Milliseconds()), FormatMs(med))))
	}
}

// FormatMs shows a duration rounded to two significant digits, in the
// largest unit that keeps it at least 1: 1h, 10m, 8.1s, 250ms.
func FormatMs(ms int64) string {
	if ms < 0 {
		return "none"
	}
	r := roundSig(ms)
	units := []struct {
		ms   int64
		name string
	}{{86_400_000, "d"}, {3_600_000, "h"}, {60_000, "m"}, {1000, "s"}}
	for _, u := range units {
		if r >= u.ms {
			v := float64(r) / float64(u.ms)
			s := fmt.Sprintf("%.1f", v)
			if v >= 10 || strings.HasSuffix(s, ".0") {
				s = fmt.Sprintf("%.0f", v)
			}
			return s + u.name
		}
	}
	return fmt.Sprintf("%dms", r)
}

// roundSig rounds to two significant digits.
func roundSig(v int64) int64 {
	p := int64(1)
	for v/p >= 100 {
		p *= 10
	}
	return (v + p/2) / p * p
}
