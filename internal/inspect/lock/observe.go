package lock

import (
	"context"
	"fmt"
	"slices"
	"time"

	"github.com/dupctl/dupctl/internal/inspect/lock/internal/judge"
	"github.com/dupctl/dupctl/internal/inspect/lock/internal/keyspace"
	"github.com/dupctl/dupctl/internal/platform/connect"
	"github.com/dupctl/dupctl/internal/platform/problem"
	"github.com/dupctl/dupctl/internal/platform/text"
	"github.com/redis/go-redis/v9"
)

// The orphan check never trusts one snapshot (research 1.11: BullMQ
// declares a job stalled only after two looks with no lock). The first
// observation walks the keyspace reading only TTLs and idle times - no
// values, so dupctl's own reads cannot reset them - and keeps the keys
// idle long enough to become orphans by the last observation. Middle
// observations re-read those keys; the last one is the full inspection,
// which calls a candidate an orphan when nobody renewed, read or rewrote it
// in between and it has been idle past --idle.

// clockSlack absorbs Redis's 1 s LRU clock and the time a pass takes.
const clockSlack = 2 * time.Second

func (a *aggregator) observe(ctx context.Context, nodes []*keyspace.Node, ro keyspace.ReadOptions) error {
	o := a.o
	a.obs = Observations{Count: o.Observe, IntervalMs: o.Interval.Milliseconds(), IdleAfterS: int64(o.IdleAfter.Seconds())}
	a.cands = map[string]candidate{}
	ahead := time.Duration(o.Observe-1) * o.Interval
	light := ro
	light.Values = false
	idx := map[string]int{}
	for i, n := range nodes {
		idx[n.Name] = i
	}
	// The first look reads names, TTLs and idle times: nothing to judge.
	none := func(*keyspace.Page) struct{} { return struct{}{} }
	_, err := keyspace.Walk(ctx, nodes, light, none, func(p *keyspace.Page, _ struct{}) {
		at := a.o.Now()
		for i := range p.Keys {
			ob := &p.Keys[i]
			if (ob.Type != "string" && ob.Type != "hash") || ob.Idle < 0 || time.Duration(ob.Idle)*time.Second+ahead < o.IdleAfter {
				continue
			}
			if len(a.cands) >= maxCandidates {
				a.obs.Dropped++
				continue
			}
			i, ok := idx[ob.Node]
			if !ok {
				// A cluster node's walk that followed its slots to the
				// promoted replica renamed the node.
				i = slices.IndexFunc(nodes, func(n *keyspace.Node) bool { return n.Name == ob.Node })
				idx[ob.Node] = max(i, 0)
			}
			a.cands[ob.Key] = candidate{node: max(i, 0), pttl: ob.PTTL, idle: ob.Idle, at: at}
		}
	})
	if err != nil {
		return err
	}
	for i := 1; i < o.Observe; i++ {
		if o.afterLook != nil {
			o.afterLook(i)
		}
		if err := sleep(ctx, o.Interval); err != nil {
			return err
		}
		if i < o.Observe-1 {
			if err := a.recheck(ctx, nodes); err != nil {
				return err
			}
		}
	}
	a.obs.Candidates = int64(len(a.cands))
	return nil
}

func sleep(ctx context.Context, d time.Duration) error {
	t := time.NewTimer(d)
	defer t.Stop()
	select {
	case <-t.C:
		return nil
	case <-ctx.Done():
		return ctx.Err()
	}
}

// recheck re-reads every candidate's TTL and idle time (a middle
// observation) and drops those that were touched.
func (a *aggregator) recheck(ctx context.Context, nodes []*keyspace.Node) error {
	byNode := make([][]string, len(nodes))
	for k, c := range a.cands {
		byNode[c.node] = append(byNode[c.node], k)
	}
	for i, keys := range byNode {
		for len(keys) > 0 {
			batch := keys[:min(len(keys), int(a.o.Count))]
			keys = keys[len(batch):]
			p := &keyspace.Page{}
			if err := keyspace.ReadKeys(ctx, nodes[i], batch, false, p, nil); err != nil {
				return err
			}
			obs := p.Keys
			live := map[string]bool{}
			for j := range obs {
				live[obs[j].Key] = true
				if !a.orphan(&obs[j], a.cands[obs[j].Key]) {
					delete(a.cands, obs[j].Key) // touched (counted by orphan), or not idle long enough yet
				}
			}
			for _, k := range batch {
				if !live[k] {
					delete(a.cands, k) // gone: released or expired
				}
			}
		}
	}
	return nil
}

// orphan reports whether a key is still untouched since its first look and
// idle past --idle.
func (a *aggregator) orphan(now *keyspace.Key, c candidate) bool {
	elapsed := a.o.Now().Sub(c.at)
	// Untouched: its idle time grew by the whole interval (a renewal, a
	// read or a rewrite resets it).
	if now.Idle < 0 {
		return false // idle time not the key's own (a shared integer value): not proven
	}
	if time.Duration(now.Idle-c.idle)*time.Second+clockSlack < elapsed {
		a.obs.Touched++
		return false
	}
	if time.Duration(now.Idle)*time.Second < a.o.IdleAfter {
		return false
	}
	// Not renewed: the TTL only ran down (or there is none, as before).
	if c.pttl == -1 || now.PTTL == -1 {
		return c.pttl == now.PTTL
	}
	return time.Duration(now.PTTL)*time.Millisecond <= time.Duration(c.pttl)*time.Millisecond-elapsed+clockSlack
}

// one reads a single key in full (--key), routed to its node.
func (a *aggregator) one(ctx context.Context, c Conn, first *keyspace.Node) error {
	n := &keyspace.Node{Name: first.Name, Conn: c, NoTouch: first.NoTouch, PrivateIntegers: first.PrivateIntegers}
	key := a.o.Key
	fences := []string{"redisson_lock_token:{" + key + "}", key + ":fence", "fence:" + key, key + ":fencing_token"}
	var exists []*redis.IntCmd
	p := &keyspace.Page{}
	err := keyspace.ReadKeys(ctx, n, []string{key}, !a.o.NoValues, p, func(pl redis.Pipeliner) {
		for _, f := range fences {
			exists = append(exists, pl.Exists(ctx, f))
		}
	})
	if err != nil {
		return err
	}
	if len(p.Keys) == 0 {
		if p.Denied > 0 {
			return problem.System(fmt.Errorf("Redis refused key %q to this ACL user", text.Clip(key, judge.MaxShown, "...")), connect.GrantHint(""))
		}
		return problem.Inputf("Key", "does not exist (or expired): nothing to inspect").WithValue(text.Clip(key, judge.MaxShown, "..."))
	}
	for _, e := range exists {
		if e.Val() > 0 {
			a.fenceOfKey = true
		}
	}
	for _, c := range n.Denied {
		first.Deny(c)
	}
	a.stats.KeysScanned = 1
	keys := a.cfg.Page(p, a.now)
	a.add(&keys[0])
	return nil
}
