package dlqread

import (
	"context"
	"fmt"

	"github.com/dupctl/dupctl/internal/replay/internal/consume"
	amqp "github.com/rabbitmq/amqp091-go"
)

// Failover dials a cluster's nodes again after the connection to one was
// lost mid-read (Dial, Nodes, Wait: the same as a replay's).
type Failover = consume.Failover

// NodeLoss is a node lost during a read, and the node the queue was read
// again through.
type NodeLoss struct {
	Lost     string `json:"lost_node"`
	Why      string `json:"why"`
	TookOver string `json:"took_over"`
	// ReadBefore is how many messages the read had taken when it was lost
	// (they went back to the queue and were read again); Counted is how
	// many the queue held at that read's start.
	ReadBefore int `json:"read_before"`
	Counted    int `json:"counted"`
	// AfterRead: the read was whole and the node was lost while its
	// messages were given back; TookOver then showed them back in the
	// queue, and nothing was read again.
	AfterRead bool `json:"after_read,omitempty"`
}

// readOnce is one whole read through d; a command's read func gathers what
// it shows afresh on each call.
type readOnce func(d Deps) (Result, error)

// failingOver runs read and, when it lost its node and d.Failover allows,
// runs it again, whole, through another node. Reading is non-destructive:
// what a lost read held is back in the queue (the broker gives a dead
// channel's messages back), in no order a second read could pick up from,
// so the next read starts over and what the lost one gathered is dropped -
// the output never counts or shows a message twice. noFailover, when not
// "", is why this command must not read again (what it wrote cannot be
// taken back). The result is the last read's, with the losses; one that
// is still lost says in NoFailover why it was not read again.
func failingOver(ctx context.Context, d Deps, queue, noFailover string, read readOnce) (Result, error) {
	var losses []NodeLoss
	reread := 0
	meter := &consume.PartMeter{Meter: d.Progress}
	defer meter.Meter.Done()
	d.Progress = meter
	for {
		res, err := read(d)
		if err != nil {
			return res, err
		}
		if res.Lost == "" && res.settleLost == "" {
			if res.Repeats > 0 && len(losses) > 0 && reread == 0 && ctx.Err() == nil {
				// Right after a leader change: read again, once, whole.
				reread = res.Repeats
				meter.Base += int64(res.Read)
				continue
			}
			res.Failovers, res.RereadRepeats = losses, reread
			return res, nil
		}
		loss := NodeLoss{Lost: res.LostNode, Why: res.Lost, ReadBefore: res.Read, Counted: res.AtStart.Messages}
		if res.settleLost != "" {
			loss.Lost, loss.Why, loss.AfterRead = res.settleLost, res.settleWhy, true
		}
		why, conn := "no other address to read through", (*amqp.Connection)(nil)
		switch {
		case noFailover != "" && !loss.AfterRead:
			why = noFailover
		case d.Failover == nil:
		case len(losses) >= d.Failover.Nodes:
			why = fmt.Sprintf("%d nodes lost, as many as the URL names", len(losses))
		case ctx.Err() != nil:
			why = "interrupted"
		default:
			what := "answered for the queue"
			if loss.AfterRead {
				what = "showed the queue without the read's consumer"
			}
			// A killed node's quorum queue goes on counting the lost read's
			// consumers: they take nothing, and the count tells what it holds.
			conn, _, why = d.Failover.AwaitQueue(ctx, queue, loss.Lost,
				consume.Expect{Others: res.AtStart.Consumers, Ghosts: d.ghosts + res.gens}, what)
		}
		if conn != nil {
			loss.TookOver = conn.RemoteAddr().String()
			if loss.AfterRead {
				// The read was whole: only its give-back was cut (the
				// broker gives a dead channel's messages back anyway). The
				// node that answered says whether the queue shows them
				// back, waiting as a read does at its end.
				st, ok, err := consume.AwaitSettled(ctx, conn, queue, res.AtStart.Consumers, res.AtStart.Messages, d.Failover.Budget())
				res.AtEnd, res.Settled = st, ok && err == nil
			}
			closeWithin(conn.Close)
		}
		if loss.AfterRead {
			res.Failovers, res.NoFailover, res.RereadRepeats = append(losses, loss), why, reread
			return res, nil
		}
		if conn == nil {
			res.Failovers, res.NoFailover, res.RereadRepeats = losses, why, reread
			return res, nil
		}
		losses = append(losses, loss)
		d.Dial, d.afterLoss, d.before = d.Failover.Redial(loss.Lost), true, 0
		d.ghosts += res.gens
		if res.AtStart.Consumers == 0 {
			d.before = res.AtStart.Messages
		}
		meter.Base += int64(res.Read)
	}
}
