package lock

import (
	"context"
	"errors"
	"fmt"
	"slices"
	"strings"
	"sync"
	"time"

	"github.com/cespare/xxhash/v2"
	"github.com/dupctl/dupctl/internal/platform/connect"
	"github.com/dupctl/dupctl/internal/platform/problem"
	"github.com/redis/go-redis/v9"
)

// Reading Redis: SCAN each node and, per batch of keys, one pipelined
// round trip of TYPE, PTTL, OBJECT IDLETIME, GETRANGE and HSCAN for every
// key, whatever its type, with batches read by four pipelines in flight
// while SCAN goes on. Readers judge their batch (maker, owner, evidence)
// before handing it on, so the single aggregator only folds.

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

type node struct {
	name    string
	conn    Conn
	noTouch bool

	mu     sync.Mutex
	denied []string // commands the ACL refused while reading keys

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
)

// maxTemplates bounds the memo; keys of templates beyond it get both reads.
const maxTemplates = 1 << 16

// plan says which read of its value each key of a batch gets: the one its
// template's keys needed so far, or both for a template not seen yet or
// of mixed types.
func (n *node) plan(tmpls []uint64) []uint8 {
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
		default:
			want[i] = readAll
		}
	}
	return want
}

// learn records the types a batch's keys turned out to have.
func (n *node) learn(tmpls []uint64, obs []observed) {
	n.tmu.Lock()
	defer n.tmu.Unlock()
	if n.types == nil {
		n.types = map[uint64]uint8{}
	}
	for i := range obs {
		var bit uint8
		switch obs[i].typ {
		case "string":
			bit = typeString
		case "hash":
			bit = typeHash
		case "":
			continue
		default:
			bit = typeOther
		}
		h := tmpls[obs[i].idx]
		if t, ok := n.types[h]; ok || len(n.types) < maxTemplates {
			n.types[h] = t | bit
		}
	}
}

// deny records a command the ACL refused.
func (n *node) deny(cmd string) {
	n.mu.Lock()
	defer n.mu.Unlock()
	if !slices.Contains(n.denied, cmd) {
		n.denied = append(n.denied, cmd)
	}
}

// maxValue bounds the bytes read of a string value: lock values are short,
// and a big non-lock value must not be copied.
const maxValue = 1024

// hashFields bounds the fields read of a hash (HSCAN COUNT hint).
const hashFields = 16

// nodesOf lists the nodes to scan: every master of a cluster, or the one
// server.
func nodesOf(ctx context.Context, c redis.UniversalClient) ([]*node, error) {
	if cl, ok := c.(masterLister); ok {
		var mu sync.Mutex
		var out []*node
		err := cl.ForEachMaster(ctx, func(_ context.Context, m *redis.Client) error {
			mu.Lock()
			defer mu.Unlock()
			out = append(out, &node{name: m.Options().Addr, conn: m})
			return nil
		})
		if err != nil {
			return nil, redisError(err, "list cluster masters", "")
		}
		slices.SortFunc(out, func(a, b *node) int { return strings.Compare(a.name, b.name) })
		return out, nil
	}
	conn, ok := c.(Conn)
	if !ok {
		return nil, fmt.Errorf("unsupported Redis client %T", c)
	}
	name := "redis"
	if s, ok := c.(interface{ Options() *redis.Options }); ok {
		name = s.Options().Addr
	}
	return []*node{{name: name, conn: conn}}, nil
}

// isServerError tells a per-key error reply (WRONGTYPE, an LFU policy
// refusing IDLETIME) from a failed connection.
func isServerError(err error) bool {
	var re redis.Error
	return errors.As(err, &re)
}

// permissionError is a command the ACL refused and the run cannot do
// without: it names the command and the permission to grant.
func permissionError(n *node, cmd, text string) error {
	name, _ := connect.NoPermission(text)
	if name == "" {
		name = strings.ToLower(cmd)
	}
	return problem.System(fmt.Errorf("Redis at %s refused %s to this ACL user (%s)", n.name, strings.ToUpper(name), text),
		connect.GrantHint(name))
}

// redisError words a failed command: a NOPERM names the permission.
func redisError(err error, what, node string) error {
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

// page is one batch of keys, read and judged.
type page struct {
	obs  []observed
	keys []judged
	// segs are each batch key's segments (by batch index), when split
	// before the read; tmpls their raw templates' hashes.
	segs        [][]segment
	tmpls       []uint64
	scanned     int64
	vanished    int64 // keys gone between SCAN and the read
	denied      int64 // keys the ACL user may not read
	secondReads int64 // keys whose value took a second round trip
}

// split cuts every key of a batch into segments and hashes its raw
// template (for the read plan).
func (p *page) split(keys []string, now time.Time) {
	p.segs = make([][]segment, len(keys))
	p.tmpls = make([]uint64, len(keys))
	arena := make([]segment, 0, 6*len(keys))
	var buf []byte
	for i, k := range keys {
		start := len(arena)
		arena = appendSegments(arena, k, now)
		p.segs[i] = arena[start:len(arena):len(arena)]
		buf = appendTemplate(buf[:0], p.segs[i])
		p.tmpls[i] = xxhash.Sum64(buf)
	}
}

// judged is a read key with what dupctl makes of it.
type judged struct {
	o    observed
	segs []segment
	r    recognised
	own  Owner
	v    verdict
}

// judge recognises the maker, classifies the owner and weighs the
// evidence of every key of the page.
func (p *page) judge(now time.Time) {
	p.keys = make([]judged, len(p.obs))
	var arena []segment
	for i := range p.obs {
		j := &p.keys[i]
		j.o = p.obs[i]
		if p.segs != nil {
			j.segs = p.segs[j.o.idx]
		} else {
			start := len(arena)
			arena = appendSegments(arena, j.o.key, now)
			j.segs = arena[start:len(arena):len(arena)]
		}
		judgeKey(j, now)
	}
	p.obs, p.segs, p.tmpls = nil, nil, nil
}

func judgeKey(j *judged, now time.Time) {
	o := &j.o
	j.r = recognise(o)
	r := &j.r
	j.own = Owner{Class: OwnerNone}
	// A value that is plainly not a token (a number, a status word, a
	// document, text) needs no owner classification unless the key turns
	// out a candidate all the same: this keeps the costly part off most
	// non-lock keys.
	var against []signal
	owned := false
	switch {
	case r.role == RoleDedup:
		j.own, owned = Owner{Class: OwnerJobID}, true
	case r.role != RoleLock || !o.read:
	case r.maker == MakerRedsync || r.maker == MakerRedislock:
		// 16 random bytes, base64 (redsync genValue, redislock randomToken).
		j.own, owned = Owner{Class: OwnerRandom, Bits: 128}, true
	case (r.maker == MakerBullMQ || r.maker == MakerRedisson) && isUUIDCounter(r.owner, false):
		// <random UUID>:<counter>: BullMQ's worker token, Redisson's
		// client id and thread.
		j.own, owned = Owner{Class: OwnerUUID, Bits: 122}, true
	case r.maker == MakerSidekiq && len(r.owner) == 24 && isHex(r.owner):
		// A Sidekiq JID: SecureRandom.hex(12), even when its 24 hex digits
		// happen to be all decimal ones.
		j.own, owned = Owner{Class: OwnerRandom, Bits: 96}, true
	case o.typ == "string" && !r.signature:
		if against = valueSignals(o.value, now); against == nil {
			j.own, owned = classifyOwner(r.owner, o.key, now), true
		}
	default:
		j.own, owned = classifyOwner(r.owner, o.key, now), true
	}
	// The seed's SET key <token> NX PX ttl: a good token with a TTL.
	if r.maker == MakerSetNXPX && (o.pttl <= 0 || !owned || !j.own.Class.good()) {
		r.maker = MakerUnknown
	}
	j.v = weigh(o, r, j.own, j.segs, against)
	if !owned && r.role == RoleLock && o.read && j.v.candidate() {
		j.own = classifyOwner(r.owner, o.key, now)
	}
}

// readOptions shape one pass.
type readOptions struct {
	match  string // server-side MATCH ("" for client-side globs)
	globs  Globs
	count  int64
	values bool
	dedupe bool
	now    func() time.Time
}

// nodeResult is what a node's walk counted besides its pages.
type nodeResult struct {
	repeats    int64
	falseDrops float64
}

// readers is how many pipelines per node are in flight at once (4 measured
// faster than 2 on a busy 2-core machine, bench/inspect-lock): while one
// batch's replies are parsed, the server works on the next, and SCAN
// pages arrive on their own connection meanwhile.
const readers = 4

// batch is a page of keys to read, with how many keys SCAN returned for it.
type batch struct {
	keys    []string
	scanned int64
}

// walk scans every node concurrently (each is single-threaded, so one
// stream per node) and hands judged pages to fn on the caller's goroutine.
func walk(ctx context.Context, nodes []*node, ro readOptions, fn func(*page)) ([]nodeResult, error) {
	ctx, cancel := context.WithCancel(ctx)
	defer cancel()
	out := make(chan *page, 2*len(nodes))
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

// scanNode walks one node: one goroutine SCANs and filters, readers
// pipeline the reads and judge them, and every page goes to out.
func scanNode(ctx context.Context, n *node, ro readOptions, out chan<- *page) (nodeResult, error) {
	ctx, cancel := context.WithCancel(ctx)
	defer cancel()
	batches := make(chan batch, readers)
	errs := make([]error, readers+1)
	var wg sync.WaitGroup
	for r := range readers {
		wg.Add(1)
		go func() {
			defer wg.Done()
			read := func(keys []string, p *page) error { return readKeys(ctx, n, keys, ro.values, p, nil) }
			rc, err := dialRaw(ctx, n)
			switch {
			case err == nil:
				defer rc.close()
				read = func(keys []string, p *page) error {
					var want []uint8
					if ro.values {
						p.split(keys, ro.now())
						want = n.plan(p.tmpls)
					}
					if err := rc.readBatch(n, keys, want, p); err != nil {
						return err
					}
					if ro.values {
						n.learn(p.tmpls, p.obs)
					}
					return nil
				}
			case !errors.Is(err, errNoRaw):
				errs[r] = err
				cancel()
				return
			}
			for b := range batches {
				p := &page{scanned: b.scanned}
				if err := read(b.keys, p); err != nil {
					errs[r] = err
					cancel()
					return
				}
				p.vanished = int64(len(b.keys)) - int64(len(p.obs)) - p.denied
				p.judge(ro.now())
				select {
				case out <- p:
				case <-ctx.Done():
					return
				}
			}
		}()
	}
	res, err := scanKeys(ctx, n, ro, batches)
	close(batches)
	wg.Wait()
	errs[readers] = err
	return res, firstError(errs)
}

// scanKeys runs SCAN to the end, filtering by the globs and deduplicating,
// and sends batches of about ro.count keys.
func scanKeys(ctx context.Context, n *node, ro readOptions, batches chan<- batch) (nodeResult, error) {
	var res nodeResult
	var filter *seen
	if ro.dedupe {
		filter = newSeen()
	}
	var cursor uint64
	cur := batch{keys: make([]string, 0, ro.count)}
	for {
		keys, next, err := n.conn.Scan(ctx, cursor, ro.match, ro.count).Result()
		if err != nil {
			return res, redisError(err, "SCAN", n.name)
		}
		cur.scanned += int64(len(keys))
		for _, k := range keys {
			if ro.globs != nil && !ro.globs.Match(k) {
				continue
			}
			if filter != nil && filter.add(k) {
				res.repeats++
				continue
			}
			cur.keys = append(cur.keys, k)
		}
		if cursor = next; cursor == 0 || int64(len(cur.keys)) >= ro.count {
			select {
			case batches <- cur:
			case <-ctx.Done():
				return res, ctx.Err()
			}
			cur = batch{keys: make([]string, 0, ro.count)}
		}
		if cursor == 0 {
			break
		}
	}
	if filter != nil {
		res.falseDrops = filter.FalseDropEstimate()
	}
	return res, nil
}

// readKeys is readBatch through go-redis, for clients without a raw
// connection and for single reads (--key, the middle observations); extra
// adds commands to the same pipeline.
func readKeys(ctx context.Context, n *node, keys []string, values bool, p *page, extra func(redis.Pipeliner)) error {
	pl := n.conn.Pipeline()
	if values && n.noTouch {
		pl.Do(ctx, "client", "no-touch", "on")
	}
	type cmds struct {
		typ   *redis.StatusCmd
		pttl  *redis.IntCmd
		idle  *redis.IntCmd
		value *redis.StringCmd
		hscan *redis.ScanCmd
	}
	cs := make([]cmds, len(keys))
	for i, k := range keys {
		cs[i].typ = pl.Type(ctx, k)
		cs[i].pttl = redis.NewIntCmd(ctx, "pttl", k) // raw milliseconds, -1 and -2 kept
		_ = pl.Process(ctx, cs[i].pttl)
		cs[i].idle = redis.NewIntCmd(ctx, "object", "idletime", k)
		_ = pl.Process(ctx, cs[i].idle)
		if values {
			cs[i].value = pl.GetRange(ctx, k, 0, maxValue-1)
			cs[i].hscan = pl.HScan(ctx, k, 0, "", hashFields)
		}
	}
	if extra != nil {
		extra(pl)
	}
	if pl.Len() == 0 {
		return nil
	}
	if _, err := pl.Exec(ctx); err != nil && !isServerError(err) {
		return fmt.Errorf("read keys on %s: %w", n.name, err)
	}
	text := func(err error) string {
		if err == nil || err == redis.Nil {
			return ""
		}
		return err.Error()
	}
	p.obs = make([]observed, 0, len(keys))
	for i, k := range keys {
		c := cs[i]
		o := observed{key: k, node: n.name, idle: -1, idx: i}
		if err := c.pttl.Err(); err != nil {
			if !isServerError(err) {
				return fmt.Errorf("PTTL on %s: %w", n.name, err)
			}
			if err := n.refused("PTTL", text(err), p); err != nil {
				return err
			}
			continue
		}
		if o.pttl = c.pttl.Val(); o.pttl == -2 {
			continue // gone since SCAN
		}
		if err := n.refused("TYPE", text(c.typ.Err()), p); err != nil {
			return err
		}
		o.typ = c.typ.Val()
		if c.idle.Err() == nil {
			o.idle = c.idle.Val()
		} else if err := n.refused("OBJECT", text(c.idle.Err()), p); err != nil {
			return err
		}
		if values {
			switch {
			case c.value.Err() == nil && (o.typ == "string" || o.typ == ""):
				o.typ, o.value, o.read = "string", c.value.Val(), true
			case c.hscan.Err() == nil && c.value.Err() != nil && (o.typ == "hash" || o.typ == ""):
				fields, cursor := c.hscan.Val()
				o.typ, o.fields, o.moreFields, o.read = "hash", fields[:min(len(fields), 2*hashFields)], cursor != 0 || len(fields) > 2*hashFields, true
			default:
				if err := n.refused("GETRANGE", text(c.value.Err()), p); err != nil {
					return err
				}
				if err := n.refused("HSCAN", text(c.hscan.Err()), p); err != nil {
					return err
				}
			}
		}
		p.obs = append(p.obs, o)
	}
	return nil
}
