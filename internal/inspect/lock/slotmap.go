package lock

import (
	"slices"

	"github.com/dupctl/dupctl/internal/inspect/lock/internal/keyspace"
)

// SlotsRead is what a cluster scan read of the hash slots one master
// served when it began: the nodes their keys were read on (the master,
// then each node the walk moved to after a failure: the replica promoted
// in its place, or the same node once its cluster was up again), and
// whether every key there was read. Slots no master served are a row of
// their own, with no master.
type SlotsRead struct {
	Master string      `json:"master"`
	Slots  []SlotRange `json:"slots"`
	ReadOn []string    `json:"read_on"`
	Read   bool        `json:"read"`
	// Why says why they were not all read.
	Why string `json:"why,omitempty"`
}

// clusterSlots is the number of hash slots of a Redis Cluster.
const clusterSlots = 16384

// slotMap is which slots each master's walk read; nodes and walked are in
// the scan's order, names the nodes' names before the walk (a walk that
// moves renames its node).
func slotMap(names []string, nodes []*keyspace.Node, walked []keyspace.NodeResult) []SlotsRead {
	slotted := slices.ContainsFunc(nodes, func(n *keyspace.Node) bool { return len(n.Slots) > 0 })
	if len(walked) != len(nodes) || len(names) != len(nodes) || !slotted {
		return []SlotsRead{}
	}
	out := make([]SlotsRead, 0, len(nodes)+1)
	var served []SlotRange
	for i, n := range nodes {
		r := SlotsRead{Master: names[i], Slots: n.Slots, ReadOn: []string{names[i]}, Read: walked[i].Unread == nil}
		if r.Slots == nil {
			r.Slots = []SlotRange{}
		}
		for _, m := range walked[i].Moves {
			if !slices.Contains(r.ReadOn, m.To) {
				r.ReadOn = append(r.ReadOn, m.To)
			}
		}
		if u := walked[i].Unread; u != nil {
			r.Why = u.Why
		}
		served = append(served, n.Slots...)
		out = append(out, r)
	}
	if gaps := unserved(served); len(gaps) > 0 {
		out = append(out, SlotsRead{Slots: gaps, ReadOn: []string{},
			Why: "no master served them when the scan began (the cluster does not cover every slot): no key there could be read"})
	}
	return out
}

// unserved are the slots of 0-16383 in none of rs.
func unserved(rs []SlotRange) []SlotRange {
	rs = slices.Clone(rs)
	slices.SortFunc(rs, func(a, b SlotRange) int { return int(a.Start - b.Start) })
	var out []SlotRange
	next := int64(0)
	for _, r := range rs {
		if r.Start > next {
			out = append(out, SlotRange{Start: next, End: r.Start - 1})
		}
		next = max(next, r.End+1)
	}
	if next < clusterSlots {
		out = append(out, SlotRange{Start: next, End: clusterSlots - 1})
	}
	return out
}
