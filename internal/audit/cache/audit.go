// Package cacheaudit compares a Redis job-status cache with the PostgreSQL
// table that is the source of truth: the cache trap, where a worker
// asks the cache "already done?" and the cache says no while the database
// holds the success.
//
// It streams the cache with SCAN (never KEYS), reads each value and TTL in
// pipelines, looks the keys up in PostgreSQL in batches while the scan goes
// on, re-reads every disagreement after a grace period (an update in flight
// is not a finding), and reports disagreements with samples. It only reads.
package cache

import (
	"context"
	"errors"
	"fmt"
	"github.com/dupctl/dupctl/internal/idemtable"
	"github.com/dupctl/dupctl/internal/idemtable/replica"
	"github.com/dupctl/dupctl/internal/platform/english"
	"slices"
	"strings"
	"sync"
	"time"

	"github.com/dupctl/dupctl/internal/platform/findings"
	"github.com/dupctl/dupctl/internal/platform/problem"
	"github.com/dupctl/dupctl/internal/platform/progress"
	"github.com/jackc/pgx/v5"
	"github.com/redis/go-redis/v9"
	"golang.org/x/sync/errgroup"
)

// Node is one Redis server to scan: a standalone server, or one master of
// a cluster. *redis.Client, *redis.ClusterClient and the universal client
// are Nodes; point reads go through the client given to Audit, which routes
// them in a cluster.
type Node interface {
	Scan(ctx context.Context, cursor uint64, match string, count int64) *redis.ScanCmd
	Pipeline() redis.Pipeliner
}

// cluster is what a *redis.ClusterClient adds: its masters, each scanned.
type cluster interface {
	ForEachMaster(ctx context.Context, fn func(ctx context.Context, client *redis.Client) error) error
}

// Options are one audit.
type Options struct {
	Pattern      Pattern
	Decoder      Decoder
	Table        string // raw user text, resolved in the catalog
	KeyColumn    string // "" detects idempotency_key, ...
	StatusColumn string // "" detects status, state
	Statuses     idemtable.Statuses
	// LiveKeys are the keys known to have a message still queued or in
	// flight, as database keys or cache keys of the pattern (nil: not
	// known); LiveSource says where they came from.
	LiveKeys   []string
	LiveSource string
	// AssumeLive treats every key as having a live message (at-least-once
	// delivery cannot rule a redelivery out).
	AssumeLive bool
	// CacheAuthoritative says workers read a cache miss as "not done".
	CacheAuthoritative bool
	Batch              int           // keys per SCAN page, pipeline and database query
	Lookup             string        // LookupAuto, LookupBatch or LookupScan
	Recheck            time.Duration // grace before disagreements are read again (0: no re-read)
	Samples            int
	Progress           progress.Meter
	// ReplicaKeys bounds how many of the keys met are looked up on
	// Deps.Replica (0: DefaultReplicaKeys).
	ReplicaKeys int
}

// lookupWorkers is how many batches are looked up in the database at once.
const lookupWorkers = 2

// maxRecheck bounds the disagreements kept for the re-read; beyond it they
// are reported as first seen.
const maxRecheck = 100_000

// Result is the JSON data of `dupctl audit cache`.
type Result struct {
	Pattern      string `json:"pattern"`
	Match        string `json:"scan_match"`
	Value        string `json:"value"`
	Table        string `json:"table"`
	KeyColumn    string `json:"key_column"`
	StatusColumn string `json:"status_column"`
	TimeColumn   string `json:"time_column"`
	StatusRoles  string `json:"status_roles"`
	// Liveness says how "a message for the key is still live" is known.
	Liveness string `json:"liveness"`
	Read     int64  `json:"read"`     // cache entries read
	Vanished int64  `json:"vanished"` // expired between SCAN and the read
	Compared int64  `json:"compared"` // decoded and compared with the database
	Agree    int64  `json:"agree"`
	// Transient disagreements were gone at the re-read: updates in flight.
	Transient int64 `json:"transient"`
	// Lookup is how the database was read: batch (a query per SCAN page)
	// or scan (the table once, matched in memory).
	Lookup         string   `json:"lookup"`
	RecheckAfter   string   `json:"recheck_after"`
	RecheckSkipped bool     `json:"recheck_skipped"`
	LiveKeys       int      `json:"live_keys"`
	Classes        []Class  `json:"classes"`
	Notes          []string `json:"notes"`
	// Replica is the same keys on the replica against the primary (null
	// without one).
	Replica *ReplicaCompare `json:"replica"`

	report *findings.Report
}

// Class is one kind of disagreement at one severity, with samples.
type Class struct {
	Code     string            `json:"code"`
	Severity findings.Severity `json:"severity"`
	Count    int64             `json:"count"`
	Samples  []Entry           `json:"samples"`
}

// Entry is one compared key.
type Entry struct {
	Key      string `json:"key"`
	ID       string `json:"id"`
	Cache    string `json:"cache"`    // decoded status, "" when missing
	TTL      string `json:"ttl"`      // "none", "55m", "" when missing
	Database string `json:"database"` // status, "no row"
	Updated  string `json:"updated"`  // the row's time column, RFC 3339
	Problem  string `json:"problem"`  // decode error, unknown value

	cacheRole, dbRole idemtable.Role
	cacheKnown        bool
	found, dbKnown    bool
	noTTL             bool
	updated           int64 // Unix nanoseconds (0: none), formatted into Updated for samples only
}

// liveness of one key's message.
type liveness int

const (
	liveUnknown liveness = iota
	live
	notLive
)

type auditor struct {
	o      Options
	cache  Node
	db     idemtable.Querier
	table  *idemtable.Table
	key    idemtable.Column
	status idemtable.Column
	at     *idemtable.Column
	live   map[string]bool // nil when unknown
	res    *Result
	// per class code and severity, the count and deterministic samples
	classes map[classKey]*Class
	recheck []Entry // disagreements to read again
	liveHit map[string]bool
	rows    map[string]dbRow // the whole table, with --lookup scan
	picker  *keyPicker       // the keys to look up on the replica (nil without one)
	// interned status texts of dbRow
	statusMu    sync.Mutex
	statusTexts []string
	statusIdx   map[string]int32
}

type classKey struct {
	code string
	sev  findings.Severity
}

// Deps are the two sides an audit compares: the status cache (one Redis
// node, or a cluster whose masters are each scanned) and the database
// that is the source of truth; and, optionally, a replica of that
// database whose statuses are compared with the primary's.
type Deps struct {
	Cache   Node
	DB      DB
	Replica replica.DB // nil: none
}

// DB is the primary: read in batches while the cache is scanned, and in
// one snapshot for the comparison with a replica (a pgxpool.Pool).
type DB interface {
	idemtable.Querier
	BeginTx(ctx context.Context, o pgx.TxOptions) (pgx.Tx, error)
}

// Run compares the cache under o.Pattern with the table o.Table.
func Run(ctx context.Context, d Deps, o Options) (*Result, error) {
	if o.Batch <= 0 {
		o.Batch = 1000
	}
	if o.Lookup == "" {
		o.Lookup = LookupAuto
	}
	if o.Samples <= 0 {
		o.Samples = 5
	}
	if o.ReplicaKeys <= 0 {
		o.ReplicaKeys = DefaultReplicaKeys
	}
	if err := o.Validate(); err != nil {
		return nil, err
	}
	o.Progress = progress.Or(o.Progress)
	defer o.Progress.Done()
	a, err := newAuditor(ctx, d.Cache, d.DB, o)
	if err != nil {
		return nil, err
	}
	if d.Replica != nil {
		a.picker = a.newPicker()
	}
	if err := a.scan(ctx); err != nil {
		return nil, err
	}
	if err := a.missingLive(ctx); err != nil {
		return nil, err
	}
	if err := a.reread(ctx); err != nil {
		return nil, err
	}
	if d.Replica != nil {
		if err := a.compareReplica(ctx, d.DB, d.Replica); err != nil {
			return nil, err
		}
	}
	rep := &findings.Report{Command: "audit cache", Data: a.res}
	a.report(rep)
	a.replicaFindings(rep)
	a.res.report = rep
	return a.res, nil
}

// Report is the audit's findings, with the result as its data.
func (r *Result) Report() *findings.Report { return r.report }

func newAuditor(ctx context.Context, cache Node, db idemtable.Querier, o Options) (*auditor, error) {
	t, err := idemtable.ResolveTable(ctx, db, o.Table)
	if err != nil {
		return nil, err
	}
	a := &auditor{o: o, cache: cache, db: db, table: t, classes: map[classKey]*Class{}, liveHit: map[string]bool{},
		statusIdx: map[string]int32{}}
	if a.key, err = oneColumn(t, "KeyColumn", "key column", o.KeyColumn, t.DetectKey); err != nil {
		return nil, err
	}
	if a.status, err = oneColumn(t, "StatusColumn", "status column", o.StatusColumn, t.DetectStatus); err != nil {
		return nil, err
	}
	if times := t.DetectTimes(); len(times) > 0 {
		a.at = &times[0]
	}
	a.res = &Result{
		Pattern: o.Pattern.Raw, Match: o.Pattern.Match(), Value: o.Decoder.String(), Table: t.Name.String(),
		KeyColumn: a.key.Name, StatusColumn: a.status.Name, StatusRoles: o.Statuses.Describe(),
		RecheckAfter: english.Duration(o.Recheck), Classes: []Class{}, Notes: []string{},
	}
	if a.at != nil {
		a.res.TimeColumn = a.at.Name
	}
	switch {
	case o.AssumeLive:
		a.res.Liveness = "assumed for every key ({AssumeLive})"
	case o.LiveKeys != nil:
		a.live = map[string]bool{}
		for _, k := range o.LiveKeys {
			if id, ok := o.Pattern.ID(k); ok { // a cache key: its database key
				k = id
			}
			a.live[k] = true
		}
		a.res.LiveKeys = len(a.live)
		a.res.Liveness = fmt.Sprintf("%d keys with a live message, from %s", len(a.live), o.LiveSource)
	default:
		a.res.Liveness = "unknown: no {LiveKeys} or {AssumeLive}"
		a.res.Notes = append(a.res.Notes, "keys missing from the cache are not checked: they need the keys of live messages ({LiveKeys})")
	}
	return a, nil
}

// oneColumn resolves a single column given by flag, or detects it.
func oneColumn(t *idemtable.Table, field, what, raw string, detect func() (idemtable.Column, bool)) (idemtable.Column, error) {
	if raw == "" {
		c, ok := detect()
		if !ok {
			return idemtable.Column{}, problem.Inputf("", "cannot tell the %s of %s", what, t.Name).WithHint("name it with {" + field + "}")
		}
		return c, nil
	}
	cols, err := t.ResolveColumns(field, raw)
	if err != nil {
		return idemtable.Column{}, err
	}
	if len(cols) != 1 {
		return idemtable.Column{}, problem.Inputf(field, "give one column (the cache pattern has one {key})")
	}
	return cols[0], nil
}

// scan streams the cache: SCAN pages are read in pipelines and sent on,
// while the database lookups of earlier pages run.
func (a *auditor) scan(ctx context.Context) error {
	mode, err := a.chooseLookup(ctx)
	if err != nil {
		return err
	}
	a.res.Lookup = mode
	g, ctx := errgroup.WithContext(ctx)
	// With --lookup scan the table is read while the cache scan starts;
	// the lookups wait for it.
	loaded := make(chan struct{})
	if mode == LookupScan {
		g.Go(func() error {
			if err := a.preload(ctx); err != nil {
				return err
			}
			close(loaded)
			return nil
		})
	} else {
		close(loaded)
	}
	batches := make(chan batch, 4)
	g.Go(func() error {
		defer close(batches)
		if c, ok := a.cache.(cluster); ok {
			return c.ForEachMaster(ctx, func(ctx context.Context, node *redis.Client) error {
				return a.scanNode(ctx, node, batches)
			})
		}
		return a.scanNode(ctx, a.cache, batches)
	})
	// Database lookups wait on the network more than they work: two run
	// at once (the session's pool holds two connections). Filing results
	// is quick and shared, so it takes turns.
	var mu sync.Mutex
	for range lookupWorkers {
		g.Go(func() error {
			select {
			case <-loaded:
			case <-ctx.Done():
				return ctx.Err()
			}
			for b := range batches {
				if err := a.lookup(ctx, b.entries, false); err != nil {
					return err
				}
				mu.Lock()
				a.res.Vanished += b.vanished
				for i := range b.entries {
					a.classify(&b.entries[i])
				}
				a.o.Progress.Add(int64(len(b.entries)) + b.vanished)
				mu.Unlock()
			}
			return nil
		})
	}
	return g.Wait()
}

// batch is one SCAN page, read.
type batch struct {
	entries  []Entry
	vanished int64
}

func (a *auditor) scanNode(ctx context.Context, node Node, out chan<- batch) error {
	var cursor uint64
	for {
		keys, next, err := node.Scan(ctx, cursor, a.o.Pattern.Match(), int64(a.o.Batch)).Result()
		if err != nil {
			return fmt.Errorf("scan %s: %w", a.o.Pattern.Match(), err)
		}
		if len(keys) > 0 {
			entries, vanished, err := a.read(ctx, node, keys)
			if err != nil {
				return err
			}
			select {
			case out <- batch{entries, vanished}:
			case <-ctx.Done():
				return ctx.Err()
			}
		}
		if cursor = next; cursor == 0 {
			return nil
		}
	}
}

// read fetches the values and TTLs of cache keys in one pipeline: one
// MGET for string values on a standalone server (fewer commands for Redis
// to parse), GET or HGET per key otherwise (a cluster node refuses MGET
// across hash slots). Keys that no longer exist are dropped and counted.
// It may run on several cluster masters at once, so it changes nothing
// shared.
func (a *auditor) read(ctx context.Context, node Node, keys []string) ([]Entry, int64, error) {
	_, isCluster := a.cache.(cluster)
	mget := a.o.Decoder.Kind != "hash" && !isCluster
	pipe := node.Pipeline()
	var all *redis.SliceCmd
	vals := make([]*redis.StringCmd, len(keys))
	ttls := make([]*redis.DurationCmd, len(keys))
	if mget {
		all = pipe.MGet(ctx, keys...)
	}
	for i, k := range keys {
		switch {
		case mget:
		case a.o.Decoder.Kind == "hash":
			vals[i] = pipe.HGet(ctx, k, a.o.Decoder.Field)
		default:
			vals[i] = pipe.Get(ctx, k)
		}
		ttls[i] = pipe.PTTL(ctx, k)
	}
	if _, err := pipe.Exec(ctx); err != nil && !isReplyError(err) {
		return nil, 0, fmt.Errorf("read cache values: %w", err)
	}
	if mget && all.Err() != nil {
		return nil, 0, fmt.Errorf("read cache values: %w", all.Err())
	}
	out := make([]Entry, 0, len(keys))
	var vanished int64
	for i, k := range keys {
		id, ok := a.o.Pattern.ID(k)
		if !ok {
			continue
		}
		ttl := ttls[i].Val()
		if ttls[i].Err() != nil || ttl == -2 {
			vanished++
			continue
		}
		e := Entry{Key: k, ID: id, noTTL: ttl == -1, TTL: ttlText(ttl)}
		var raw string
		var err error
		if mget {
			// MGET answers nil for a key that exists but holds no string.
			var isString bool
			if raw, isString = all.Val()[i].(string); !isString {
				err = errWrongType
			}
		} else {
			raw, err = vals[i].Result()
		}
		switch {
		case errors.Is(err, redis.Nil):
			e.Problem = "no field " + a.o.Decoder.Field + " in the hash"
		case errors.Is(err, errWrongType) || err != nil && strings.HasPrefix(err.Error(), "WRONGTYPE"):
			kind := "string"
			if a.o.Decoder.Kind == "hash" {
				kind = "hash"
			}
			e.Problem = "WRONGTYPE: the key is not a " + kind + " ({Decoder} " + a.o.Decoder.String() + ")"
		case err != nil:
			return nil, 0, fmt.Errorf("read %s: %w", k, err)
		default:
			if e.Cache, err = a.o.Decoder.Decode(raw); err != nil {
				e.Problem = err.Error()
			}
		}
		out = append(out, e)
	}
	return out, vanished, nil
}

var errWrongType = errors.New("WRONGTYPE")

// isReplyError: a command's own error reply (nil, WRONGTYPE), which the
// per-command results carry, as opposed to a failed connection.
func isReplyError(err error) bool {
	var re redis.Error
	return errors.Is(err, redis.Nil) || errors.As(err, &re)
}

// ttlText shows a TTL to the minute (to the second under a minute): it
// ticks down while it is read.
func ttlText(d time.Duration) string {
	switch {
	case d == -1:
		return "none"
	case d < 0:
		return ""
	case d >= time.Minute:
		d = d.Round(time.Minute)
	}
	return english.Duration(d)
}

// liveness says whether a message for the key is known to be live.
func (a *auditor) liveness(id string) liveness {
	switch {
	case a.o.AssumeLive:
		return live
	case a.live == nil:
		return liveUnknown
	case a.live[id]:
		return live
	}
	return notLive
}

// classify files one entry of the scan. A disagreement is held for the
// re-read unless there is none (--recheck 0) or too many are held.
func (a *auditor) classify(e *Entry) {
	a.res.Read++
	if e.found {
		a.picker.offer(e.ID, e.updated)
	}
	if a.live != nil && a.live[e.ID] {
		a.liveHit[e.ID] = true
	}
	if e.noTTL {
		a.add(RuleNoTTL, RuleNoTTL.Severity, *e)
	}
	if e.Problem != "" {
		a.add(RuleUndecodable, RuleUndecodable.Severity, *e)
		return
	}
	if e.cacheRole, e.cacheKnown = a.o.Statuses.RoleOf(e.Cache); !e.cacheKnown {
		e.Problem = "not a known status"
		a.add(RuleUnknownStatus, RuleUnknownStatus.Severity, *e)
		return
	}
	a.res.Compared++
	rule, sev := a.disagreement(e)
	switch {
	case rule == nil:
		a.res.Agree++
	case a.o.Recheck > 0 && len(a.recheck) < maxRecheck:
		a.recheck = append(a.recheck, *e)
	default:
		if a.o.Recheck > 0 && !a.res.RecheckSkipped {
			a.res.RecheckSkipped = true
			a.res.Notes = append(a.res.Notes, fmt.Sprintf("more than %d disagreements: the rest were not re-read after the grace period",
				maxRecheck))
		}
		a.add(*rule, sev, *e)
	}
}

// disagreement decides what a cache entry and its row disagree on.
func (a *auditor) disagreement(e *Entry) (*findings.Rule, findings.Severity) {
	cacheDone := e.cacheRole == idemtable.Succeeded
	switch {
	case !e.found && cacheDone:
		return &RuleDoneNotInDB, RuleDoneNotInDB.Severity
	case !e.found:
		return &RuleOrphan, RuleOrphan.Severity
	case !e.dbKnown:
		return nil, 0 // the database's own status is outside the roles: inspect store reports it
	case e.dbRole == idemtable.Succeeded && !cacheDone:
		switch a.liveness(e.ID) {
		case live:
			return &RuleNotDone, findings.Error
		case notLive:
			return &RuleNotDone, findings.Info
		}
		return &RuleNotDone, findings.Warn
	case cacheDone && e.dbRole != idemtable.Succeeded:
		return &RuleDoneNotInDB, RuleDoneNotInDB.Severity
	case e.cacheRole != e.dbRole:
		return &RuleStale, RuleStale.Severity
	}
	return nil, 0
}

// add counts an entry in its class and keeps the first samples by key, so
// output does not depend on SCAN's order.
func (a *auditor) add(rule findings.Rule, sev findings.Severity, e Entry) {
	k := classKey{rule.Code, sev}
	c := a.classes[k]
	if c == nil {
		c = &Class{Code: rule.Code, Severity: sev}
		a.classes[k] = c
	}
	c.Count++
	i, _ := slices.BinarySearchFunc(c.Samples, e.Key, func(s Entry, key string) int { return strings.Compare(s.Key, key) })
	if i < a.o.Samples {
		if e.updated != 0 {
			e.Updated = time.Unix(0, e.updated).UTC().Format(time.RFC3339)
		}
		c.Samples = slices.Insert(c.Samples, i, e)
		if len(c.Samples) > a.o.Samples {
			c.Samples = c.Samples[:a.o.Samples]
		}
	}
}

// missingLive checks the live keys the scan did not meet: a cache miss for
// a key the database has as SUCCEEDED.
func (a *auditor) missingLive(ctx context.Context) error {
	if a.live == nil {
		return nil
	}
	var absent []Entry
	for id := range a.live {
		if !a.liveHit[id] {
			absent = append(absent, Entry{Key: a.o.Pattern.Key(id), ID: id, TTL: ""})
		}
	}
	slices.SortFunc(absent, func(x, y Entry) int { return strings.Compare(x.ID, y.ID) })
	for start := 0; start < len(absent); start += a.o.Batch {
		b := absent[start:min(start+a.o.Batch, len(absent))]
		// The scan may have run before the entry was written: look again.
		pipe := a.cache.Pipeline()
		exists := make([]*redis.IntCmd, len(b))
		for i, e := range b {
			exists[i] = pipe.Exists(ctx, e.Key)
		}
		if _, err := pipe.Exec(ctx); err != nil {
			return fmt.Errorf("check live keys in the cache: %w", err)
		}
		if err := a.lookup(ctx, b, true); err != nil {
			return err
		}
		sev := RuleMissing.Severity
		if a.o.CacheAuthoritative {
			sev = findings.Error
		}
		for i, e := range b {
			if e.found {
				a.picker.offer(e.ID, e.updated)
			}
			if exists[i].Val() == 0 && e.dbKnown && e.dbRole == idemtable.Succeeded {
				e.Cache = "(missing)"
				a.add(RuleMissing, sev, e)
			}
		}
	}
	return nil
}

// reread reads every held disagreement again after the grace period, from
// both sides, and files those that still disagree: an update in flight
// (the database committed, the cache write is on its way) is not a
// finding, only counted as transient.
func (a *auditor) reread(ctx context.Context) error {
	if len(a.recheck) == 0 {
		return nil
	}
	select {
	case <-time.After(a.o.Recheck):
	case <-ctx.Done():
		return ctx.Err()
	}
	for start := 0; start < len(a.recheck); start += a.o.Batch {
		b := a.recheck[start:min(start+a.o.Batch, len(a.recheck))]
		keys := make([]string, len(b))
		for i, e := range b {
			keys[i] = e.Key
		}
		again, vanished, err := a.read(ctx, a.cache, keys)
		if err != nil {
			return err
		}
		a.res.Transient += vanished
		if err := a.lookup(ctx, again, true); err != nil {
			return err
		}
		for i := range again {
			e := &again[i]
			e.cacheRole, e.cacheKnown = a.o.Statuses.RoleOf(e.Cache)
			rule, sev := a.disagreement(e)
			if e.Problem != "" || !e.cacheKnown || rule == nil {
				a.res.Transient++
				continue
			}
			a.add(*rule, sev, *e)
		}
	}
	a.recheck = nil
	return nil
}

// report turns the classes into findings, worst first.
func (a *auditor) report(rep *findings.Report) {
	rep.Check(RuleNoKeys.Code, RuleNotDone.Code, RuleDoneNotInDB.Code, RuleStale.Code, RuleOrphan.Code, RuleNoTTL.Code, RuleUndecodable.Code,
		RuleUnknownStatus.Code)
	if a.live != nil {
		rep.Check(RuleMissing.Code)
	}
	if a.res.Read == 0 && a.res.Vanished == 0 {
		rep.Add(RuleNoKeys.New(a.res.Table, "no cache key matched "+a.res.Match+": nothing was compared"))
	}
	for _, c := range a.classes {
		a.res.Classes = append(a.res.Classes, *c)
	}
	slices.SortFunc(a.res.Classes, func(x, y Class) int {
		if x.Severity != y.Severity {
			return int(y.Severity) - int(x.Severity)
		}
		return strings.Compare(x.Code, y.Code)
	})
	subject := a.res.Table
	for _, c := range a.res.Classes {
		ev := make([]string, len(c.Samples))
		for i, e := range c.Samples {
			ev[i] = a.describe(c.Code, e)
		}
		rule, _ := ruleByCode(c.Code)
		f := rule.New(subject, a.message(c), ev...)
		f.Severity = c.Severity
		rep.Add(f)
	}
}

func ruleByCode(code string) (findings.Rule, bool) {
	for _, r := range Rules() {
		if r.Code == code {
			return r, true
		}
	}
	return findings.Rule{}, false
}

func (a *auditor) message(c Class) string {
	n := c.Count
	keys := fmt.Sprintf("%d %s", n, english.Plural(n, "key", "keys"))
	source := a.o.LiveSource
	if a.o.AssumeLive {
		source = "{AssumeLive}"
	}
	switch c.Code {
	case RuleNotDone.Code:
		msg := keys + ": the cache says not done, the database has SUCCEEDED"
		switch c.Severity {
		case findings.Error:
			return msg + english.Plural(n, ", and a message for it is live (", ", and a message for each is live (") + source + ")"
		case findings.Info:
			return msg + english.Plural(n, "; no live message for it in ", "; no live message for them in ") + source
		}
		return msg + "; whether a message for " + english.Plural(n, "it", "them") + " is still live is unknown (give {LiveKeys} or {AssumeLive})"
	case RuleMissing.Code:
		return fmt.Sprintf("%d %s missing from the cache while the database has SUCCEEDED", n, english.Plural(n, "key with a live message is",
			"keys with a live message are"))
	case RuleDoneNotInDB.Code:
		return keys + ": the cache says SUCCEEDED, the database does not"
	case RuleStale.Code:
		return keys + ": the cache holds a non-final status the database has moved on from"
	case RuleOrphan.Code:
		return fmt.Sprintf("%d cache %s with no database row", n, english.Plural(n, "entry", "entries"))
	case RuleNoTTL.Code:
		return fmt.Sprintf("%d of %d cache entries have no TTL", n, a.res.Read)
	case RuleUndecodable.Code:
		return fmt.Sprintf("%d cache %s could not be read with {Decoder} %s", n, english.Plural(n, "value", "values"), a.res.Value)
	case RuleUnknownStatus.Code:
		return fmt.Sprintf("%d cache %s not a status of %s", n, english.Plural(n, "value is", "values are"), a.res.StatusRoles)
	}
	return keys
}

// describe is one evidence line: the key, what the cache says, what the
// database says.
func (a *auditor) describe(code string, e Entry) string {
	cache := "cache " + e.Cache
	if e.Cache == "" {
		cache = "cache (not read)"
		if e.Problem == "" {
			cache = "cache (empty)"
		}
	}
	if e.TTL != "" {
		cache += " (ttl " + e.TTL + ")"
	}
	switch code {
	case RuleUndecodable.Code, RuleUnknownStatus.Code:
		return fmt.Sprintf("%s: %s: %s", e.Key, cache, e.Problem)
	case RuleNoTTL.Code:
		return fmt.Sprintf("%s: %s", e.Key, cache)
	}
	db := "database " + e.Database
	if e.Updated != "" {
		db += " (" + idemtable.DisplayIdent(a.res.TimeColumn) + " " + e.Updated + ")"
	}
	return fmt.Sprintf("%s: %s, %s", e.Key, cache, db)
}
