package simulate

import (
	"fmt"
	"regexp"
	"slices"
	"strings"

	"github.com/dupctl/dupctl/internal/cause"
	"github.com/dupctl/dupctl/internal/platform/report"
	"github.com/dupctl/dupctl/internal/sim"
)

// evidence is what a timeline shows about why its side effect ran twice:
// the cause its events name, tried in the causes' precedence, and the
// events that decide it; the picture draws those with a ring and the
// cause above it. It reads the events the simulator wrote; it names no
// cause the events do not show.
type evidence struct {
	tl         *sim.Timeline
	rule       *cause.Cause
	decisive   map[int]bool // event index -> the cause rests on it
	keyChanged map[int]bool
}

var (
	idemKey    = regexp.MustCompile(`(?:WHERE key=|job:status:|INSERT )(\S+)`)
	ofWorker   = regexp.MustCompile(`of (W\d+)`)
	lockKeyRef = regexp.MustCompile(`SET (\S+) NX`)
)

func readEvidence(tl *sim.Timeline) *evidence {
	ev := &evidence{tl: tl, decisive: map[int]bool{}, keyChanged: map[int]bool{}}
	first := ""
	for i, e := range tl.Events {
		if e.Kind != "check" && e.Kind != "claim" {
			continue
		}
		if m := idemKey.FindStringSubmatch(e.Text); m != nil {
			if first == "" {
				first = m[1]
			} else if m[1] != first {
				ev.keyChanged[i] = true
			}
		}
	}
	dup := -1
	for i, e := range tl.Events {
		if e.Kind == "duplicate-effect" {
			dup = i
			break
		}
	}
	if dup < 0 {
		return ev
	}
	ev.decisive[dup] = true
	if idx := ev.failover(dup); len(idx) > 0 {
		// A lock its store lost: the picture rings the failover and the
		// second acquisition.
		ev.rule = &cause.LockFailover
		for _, i := range idx {
			ev.decisive[i] = true
		}
		return ev
	}
	for _, try := range []struct {
		c    *cause.Cause
		find func(*evidence, int) []int
	}{
		{&cause.UnstableKey, (*evidence).unstableKey}, {&cause.StaleCache, (*evidence).staleCache},
		{&cause.UnlockNoToken, (*evidence).foreignDel}, {&cause.LockExpiry, (*evidence).expiry},
		{&cause.LockKeyJobID, (*evidence).twoLockKeys}, {&cause.NonAtomicCommit, (*evidence).uncommitted},
		{&cause.Redelivery, (*evidence).redelivered},
	} {
		if idx := try.find(ev, dup); len(idx) > 0 {
			ev.rule = try.c
			for _, i := range idx {
				ev.decisive[i] = true
			}
			return ev
		}
	}
	ev.rule = &cause.Race
	for i, e := range tl.Events[:dup] {
		if e.Kind == "receive" {
			ev.decisive[i] = true
		}
	}
	return ev
}

// before are the indexes of the events before the duplicate that match.
func (ev *evidence) before(dup int, match func(sim.Event) bool) []int {
	var out []int
	for i, e := range ev.tl.Events[:dup] {
		if match(e) {
			out = append(out, i)
		}
	}
	return out
}

// unstableKey: a check asked about another idempotency key than the
// first one (readEvidence found the changes).
func (ev *evidence) unstableKey(dup int) []int {
	var out []int
	for i := range ev.keyChanged {
		if i < dup {
			out = append(out, i)
		}
	}
	slices.Sort(out)
	return out
}

func (ev *evidence) staleCache(dup int) []int {
	firstEffect := ev.firstEffect()
	return ev.before(dup, func(e sim.Event) bool {
		return e.Kind == "check" && strings.Contains(e.Text, "(cache)") && strings.Contains(e.Text, "proceed") && firstEffect >= 0 &&
			e.T >= ev.tl.Events[firstEffect].T && e.Step > ev.tl.Events[firstEffect].Step
	})
}

func (ev *evidence) firstEffect() int {
	for i, e := range ev.tl.Events {
		if e.Kind == "effect" && strings.Contains(e.Text, "= 1") {
			return i
		}
	}
	return -1
}

func (ev *evidence) foreignDel(dup int) []int {
	return ev.before(dup, func(e sim.Event) bool { return e.Kind == "unlock" && strings.Contains(e.Text, "deleted the lock of") })
}

// failover: a failover took a lock before the duplicate and a worker
// other than its holder acquired the key after it.
func (ev *evidence) failover(dup int) []int {
	for i, e := range ev.tl.Events[:dup] {
		if e.Kind != "failover" {
			continue
		}
		holder := ofWorker.FindStringSubmatch(e.Text)
		for j := i + 1; j < dup; j++ {
			n := ev.tl.Events[j]
			if n.Kind == "lock" && strings.Contains(n.Text, "-> OK") && (holder == nil || n.Lane != holder[1]) {
				return []int{i, j}
			}
		}
	}
	return nil
}

// expiry: a lease expired before the duplicate and its key was taken by
// a worker other than its holder.
func (ev *evidence) expiry(dup int) []int {
	var out []int
	for i, e := range ev.tl.Events[:dup] {
		if e.Kind != "expire" {
			continue
		}
		holder := ofWorker.FindStringSubmatch(e.Text)
		for j := i + 1; j < dup; j++ {
			n := ev.tl.Events[j]
			if n.Kind == "lock" && strings.Contains(n.Text, "-> OK") && (holder == nil || n.Lane != holder[1]) {
				out = append(out, i, j)
				break
			}
		}
	}
	return out
}

// twoLockKeys: the two side effects' workers took locks of different keys.
func (ev *evidence) twoLockKeys(dup int) []int {
	keys := map[string]int{}
	for i, e := range ev.tl.Events[:dup] {
		if e.Kind == "lock" && strings.Contains(e.Text, "-> OK") {
			if m := lockKeyRef.FindStringSubmatch(e.Text); m != nil {
				if _, ok := keys[m[1]]; !ok {
					keys[m[1]] = i
				}
			}
		}
	}
	if len(keys) < 2 {
		return nil
	}
	var out []int
	for _, i := range keys {
		out = append(out, i)
	}
	slices.Sort(out)
	return out
}

// uncommitted: the status was overwritten or not yet committed when the
// second run checked.
func (ev *evidence) uncommitted(dup int) []int {
	return ev.before(dup, func(e sim.Event) bool {
		return e.Kind == "mark-failed" && strings.Contains(e.Text, "overwrote SUCCEEDED")
	})
}

// redelivered: the duplicate's delivery was a redelivery, and what made
// the broker redeliver.
func (ev *evidence) redelivered(dup int) []int {
	lane := ev.tl.Events[dup].Lane
	for i := dup - 1; i >= 0; i-- {
		e := ev.tl.Events[i]
		if e.Lane != lane || e.Kind != "receive" {
			continue
		}
		if !strings.Contains(e.Text, "redelivered") {
			return nil
		}
		out := []int{i}
		for j := i - 1; j >= 0; j-- {
			if k := ev.tl.Events[j].Kind; k == "crash" || k == "drop" || k == "ack-timeout" {
				return append(out, j)
			}
		}
		return out
	}
	return nil
}

// cause is the picture's cause line: the code and title the evidence
// names, then the scenario's sentence and the deciding steps.
func (ev *evidence) cause(why string) *report.Cause {
	if ev.rule == nil {
		return nil
	}
	var steps []string
	for i, e := range ev.tl.Events {
		if ev.decisive[i] && e.Kind != "duplicate-effect" && len(steps) < 3 {
			steps = append(steps, fmt.Sprintf("step %d (t=%s, %s) %s", e.Step, sim.FormatMillis(e.T), e.Lane, e.Text))
		}
	}
	s := why
	if len(steps) > 0 {
		s = strings.TrimSpace(s + " Deciding: " + strings.Join(steps, "; ") + ".")
	}
	return &report.Cause{Code: ev.rule.Code, Title: ev.rule.Title, Sentence: s}
}

// mark is one event as the picture draws it: its glyph by what the event
// decides, a few words of its answer, a ring when the cause rests on it.
func (ev *evidence) mark(e sim.Event) report.Mark {
	i := ev.index(e)
	m := report.Mark{At: e.T, Kind: report.MarkOther,
		Title: fmt.Sprintf("step %d t=%s %s: %s", e.Step, sim.FormatMillis(e.T), e.Lane, e.Text),
		Link:  stepLink(e), Seq: e.Step, Evidence: ev.decisive[i]}
	answer := ""
	if _, a, ok := strings.Cut(e.Text, "-> "); ok {
		answer = a
	}
	switch e.Kind {
	case "receive":
		if strings.Contains(e.Text, "redelivered") {
			m.Kind, m.Label = report.MarkRedelivery, "redelivered"
		}
	case "lock":
		if strings.HasPrefix(answer, "busy") {
			m.Kind, m.Label = report.MarkLockFailed, "busy"
		}
	case "unlock":
		if strings.Contains(answer, "deleted the lock of") {
			m.Kind, m.Label = report.MarkForeignDel, "DEL of "+strings.TrimPrefix(answer, "deleted the lock of ")+"'s lock"
		}
	case "check", "claim":
		m.Kind, m.Label = report.MarkCheck, checkAnswer(answer)
		if strings.Contains(e.Text, "(cache)") {
			m.Kind, m.Label = report.MarkCacheRead, "cache: "+m.Label
		}
		if ev.keyChanged[i] {
			m.Kind = report.MarkKeyChanged
			if k := idemKey.FindStringSubmatch(e.Text); k != nil {
				m.Label = "key " + k[1]
			}
		}
	case "effect":
		m.Kind = report.MarkEffect
	case "duplicate-effect":
		m.Kind, m.Title = report.MarkDuplicate, "SECOND SIDE EFFECT: "+m.Title
	case "crash", "drop":
		m.Kind = report.MarkCrash
	case "pause":
		m.Kind = report.MarkPause
	case "ack":
		m.Kind = report.MarkAck
	case "requeue":
		m.Kind, m.Label = report.MarkRedelivery, "requeued"
	case "expire", "ack-timeout", "failover":
		m.Kind, m.Label = report.MarkExpire,
			map[string]string{"expire": "expired", "ack-timeout": "ack deadline", "failover": "lost in failover"}[e.Kind]
	case "duplicate":
		m.Label = "sent again"
	}
	return m
}

func (ev *evidence) index(e sim.Event) int {
	for i := range ev.tl.Events {
		if ev.tl.Events[i] == e {
			return i
		}
	}
	return -1
}

// checkAnswer is an idempotency check's answer in a word or two.
func checkAnswer(a string) string {
	word, _, _ := strings.Cut(a, ":")
	word, _, _ = strings.Cut(word, " (")
	if strings.Contains(a, "skip") || strings.Contains(a, "treated as done") {
		return word + ": skip"
	}
	return word
}
