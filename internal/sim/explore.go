package sim

import (
	"context"
	"slices"
)

// ExhaustiveResult is what an exhaustive exploration found.
type ExhaustiveResult struct {
	States      int       `json:"states"`
	Transitions int       `json:"transitions"`
	Terminals   int       `json:"terminals"`
	Found       Violation `json:"-"`
	Complete    bool      `json:"complete"` // false when the state limit stopped it
	// Counterexamples: the first schedule found for each violation.
	Examples map[Violation][]Action `json:"-"`
	// Reached: every fault point and fault kind fired somewhere.
	Reached Coverage `json:"-"`
}

// Coverage records which faults fired at which points during exploration:
// a scenario whose fault never fires proves nothing.
type Coverage struct {
	Crash, Pause uint16 // worker.Points bitsets where they fired
	Failover     uint16
	Drop, Dup    bool
	Fail         bool
	LockExpiry   bool
	AckTimeout   bool
}

func (c *Coverage) note(e *engine, a Action) {
	switch a.Kind() {
	case aCrash:
		c.Crash |= uint16(e.s.W[a.Arg()].At & e.cfg.Faults.CrashAt)
	case aPause:
		c.Pause |= uint16(e.s.W[a.Arg()].At & e.cfg.Faults.PauseAt)
	case aFailover:
		c.Failover |= uint16(e.s.W[a.Arg()].At & e.cfg.Faults.FailoverAt)
	case aDrop:
		c.Drop = true
	case aDup:
		c.Dup = true
	case aFail:
		c.Fail = true
	}
}

// exhaustive explores every interleaving and fault placement of the
// config's small scope by depth-first search over states, skipping states
// already seen (64-bit fingerprints). maxStates bounds it.
func (e *engine) exhaustive(ctx context.Context, maxStates int) ExhaustiveResult {
	e.reset(0)
	return e.exhaustiveFrom(ctx, maxStates, nil)
}

// exhaustiveFrom explores everything reachable from the current state,
// which the schedule prefix led to.
func (e *engine) exhaustiveFrom(ctx context.Context, maxStates int, prefix []Action) ExhaustiveResult {
	res := ExhaustiveResult{Examples: map[Violation][]Action{}, Complete: true}
	visited := map[uint64]struct{}{}
	var saved []State
	var bufs [][]Action
	path := slices.Clone(prefix)
	var dfs func(depth int)
	dfs = func(depth int) {
		if !res.Complete {
			return
		}
		fp := e.s.fingerprint()
		if _, seen := visited[fp]; seen {
			return
		}
		visited[fp] = struct{}{}
		res.States++
		if res.States >= maxStates || (res.States&1023 == 0 && ctx.Err() != nil) {
			res.Complete = false
			return
		}
		if depth >= len(saved) {
			saved = append(saved, State{})
			bufs = append(bufs, nil)
		}
		buf := e.enabled(bufs[depth][:0])
		bufs[depth] = buf
		if firstProgress(buf) == 0 {
			res.Terminals++
			if v := e.violations(true); v != 0 {
				e.found(&res, v, path)
			}
		}
		if int(e.s.Steps) >= e.cfg.MaxSteps {
			e.found(&res, VLivelock, path)
			return
		}
		saved[depth].copyFrom(&e.s)
		for i := 0; i < len(bufs[depth]); i++ {
			a := bufs[depth][i]
			if a.Kind() == aStop {
				continue
			}
			res.Transitions++
			res.Reached.note(e, a)
			if a.Kind() == aTick {
				before := e.s.LockExpiries
				beforeAck := e.s.AckTimeouts
				e.apply(a)
				res.Reached.LockExpiry = res.Reached.LockExpiry || e.s.LockExpiries > before
				res.Reached.AckTimeout = res.Reached.AckTimeout || e.s.AckTimeouts > beforeAck
			} else {
				e.apply(a)
			}
			path = append(path, a)
			v := e.violations(false)
			if v != 0 {
				e.found(&res, v, path)
			}
			if !v.Has(VDuplicate) {
				// A duplicate ends its branch; anything else (a non-owner
				// unlock) is recorded and the run goes on, since the
				// duplicate it enables comes later.
				dfs(depth + 1)
			}
			path = path[:len(path)-1]
			e.s.copyFrom(&saved[depth])
		}
	}
	dfs(0)
	return res
}

func (e *engine) found(res *ExhaustiveResult, v Violation, path []Action) {
	res.Found |= v
	for _, one := range []Violation{VDuplicate, VLoss, VNonOwnerUnlock, VLivelock} {
		if v.Has(one) {
			if old, ok := res.Examples[one]; !ok || len(path) < len(old) {
				res.Examples[one] = slices.Clone(path)
			}
		}
	}
}

// exhaustiveShard explores part K of N: the branches of the first choice
// with more than one option are dealt round-robin to the shards.
func (e *engine) exhaustiveShard(ctx context.Context, maxStates int, sh Shard) ExhaustiveResult {
	if sh.N <= 1 {
		return e.exhaustive(ctx, maxStates)
	}
	// Find the first branching point along the deterministic prefix.
	e.reset(0)
	var prefix []Action
	for {
		buf := e.enabled(nil)
		var live []Action
		for _, a := range buf {
			if a.Kind() != aStop {
				live = append(live, a)
			}
		}
		if len(live) != 1 {
			total := ExhaustiveResult{Examples: map[Violation][]Action{}, Complete: true}
			for i, a := range live {
				if !sh.mine(i) {
					continue
				}
				sub := &engine{cfg: e.cfg}
				sub.replayPrefix(append(prefix[:len(prefix):len(prefix)], a))
				r := sub.exhaustiveFrom(ctx, maxStates, append(prefix[:len(prefix):len(prefix)], a))
				total.merge(r)
			}
			return total
		}
		prefix = append(prefix, live[0])
		e.apply(live[0])
	}
}

func (e *engine) replayPrefix(actions []Action) {
	e.reset(0)
	for _, a := range actions {
		e.enabled(nil)
		e.apply(a)
	}
}

func (r *ExhaustiveResult) merge(o ExhaustiveResult) {
	r.States += o.States
	r.Transitions += o.Transitions
	r.Terminals += o.Terminals
	r.Found |= o.Found
	r.Complete = r.Complete && o.Complete
	for v, ex := range o.Examples {
		if old, ok := r.Examples[v]; !ok || len(ex) < len(old) {
			r.Examples[v] = ex
		}
	}
	c := &r.Reached
	c.Crash |= o.Reached.Crash
	c.Pause |= o.Reached.Pause
	c.Failover |= o.Reached.Failover
	c.Drop = c.Drop || o.Reached.Drop
	c.Dup = c.Dup || o.Reached.Dup
	c.Fail = c.Fail || o.Reached.Fail
	c.LockExpiry = c.LockExpiry || o.Reached.LockExpiry
	c.AckTimeout = c.AckTimeout || o.Reached.AckTimeout
}
