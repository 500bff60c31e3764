package replay

import (
	"context"
	"fmt"
	"time"

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
		lost, reason := e.readBackAcks(ctx, sent)
		if reason == "" {
			c.AckLost, c.AckUnknown, res.AckLostExact = lost, 0, true
			return lost == e.unsentAcks
		}
		why = reason
	}
	res.AckLostWhy = why
	return false
}

// lostAckBlocker says why the DLQ's depth cannot count the lost acks
// ("" when it can).
func (e *engine) lostAckBlocker() string {
	c := e.res.Counts
	switch {
	case e.res.AtStart.Consumers > 0:
		return "another consumer was attached at the start"
	case c.Arrived > 0 || c.Bounced > 0 || c.New > 0:
		return fmt.Sprintf("the DLQ gained messages during the run (at least %d)", max(c.Arrived, c.Bounced+c.New))
	}
	return ""
}

// readBackAcks reads the DLQ's depth through a new connection once the
// lost consumer is gone and returns how many of the sent acks were not
// applied, or why it could not tell.
func (e *engine) readBackAcks(ctx context.Context, sent int) (int, string) {
	sctx, budget := consume.SettleContext(ctx, min(e.o.DrainGrace, readBackWait))
	dctx, cancel := context.WithTimeout(sctx, budget)
	defer cancel()
	conn, err := e.d.Dial(dctx, "read")
	if err != nil {
		return 0, "the DLQ could not be read back: " + err.Error()
	}
	defer conn.Close()
	st, ok, err := consume.AwaitIdle(dctx, conn, e.o.Queue, e.res.AtStart.Consumers, budget)
	switch {
	case err != nil:
		return 0, "the DLQ could not be read back: " + err.Error()
	case !ok:
		return 0, fmt.Sprintf("the DLQ still showed a consumer %s after the connection was lost", budget)
	}
	lost := sent - (e.res.AtStart.Messages - st.Messages)
	if lost < e.unsentAcks || lost > sent {
		return 0, fmt.Sprintf("the DLQ's depth (%d, %d at the start) does not fit this run's %d acks: something else changed it",
			st.Messages, e.res.AtStart.Messages, sent)
	}
	return lost, ""
}
