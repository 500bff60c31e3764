package replay

import (
	"context"
	"fmt"
	"time"

	"github.com/dupctl/dupctl/internal/platform/english"
	"github.com/dupctl/dupctl/internal/replay/dlqread"
	"github.com/dupctl/dupctl/internal/replay/internal/consume"
)

// readBackWait bounds the wait, after the consumer's connection was lost,
// for the DLQ to show the lost channel's consumer gone (its messages back).
const readBackWait = 10 * time.Second

// countLostAcks settles ack_lost after the consumer's connection went
// away. Which of the DLQ acks a lost channel sent were applied cannot be
// told from the client: an ack has no reply, the broker drops what it had
// not read off the socket, and a quorum queue's channel drops the acks it
// stashed client-side (consume/settle.go). The DLQ's depth can tell how
// many: once the lost consumer is gone, every message it took and did not
// have acked is back, so with no other consumer at the start and nothing
// arriving during the run, depth = count at the start - acks applied.
//
// A node killed under the run leaves its consumers counted (a quorum
// queue marks them suspected down until the node is back) and, for those
// it had cancelled (a restart), their checked-out messages stranded with
// them (consume.Consumer.Stranded). The depth then bounds the lost acks
// instead of counting them: at most depth's count plus what can be
// stranded. That bound goes to the journal's end record
// (journal.Record.AcksLostMax), so a resume holds at most that many
// identical copies in doubt for this part's acks.
//
// It reports whether the DLQ showed every ack sent applied (the journal's
// end record then says so, and a resume treats them as done). Without a
// read-back, ack_lost is the acks that certainly never left and
// ack_unknown the ones sent and not seen applied: an upper bound, never a
// count that leaves copies out.
func (e *engine) countLostAcks(ctx context.Context) bool {
	res := e.res
	c := &res.Counts
	sent := e.src.acked()
	c.AckLost, c.AckUnknown = e.unsentAcks, max(0, sent-e.unsentAcks)
	if c.AckUnknown == 0 {
		res.AckLostExact = true
		return true
	}
	why := e.lostAckBlocker()
	if why == "" {
		rb := e.readBackAcks(ctx, sent)
		switch {
		case rb.why != "":
			why = rb.why
		case rb.stranded == 0:
			// A count: the journal keeps it as the bound, so a resume holds
			// no more identical copies in doubt than were lost.
			c.AckLost, c.AckUnknown, res.AckLostExact = rb.lost, 0, true
			e.acksLostMax = rb.lost - e.unsentAcks
			return rb.lost == e.unsentAcks
		default:
			most := min(sent, rb.lost+rb.stranded)
			c.AckUnknown = max(0, most-e.unsentAcks)
			if c.AckUnknown == 0 {
				res.AckLostExact = true
				return true
			}
			e.acksLostMax = c.AckUnknown
			why = fmt.Sprintf("the lost node's %s were still counted when the DLQ was read back, so its depth bounds the lost acks "+
				"instead of counting them: at most %d (%d by the depth, and %d deliveries a killed node can strand)",
				english.Count(rb.ghosts, "consumer", "consumers"), most, rb.lost, rb.stranded)
		}
	}
	res.AckLostWhy = why
	return false
}

// countSurplusAcks reads the DLQ's depth once the run settled on a
// consumer channel that stayed open: with nothing arriving and no other
// consumer, it holds the count at the start less the acks sent. More is
// acks lost all the same - a quorum queue whose leader moved under the
// channel was seen to drop 88 of 4,000 (RabbitMQ 3.10.8; issue 39: the
// run said it left nothing and exited 0, those copies both at the
// destination and in the DLQ). They are counted as ack_lost, bound the
// journal's end record for a resume, and it reports whether there were.
func (e *engine) countSurplusAcks(end dlqread.QueueState) bool {
	// After a killed node, what its cancelled consumers stranded may come
	// back during this part: messages it did not read, not acks it lost
	// (the run's end check reads them again).
	ghosts := e.o.after != nil && e.res.AtStart.Consumers > 0
	if !e.o.Yes || e.src.acked() == 0 || ghosts || e.lostAckBlocker() != "" {
		return false
	}
	c := &e.res.Counts
	lost := end.Messages - (e.res.AtStart.Messages - e.src.acked())
	if lost <= max(c.AckLost, e.unsentAcks) {
		return false
	}
	c.AckLost = min(lost, e.src.acked())
	e.acksLostMax = max(0, c.AckLost-e.unsentAcks)
	return e.acksLostMax > 0
}

// lostAckBlocker says why the DLQ's depth cannot count the lost acks
// ("" when it can).
func (e *engine) lostAckBlocker() string {
	c := e.res.Counts
	switch {
	case e.res.AtStart.Consumers > 0 && e.o.after == nil:
		return "another consumer was attached at the start"
	case c.Arrived > 0 || c.Bounced > 0 || c.New > 0:
		return fmt.Sprintf("the DLQ gained messages during the run (at least %d)", max(c.Arrived, c.Bounced+c.New))
	}
	return ""
}

// readBack is what the DLQ's depth, read after the consumer's connection
// was lost, says of the acks sent: lost ones - counted, or, when a killed
// node left consumers of the lost connection counted that may hold
// messages (stranded bounds those), at most lost + stranded - or why it
// could not tell.
type readBack struct {
	lost, ghosts, stranded int
	why                    string
}

// readBackAcks reads the DLQ's depth through a new connection once the
// lost consumer is gone - or, after a killed node, counted but holding
// only what it can strand - and returns what it says of the sent acks.
func (e *engine) readBackAcks(ctx context.Context, sent int) readBack {
	sctx, budget := consume.SettleContext(ctx, min(e.o.DrainGrace, readBackWait))
	dctx, cancel := context.WithTimeout(sctx, budget)
	defer cancel()
	conn, err := e.d.Dial(dctx, "read")
	if err != nil {
		return readBack{why: "the DLQ could not be read back: " + err.Error()}
	}
	defer conn.Close()
	others, floor := e.res.AtStart.Consumers, max(0, e.res.AtStart.Messages-sent)
	// The lost consumer gone: a count. The wait for it is cut short, as the
	// failover's is, when a killed node leaves it counted.
	st, ok, err := consume.AwaitMessages(dctx, conn, e.o.Queue, others, floor, min(budget, readBackClean))
	gens := e.src.generations()
	if err == nil && !ok && st.Consumers <= others+gens {
		st, ok, err = consume.AwaitMessages(dctx, conn, e.o.Queue, others+gens, floor, budget-min(budget, readBackClean))
	}
	switch {
	case err != nil:
		return readBack{why: "the DLQ could not be read back: " + err.Error()}
	case !ok:
		return readBack{why: fmt.Sprintf("the DLQ still showed a consumer, or fewer than the %d messages it held at least, %s after the "+
			"connection was lost (%d messages, %d consumers)", floor, budget, st.Messages, st.Consumers)}
	}
	rb := readBack{lost: sent - (e.res.AtStart.Messages - st.Messages), ghosts: max(0, st.Consumers-others)}
	if rb.ghosts > 0 {
		rb.stranded = e.src.stranded(rb.ghosts)
	}
	if rb.lost > sent || rb.lost+rb.stranded < e.unsentAcks {
		return readBack{why: fmt.Sprintf("the DLQ's depth (%d, %d at the start) does not fit this run's %d acks: something else changed it",
			st.Messages, e.res.AtStart.Messages, sent)}
	}
	rb.lost = max(rb.lost, 0)
	return rb
}

// readBackClean is how long the read-back waits for the lost consumer to
// be gone before it takes a killed node's consumers as still counted.
const readBackClean = 5 * time.Second
