package lock

import (
	"context"
	"fmt"
	"slices"
	"time"

	"github.com/dupctl/dupctl/internal/inspect/lock/internal/judge"
	"github.com/dupctl/dupctl/internal/inspect/lock/internal/keyspace"
	"github.com/dupctl/dupctl/internal/platform/english"
	"github.com/dupctl/dupctl/internal/platform/redact"
)

// A renewed lease is no TTL outlier (internal/judge/renew.go): the keys a
// family would report far below its TTL - only those, so the scan's cost
// stays flat - are read again, in one pipeline per node and moment, a
// moment after the scan read them: when a fifth of the TTL they had is
// left (at least rereadMargin), at most rereadWait later. A key nobody
// renews is still there then, its TTL fallen; a renewer that renews
// before a fifth of the TTL is left has renewed it.

const (
	rereadWait   = time.Second           // the longest a second read waits after the first
	rereadMargin = 20 * time.Millisecond // the least time before its TTL runs out that a key is read again
	rereadBatch  = 25 * time.Millisecond // keys due this close together share a pipeline
	maxRereads   = 1000                  // keys read again per run
)

// rereadLowTTLs reads the keys far below their family's TTL again and
// takes those renewed, re-taken or gone out of the outliers; a note says
// what it found. Each key is read at its own moment: the keys whose
// moments fall within rereadBatch of each other share a pipeline per node.
func (a *aggregator) rereadLowTTLs(ctx context.Context, nodes []*keyspace.Node, data *Data) {
	var due []rereadDue
	for _, f := range a.families() {
		for _, s := range f.ShortTTLSuspects(a.o.MinConfidence) {
			ttl := time.Duration(s.PTTL) * time.Millisecond
			d := min(ttl-max(rereadMargin, ttl/5), rereadWait)
			due = append(due, rereadDue{s, s.At.Add(d)})
		}
	}
	slices.SortFunc(due, func(x, y rereadDue) int { return x.at.Compare(y.at) })
	due = due[:min(len(due), maxRereads)]
	var t rereadTally
	for len(due) > 0 {
		if sleep(ctx, time.Until(due[0].at)) != nil {
			return
		}
		cut := time.Now().Add(rereadBatch)
		k := 1
		for k < len(due) && !due[k].at.After(cut) {
			k++
		}
		wave := make([]judge.TTLSuspect, k)
		for i := range wave {
			wave[i] = due[i].s
		}
		due = due[k:]
		for i, group := range a.suspectsByNode(nodes, wave) {
			if len(group) > 0 {
				t.read(ctx, nodes[i], group, !a.o.NoValues)
			}
		}
	}
	t.notes(data)
}

// rereadDue is a suspect and when to read it again.
type rereadDue struct {
	s  judge.TTLSuspect
	at time.Time
}

// rereadTally counts what the second reads found, and how long after the
// first they came.
type rereadTally struct {
	counts         [judge.Gone + 1]int64
	minGap, maxGap time.Duration
	failed         int    // keys whose second read failed
	failure        string // why the last one did
}

// notes says what the second reads found.
func (t *rereadTally) notes(data *Data) {
	c := &t.counts
	if n := c[judge.Renewed] + c[judge.Retaken] + c[judge.Gone]; n > 0 {
		data.Notes = append(data.Notes, fmt.Sprintf("%s far below their family's TTL, read again %s after the scan read them: %s - "+
			"not TTL outliers", english.Count(n, "lock", "locks"), t.gaps(), judge.RereadText(c[judge.Renewed], c[judge.Retaken], c[judge.Gone])))
	}
	if t.failed > 0 {
		data.Notes = append(data.Notes, fmt.Sprintf("%s far below their family's TTL could not be read again (%s): counted as TTL outliers",
			english.Count(t.failed, "lock", "locks"), t.failure))
	}
}

// read reads one node's suspects again in one pipeline and records what
// each one's second read says.
func (t *rereadTally) read(ctx context.Context, n *keyspace.Node, group []judge.TTLSuspect, values bool) {
	keys := make([]string, len(group))
	for j, s := range group {
		keys[j] = s.Key
	}
	p := &keyspace.Page{}
	sent := time.Now()
	if err := keyspace.ReadKeys(ctx, n, keys, values, p, nil); err != nil {
		t.failed += len(group)
		t.failure = n.Name + ": " + redact.String(err.Error())
		return
	}
	now := make(map[string]*keyspace.Key, len(p.Keys))
	for j := range p.Keys {
		now[p.Keys[j].Key] = &p.Keys[j]
	}
	for _, s := range group {
		r := s.Judge(now[s.Key], sent)
		s.Record(r)
		t.counts[r]++
		if r == judge.StillLow {
			continue
		}
		gap := sent.Sub(s.At)
		if t.minGap == 0 || gap < t.minGap {
			t.minGap = gap
		}
		t.maxGap = max(t.maxGap, gap)
	}
}

// gaps words the time between the reads: "80ms", "80ms to 2.4s".
func (t *rereadTally) gaps() string {
	lo, hi := judge.FormatMs(t.minGap.Milliseconds()), judge.FormatMs(t.maxGap.Milliseconds())
	if lo == hi {
		return lo
	}
	return lo + " to " + hi
}

// suspectsByNode groups suspects by the node that reads their keys now: a
// walk that followed a failover renamed its node, and its keys' node names
// are the old one's. Keys of a node left unread are not read again.
func (a *aggregator) suspectsByNode(nodes []*keyspace.Node, sus []judge.TTLSuspect) [][]judge.TTLSuspect {
	idx := map[string]int{}
	for i, n := range nodes {
		if i >= len(a.walked) || a.walked[i].Unread != nil {
			continue
		}
		idx[n.Name] = i
		for _, m := range a.walked[i].Moves {
			idx[m.From] = i
		}
	}
	out := make([][]judge.TTLSuspect, len(nodes))
	for _, s := range sus {
		if i, ok := idx[s.Node]; ok {
			out[i] = append(out[i], s)
		}
	}
	return out
}

// families are the lock families, merged once the scan is over.
func (a *aggregator) families() []*judge.Tally {
	if a.final == nil {
		a.final = a.fams.Finish()
	}
	return a.final
}
