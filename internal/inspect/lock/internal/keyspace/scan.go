// Package keyspace reads a Redis server's or cluster's keyspace,
// read-only: the nodes to scan (every master of a cluster), SCAN per node
// deduplicated with a fixed-size filter (seen.go) and filtered by globs
// (glob.go), and per batch of keys one pipelined round trip of TYPE, PTTL,
// OBJECT IDLETIME, GETRANGE and HSCAN, planned from what the keys of the
// same template turned out to be, with four pipelines in flight while SCAN
// goes on. The hot path writes RESP and parses the replies itself
// (raw.go). Readers hand each page to a prepare function on their own
// goroutine (the judging), so the single aggregator only folds.
package keyspace

import (
	"context"
	"errors"
	"fmt"
	"slices"
	"strconv"
	"strings"
	"sync"
	"time"

	"github.com/cespare/xxhash/v2"
	"github.com/dupctl/dupctl/internal/inspect/lock/internal/keyshape"
	"github.com/dupctl/dupctl/internal/platform/connect"
	"github.com/dupctl/dupctl/internal/platform/problem"
	"github.com/redis/go-redis/v9"
)

// Conn is what dupctl needs of one Redis node; *redis.Client has it.
type Conn interface {
	Pipeline() redis.Pipeliner
	Scan(ctx context.Context, cursor uint64, match string, count int64) *redis.ScanCmd
	Info(ctx context.Context, section ...string) *redis.StringCmd
	ConfigGet(ctx context.Context, parameter string) *redis.MapStringStringCmd
	Do(ctx context.Context, args ...any) *redis.Cmd
}

// masterLister is a Redis Cluster client.
type masterLister interface {
	ForEachMaster(ctx context.Context, fn func(ctx context.Context, c *redis.Client) error) error
}

type Node struct {
	Name    string
	Conn    Conn
	NoTouch bool
	// PrivateIntegers: the node shares no integer objects (SetMemory), so
	// a small integer value's idle time is its key's own.
	PrivateIntegers bool
	// Slots are the hash slots a cluster master served when the walk
	// began (nil outside a cluster); a walk that loses the node follows
	// them (failover.go).
	Slots    []SlotRange
	cluster  clusterConn
	sentinel sentinelMaster // the master a group of Sentinels names (sentinel.go)
	runID    string         // that master's run_id: who the walk reads

	mu     sync.Mutex
	Denied []string // commands the ACL refused while reading keys

	// types remembers, per raw key template, the types its keys had, so
	// that a batch asks for the one read of the value each key needs.
	tmu   sync.RWMutex
	types map[uint64]uint8
}

// Type bits of the template memo.
const (
	typeString uint8 = 1 << iota
	typeHash
	typeOther
	typeZset
)

// maxTemplates bounds the memo; keys of templates beyond it get both reads.
const maxTemplates = 1 << 16

// plan says which read of its value each key of a batch gets: the one its
// template's keys needed so far, or TYPE alone for a template not seen yet
// or of mixed types (the value in a second round trip, readAgain). Probing
// with every read instead (GETRANGE, HSCAN and TYPE) saved that round trip
// but sent each such key a read its type refuses: Redis answered WRONGTYPE
// and counted a failed call (errorstat_WRONGTYPE, total_error_replies) for
// every key of a new template - on every run of dupctl watch, and on every
// key of a mixed one - errors the server's own monitoring sees.
func (n *Node) plan(tmpls []uint64) []uint8 {
	want := make([]uint8, len(tmpls))
	n.tmu.RLock()
	defer n.tmu.RUnlock()
	for i, h := range tmpls {
		switch n.types[h] {
		case typeString:
			want[i] = readString
		case typeHash:
			want[i] = readHash
		case typeOther:
			want[i] = readType
		case typeZset:
			want[i] = readZset
		default:
			want[i] = readType
		}
	}
	return want
}

// learn records the types a batch's keys turned out to have.
func (n *Node) learn(tmpls []uint64, obs []Key) {
	n.tmu.Lock()
	defer n.tmu.Unlock()
	if n.types == nil {
		n.types = map[uint64]uint8{}
	}
	for i := range obs {
		var bit uint8
		switch obs[i].Type {
		case "string":
			bit = typeString
		case "hash":
			bit = typeHash
		case "zset":
			bit = typeZset
		case "":
			continue
		default:
			bit = typeOther
		}
		h := tmpls[obs[i].Idx]
		if t, ok := n.types[h]; ok || len(n.types) < maxTemplates {
			n.types[h] = t | bit
		}
	}
}

// Deny records a command the ACL refused.
func (n *Node) Deny(cmd string) {
	n.mu.Lock()
	defer n.mu.Unlock()
	if !slices.Contains(n.Denied, cmd) {
		n.Denied = append(n.Denied, cmd)
	}
}

// maxValue bounds the bytes read of a string value: lock values are short,
// and a big non-lock value must not be copied.
const maxValue = 1024

// hashFields bounds the fields read of a hash (HSCAN COUNT hint).
const hashFields = 16

// zsetMembers is how many members of a sorted set are read (ZRANGE 0 3
// WITHSCORES): a lock library's sorted set holds its holders' tokens
// (Symfony Lock, DistributedLock.Redis semaphores).
const zsetMembers = 4

// zsetFields turns go-redis's members into member, score, ... pairs.
func zsetFields(zs []redis.Z) []string {
	out := make([]string, 0, 2*len(zs))
	for _, z := range zs {
		m, _ := z.Member.(string)
		out = append(out, m, strconv.FormatFloat(z.Score, 'f', -1, 64))
	}
	return out
}

// Nodes lists the nodes to scan: every master of a cluster, or the one
// server.
func Nodes(ctx context.Context, c Conn) ([]*Node, error) {
	if cl, ok := c.(masterLister); ok {
		var mu sync.Mutex
		var out []*Node
		err := cl.ForEachMaster(ctx, func(_ context.Context, m *redis.Client) error {
			mu.Lock()
			defer mu.Unlock()
			out = append(out, &Node{Name: m.Options().Addr, Conn: m})
			return nil
		})
		if err != nil {
			return nil, RedisError(err, "list cluster masters", "")
		}
		slices.SortFunc(out, func(a, b *Node) int { return strings.Compare(a.Name, b.Name) })
		if cc, ok := c.(clusterConn); ok {
			slots, err := cc.ClusterSlots(ctx).Result()
			if err != nil {
				return nil, RedisError(err, "CLUSTER SLOTS", "")
			}
			bySlots := masterSlots(slots)
			for _, n := range out {
				n.Slots, n.cluster = bySlots[n.Name], cc
			}
		}
		return out, nil
	}
	name := "redis"
	f, sentinel := c.(sentinelMaster)
	if sentinel {
		name = f.Node(ctx)
	} else if o := options(c); o != nil {
		name = o.Addr
	}
	n := &Node{Name: name, Conn: c}
	if sentinel {
		// Unknown ("") when the ACL refuses ROLE or INFO: a failover is
		// then always taken for a new server (read again from the start).
		n.sentinel = f
		n.runID, _ = masterRunID(ctx, c)
	}
	return []*Node{n}, nil
}

// IsCluster reports whether c is a Redis Cluster client.
func IsCluster(c Conn) bool {
	_, ok := c.(masterLister)
	return ok
}

// CanFailOver reports whether a walk over c follows a failover: a Redis
// Cluster client, or a client of the master Sentinels name.
func CanFailOver(c Conn) bool {
	_, sentinel := c.(sentinelMaster)
	return IsCluster(c) || sentinel
}

// DB is the database c selects (0 when it does not say).
func DB(c Conn) int {
	if o := options(c); o != nil {
		return o.DB
	}
	return 0
}

// options are a go-redis client's options (nil for another client).
func options(c Conn) *redis.Options {
	if s, ok := c.(interface{ Options() *redis.Options }); ok {
		return s.Options()
	}
	return nil
}

// isServerError tells a per-key error reply (WRONGTYPE, an LFU policy
// refusing IDLETIME) from a failed connection.
func isServerError(err error) bool {
	var re redis.Error
	return errors.As(err, &re)
}

// permissionError is a command the ACL refused and the run cannot do
// without: it names the command and the permission to grant.
func permissionError(n *Node, cmd, text string) error {
	name, _ := connect.NoPermission(text)
	if name == "" {
		name = strings.ToLower(cmd)
	}
	return problem.System(fmt.Errorf("Redis at %s refused %s to this ACL user (%s)", n.Name, strings.ToUpper(name), text),
		connect.GrantHint(name))
}

// RedisError words a failed command: a NOPERM names the permission.
func RedisError(err error, what, node string) error {
	if cmd, denied := connect.NoPermission(err.Error()); denied {
		if cmd == "" {
			cmd = strings.ToLower(what)
		}
		return problem.System(fmt.Errorf("Redis %srefused %s to this ACL user (%s)", at(node), strings.ToUpper(cmd), err),
			connect.GrantHint(cmd))
	}
	return fmt.Errorf("%s%s: %w", what, on(node), err)
}

func at(node string) string {
	if node == "" {
		return ""
	}
	return "at " + node + " "
}

func on(node string) string {
	if node == "" {
		return ""
	}
	return " on " + node
}

// Page is one batch of keys, read.
type Page struct {
	Keys []Key
	// Segs are each batch key's segments (by batch index), when split
	// before the read; tmpls their raw templates' hashes.
	Segs        [][]keyshape.Segment
	Tmpls       []uint64
	Scanned     int64
	Vanished    int64 // keys gone between SCAN and the read
	Denied      int64 // keys the ACL user may not read
	SecondReads int64 // keys whose value took a second round trip
	// ReadAt is when the replies had all arrived (a monotonic clock, not
	// the report's): every key was read at or before it.
	ReadAt time.Time
}

// split cuts every key of a batch into segments and hashes its raw
// template (for the read plan).
func (p *Page) split(keys []string, now time.Time) {
	p.Segs = make([][]keyshape.Segment, len(keys))
	p.Tmpls = make([]uint64, len(keys))
	arena := make([]keyshape.Segment, 0, 6*len(keys))
	var buf []byte
	for i, k := range keys {
		start := len(arena)
		arena = keyshape.AppendSegments(arena, k, now)
		p.Segs[i] = arena[start:len(arena):len(arena)]
		buf = keyshape.AppendTemplate(buf[:0], p.Segs[i])
		p.Tmpls[i] = xxhash.Sum64(buf)
	}
}

// ReadOptions shape one pass.
type ReadOptions struct {
	Match  string // server-side MATCH ("" for client-side globs)
	Globs  Globs
	Count  int64
	Values bool
	Dedupe bool
	Now    func() time.Time
	// FailoverWait is how long a cluster node's walk waits, after its
	// node failed or the cluster went down, for its slots to be served
	// again (failover.go); past it the node is reported Unread.
	FailoverWait time.Duration
	// AfterPage, when set (tests), runs on the caller's goroutine after
	// each page a node's walk hands on.
	AfterPage func(node string)
}

// NodeResult is what a node's walk counted besides its pages.
type NodeResult struct {
	Repeats    int64
	FalseDrops float64
	// Moves are the times the walk went on elsewhere (or on the same node
	// once its cluster was up again) after a failure; Unread is set when
	// it could not go on: what it did not read.
	Moves  []Move
	Unread *Unread
}

// readers is how many pipelines per node are in flight at once (4 measured
// faster than 2 on a busy 2-core machine, bench/inspect-lock): while one
// batch's replies are parsed, the server works on the next, and SCAN
// pages arrive on their own connection meanwhile.
const readers = 4

// batch is a page of keys to read, with how many keys SCAN returned for it.
type batch struct {
	id      int
	keys    []string
	scanned int64
}

// Walk scans every node concurrently (each is single-threaded, so one
// stream per node). Each page read is handed to prep on its reader's
// goroutine (judging the keys there keeps the one aggregator folding
// only), then with what prep made of it to fn on the caller's goroutine.
// A cluster node that fails mid-walk is followed to the master that
// serves its slots next, or reported in its NodeResult's Unread.
func Walk[T any](ctx context.Context, nodes []*Node, ro ReadOptions, prep func(*Page) T, fn func(*Page, T)) ([]NodeResult, error) {
	ctx, cancel := context.WithCancel(ctx)
	defer cancel()
	out := make(chan prepared[T], 2*len(nodes))
	res := make([]NodeResult, len(nodes))
	errs := make([]error, len(nodes))
	cl := newClaims(nodes)
	var wg sync.WaitGroup
	for i, n := range nodes {
		wg.Add(1)
		go func() {
			defer wg.Done()
			if res[i], errs[i] = scanNode(ctx, n, ro, cl, prep, out); errs[i] != nil {
				cancel()
			}
		}()
	}
	go func() { wg.Wait(); close(out) }()
	for p := range out {
		fn(p.page, p.made)
		if ro.AfterPage != nil && len(p.page.Keys) > 0 {
			ro.AfterPage(p.page.Keys[0].Node)
		}
	}
	return res, firstError(errs)
}

// prepared is a page and what prep made of it.
type prepared[T any] struct {
	page *Page
	made T
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

// nodeWalk is one node's walk across passes: a pass ends at the end of
// the keyspace or at a failure, after which the next pass goes on from
// the cursor (the same node) or from the start (the master that took the
// node's slots over), the filter skipping what was read, and re-reads
// first the batches scanned and never handed on.
type nodeWalk struct {
	filter  *Seen
	cursor  uint64
	done    bool // SCAN reached the end on the current node
	rescan  bool // a pass on a new master: keys already read are not repeats
	known   int64
	repeats int64

	mu     sync.Mutex
	open   map[int]batch // scanned, not yet handed on
	nextID int
}

// opened records a batch about to be read.
func (w *nodeWalk) opened(b *batch) {
	w.mu.Lock()
	defer w.mu.Unlock()
	w.nextID++
	b.id = w.nextID
	w.open[b.id] = *b
}

// handedOn records a batch whose page went to the caller.
func (w *nodeWalk) handedOn(id int) {
	w.mu.Lock()
	defer w.mu.Unlock()
	delete(w.open, id)
}

// leftover takes the batches that were scanned and never handed on, as
// one batch.
func (w *nodeWalk) leftover() batch {
	w.mu.Lock()
	defer w.mu.Unlock()
	var b batch
	for id, o := range w.open {
		b.keys = append(b.keys, o.keys...)
		b.scanned += o.scanned
		delete(w.open, id)
	}
	return b
}

// scanNode walks one node: one goroutine SCANs and filters, readers
// pipeline the reads and prepare them, and every page goes to out. A
// pass that fails on a cluster node, or on the master Sentinels name,
// goes on where failover.go (sentinel.go) says.
func scanNode[T any](ctx context.Context, n *Node, ro ReadOptions, cl *claims, prep func(*Page) T,
	out chan<- prepared[T]) (NodeResult, error) {
	w := &nodeWalk{open: map[int]batch{}}
	if ro.Dedupe {
		w.filter = NewSeen()
	}
	var res NodeResult
	var retry batch
	for {
		err := scanPass(ctx, n, ro, w, retry, prep, out)
		if err == nil {
			break
		}
		if (n.cluster == nil && n.sentinel == nil) || ctx.Err() != nil || !transient(err) {
			return res, err
		}
		retry = w.leftover()
		follow := n.followSlots
		if n.cluster == nil {
			follow = n.followMaster
		}
		mv, unread := follow(ctx, ro.FailoverWait, cl, w, err, len(res.Moves))
		if unread != nil {
			unread.Pending = len(retry.keys)
			res.Unread = unread
			break
		}
		mv.Reread = len(retry.keys)
		res.Moves = append(res.Moves, mv)
	}
	res.Repeats = w.repeats
	if w.filter != nil {
		res.FalseDrops = w.filter.FalseDropEstimate()
	}
	if len(res.Moves) > 0 {
		res.Moves[len(res.Moves)-1].AlreadyRead = w.known
	}
	return res, nil
}

// scanPass is one pass over a node: retry (keys scanned before, never
// handed on) first, then SCAN from w's cursor.
func scanPass[T any](ctx context.Context, n *Node, ro ReadOptions, w *nodeWalk, retry batch,
	prep func(*Page) T, out chan<- prepared[T]) error {
	ctx, cancel := context.WithCancel(ctx)
	defer cancel()
	batches := make(chan batch, readers)
	errs := make([]error, readers+1)
	var wg sync.WaitGroup
	for r := range readers {
		wg.Add(1)
		go func() {
			defer wg.Done()
			if errs[r] = readPages(ctx, n, ro, w, batches, prep, out); errs[r] != nil {
				cancel()
			}
		}()
	}
	err := scanKeys(ctx, n, ro, w, retry, batches)
	close(batches)
	wg.Wait()
	errs[readers] = err
	return firstError(errs)
}

// readPages is one reader: it reads the batches it takes (over a raw
// connection where the client allows one), prepares each page and sends
// it on, until the batches end or ctx does.
func readPages[T any](ctx context.Context, n *Node, ro ReadOptions, w *nodeWalk, batches <-chan batch,
	prep func(*Page) T, out chan<- prepared[T]) error {
	read := func(keys []string, p *Page) error { return ReadKeys(ctx, n, keys, ro.Values, p, nil) }
	rc, err := dialRaw(ctx, n)
	switch {
	case err == nil:
		defer rc.close()
		read = func(keys []string, p *Page) error { return rc.readPlanned(n, keys, ro, p) }
	case !errors.Is(err, errNoRaw):
		return err
	}
	for b := range batches {
		p := &Page{Scanned: b.scanned}
		if err := read(b.keys, p); err != nil {
			return err
		}
		p.ReadAt = time.Now()
		p.Vanished = int64(len(b.keys)) - int64(len(p.Keys)) - p.Denied
		made := prep(p)
		select {
		case out <- prepared[T]{p, made}:
			w.handedOn(b.id)
		case <-ctx.Done():
			return nil
		}
	}
	return nil
}

// readPlanned reads a batch over the raw connection, asking each key for
// the read of its value its template's keys needed so far.
func (rc *rawConn) readPlanned(n *Node, keys []string, ro ReadOptions, p *Page) error {
	var want []uint8
	if ro.Values {
		p.split(keys, ro.Now())
		want = n.plan(p.Tmpls)
	}
	if err := rc.readBatch(n, keys, want, p); err != nil {
		return err
	}
	if ro.Values {
		n.learn(p.Tmpls, p.Keys)
	}
	return nil
}

// scanKeys sends retry, then runs SCAN from w's cursor to the end,
// filtering by the globs and deduplicating, and sends batches of about
// ro.count keys. Every batch is recorded open before it is sent, and the
// cursor advanced only past pages whose keys are in a batch, so a failure
// anywhere loses nothing the next pass cannot take up.
func scanKeys(ctx context.Context, n *Node, ro ReadOptions, w *nodeWalk, retry batch, batches chan<- batch) error {
	send := func(b batch) error {
		w.opened(&b)
		select {
		case batches <- b:
			return nil
		case <-ctx.Done():
			return ctx.Err()
		}
	}
	if len(retry.keys) > 0 {
		if err := send(retry); err != nil {
			return err
		}
	}
	cur := batch{keys: make([]string, 0, ro.Count)}
	for !w.done {
		keys, next, err := n.Conn.Scan(ctx, w.cursor, ro.Match, ro.Count).Result()
		if err != nil {
			if len(cur.keys) > 0 {
				w.opened(&cur)
			}
			return RedisError(err, "SCAN", n.Name)
		}
		w.filterInto(&cur, keys, ro.Globs)
		w.cursor, w.done = next, next == 0
		if w.done || int64(len(cur.keys)) >= ro.Count {
			if err := send(cur); err != nil {
				return err
			}
			cur = batch{keys: make([]string, 0, ro.Count)}
		}
	}
	return nil
}

// filterInto adds to b the keys of a SCAN page that match the globs and
// were not returned before. On a new master's pass, a key already read on
// the old one is neither counted scanned again nor a repeat, and keys the
// globs drop were counted on the first pass.
func (w *nodeWalk) filterInto(b *batch, keys []string, globs Globs) {
	for _, k := range keys {
		if globs != nil && !globs.Match(k) {
			if !w.rescan {
				b.scanned++
			}
			continue
		}
		if w.filter != nil && w.filter.add(k) {
			if w.rescan {
				w.known++
			} else {
				b.scanned++
				w.repeats++
			}
			continue
		}
		b.scanned++
		b.keys = append(b.keys, k)
	}
}

// ReadKeys is readBatch through go-redis, for clients without a raw
// connection and for single reads (--key, the middle observations); extra
// adds commands to the same pipeline.
func ReadKeys(ctx context.Context, n *Node, keys []string, values bool, p *Page, extra func(redis.Pipeliner)) error {
	pl := n.Conn.Pipeline()
	if values && n.NoTouch {
		pl.Do(ctx, "client", "no-touch", "on")
	}
	cs := queueReads(ctx, pl, keys, values)
	if extra != nil {
		extra(pl)
	}
	if pl.Len() == 0 {
		return nil
	}
	if _, err := pl.Exec(ctx); err != nil && !isServerError(err) {
		return fmt.Errorf("read keys on %s: %w", n.Name, err)
	}
	p.Keys = make([]Key, 0, len(keys))
	for i, k := range keys {
		o := Key{Key: k, Node: n.Name, Idle: -1, Idx: i}
		keep, err := n.applyCmds(&cs[i], &o, values, p)
		if err != nil {
			return err
		}
		if keep {
			p.Keys = append(p.Keys, o)
		}
	}
	p.ownIdles(n)
	return nil
}

// keyCmds are the commands one key's read queues in a go-redis pipeline.
type keyCmds struct {
	typ   *redis.StatusCmd
	pttl  *redis.IntCmd
	idle  *redis.IntCmd
	value *redis.StringCmd
	hscan *redis.ScanCmd
	zset  *redis.ZSliceCmd
}

// queueReads queues TYPE, PTTL, OBJECT IDLETIME and, with values, GETRANGE
// and HSCAN for every key.
func queueReads(ctx context.Context, pl redis.Pipeliner, keys []string, values bool) []keyCmds {
	cs := make([]keyCmds, len(keys))
	for i, k := range keys {
		cs[i].typ = pl.Type(ctx, k)
		cs[i].pttl = redis.NewIntCmd(ctx, "pttl", k) // raw milliseconds, -1 and -2 kept
		_ = pl.Process(ctx, cs[i].pttl)
		cs[i].idle = redis.NewIntCmd(ctx, "object", "idletime", k)
		_ = pl.Process(ctx, cs[i].idle)
		if values {
			cs[i].value = pl.GetRange(ctx, k, 0, maxValue-1)
			cs[i].hscan = pl.HScan(ctx, k, 0, "", hashFields)
			cs[i].zset = pl.ZRangeWithScores(ctx, k, 0, zsetMembers-1)
		}
	}
	return cs
}

// errText is a per-key error reply's text ("" for none, or nil).
func errText(err error) string {
	if err == nil || err == redis.Nil {
		return ""
	}
	return err.Error()
}

// applyCmds sets what one key's replies say; false when the key is gone
// or the ACL user may not read it.
func (n *Node) applyCmds(c *keyCmds, o *Key, values bool, p *Page) (bool, error) {
	if err := c.pttl.Err(); err != nil {
		if !isServerError(err) {
			return false, fmt.Errorf("PTTL on %s: %w", n.Name, err)
		}
		return false, n.refused("PTTL", errText(err), p)
	}
	if o.PTTL = c.pttl.Val(); o.PTTL == -2 {
		return false, nil // gone since SCAN
	}
	if err := n.refused("TYPE", errText(c.typ.Err()), p); err != nil {
		return false, err
	}
	o.Type = c.typ.Val()
	if c.idle.Err() == nil {
		o.Idle = c.idle.Val()
	} else if err := n.refused("OBJECT", errText(c.idle.Err()), p); err != nil {
		return false, err
	}
	if !values {
		return true, nil
	}
	switch {
	case c.value.Err() == nil && (o.Type == "string" || o.Type == ""):
		o.Type, o.Value, o.Read = "string", c.value.Val(), true
	case c.hscan.Err() == nil && c.value.Err() != nil && (o.Type == "hash" || o.Type == ""):
		fields, cursor := c.hscan.Val()
		o.Type, o.Fields, o.MoreFields, o.Read = "hash", fields[:min(len(fields), 2*hashFields)], cursor != 0 || len(fields) > 2*hashFields, true
	case c.zset.Err() == nil && o.Type == "zset":
		o.Fields, o.Read = zsetFields(c.zset.Val()), true
	default:
		if err := n.refused("GETRANGE", errText(c.value.Err()), p); err != nil {
			return false, err
		}
		if err := n.refused("HSCAN", errText(c.hscan.Err()), p); err != nil {
			return false, err
		}
	}
	return true, nil
}
