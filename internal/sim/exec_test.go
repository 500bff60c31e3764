package sim

import (
	"reflect"
	"testing"

	"github.com/dupctl/dupctl/internal/worker"
)

// TestExecMatchesInterpret holds exec's switch to worker.Interpret: at every
// operation of random schedules of every scenario and profile, the world
// after exec equals the world after the same operation driven through
// worker.Interpret (the Observer interface), failed or not; every operation
// must come up.
func TestExecMatchesInterpret(t *testing.T) {
	seen := map[worker.Op]bool{}
	for _, sc := range Scenarios() {
		for _, p := range worker.Profiles() {
			cfg := sc.Config(p)
			cfg.Jobs, cfg.Keys, cfg.Workers = 4, 3, 3
			e := &engine{cfg: &cfg}
			fast, ref := &engine{cfg: &cfg}, &engine{cfg: &cfg}
			for seed := uint64(0); seed < 20; seed++ {
				var trace []Action
				e.runRandom(seed, false, &trace, nil)
				e.reset(seed)
				for i, a := range trace {
					if w := a.Arg(); (a.Kind() == aStep || a.Kind() == aFail) && e.s.W[w].Msg >= 0 {
						op, fail := e.s.W[w].Op, a.Kind() == aFail
						seen[op] = true
						fast.reset(seed)
						fast.s.copyFrom(&e.s)
						fast.exec(w, &fast.s.W[w], fail)
						ref.reset(seed)
						ref.s.copyFrom(&e.s)
						interpretRef(ref, w, fail)
						if !reflect.DeepEqual(fast.s, ref.s) {
							t.Fatalf("%s/%s seed %d action %d: W%d %s (fail %v): exec left\n%+v\nworker.Interpret left\n%+v",
								sc.Name, p.Name, seed, i, w+1, op, fail, fast.s, ref.s)
						}
					}
					e.apply(a)
				}
			}
		}
	}
	for op := worker.OpDone + 1; op < worker.NumOps; op++ {
		if !seen[op] {
			t.Errorf("%s never came up", op)
		}
	}
}

// interpretRef is exec with the operation carried out by worker.Interpret.
func interpretRef(e *engine, w int, fail bool) {
	ws := &e.s.W[w]
	st := worker.Step{Op: ws.Op}
	if err := worker.Interpret(&executor{e: e, w: w, ws: ws, fail: fail}, &st); err != nil {
		panic(err)
	}
	next, at := e.flow.step(&ws.Flow, st.Op, st.Result)
	ws.At = at
	if next == worker.OpDone {
		ws.Msg, ws.Op, ws.At, ws.Token, ws.LockID, ws.IdemKey = -1, worker.OpDone, 0, 0, -1, -1
		return
	}
	ws.Op = next
}
