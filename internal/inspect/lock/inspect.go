package lock

import (
	"cmp"
	"context"
	"errors"
	"fmt"
	"slices"
	"sync"
	"time"

	"github.com/dupctl/dupctl/internal/platform/findings"
	"github.com/dupctl/dupctl/internal/platform/progress"
	"github.com/redis/go-redis/v9"
)

// DefaultPatterns are scanned when neither --pattern nor --all is given:
// the names lock libraries use (lock, mutex, fence in any case; the
// sidekiq-unique-jobs and asynq uniqueness prefixes), so lock:*, *:lock,
// job-lock:* (ShedLock), bull:*:lock (BullMQ) and redisson_lock_token:*
// are all found in one SCAN pass.
var DefaultPatterns = []string{"*[lL][oO][cC][kK]*", "*[mM][uU][tT][eE][xX]*", "*[fF][eE][nN][cC][eE]*", "uniquejobs:*", "asynq:{*}:unique:*"}

// Options are one inspection.
type Options struct {
	Patterns  []string      // key patterns (DefaultPatterns when empty)
	All       bool          // every key
	Key       string        // one key, in full, instead of a scan
	Count     int64         // SCAN COUNT hint (keys per page)
	Top       int           // keys kept for the per-key table, problems first
	Observe   int           // observations; 2+ enables the orphan check
	Interval  time.Duration // between observations
	IdleAfter time.Duration // idle time that makes an untouched lock an orphan
	MaxTTL    time.Duration // TTL above which a family gets LOCK_TTL_LONG
	NoValues  bool          // read names, types, TTLs and idle times only
	URL       string        // the redacted target, for the report
	Progress  progress.Meter

	// afterLook, when set (tests), runs after observation n of --observe
	// is done and before the next one starts.
	afterLook func(n int)
}

func (o *Options) defaults() {
	if o.Count <= 0 {
		o.Count = 1000
	}
	if o.Observe < 1 {
		o.Observe = 1
	}
	if len(o.Patterns) == 0 && !o.All {
		o.Patterns = DefaultPatterns
	}
	o.Progress = progress.Or(o.Progress)
}

// Inspect inspects the locks of a Redis server or cluster, read-only, and
// returns the report whose Data is a *Data.
func Inspect(ctx context.Context, c redis.UniversalClient, o Options) (*findings.Report, error) {
	o.defaults()
	start := time.Now()
	nodes, err := nodesOf(ctx, c)
	if err != nil {
		return nil, err
	}
	rep := &findings.Report{Command: "inspect lock"}
	data := &Data{Target: Target{URL: o.URL, Cluster: len(nodes) > 1, Patterns: o.Patterns, All: o.All, Key: o.Key, Values: !o.NoValues},
		Families: []Family{}, Locks: []Lock{}, Servers: []Server{}}
	if _, ok := c.(masterLister); ok {
		data.Target.Cluster = true
	}
	if o.All {
		data.Target.Patterns = []string{"*"}
	}
	rep.Data = data
	var total int64
	for i := range nodes {
		data.Target.Nodes = append(data.Target.Nodes, nodes[i].name)
		s, fs, err := serverInfo(ctx, &nodes[i], dbOf(c))
		if err != nil {
			return nil, err
		}
		data.Servers = append(data.Servers, s)
		rep.Add(fs...)
		total += s.Keys
	}
	rep.Check(RuleEviction.Code, RuleEvicted.Code, RuleReplica.Code, RulePersistence.Code)
	data.Scan.NoTouch = !o.NoValues && nodes[0].noTouch

	agg := newAggregator(o)
	if o.Key != "" {
		if err := agg.one(ctx, c, nodes[0].noTouch); err != nil {
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
		res, err := walk(ctx, nodes, ro, func(p page) {
			o.Progress.Add(p.scanned)
			agg.stats.KeysScanned += p.scanned
			agg.stats.Vanished += p.vanished
			for i := range p.obs {
				agg.add(&p.obs[i])
			}
		})
		o.Progress.Done()
		if err != nil {
			return nil, err
		}
		for _, r := range res {
			agg.stats.Repeats += r.repeats
			agg.stats.FalseDrops += r.falseDrops
		}
	}
	agg.finish(rep, data)
	data.Scan.ElapsedMs = time.Since(start).Milliseconds()
	return rep, nil
}

// readOptions turns the patterns into a pass's MATCH and client-side globs.
func (o *Options) readOptions() (readOptions, error) {
	ro := readOptions{count: o.Count, values: !o.NoValues, dedupe: true}
	if o.All {
		return ro, nil
	}
	if len(o.Patterns) == 1 {
		ro.match = o.Patterns[0] // the server filters: less over the wire
		return ro, nil
	}
	for _, p := range o.Patterns {
		g, err := CompileGlob(p)
		if err != nil {
			return ro, fmt.Errorf("pattern %q: %w", p, err)
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

// walk scans every node concurrently (each is single-threaded, so one
// stream per node) and hands pages to fn on the caller's goroutine.
func walk(ctx context.Context, nodes []node, ro readOptions, fn func(page)) ([]nodeResult, error) {
	ctx, cancel := context.WithCancel(ctx)
	defer cancel()
	out := make(chan page, 2*len(nodes))
	res := make([]nodeResult, len(nodes))
	errs := make([]error, len(nodes))
	var wg sync.WaitGroup
	for i, n := range nodes {
		wg.Add(1)
		go func() {
			defer wg.Done()
			if res[i], errs[i] = scanNode(ctx, n, ro, out); errs[i] != nil {
				cancel()
			}
		}()
	}
	go func() { wg.Wait(); close(out) }()
	for p := range out {
		fn(p)
	}
	return res, firstError(errs)
}

// firstError prefers a real failure over the cancellations it caused.
func firstError(errs []error) error {
	var canceled error
	for _, err := range errs {
		switch {
		case err == nil:
		case errors.Is(err, context.Canceled):
			canceled = err
		default:
			return err
		}
	}
	return canceled
}

// aggregator folds the stream into families and a bounded per-key list.
type aggregator struct {
	o      Options
	now    time.Time
	fams   *families
	top    *topN[Lock]
	fenced [][]segment // the keys fence counters guard (bounded)
	stats  ScanStats
	cands  map[string]candidate
	obs    Observations
	// fenceOfKey: --key found a fence counter next to the key.
	fenceOfKey bool
	segs       []segment // scratch for the key being added
}

// candidate is a possible orphan from the first observation.
type candidate struct {
	node       int
	pttl, idle int64
	at         time.Time
}

const maxCandidates = 100_000

func newAggregator(o Options) *aggregator {
	return &aggregator{o: o, now: time.Now(), fams: newFamilies(), top: newTopN(o.Top, lockRanksBelow)}
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
// then the longest idle, then by key.
func lockRanksBelow(a, b Lock) bool {
	return cmp.Or(cmp.Compare(lockScore(&a), lockScore(&b)), cmp.Compare(a.IdleS, b.IdleS), cmp.Compare(b.Key, a.Key)) < 0
}

// add folds one read key in.
func (a *aggregator) add(o *observed) {
	a.stats.KeysMatched++
	r := recognise(o)
	a.segs = splitKeyInto(a.segs, o.key)
	segs := a.segs
	if r.role == RoleFence && r.guarded != "" && len(a.fenced) < maxFamilies {
		a.fenced = append(a.fenced, splitKey(r.guarded))
	}
	own := Owner{Class: OwnerNone}
	switch {
	case r.classified:
		own = r.own
	case r.role == RoleLock && o.read:
		own = classifyOwner(r.owner, o.key)
	case r.role == RoleDedup:
		own = Owner{Class: OwnerJobID}
	}
	f := a.fams.get(segs)
	problems := f.add(o, &r, segs, own, a.now, a.o.MaxTTL)
	if r.role == RoleLock || r.role == RoleDedup {
		a.stats.Locks++
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
	if a.o.Top <= 0 || !a.top.wants(Lock{Key: o.key, IdleS: o.idle, Problems: problems}) {
		return
	}
	l := Lock{Key: o.key, Node: o.node, Family: f.tmpl, Type: o.typ, Role: string(r.role), Maker: r.maker, PTTLMs: o.pttl, IdleS: o.idle,
		Owner: clip(r.owner, maxShown), OwnerClass: string(own.Class), OwnerBits: own.Bits, Holders: r.holders, Metadata: clip(r.metadata, maxShown),
		Problems: problems}
	if !r.acquiredAt.IsZero() {
		l.AcquiredAt = r.acquiredAt.UTC().Format(time.RFC3339)
	}
	a.top.offer(l)
}

// finish judges the families and fills the report.
func (a *aggregator) finish(rep *findings.Report, d *Data) {
	rep.Check(RuleNoTTL.Code, RuleRandomKey.Code, RuleTokenConstant.Code, RuleTokenHost.Code, RuleTokenWeak.Code, RuleNoFencing.Code)
	if a.o.Key == "" {
		rep.Check(RuleTokenShared.Code, RuleTTLOutlier.Code, RuleTTLLong.Code)
	}
	if a.o.Observe > 1 {
		rep.Check(RuleIdleOrphan.Code)
	}
	fams := a.fams.finish()
	fenced := map[string]bool{}
	for _, segs := range a.fenced {
		fenced[a.fams.resolve(segs)] = true
	}
	var unfenced []string
	for _, f := range fams {
		fj, fs := f.report(judgeOptions{maxTTL: a.o.MaxTTL, fenced: fenced[f.tmpl] || a.fenceOfKey})
		d.Families = append(d.Families, fj)
		rep.Add(fs...)
		if fj.Fencing == "absent" {
			unfenced = append(unfenced, fj.Template)
		}
	}
	if len(unfenced) > 0 {
		// One finding for the run: the same advice per family is noise.
		ev := prefixed("no counter: ", unfenced[:min(len(unfenced), 10)])
		ev = append(ev, "looked for redisson_lock_token:{<key>}, <key>:fence and fence:<key> counters among the scanned keys")
		rep.Add(RuleNoFencing.New(fmt.Sprintf("%d lock families", len(unfenced)), "no fencing counter next to these mutex families", ev...))
	}
	for _, l := range a.top.sorted() {
		l.Family = a.fams.resolve(splitKey(l.Key))
		if l.Holders == nil {
			l.Holders = []Holder{}
		}
		if l.Problems == nil {
			l.Problems = []string{}
		}
		d.Locks = append(d.Locks, l)
	}
	a.stats.Families = len(d.Families)
	elapsed := d.Scan.ElapsedMs
	a.stats.NoTouch = d.Scan.NoTouch
	d.Scan = a.stats
	d.Scan.ElapsedMs = elapsed
	slices.SortStableFunc(d.Families, func(x, y Family) int { return cmp.Compare(y.Keys, x.Keys) })
}
