package replay

import (
	"context"
	"fmt"
	"sort"
	"strconv"
	"strings"

	"github.com/dupctl/dupctl/internal/deadletter"
	"github.com/dupctl/dupctl/internal/replay/dlqread"
	"github.com/dupctl/dupctl/internal/replay/internal/consume"
	"github.com/dupctl/dupctl/internal/replay/journal"
)

// DestCheck is what reading one destination queue said of the publishes
// an earlier part of the run left in doubt (ReplayOptions.CheckDestination).
type DestCheck struct {
	Queue string `json:"queue"`
	// Read is how many messages the queue held and were read (and
	// requeued); Skipped says why it was not read ("" when it was).
	Read    int    `json:"read"`
	Skipped string `json:"skipped,omitempty"`
	// InDoubt were in doubt before; Found of them are there (done: their
	// DLQ copies are acked without publishing them again), Absent are not
	// while every confirmed publish of the run to that queue is (never
	// delivered: replayed). The rest stay in doubt: Unknown says why.
	InDoubt int    `json:"in_doubt"`
	Found   int    `json:"found"`
	Absent  int    `json:"absent"`
	Unknown string `json:"unknown,omitempty"`
}

// settleInDoubt reads, before a resumed part decides anything, each
// destination queue that holds publishes in doubt, for this run's copies
// (dupctl-replay-id is the run and the publish's sequence): an in-doubt
// publish whose copy is there reached it; one whose copy is not, while
// every confirmed publish of the run to that queue still is (so nothing
// consumed from it), never did. Only a queue with no consumer is read,
// non-destructively (every message is requeued, as dlq stats does): a
// consumer's work would both race the read and make a missing copy prove
// nothing. What it settles is applied to the resumed state and returned as
// journal records, for the part to write after its start record.
func (e *engine) settleInDoubt(ctx context.Context) []journal.Record {
	st := e.o.Resume
	byDest := st.InDoubtTo()
	names := make([]string, 0, len(byDest))
	for to := range byDest {
		names = append(names, to)
	}
	sort.Strings(names)
	var recs []journal.Record
	for _, to := range names {
		pubs := byDest[to]
		chk := DestCheck{Queue: to, InDoubt: len(pubs.Doubt)}
		q, ok := destQueue(to)
		if !ok {
			chk.Skipped = "an exchange: its copies go to every queue bound for the key"
			e.res.DestinationChecks = append(e.res.DestinationChecks, chk)
			continue
		}
		chk.Queue = q
		found, why := e.readDestination(ctx, q, &chk)
		if why != "" {
			chk.Skipped = why
			e.res.DestinationChecks = append(e.res.DestinationChecks, chk)
			continue
		}
		whole := true
		for _, seq := range pubs.Confirmed {
			whole = whole && found[seq]
		}
		for _, seq := range pubs.Doubt {
			switch {
			case found[seq]:
				chk.Found++
				recs = append(recs, st.Resolve(seq, true))
			case whole:
				chk.Absent++
				recs = append(recs, st.Resolve(seq, false))
			}
		}
		if !whole && chk.Found < chk.InDoubt {
			chk.Unknown = "some of the run's confirmed publishes are no longer in the queue (consumed): a copy missing from it proves nothing"
		}
		e.res.DestinationChecks = append(e.res.DestinationChecks, chk)
	}
	return recs
}

// readDestination reads queue q and returns the sequences of this run's
// publishes it holds, or why it was not read (or not whole).
func (e *engine) readDestination(ctx context.Context, q string, chk *DestCheck) (map[int64]bool, string) {
	conn, err := e.d.Dial(ctx, "read")
	if err != nil {
		return nil, "not read: " + err.Error()
	}
	st, err := consume.InspectQueue(conn, q)
	conn.Close()
	switch {
	case err != nil:
		return nil, "not read: " + err.Error()
	case st.Consumers > 0:
		return nil, fmt.Sprintf("not read: %d consumers attached (their work races the read, and a copy they consumed is missing)",
			st.Consumers)
	}
	found := map[int64]bool{}
	prefix := e.o.Rewrite.Run + "-"
	res, err := dlqread.Scan(ctx, dlqread.Deps{Dial: e.d.Dial, Now: e.d.Now}, dlqread.Options{Queue: q, Window: 500},
		func(m *deadletter.Message) error {
			id, _ := m.Props.Headers[deadletter.HeaderReplayID].(string)
			if rest, ok := strings.CutPrefix(id, prefix); ok {
				if seq, err := strconv.ParseInt(rest, 10, 64); err == nil {
					found[seq] = true
				}
			}
			return nil
		})
	chk.Read = res.Read
	switch {
	case err != nil:
		return nil, "not read whole: " + err.Error()
	case res.Lost != "" || res.Read < res.Target || res.AtStart.Consumers > 0:
		return nil, fmt.Sprintf("not read whole: %d of its %d messages read", res.Read, res.Target)
	}
	return found, ""
}

// destQueue is the queue a journaled destination names when it is one
// reached through the default exchange (classify.Target.String).
func destQueue(to string) (string, bool) {
	rest, ok := strings.CutPrefix(to, "queue ")
	if !ok {
		return "", false
	}
	q, ok := strings.CutSuffix(rest, " (default exchange)")
	if !ok {
		return "", false
	}
	return q, true
}
