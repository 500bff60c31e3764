package lock

import (
	"context"
	"errors"
	"fmt"
	"strings"
	"sync"

	"github.com/dupctl/dupctl/internal/platform/exitcode"
	"github.com/redis/go-redis/v9"
)

// Reading Redis: SCAN each node and, per batch of matched keys, one
// pipeline of PTTL, OBJECT IDLETIME and GETRANGE for every key, with
// batches read by four pipelines in flight while SCAN goes on. IDLETIME
// comes before the read in the pipeline because a read marks the key as
// just used (Redis < 7.2 has no CLIENT NO-TOUCH). Keys that are not
// strings get a second, small pipeline: TYPE, HLEN and HSCAN.

// Conn is what dupctl needs of one Redis node; *redis.Client has it.
type Conn interface {
	Pipeline() redis.Pipeliner
	Scan(ctx context.Context, cursor uint64, match string, count int64) *redis.ScanCmd
	Info(ctx context.Context, section ...string) *redis.StringCmd
	ConfigGet(ctx context.Context, parameter string) *redis.MapStringStringCmd
}

// masterLister is a Redis Cluster client.
type masterLister interface {
	ForEachMaster(ctx context.Context, fn func(ctx context.Context, c *redis.Client) error) error
}

type node struct {
	name    string
	conn    Conn
	noTouch bool
}

// maxValue bounds the bytes read of a string value: lock values are short,
// and a big non-lock value that a pattern matched must not be copied.
const maxValue = 1024

// hashFields bounds the fields read of a hash (HSCAN COUNT hint).
const hashFields = 16

// nodesOf lists the nodes to scan: every master of a cluster, or the one
// server.
func nodesOf(ctx context.Context, c redis.UniversalClient) ([]node, error) {
	if cl, ok := c.(masterLister); ok {
		var mu sync.Mutex
		var out []node
		err := cl.ForEachMaster(ctx, func(_ context.Context, m *redis.Client) error {
			mu.Lock()
			defer mu.Unlock()
			out = append(out, node{name: m.Options().Addr, conn: m})
			return nil
		})
		if err != nil {
			return nil, fmt.Errorf("list cluster masters: %w", err)
		}
		sortNodes(out)
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
	return []node{{name: name, conn: conn}}, nil
}

func sortNodes(ns []node) {
	for i := 1; i < len(ns); i++ {
		for j := i; j > 0 && ns[j].name < ns[j-1].name; j-- {
			ns[j], ns[j-1] = ns[j-1], ns[j]
		}
	}
}

// isServerError tells a per-key error reply (WRONGTYPE, an LFU policy
// refusing IDLETIME) from a failed connection.
func isServerError(err error) bool {
	var re redis.Error
	return errors.As(err, &re)
}

// permissionError turns NOPERM into a usage error naming what to grant.
func permissionError(err error, what string) error {
	if err != nil && strings.HasPrefix(err.Error(), "NOPERM") {
		return exitcode.UnavailableError(fmt.Errorf("redis refused %s: %w", what, err),
			"the ACL user needs +@read +@connection +info (and ~* or the patterns' keys)")
	}
	return nil
}

// page is one SCAN page's keys, read.
type page struct {
	obs      []observed
	scanned  int64
	vanished int64 // keys gone between SCAN and the read
}

// readOptions shape one pass.
type readOptions struct {
	match  string // server-side MATCH ("" for client-side globs)
	globs  Globs
	count  int64
	values bool
	dedupe bool
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

// scanNode walks one node: one goroutine SCANs and filters, readers
// pipeline the reads, and every page of read keys goes to out.
func scanNode(ctx context.Context, n node, ro readOptions, out chan<- page) (nodeResult, error) {
	ctx, cancel := context.WithCancel(ctx)
	defer cancel()
	batches := make(chan batch, readers)
	errs := make([]error, readers+1)
	var wg sync.WaitGroup
	for r := range readers {
		wg.Add(1)
		go func() {
			defer wg.Done()
			read := func(keys []string) ([]observed, error) {
				return readKeys(ctx, n, keys, ro.values, func(redis.Pipeliner) {})
			}
			rc, err := dialRaw(ctx, n)
			switch {
			case err == nil:
				defer rc.close()
				read = func(keys []string) ([]observed, error) {
					obs, others, err := rc.readBatch(n, keys, ro.values)
					if err == nil && len(others) > 0 {
						err = readOthers(ctx, n, obs, others)
					}
					return obs, err
				}
			case !errors.Is(err, errNoRaw):
				errs[r] = err
				cancel()
				return
			}
			for b := range batches {
				obs, err := read(b.keys)
				if err != nil {
					errs[r] = err
					cancel()
					return
				}
				select {
				case out <- page{obs: obs, scanned: b.scanned, vanished: int64(len(b.keys) - len(obs))}:
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
func scanKeys(ctx context.Context, n node, ro readOptions, batches chan<- batch) (nodeResult, error) {
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
			return res, cmdError(err, "SCAN", n)
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

// readKeys reads TTL, idle time and value of keys in one pipeline (plus
// extra, the next SCAN page), then the non-strings in a second one.
func readKeys(ctx context.Context, n node, keys []string, values bool, extra func(redis.Pipeliner)) ([]observed, error) {
	p := n.conn.Pipeline()
	if values && n.noTouch {
		p.Do(ctx, "client", "no-touch", "on")
	}
	type cmds struct {
		pttl  *redis.DurationCmd
		idle  *redis.DurationCmd
		value *redis.StringCmd
		typ   *redis.StatusCmd
	}
	cs := make([]cmds, len(keys))
	for i, k := range keys {
		cs[i].pttl = p.PTTL(ctx, k)
		cs[i].idle = p.ObjectIdleTime(ctx, k)
		if values {
			cs[i].value = p.GetRange(ctx, k, 0, maxValue-1)
		} else {
			cs[i].typ = p.Type(ctx, k)
		}
	}
	extra(p)
	if p.Len() == 0 {
		return nil, nil
	}
	if _, err := p.Exec(ctx); err != nil && !isServerError(err) {
		return nil, fmt.Errorf("read keys on %s: %w", n.name, err)
	}
	obs := make([]observed, 0, len(keys))
	var others []int
	for i, k := range keys {
		c := cs[i]
		if err := c.pttl.Err(); err != nil {
			return nil, cmdError(err, "PTTL", n)
		}
		o := observed{key: k, node: n.name, pttl: ms(c.pttl), idle: -1}
		if o.pttl == -2 {
			continue // gone since SCAN
		}
		if d, err := c.idle.Result(); err == nil {
			o.idle = int64(d.Seconds())
		} else if pe := permissionError(err, "OBJECT IDLETIME"); pe != nil {
			return nil, pe
		}
		switch {
		case values && c.value.Err() == nil:
			o.typ, o.value, o.read = "string", c.value.Val(), true
		case values && redis.HasErrorPrefix(c.value.Err(), "WRONGTYPE"):
			others = append(others, len(obs))
		case values:
			return nil, cmdError(c.value.Err(), "GETRANGE", n)
		default:
			o.typ = c.typ.Val()
		}
		obs = append(obs, o)
	}
	if len(others) > 0 {
		if err := readOthers(ctx, n, obs, others); err != nil {
			return nil, err
		}
	}
	return obs, nil
}

// ms reads a PTTL reply as milliseconds, keeping -1 and -2.
func ms(c *redis.DurationCmd) int64 {
	d := c.Val()
	if d < 0 {
		return int64(d) // go-redis keeps -1 and -2 as raw values
	}
	return d.Milliseconds()
}

func cmdError(err error, cmd string, n node) error {
	if pe := permissionError(err, cmd); pe != nil {
		return pe
	}
	return fmt.Errorf("%s on %s: %w", cmd, n.name, err)
}

// readOthers reads the type of non-string keys and a hash's first fields.
func readOthers(ctx context.Context, n node, obs []observed, idx []int) error {
	p := n.conn.Pipeline()
	if n.noTouch {
		p.Do(ctx, "client", "no-touch", "on")
	}
	types := make([]*redis.StatusCmd, len(idx))
	hlens := make([]*redis.IntCmd, len(idx))
	scans := make([]*redis.ScanCmd, len(idx))
	for j, i := range idx {
		k := obs[i].key
		types[j] = p.Type(ctx, k)
		hlens[j] = p.HLen(ctx, k)
		scans[j] = p.HScan(ctx, k, 0, "", hashFields)
	}
	if _, err := p.Exec(ctx); err != nil && !isServerError(err) {
		return fmt.Errorf("read keys on %s: %w", n.name, err)
	}
	for j, i := range idx {
		o := &obs[i]
		o.typ = types[j].Val()
		if o.typ == "hash" {
			o.hlen = hlens[j].Val()
			o.fields, _ = scans[j].Val()
			o.read = true
		}
	}
	return nil
}
