package sim

import "slices"

// shrink looks for a shorter schedule that still breaks invariant v,
// starting from a failing one. Passes, repeated until none helps:
//
//  1. drop a whole worker (its actions, and the worker),
//  2. drop a whole message (a job and its duplicates),
//  3. drop one fault,
//  4. drop one step,
//
// each checked by a lenient replay (a step that is no longer possible is
// skipped, the run is completed by the default policy). A candidate is
// kept only if it still breaks v and is not longer, so the result is never
// longer than the input.
func shrink(cfg Config, seed uint64, actions []Action, v Violation) (Config, []Action) {
	best, bestCfg := canon(cfg, seed, actions, v)
	if best == nil {
		return cfg, actions
	}
	for changed := true; changed; {
		changed = false
		// 1. drop a worker
		for w := bestCfg.Workers - 1; w >= 0 && bestCfg.Workers > 1; w-- {
			c := bestCfg
			c.Workers--
			if cand, ok := try(c, seed, dropWorker(best, w), v, best); ok {
				best, bestCfg, changed = cand, c, true
			}
		}
		// 2. drop a message
		for j := bestCfg.Jobs - 1; j >= 0 && bestCfg.Jobs > 1; j-- {
			c := bestCfg
			c.Jobs--
			c.Keys = min(c.Keys, c.Jobs)
			if cand, ok := try(c, seed, dropJob(best, j), v, best); ok {
				best, bestCfg, changed = cand, c, true
			}
		}
		// 3. drop a fault, 4. drop a step
		for _, faults := range []bool{true, false} {
			for i := len(best) - 1; i >= 0; i-- {
				if i >= len(best) || best[i].isFault() != faults {
					continue
				}
				if cand, ok := try(bestCfg, seed, slices.Delete(slices.Clone(best), i, i+1), v, best); ok {
					best, changed = cand, true
				}
			}
		}
	}
	return bestCfg, best
}

// canon replays the input leniently so that the schedule compared is the
// one that actually runs.
func canon(cfg Config, seed uint64, actions []Action, v Violation) ([]Action, Config) {
	e := &engine{cfg: &cfg}
	got, done, _ := e.replay(seed, actions, false, v.Has(VDuplicate))
	if !got.Has(v) {
		return nil, cfg
	}
	return done, cfg
}

// try keeps a candidate if it still breaks v and is shorter than best, or
// as long with fewer faults.
func try(cfg Config, seed uint64, actions []Action, v Violation, best []Action) ([]Action, bool) {
	e := &engine{cfg: &cfg}
	got, done, _ := e.replay(seed, actions, false, v.Has(VDuplicate))
	if !got.Has(v) || len(done) > len(best) {
		return nil, false
	}
	if len(done) == len(best) && !shorterFaults(done, best) {
		return nil, false
	}
	return done, true
}

// shorterFaults prefers, at equal length, a schedule with fewer faults.
func shorterFaults(a, b []Action) bool {
	count := func(s []Action) int {
		n := 0
		for _, x := range s {
			if x.isFault() {
				n++
			}
		}
		return n
	}
	return count(a) < count(b)
}

func dropWorker(actions []Action, w int) []Action {
	var out []Action
	for _, a := range actions {
		switch a.Kind() {
		case aDup, aTick, aStop:
			out = append(out, a)
		default:
			switch {
			case a.Arg() == w:
			case a.Arg() > w:
				out = append(out, a-1) // the worker is the low byte
			default:
				out = append(out, a)
			}
		}
	}
	return out
}

func dropJob(actions []Action, j int) []Action {
	var out []Action
	for _, a := range actions {
		if a.Kind() == aDup {
			switch {
			case a.job() == j:
				continue
			case a.job() > j:
				a = act(aDup, a.job()-1)
			}
		}
		out = append(out, a)
	}
	return out
}
