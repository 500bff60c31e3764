package lock

import (
	"context"
	"fmt"
	"time"

	"github.com/dupctl/dupctl/internal/inspect/lock/internal/judge"
	"github.com/dupctl/dupctl/internal/inspect/lock/internal/keyspace"
	"github.com/dupctl/dupctl/internal/platform/english"
	"github.com/dupctl/dupctl/internal/platform/redact"
)

// A renewed lease is no TTL outlier (internal/judge/renew.go): the keys a
// family would report far below its TTL - only those, so the scan's cost
// stays flat - are read again in one pipeline per node, a moment after the
// scan read them: just before the TTL they had would run out (so a key
// nobody renews is still there, its TTL fallen), at most rereadWait later.

const (
	rereadWait   = time.Second           // the longest a second read waits after the first
	rereadMargin = 20 * time.Millisecond // how long before its TTL runs out a key is read again
	maxRereads   = 1000                  // keys read again per run
)

// rereadLowTTLs reads the keys far below their family's TTL again and
// takes those renewed, re-taken or gone out of the outliers; a note says
// what it found.
func (a *aggregator) rereadLowTTLs(ctx context.Context, nodes []*keyspace.Node, data *Data) {
	var sus []judge.TTLSuspect
	for _, f := range a.families() {
		sus = append(sus, f.ShortTTLSuspects(a.o.MinConfidence)...)
	}
	if len(sus) == 0 {
		return
	}
	sus = sus[:min(len(sus), maxRereads)]
	var wake time.Time
	for _, s := range sus {
		d := min(max(time.Duration(s.PTTL)*time.Millisecond-rereadMargin, 0), rereadWait)
		if t := s.At.Add(d); t.After(wake) {
			wake = t
		}
	}
	if sleep(ctx, time.Until(wake)) != nil {
		return
	}
	var counts [judge.Gone + 1]int64
	byNode := a.suspectsByNode(nodes, sus)
	for i, group := range byNode {
		if len(group) == 0 {
			continue
		}
		keys := make([]string, len(group))
		for j, s := range group {
			keys[j] = s.Key
		}
		p := &keyspace.Page{}
		sent := time.Now()
		if err := keyspace.ReadKeys(ctx, nodes[i], keys, !a.o.NoValues, p, nil); err != nil {
			data.Notes = append(data.Notes, fmt.Sprintf("%s far below their family's TTL on %s could not be read again (%s): "+
				"counted as TTL outliers", english.Count(len(group), "lock", "locks"), nodes[i].Name, redact.String(err.Error())))
			continue
		}
		now := make(map[string]*keyspace.Key, len(p.Keys))
		for j := range p.Keys {
			now[p.Keys[j].Key] = &p.Keys[j]
		}
		for _, s := range group {
			r := s.Judge(now[s.Key], sent)
			s.Record(r)
			counts[r]++
		}
	}
	if n := counts[judge.Renewed] + counts[judge.Retaken] + counts[judge.Gone]; n > 0 {
		data.Notes = append(data.Notes, fmt.Sprintf("%s far below their family's TTL, read again up to %s after the scan read them: %s - "+
			"not TTL outliers", english.Count(n, "lock", "locks"), judge.FormatMs(rereadWait.Milliseconds()),
			judge.RereadText(counts[judge.Renewed], counts[judge.Retaken], counts[judge.Gone])))
	}
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
