package chaos_test

import (
	"slices"
	"testing"

	"github.com/dupctl/dupctl/internal/cause"
	"github.com/dupctl/dupctl/internal/sim/chaos"
)

// TestRunSpansAndDecidingEvents: what a run's picture is drawn from is
// what the proxies saw. Every delivery and lock span names its own event
// on its copy's lane, the duplicate's cause names the events it rests on
// (for a redelivery: the fault, the unacked delivery's end and the
// redelivered delivery), and with the effects counted in the workers'
// output each effect line is placed on the copy that printed it, at the
// time it arrived.
func TestRunSpansAndDecidingEvents(t *testing.T) {
	for _, effects := range []string{chaos.EffectsSQL, chaos.EffectsOutput} {
		t.Run(effects, func(t *testing.T) {
			f := setup(t, "crash", "IDEM=none")
			f.opts.At = []chaos.Point{chaos.BeforeAck}
			f.opts.Keys = 1
			if effects == chaos.EffectsOutput {
				f.opts.EffectsSQL, f.opts.EffectsLog = "", chaos.WorkerOutput
			}
			res := f.run(t)
			rr := res.Runs[0]
			if rr.EffectsFrom != effects || rr.Start.IsZero() {
				t.Fatalf("effects from %q (want %q), start %v", rr.EffectsFrom, effects, rr.Start)
			}
			bySeq := map[int]chaos.Event{}
			for _, e := range rr.Events {
				bySeq[e.Seq] = e
			}
			for _, d := range rr.Deliveries {
				if e := bySeq[d.Seq]; e.Kind != "deliver" || e.Lane != d.Lane || e.Key != d.Key || e.T != d.From {
					t.Errorf("delivery %+v names event %+v", d, e)
				}
				if e := bySeq[d.EndSeq]; d.End != "" && d.End != "auto-ack" && (e.Kind != d.End || e.T != d.To) {
					t.Errorf("delivery %+v ends at event %+v", d, e)
				}
			}
			for _, l := range rr.Leases {
				if e := bySeq[l.Seq]; e.Kind != "lock" || e.Lane != l.Lane || e.T != l.From {
					t.Errorf("lease %+v names event %+v", l, e)
				}
			}
			kv := rr.Keys[0]
			if kv.Outcome != chaos.OutcomeDup || kv.Cause != cause.Redelivery.Code {
				t.Fatalf("key %+v, want a redelivery duplicate\n%s", kv, describe(res))
			}
			kinds := map[string]int{}
			for _, s := range kv.Deciding {
				e := bySeq[s]
				if e.Fault {
					kinds["fault"]++
				} else {
					kinds[e.Kind]++
				}
			}
			if kinds["fault"] != 1 || kinds["returned"] != 1 || kinds["deliver"] != 1 {
				t.Errorf("deciding events %v: want the fault, the unacked delivery's end and the redelivery\n%s", kinds, describe(res))
			}
			if effects == chaos.EffectsSQL {
				if rr.Effects != nil {
					t.Errorf("effect lines %+v with the effects query", rr.Effects)
				}
				return
			}
			if len(rr.Effects) != kv.Effects {
				t.Fatalf("%d effect lines placed, %d effects counted", len(rr.Effects), kv.Effects)
			}
			var lanes []string
			for _, el := range rr.Effects {
				if el.T == nil || el.When != chaos.WhenOutput || el.Lane == "" || *el.T > rr.ElapsedMs {
					t.Errorf("effect line %+v: want its arrival time and copy", el)
				}
				lanes = append(lanes, el.Lane)
			}
			// The killed process printed its effect before the kill; the
			// process the broker redelivered to (another copy, or the
			// killed copy's restart) printed the second.
			if len(slices.Compact(slices.Sorted(slices.Values(lanes)))) != 2 {
				t.Errorf("effects printed by %v: want two copies", lanes)
			}
		})
	}
}
