package lock

import (
	"cmp"
	"context"
	"encoding/base64"
	"errors"
	"fmt"
	"slices"
	"strings"
	"sync"
	"time"
	"unicode/utf8"

	"github.com/dupctl/dupctl/internal/inspect/lock/internal/judge"
	"github.com/dupctl/dupctl/internal/inspect/lock/internal/keyshape"
	"github.com/dupctl/dupctl/internal/inspect/lock/internal/keyspace"
	"github.com/dupctl/dupctl/internal/inspect/lock/internal/makers"
	"github.com/dupctl/dupctl/internal/platform/english"
	"github.com/dupctl/dupctl/internal/platform/findings"
	"github.com/dupctl/dupctl/internal/platform/problem"
	"github.com/dupctl/dupctl/internal/platform/progress"
	"github.com/dupctl/dupctl/internal/platform/text"
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
	// Learn, when set, watches the commands the server runs (MONITOR)
	// for that long before the scan: keys seen taken with SET NX or
	// released by compare-and-delete are certain locks, keys seen written
	// without NX data (judge/learn.go). For staging: MONITOR costs the
	// server throughput while it runs.
	Learn time.Duration
	// FailoverWait is how long the scan of a cluster master that failed
	// waits for its slots to be served again (0: DefaultFailoverWait).
	FailoverWait time.Duration
	// MinConfidence is the confidence (0.5..1) a family of candidates
	// needs for its findings to keep their warn or error severity; below
	// it they are reported as info. 0 means DefaultMinConfidence.
	MinConfidence float64
	// LockPatterns are Redis globs of keys the user says are locks: they
	// are confirmed locks whatever their shape.
	LockPatterns []string
	// Libraries are the user's catalogue entries (dupctl.yaml locks:),
	// matched before the built-in ones.
	Libraries []UserLibrary
	URL       string // the redacted target, for the report
	Progress  progress.Meter
	// Now is the clock (the CLI's pinnable one); nil means time.Now.
	Now func() time.Time

	// afterLook, when set (tests), runs after observation n of --observe
	// is done and before the next one starts.
	afterLook func(n int)
	// afterPage, when set (tests), runs after each page of the full
	// scan, with the node it came from.
	afterPage func(node string)
}

// DefaultFailoverWait covers a cluster's default node timeout (15s), the
// replica's election and the clients' view catching up.
const DefaultFailoverWait = 45 * time.Second

// Validate checks the options before anything is dialled.
func (o *Options) Validate() error {
	if slices.Contains(o.Patterns, "") {
		return problem.Inputf("Patterns", "must not be empty")
	}
	if slices.Contains(o.LockPatterns, "") {
		return problem.Inputf("LockPatterns", "must not be empty")
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
	case o.FailoverWait < 0 || o.FailoverWait > time.Hour:
		return problem.Inputf("FailoverWait", "must be 0..1h, got %s", o.FailoverWait)
	case o.MinConfidence != 0 && (o.MinConfidence < judge.CandidateConfidence || o.MinConfidence > 1):
		return problem.Inputf("MinConfidence", "must be 0.5..1 (a key under 0.5 is not a lock candidate at all), got %g", o.MinConfidence)
	}
	return o.validateLearn()
}

func (o *Options) validateLearn() error {
	switch {
	case o.Learn < 0 || o.Learn > 10*time.Minute:
		return problem.Inputf("Learn", "must be 0..10m, got %s", o.Learn)
	case o.Learn > 0 && o.Key != "":
		return &problem.Input{Why: "{Key} inspects one key: drop {Learn}"}
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
		o.MinConfidence = judge.DefaultMinConfidence
	}
	if o.Now == nil {
		o.Now = time.Now
	}
	if o.FailoverWait == 0 {
		o.FailoverWait = DefaultFailoverWait
	}
	o.Progress = progress.Or(o.Progress)
}

// Result is one inspection: its data and its findings.
type Result struct {
	Data     Data
	Findings []findings.Finding
	// Checks are the rule codes evaluated (those in Data.NotChecked are not).
	Checks []string
	// failsOver: the scan follows a failover (a cluster, or Sentinels).
	failsOver bool
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
var settingsRules = []string{judge.RuleEviction.Code, judge.RuleEvicted.Code, judge.RuleReplica.Code, judge.RulePersistence.Code}

// Conn is what an inspection sends to Redis: SCAN, pipelined reads of
// TYPE, PTTL, OBJECT IDLETIME and the value, INFO, CONFIG GET and CLIENT
// NO-TOUCH. A *redis.Client has it; so does a *redis.ClusterClient, whose
// masters are then each scanned on their own.
type Conn = keyspace.Conn

// Run inspects the locks of a Redis server or cluster, read-only.
func Run(ctx context.Context, c Conn, o Options) (*Result, error) {
	o.defaults()
	if err := o.Validate(); err != nil {
		return nil, err
	}
	start := o.Now()
	nodes, err := keyspace.Nodes(ctx, c)
	if err != nil {
		return nil, err
	}
	cfg, err := o.judgeConfig()
	if err != nil {
		return nil, err
	}
	res := newResult(o, nodes, keyspace.IsCluster(c))
	res.failsOver = keyspace.CanFailOver(c)
	total, err := res.settings(ctx, nodes, keyspace.DB(c))
	if err != nil {
		return nil, err
	}
	res.Data.Scan.NoTouch = !o.NoValues && nodes[0].NoTouch
	if o.Learn > 0 {
		if err := learn(ctx, nodes, o, cfg, res); err != nil {
			return nil, err
		}
	}
	agg := newAggregator(o)
	agg.cfg = cfg
	if o.Key != "" {
		err = agg.one(ctx, c, nodes[0])
	} else {
		err = agg.scan(ctx, nodes, total, &res.Data)
	}
	if err != nil {
		return nil, err
	}
	if o.Key == "" {
		agg.rereadLowTTLs(ctx, nodes, &res.Data)
	}
	agg.finish(res)
	agg.permissions(res, nodes)
	agg.failoverReport(res)
	if res.Data.Target.Cluster && agg.walked != nil {
		res.Data.SlotMap = slotMap(res.Data.Target.Nodes, nodes, agg.walked)
	}
	res.Data.Scan.ElapsedMs = o.Now().Sub(start).Milliseconds()
	return res, nil
}

// newResult is an inspection's result before anything was read: what it
// inspects, and empty lists (never null in JSON).
func newResult(o Options, nodes []*keyspace.Node, cluster bool) *Result {
	res := &Result{}
	res.Data = Data{Target: Target{URL: o.URL, Cluster: cluster || len(nodes) > 1, Patterns: o.Patterns, All: o.All, Key: o.Key,
		Values: !o.NoValues, MinConfidence: o.MinConfidence},
		Families: []Family{}, Skipped: []SkippedFamily{}, Possible: []PossibleFamily{}, Locks: []Lock{}, Servers: []Server{},
		NotChecked: []NotChecked{}, Notes: []string{}, Failovers: []Failover{}, Unread: []UnreadNode{}, SlotMap: []SlotsRead{}}
	if len(o.Patterns) == 0 {
		res.Data.Target.Patterns = []string{"*"}
	}
	for _, n := range nodes {
		res.Data.Target.Nodes = append(res.Data.Target.Nodes, n.Name)
	}
	return res
}

// settings reads every node's settings and judges those that lose locks;
// it returns how many keys the nodes hold (for the progress meter).
func (res *Result) settings(ctx context.Context, nodes []*keyspace.Node, db int) (int64, error) {
	var total int64
	var refusedInfo []string
	for _, n := range nodes {
		s, fs, err := serverInfo(ctx, n, db)
		if err != nil {
			return 0, err
		}
		if s.Info != "ok" {
			refusedInfo = append(refusedInfo, n.Name)
		}
		res.Data.Servers = append(res.Data.Servers, s)
		res.Findings = append(res.Findings, fs...)
		total += s.Keys
	}
	if len(refusedInfo) < len(nodes) {
		res.check(settingsRules...)
	}
	if len(refusedInfo) > 0 {
		res.notChecked(fmt.Sprintf("Redis refused INFO to this ACL user on %s: eviction policy, evicted keys, "+
			"role and persistence unknown (grant +info)",
			strings.Join(refusedInfo, ", ")), settingsRules...)
	}
	return total, nil
}

// scan walks the keyspace (after the first observations, with --observe)
// and folds every key read into the aggregation.
func (a *aggregator) scan(ctx context.Context, nodes []*keyspace.Node, total int64, data *Data) error {
	o := a.o
	ro, err := o.readOptions()
	if err != nil {
		return err
	}
	if o.Observe > 1 {
		if err := a.observe(ctx, nodes, ro); err != nil {
			return err
		}
		data.Observe = &a.obs
	}
	o.Progress.SetTotal(total)
	ro.AfterPage = o.afterPage
	judgePage := func(p *keyspace.Page) []judge.Judged { return a.cfg.Page(p, ro.Now()) }
	walked, err := keyspace.Walk(ctx, nodes, ro, judgePage, func(p *keyspace.Page, keys []judge.Judged) {
		o.Progress.Add(p.Scanned)
		a.stats.KeysScanned += p.Scanned
		a.stats.Vanished += p.Vanished
		a.stats.Denied += p.Denied
		a.stats.SecondReads += p.SecondReads
		for i := range keys {
			a.add(&keys[i])
		}
	})
	o.Progress.Done()
	if err != nil {
		return err
	}
	a.walked = walked
	for _, r := range walked {
		a.stats.Repeats += r.Repeats
		a.stats.FalseDrops += r.FalseDrops
		a.failovers = append(a.failovers, r.Moves...)
		if r.Unread != nil {
			a.unread = append(a.unread, *r.Unread)
		}
	}
	return nil
}

// Incomplete is the error of a scan that left cluster slots unread (nil
// when it read everything): the report stands, and the run fails whatever
// --fail-on says, as a system that could not be read.
func (r *Result) Incomplete() error {
	if len(r.Data.Unread) == 0 {
		return nil
	}
	var parts []string
	for _, u := range r.Data.Unread {
		parts = append(parts, unreadText(u))
	}
	if !r.Data.Target.Cluster {
		return problem.System(fmt.Errorf("the scan did not read %s: the master failed and the Sentinels named no master that answered in time",
			strings.Join(parts, "; ")), "the report leaves their locks out; run it again once SENTINEL MASTERS shows the master up, "+
			"or give a longer {FailoverWait}")
	}
	return problem.System(fmt.Errorf("the scan did not read %s: a master failed and nothing served its slots again in time",
		strings.Join(parts, "; ")),
		"the report leaves their locks out; run it again once CLUSTER INFO says cluster_state:ok, or give a longer {FailoverWait}")
}

// unreadText names what a node left unread: its slots on a cluster, the
// rest of its keys on a master named by Sentinels.
func unreadText(u UnreadNode) string {
	if len(u.Slots) == 0 {
		return "the rest of the keys of master " + u.Node
	}
	return fmt.Sprintf("slots %s of master %s", keyspace.SlotsText(u.Slots), u.Node)
}

// failoverReport lists the scans that went on after a failure, and makes
// every node left unread a finding: the report must not look whole.
func (a *aggregator) failoverReport(res *Result) {
	if !res.failsOver {
		return
	}
	res.check(judge.RuleScanIncomplete.Code)
	res.Data.Failovers = append(res.Data.Failovers, a.failovers...)
	res.Data.Unread = append(res.Data.Unread, a.unread...)
	for _, m := range a.failovers {
		if m.From != m.To {
			now := "which serves its slots now"
			if !res.Data.Target.Cluster {
				now = "the master the Sentinels name now"
			}
			res.Data.Notes = append(res.Data.Notes, fmt.Sprintf("%s failed during the scan (%s); the scan went on on %s, %s, "+
				"after %s: locks written to %s and not replicated before it failed are gone, and this report cannot show them",
				m.From, m.Why, m.To, now, judge.FormatMs(m.WaitedMs), m.From))
		}
	}
	for _, u := range a.unread {
		ev := []string{"why: " + u.Why, fmt.Sprintf("%d keys returned by SCAN there and not read", u.Pending)}
		if len(u.Slots) > 0 {
			ev = append([]string{"slots " + keyspace.SlotsText(u.Slots)}, ev...)
		}
		if !u.ScanDone {
			ev = append(ev, "SCAN had not reached the end of the node: how many keys it holds is unknown")
		}
		what := fmt.Sprintf("the keys of slots %s (master %s) were not read: this report leaves out their locks",
			keyspace.SlotsText(u.Slots), u.Node)
		if len(u.Slots) == 0 {
			what = fmt.Sprintf("the keys of master %s were not all read: this report leaves out the locks it did not reach", u.Node)
		}
		res.Findings = append(res.Findings, judge.RuleScanIncomplete.New("redis "+u.Node, what, ev...))
	}
}

// judgeConfig compiles the user's lock patterns and libraries.
func (o *Options) judgeConfig() (*judge.Config, error) {
	user := make([]makers.Entry, len(o.Libraries))
	for i, l := range o.Libraries {
		user[i] = l.entry()
	}
	cat, err := makers.NewCatalogue(user)
	if err != nil {
		return nil, problem.Inputf("Libraries", "%w", err)
	}
	cfg := &judge.Config{Catalogue: cat}
	for _, p := range o.LockPatterns {
		g, err := keyspace.CompileGlob(p)
		if err != nil {
			return nil, problem.Inputf("LockPatterns", "%q: %w", p, err)
		}
		cfg.LockPatterns = append(cfg.LockPatterns, g)
	}
	return cfg, nil
}

// readOptions turns the patterns into a pass's MATCH and client-side globs.
func (o *Options) readOptions() (keyspace.ReadOptions, error) {
	ro := keyspace.ReadOptions{Count: o.Count, Values: !o.NoValues, Dedupe: true, Now: o.Now, FailoverWait: o.FailoverWait}
	switch len(o.Patterns) {
	case 0:
		return ro, nil
	case 1:
		ro.Match = o.Patterns[0] // the server filters: less over the wire
		return ro, nil
	}
	for _, p := range o.Patterns {
		g, err := keyspace.CompileGlob(p)
		if err != nil {
			return ro, problem.Inputf("Patterns", "%q: %w", p, err)
		}
		ro.Globs = append(ro.Globs, g)
	}
	return ro, nil
}

// aggregator folds the stream into lock families, skipped families and
// a bounded per-key list.
type aggregator struct {
	o       Options
	cfg     *judge.Config
	now     time.Time
	fams    *judge.Families
	skipped *judge.Families
	top     *judge.TopN[Lock]
	fenced  [][]keyshape.Segment // the keys fence counters guard (bounded)
	stats   ScanStats
	cands   map[string]candidate
	obs     Observations
	// fenceOfKey: --key found a fence counter next to the key.
	fenceOfKey bool
	// noIdle counts candidates read without an idle time.
	noIdle int64
	// failovers and unread are what the cluster's failures did to the scan.
	failovers []keyspace.Move
	unread    []keyspace.Unread
	// walked are the last walk's results, per node.
	walked []keyspace.NodeResult
	// final are the families once merged (families()).
	final []*judge.Tally
}

// candidate is a possible orphan from the first observation.
type candidate struct {
	node       int
	pttl, idle int64
	at         time.Time
}

const maxCandidates = 100_000

func newAggregator(o Options) *aggregator {
	return &aggregator{o: o, now: o.Now(), fams: judge.NewFamilies(), skipped: judge.NewFamilies(), top: judge.NewTopN(o.Top, lockRanksBelow)}
}

// severityOf ranks per-key problems for the per-key table.
var severityOf = func() map[string]int {
	m := map[string]int{}
	for _, r := range judge.Rules() {
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
	return cmp.Or(cmp.Compare(lockScore(&a), lockScore(&b)), cmp.Compare(a.Confidence, b.Confidence), cmp.Compare(a.IdleS, b.IdleS),
		cmp.Compare(b.Key, a.Key)) < 0
}

// add folds one judged key in: a lock candidate into its family, anything
// else into the skipped families.
func (a *aggregator) add(j *judge.Judged) {
	o, r := &j.Observed, &j.Recognised
	a.stats.KeysMatched++
	if r.Role == makers.RoleFence && r.Guarded != "" && len(a.fenced) < judge.MaxFamilies {
		a.fenced = append(a.fenced, keyshape.Split(r.Guarded, a.now))
	}
	conf := j.Verdict.Confidence()
	switch {
	case j.Certainty > judge.NotLock:
	case a.o.Key != "":
		a.stats.Skipped++ // --key shows the key in full all the same
	default:
		why := j.DataShape
		if why == "" {
			why = j.Verdict.Against()
		}
		a.stats.Skipped++
		a.skipped.Get(j.Segs).AddSkipped(o, why)
		return
	}
	if o.Idle < 0 {
		a.noIdle++
	}
	f := a.fams.Get(j.Segs)
	problems := f.Add(j, a.now, a.o.MaxTTL, a.o.MinConfidence)
	if j.Certainty < judge.Likely {
		problems = nil // shown with --key, or only possibly a lock: nothing judged
		if a.o.Key == "" {
			return
		}
	}
	if c, ok := a.cands[o.Key]; ok {
		if a.orphan(o, c) {
			problems = append(problems, judge.RuleIdleOrphan.Code)
			f.Orphans++
			f.OrphanEx = judge.AppendEx(f.OrphanEx, fmt.Sprintf("%s: idle %s at the first look, %s now; TTL %s then, %s now; owner %s",
				o.Key, judge.FormatMs(c.idle*1000), judge.FormatMs(o.Idle*1000), judge.FormatMs(c.pttl), judge.FormatMs(o.PTTL), judge.Quote(r.Owner)))
			a.obs.Orphans++
		}
	}
	if a.o.Top <= 0 || !a.top.Wants(Lock{Key: o.Key, IdleS: o.Idle, Problems: problems, Confidence: judge.Round2(conf)}) {
		return
	}
	l := Lock{Key: o.Key, Node: o.Node, Family: f.Tmpl, Type: o.Type, Role: string(r.Role), Maker: r.Maker, Certainty: j.Certainty.String(),
		Confidence: judge.Round2(conf), Signals: j.Verdict.Set.Names(), PTTLMs: o.PTTL, IdleS: o.Idle,
		Owner: text.Clip(r.Owner, judge.MaxShown, "..."), OwnerClass: string(j.Owner.Class), OwnerBits: j.Owner.Bits, Holders: r.Holders,
		Metadata: text.Clip(r.Metadata, judge.MaxShown, "..."),
		Problems: problems}
	if !r.AcquiredAt.IsZero() {
		l.AcquiredAt = r.AcquiredAt.UTC().Format(time.RFC3339)
	}
	if !utf8.ValidString(o.Key) {
		l.KeyBase64 = base64.StdEncoding.EncodeToString([]byte(o.Key))
	}
	a.top.Offer(l)
}

// finish judges the families and fills the result.
func (a *aggregator) finish(res *Result) {
	d := &res.Data
	res.check(judge.RuleNoTTL.Code, judge.RuleRandomKey.Code, judge.RuleTokenConstant.Code, judge.RuleTokenHost.Code,
		judge.RuleTokenWeak.Code, judge.RuleNoFencing.Code, judge.RulePossible.Code)
	if a.o.Key == "" {
		res.check(judge.RuleTokenShared.Code, judge.RuleTTLOutlier.Code, judge.RuleTTLLong.Code)
	}
	if a.o.Observe > 1 {
		res.check(judge.RuleIdleOrphan.Code)
	}
	fams := a.families()
	fenced := map[string]bool{}
	for _, segs := range a.fenced {
		fenced[a.fams.Resolve(segs)] = true
	}
	skipped := a.skipped.Finish()
	twins := map[string]*judge.Tally{}
	for _, s := range skipped {
		twins[s.Tmpl] = s
	}
	var unfenced []string
	for _, f := range fams {
		if a.o.Key == "" && f.Certainty(a.o.MinConfidence) == judge.Possible {
			if tw := twins[f.Tmpl]; f.CountersAtOne(tw) {
				tw.AddCounters(f)
				a.stats.Skipped += f.Keys()
				continue
			}
			a.possible(res, f, fams, skipped)
			continue
		}
		a.stats.Locks += f.Keys()
		fj, fs := f.Report(judge.Options{MaxTTL: a.o.MaxTTL, Fenced: fenced[f.Tmpl] || a.fenceOfKey, MinConfidence: a.o.MinConfidence})
		d.Families = append(d.Families, fj)
		res.Findings = append(res.Findings, fs...)
		if fj.Fencing == "absent" {
			unfenced = append(unfenced, fj.Template)
		}
	}
	if len(unfenced) > 0 {
		// One finding for the run: the same advice per family is noise.
		ev := judge.Prefixed("no counter: ", unfenced[:min(len(unfenced), 10)])
		ev = append(ev, "looked for redisson_lock_token:{<key>}, <key>:fence and fence:<key> counters among the scanned keys")
		res.Findings = append(res.Findings, judge.RuleNoFencing.New(english.Count(len(unfenced), "lock family", "lock families"),
			"no fencing counter next to these mutex families", ev...))
	}
	for _, f := range skipped {
		d.Skipped = append(d.Skipped, f.SkippedReport())
	}
	byTmpl := map[string]*judge.Tally{}
	for _, f := range fams {
		byTmpl[f.Tmpl] = f
	}
	for _, l := range a.top.Sorted() {
		l.Family = a.fams.Resolve(keyshape.Split(l.Key, a.now))
		if f := byTmpl[l.Family]; f != nil {
			l.familyBits(f)
		}
		if l.Holders == nil {
			l.Holders = []makers.Holder{}
		}
		if l.Problems == nil {
			l.Problems = []string{}
		}
		d.Locks = append(d.Locks, l)
	}
	a.stats.Families = len(d.Families)
	a.stats.Candidates = a.stats.Locks + a.stats.Uncertain
	a.stats.NoTouch = d.Scan.NoTouch
	d.Scan = a.stats
	slices.SortStableFunc(d.Families, func(x, y judge.Family) int { return cmp.Compare(y.Keys, x.Keys) })
	slices.SortStableFunc(d.Skipped, func(x, y judge.SkippedFamily) int {
		return cmp.Or(cmp.Compare(y.Keys, x.Keys), cmp.Compare(x.Template, y.Template))
	})
}

// familyBits gives a kept lock its token's bits by its family's alphabet
// (behaviour.go): a draw that looked weak on its own is random there.
func (l *Lock) familyBits(f *judge.Tally) {
	bits := f.TokenBits(l.Owner)
	if bits == 0 {
		return
	}
	l.OwnerBits = bits
	weak := l.OwnerClass == string(judge.OwnerLowEntropy) || l.OwnerClass == string(judge.OwnerCounter)
	if weak && bits >= judge.MinTokenBits {
		l.OwnerClass = string(judge.OwnerRandom)
		l.Problems = slices.DeleteFunc(l.Problems, func(c string) bool { return c == judge.RuleTokenWeak.Code })
	}
}

// possible reports a family of possible locks: one info line, and its
// defects at info.
func (a *aggregator) possible(res *Result, f *judge.Tally, groups ...[]*judge.Tally) {
	d := &res.Data
	a.stats.Uncertain += f.Keys()
	p, fi := f.PossibleReport(suggestion(f, groups...))
	d.Possible = append(d.Possible, p)
	res.Findings = append(res.Findings, fi)
	res.Findings = append(res.Findings, f.PossibleDefects(judge.Options{MaxTTL: a.o.MaxTTL, MinConfidence: a.o.MinConfidence}, p.Suggest)...)
}

// permissions reports the checks that commands the ACL refused kept from
// running, and the keys it hid.
func (a *aggregator) permissions(res *Result, nodes []*keyspace.Node) {
	denied := map[string]bool{}
	for _, n := range nodes {
		for _, c := range n.Denied {
			name, _, _ := strings.Cut(c, "|") // Redis 7 names subcommands object|idletime
			denied[name] = true
		}
	}
	if denied["object"] {
		res.notChecked("Redis refused OBJECT IDLETIME to this ACL user: "+
			"idle times unknown, granted TTLs are remaining TTLs (grant +object|idletime)",
			judge.RuleIdleOrphan.Code, judge.RuleTTLOutlier.Code, judge.RuleTTLLong.Code)
	}
	if denied["getrange"] || denied["hscan"] {
		var cmds []string
		for _, c := range []string{"getrange", "hscan"} {
			if denied[c] {
				cmds = append(cmds, "+"+c)
			}
		}
		res.notChecked("Redis refused reading values to this ACL user: owners and makers unknown, locks found by name and TTL only (grant "+
			strings.Join(cmds, " ")+")",
			judge.RuleTokenConstant.Code, judge.RuleTokenHost.Code, judge.RuleTokenWeak.Code, judge.RuleTokenShared.Code)
	}
	if denied["type"] {
		res.Data.Notes = append(res.Data.Notes, "Redis refused TYPE to this ACL user: types taken from which read succeeded (grant +type)")
	}
	if n := res.Data.Scan.Denied; n > 0 {
		res.Data.Notes = append(res.Data.Notes, fmt.Sprintf("%d keys not inspected: the ACL user's key patterns do not cover them", n))
	}
}

// suggestion is the pattern that would confirm a possible family, never
// broader than the family: its template's glob, or - when that also
// catches the keys of other families seen (a counter beside the locks
// under the same prefix) - the glob whose placeholders keep their shape,
// when it catches fewer; with how many keys it matches today, counted
// over every family read by its examples.
func suggestion(f *judge.Tally, groups ...[]*judge.Tally) judge.Suggestion {
	count := func(glob string) judge.Suggestion {
		sg := judge.Suggestion{Glob: glob}
		g, err := keyspace.CompileGlob(glob)
		if err != nil {
			return sg
		}
		for _, fs := range groups {
			for _, o := range fs {
				ex := o.Examples()
				if len(ex) == 0 || !slices.ContainsFunc(ex, g.Match) {
					continue
				}
				n := o.Keys()
				if !slices.ContainsFunc(ex, func(e string) bool { return !g.Match(e) }) {
					sg.Matches += n
				} else {
					sg.Matches += n / 2 // some of its keys: an estimate
				}
				if o.Tmpl != f.Tmpl { // keys of its template skipped by shape are the family's
					sg.Other += n
				}
			}
		}
		return sg
	}
	sg := count(f.Suggest(false))
	if sg.Other > 0 {
		if t := count(f.Suggest(true)); t.Other < sg.Other {
			return t
		}
	}
	return sg
}

// learn watches every node's commands for o.Learn (MONITOR, on
// connections of their own, before the scan: it adds no read to it) and
// gives the judge what they said of each key template.
func learn(ctx context.Context, nodes []*keyspace.Node, o Options, cfg *judge.Config, res *Result) error {
	l := judge.NewLearner(o.Now())
	var mu sync.Mutex
	errs := make([]error, len(nodes))
	var wg sync.WaitGroup
	for i, n := range nodes {
		wg.Add(1)
		go func() {
			defer wg.Done()
			errs[i] = n.Monitor(ctx, o.Learn, func(c keyspace.Command) {
				mu.Lock()
				l.Add(c)
				mu.Unlock()
			})
		}()
	}
	wg.Wait()
	for _, err := range errs {
		switch {
		case errors.Is(err, keyspace.ErrMonitorRefused):
			return problem.System(err, "{Learn} watches the server's commands with MONITOR, which this ACL user may not run: "+
				"grant it +monitor (on staging: MONITOR costs the server throughput), or leave out {Learn}")
		case err != nil:
			return problem.System(err, "")
		}
	}
	cfg.Learned = l.Finish()
	res.Data.Notes = append(res.Data.Notes, judge.LearnedSummary(l, o.Learn, cfg.Learned))
	return nil
}
