package lock

import (
	"cmp"
	"context"
	"fmt"
	"slices"
	"strings"
	"time"

	"github.com/dupctl/dupctl/internal/platform/english"
	"github.com/dupctl/dupctl/internal/platform/findings"
	"github.com/dupctl/dupctl/internal/platform/problem"
	"github.com/dupctl/dupctl/internal/platform/progress"
	"github.com/redis/go-redis/v9"
)

// Options are one inspection.
type Options struct {
	// Patterns limit the keys considered to those matching any of these
	// Redis globs; empty (or All) considers every key. Which keys are
	// locks is decided by their shape either way.
	Patterns  []string
	All       bool
	Key       string        // one key, in full, instead of a scan
	Count     int64         // SCAN COUNT hint (keys per page)
	Top       int           // keys kept for the per-key table, problems first
	Observe   int           // observations; 2+ enables the orphan check
	Interval  time.Duration // between observations
	IdleAfter time.Duration // idle time that makes an untouched lock an orphan
	MaxTTL    time.Duration // TTL above which a family gets LOCK_TTL_LONG
	NoValues  bool          // read names, types, TTLs and idle times only
	// MinConfidence is the confidence (0.5..1) a family of candidates
	// needs for its findings to keep their warn or error severity; below
	// it they are reported as info. 0 means DefaultMinConfidence.
	MinConfidence float64
	URL           string // the redacted target, for the report
	Progress      progress.Meter
	// Now is the clock (the CLI's pinnable one); nil means time.Now.
	Now func() time.Time

	// afterLook, when set (tests), runs after observation n of --observe
	// is done and before the next one starts.
	afterLook func(n int)
}

// Validate checks the options before anything is dialled.
func (o *Options) Validate() error {
	for _, p := range o.Patterns {
		if p == "" {
			return problem.Inputf("Patterns", "must not be empty")
		}
	}
	switch {
	case o.All && len(o.Patterns) > 0:
		return &problem.Input{Why: "{All} and {Patterns} exclude each other: {All} already inspects every key"}
	case o.Key != "" && (o.All || len(o.Patterns) > 0 || o.Observe > 1):
		return &problem.Input{Why: "{Key} inspects one key: drop {All}, {Patterns} and {Observe}"}
	case o.Count < 1 || o.Count > 100_000:
		return problem.Inputf("Count", "must be 1..100000, got %d", o.Count)
	case o.Top < 0 || o.Top > 100_000:
		return problem.Inputf("Top", "must be 0..100000, got %d", o.Top)
	case o.Observe < 1 || o.Observe > 10:
		return problem.Inputf("Observe", "must be 1..10, got %d", o.Observe)
	case o.Observe > 1 && o.Interval < time.Second:
		return problem.Inputf("Interval", "must be at least 1s with {Observe} (Redis counts idle time in seconds), got %s", o.Interval)
	case o.IdleAfter < 0 || o.MaxTTL < 0:
		return &problem.Input{Why: "{IdleAfter} and {MaxTTL} must not be negative"}
	case o.MinConfidence != 0 && (o.MinConfidence < candidateConfidence || o.MinConfidence > 1):
		return problem.Inputf("MinConfidence", "must be 0.5..1 (a key under 0.5 is not a lock candidate at all), got %g", o.MinConfidence)
	}
	return nil
}

func (o *Options) defaults() {
	if o.Count <= 0 {
		o.Count = 1000
	}
	if o.Observe < 1 {
		o.Observe = 1
	}
	if o.MinConfidence == 0 {
		o.MinConfidence = DefaultMinConfidence
	}
	if o.Now == nil {
		o.Now = time.Now
	}
	o.Progress = progress.Or(o.Progress)
}

// Result is one inspection: its data and its findings.
type Result struct {
	Data     Data
	Findings []findings.Finding
	// Checks are the rule codes evaluated (those in Data.NotChecked are not).
	Checks []string
}

// Report turns the result into the findings report of `inspect lock`.
func (r *Result) Report() *findings.Report {
	rep := &findings.Report{Command: "inspect lock", Data: &r.Data}
	rep.Check(r.Checks...)
	rep.Add(r.Findings...)
	return rep
}

func (r *Result) check(codes ...string) {
	for _, c := range codes {
		if !slices.Contains(r.Checks, c) {
			r.Checks = append(r.Checks, c)
		}
	}
}

func (r *Result) notChecked(why string, codes ...string) {
	r.Data.NotChecked = append(r.Data.NotChecked, NotChecked{Checks: codes, Why: why})
	r.Checks = slices.DeleteFunc(r.Checks, func(c string) bool { return slices.Contains(codes, c) })
}

// settingsRules are the checks INFO feeds.
var settingsRules = []string{RuleEviction.Code, RuleEvicted.Code, RuleReplica.Code, RulePersistence.Code}

// Run inspects the locks of a Redis server or cluster, read-only.
func Run(ctx context.Context, c redis.UniversalClient, o Options) (*Result, error) {
	o.defaults()
	if err := o.Validate(); err != nil {
		return nil, err
	}
	start := o.Now()
	nodes, err := nodesOf(ctx, c)
	if err != nil {
		return nil, err
	}
	res := &Result{}
	data := &res.Data
	*data = Data{Target: Target{URL: o.URL, Cluster: len(nodes) > 1, Patterns: o.Patterns, All: o.All, Key: o.Key, Values: !o.NoValues, MinConfidence: o.MinConfidence},
		Families: []Family{}, Skipped: []SkippedFamily{}, Locks: []Lock{}, Servers: []Server{}, NotChecked: []NotChecked{}, Notes: []string{}}
	if _, ok := c.(masterLister); ok {
		data.Target.Cluster = true
	}
	if len(o.Patterns) == 0 {
		data.Target.Patterns = []string{"*"}
	}
	var total int64
	var refusedInfo []string
	for _, n := range nodes {
		data.Target.Nodes = append(data.Target.Nodes, n.name)
		s, fs, err := serverInfo(ctx, n, dbOf(c))
		if err != nil {
			return nil, err
		}
		if s.Info != "ok" {
			refusedInfo = append(refusedInfo, n.name)
		}
		data.Servers = append(data.Servers, s)
		res.Findings = append(res.Findings, fs...)
		total += s.Keys
	}
	if len(refusedInfo) < len(nodes) {
		res.check(settingsRules...)
	}
	if len(refusedInfo) > 0 {
		res.notChecked(fmt.Sprintf("Redis refused INFO to this ACL user on %s: eviction policy, evicted keys, role and persistence unknown (grant +info)",
			strings.Join(refusedInfo, ", ")), settingsRules...)
	}
	data.Scan.NoTouch = !o.NoValues && nodes[0].noTouch

	agg := newAggregator(o)
	if o.Key != "" {
		if err := agg.one(ctx, c, nodes[0]); err != nil {
			return nil, err
		}
	} else {
		ro, err := o.readOptions()
		if err != nil {
			return nil, err
		}
		if o.Observe > 1 {
			if err := agg.observe(ctx, nodes, ro); err != nil {
				return nil, err
			}
			data.Observe = &agg.obs
		}
		o.Progress.SetTotal(total)
		walked, err := walk(ctx, nodes, ro, func(p *page) {
			o.Progress.Add(p.scanned)
			agg.stats.KeysScanned += p.scanned
			agg.stats.Vanished += p.vanished
			agg.stats.Denied += p.denied
			agg.stats.SecondReads += p.secondReads
			for i := range p.keys {
				agg.add(&p.keys[i])
			}
		})
		o.Progress.Done()
		if err != nil {
			return nil, err
		}
		for _, r := range walked {
			agg.stats.Repeats += r.repeats
			agg.stats.FalseDrops += r.falseDrops
		}
	}
	agg.finish(res)
	agg.permissions(res, nodes)
	data.Scan.ElapsedMs = o.Now().Sub(start).Milliseconds()
	return res, nil
}

// readOptions turns the patterns into a pass's MATCH and client-side globs.
func (o *Options) readOptions() (readOptions, error) {
	ro := readOptions{count: o.Count, values: !o.NoValues, dedupe: true, now: o.Now}
	switch len(o.Patterns) {
	case 0:
		return ro, nil
	case 1:
		ro.match = o.Patterns[0] // the server filters: less over the wire
		return ro, nil
	}
	for _, p := range o.Patterns {
		g, err := CompileGlob(p)
		if err != nil {
			return ro, problem.Inputf("Patterns", "%q: %w", p, err)
		}
		ro.globs = append(ro.globs, g)
	}
	return ro, nil
}

func dbOf(c redis.UniversalClient) int {
	if s, ok := c.(interface{ Options() *redis.Options }); ok {
		return s.Options().DB
	}
	return 0
}

// aggregator folds the stream into lock families, skipped families and
// a bounded per-key list.
type aggregator struct {
	o       Options
	now     time.Time
	fams    *families
	skipped *families
	top     *topN[Lock]
	fenced  [][]segment // the keys fence counters guard (bounded)
	stats   ScanStats
	cands   map[string]candidate
	obs     Observations
	// fenceOfKey: --key found a fence counter next to the key.
	fenceOfKey bool
	// noIdle counts candidates read without an idle time.
	noIdle int64
}

// candidate is a possible orphan from the first observation.
type candidate struct {
	node       int
	pttl, idle int64
	at         time.Time
}

const maxCandidates = 100_000

func newAggregator(o Options) *aggregator {
	return &aggregator{o: o, now: o.Now(), fams: newFamilies(), skipped: newFamilies(), top: newTopN(o.Top, lockRanksBelow)}
}

// severityOf ranks per-key problems for the per-key table.
var severityOf = func() map[string]int {
	m := map[string]int{}
	for _, r := range Rules() {
		m[r.Code] = int(r.Severity)
	}
	return m
}()

func lockScore(l *Lock) int {
	s := 0
	for _, p := range l.Problems {
		s += 1 << (4 * severityOf[p])
	}
	return s
}

// lockRanksBelow orders the per-key table: more and worse problems first,
// then the most confident, then the longest idle, then by key.
func lockRanksBelow(a, b Lock) bool {
	return cmp.Or(cmp.Compare(lockScore(&a), lockScore(&b)), cmp.Compare(a.Confidence, b.Confidence), cmp.Compare(a.IdleS, b.IdleS), cmp.Compare(b.Key, a.Key)) < 0
}

// add folds one judged key in: a lock candidate into its family, anything
// else into the skipped families.
func (a *aggregator) add(j *judged) {
	o, r := &j.o, &j.r
	a.stats.KeysMatched++
	if r.role == RoleFence && r.guarded != "" && len(a.fenced) < maxFamilies {
		a.fenced = append(a.fenced, splitKey(r.guarded, a.now))
	}
	conf := j.v.confidence()
	switch lockish := r.role == RoleLock || r.role == RoleDedup; {
	case lockish && j.v.candidate():
		a.stats.Candidates++
		if conf >= a.o.MinConfidence {
			a.stats.Locks++
		} else {
			a.stats.Uncertain++
		}
	case a.o.Key != "":
		a.stats.Skipped++ // --key shows the key in full all the same
	default:
		a.stats.Skipped++
		a.skipped.get(j.segs).addSkipped(o, j.v.against())
		return
	}
	if o.idle < 0 {
		a.noIdle++
	}
	f := a.fams.get(j.segs)
	problems := f.add(j, a.now, a.o.MaxTTL, a.o.MinConfidence)
	if !j.v.candidate() {
		problems = nil // shown with --key, but no lock to judge
	}
	if c, ok := a.cands[o.key]; ok {
		if a.orphan(o, c) {
			problems = append(problems, RuleIdleOrphan.Code)
			f.orphans++
			f.orphanEx = appendEx(f.orphanEx, fmt.Sprintf("%s: idle %s at the first look, %s now; TTL %s then, %s now; owner %s",
				o.key, FormatMs(c.idle*1000), FormatMs(o.idle*1000), FormatMs(c.pttl), FormatMs(o.pttl), quote(r.owner)))
			a.obs.Orphans++
		}
	}
	if a.o.Top <= 0 || !a.top.wants(Lock{Key: o.key, IdleS: o.idle, Problems: problems, Confidence: round2(conf)}) {
		return
	}
	l := Lock{Key: o.key, Node: o.node, Family: f.tmpl, Type: o.typ, Role: string(r.role), Maker: r.maker,
		Confidence: round2(conf), Signals: j.v.set.names(), PTTLMs: o.pttl, IdleS: o.idle,
		Owner: clip(r.owner, maxShown), OwnerClass: string(j.own.Class), OwnerBits: j.own.Bits, Holders: r.holders, Metadata: clip(r.metadata, maxShown),
		Problems: problems}
	if !r.acquiredAt.IsZero() {
		l.AcquiredAt = r.acquiredAt.UTC().Format(time.RFC3339)
	}
	a.top.offer(l)
}

// finish judges the families and fills the result.
func (a *aggregator) finish(res *Result) {
	d := &res.Data
	res.check(RuleNoTTL.Code, RuleRandomKey.Code, RuleTokenConstant.Code, RuleTokenHost.Code, RuleTokenWeak.Code, RuleNoFencing.Code)
	if a.o.Key == "" {
		res.check(RuleTokenShared.Code, RuleTTLOutlier.Code, RuleTTLLong.Code)
	}
	if a.o.Observe > 1 {
		res.check(RuleIdleOrphan.Code)
	}
	fams := a.fams.finish()
	fenced := map[string]bool{}
	for _, segs := range a.fenced {
		fenced[a.fams.resolve(segs)] = true
	}
	var unfenced []string
	for _, f := range fams {
		fj, fs := f.report(judgeOptions{maxTTL: a.o.MaxTTL, fenced: fenced[f.tmpl] || a.fenceOfKey, minConfidence: a.o.MinConfidence})
		d.Families = append(d.Families, fj)
		res.Findings = append(res.Findings, fs...)
		if fj.Fencing == "absent" && fj.Confidence >= a.o.MinConfidence {
			unfenced = append(unfenced, fj.Template)
		}
	}
	if len(unfenced) > 0 {
		// One finding for the run: the same advice per family is noise.
		ev := prefixed("no counter: ", unfenced[:min(len(unfenced), 10)])
		ev = append(ev, "looked for redisson_lock_token:{<key>}, <key>:fence and fence:<key> counters among the scanned keys")
		res.Findings = append(res.Findings, RuleNoFencing.New(english.Count(len(unfenced), "lock family", "lock families"), "no fencing counter next to these mutex families", ev...))
	}
	for _, f := range a.skipped.finish() {
		d.Skipped = append(d.Skipped, f.skippedReport())
	}
	for _, l := range a.top.sorted() {
		l.Family = a.fams.resolve(splitKey(l.Key, a.now))
		if l.Holders == nil {
			l.Holders = []Holder{}
		}
		if l.Problems == nil {
			l.Problems = []string{}
		}
		d.Locks = append(d.Locks, l)
	}
	a.stats.Families = len(d.Families)
	a.stats.NoTouch = d.Scan.NoTouch
	d.Scan = a.stats
	slices.SortStableFunc(d.Families, func(x, y Family) int { return cmp.Compare(y.Keys, x.Keys) })
	slices.SortStableFunc(d.Skipped, func(x, y SkippedFamily) int {
		return cmp.Or(cmp.Compare(y.Keys, x.Keys), cmp.Compare(x.Template, y.Template))
	})
}

// permissions reports the checks that commands the ACL refused kept from
// running, and the keys it hid.
func (a *aggregator) permissions(res *Result, nodes []*node) {
	denied := map[string]bool{}
	for _, n := range nodes {
		for _, c := range n.denied {
			name, _, _ := strings.Cut(c, "|") // Redis 7 names subcommands object|idletime
			denied[name] = true
		}
	}
	if denied["object"] {
		res.notChecked("Redis refused OBJECT IDLETIME to this ACL user: idle times unknown, granted TTLs are remaining TTLs (grant +object|idletime)",
			RuleIdleOrphan.Code, RuleTTLOutlier.Code, RuleTTLLong.Code)
	}
	if denied["getrange"] || denied["hscan"] {
		var cmds []string
		for _, c := range []string{"getrange", "hscan"} {
			if denied[c] {
				cmds = append(cmds, "+"+c)
			}
		}
		res.notChecked("Redis refused reading values to this ACL user: owners and makers unknown, locks found by name and TTL only (grant "+strings.Join(cmds, " ")+")",
			RuleTokenConstant.Code, RuleTokenHost.Code, RuleTokenWeak.Code, RuleTokenShared.Code)
	}
	if denied["type"] {
		res.Data.Notes = append(res.Data.Notes, "Redis refused TYPE to this ACL user: types taken from which read succeeded (grant +type)")
	}
	if n := res.Data.Scan.Denied; n > 0 {
		res.Data.Notes = append(res.Data.Notes, fmt.Sprintf("%d keys not inspected: the ACL user's key patterns do not cover them", n))
	}
}
