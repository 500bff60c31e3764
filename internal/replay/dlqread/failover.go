package dlqread

import (
	"context"
	"errors"
	"fmt"
	"strings"
	"time"

	"github.com/dupctl/dupctl/internal/platform/progress"
	"github.com/dupctl/dupctl/internal/replay/internal/consume"
	amqp "github.com/rabbitmq/amqp091-go"
)

// Failover dials a cluster's nodes again after the connection to one was
// lost mid-read.
type Failover struct {
	// Dial dials the URL's addresses, the one whose host:port is lost
	// after the others.
	Dial func(ctx context.Context, role, lost string) (*amqp.Connection, error)
	// Nodes is how many addresses the URL names: a read fails over at most
	// that many times.
	Nodes int
	// Wait bounds the wait for another node to answer for the queue (0: 30 s).
	Wait time.Duration
}

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
	meter := &rereadMeter{Meter: d.Progress}
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
				meter.base += int64(res.Read)
				continue
			}
			res.Failovers, res.RereadRepeats = losses, reread
			return res, nil
		}
		loss := NodeLoss{Lost: res.LostNode, Why: res.Lost, ReadBefore: res.Read, Counted: res.AtStart.Messages}
		if res.settleLost != "" {
			loss.Lost, loss.Why, loss.AfterRead = res.settleLost, res.settleWhy, true
		}
		why, dial := "no other address to read through", Dialer(nil)
		switch {
		case noFailover != "" && !loss.AfterRead:
			why = noFailover
		case d.Failover == nil:
		case len(losses) >= d.Failover.Nodes:
			why = fmt.Sprintf("%d nodes lost, as many as the URL names", len(losses))
		case ctx.Err() != nil:
			why = "interrupted"
		default:
			dial, loss.TookOver, why = d.Failover.next(ctx, queue, loss.Lost, res.AtStart.Consumers, loss.AfterRead)
		}
		if loss.AfterRead {
			// The read was whole: only its give-back was cut. Another node
			// says whether the queue shows its messages back.
			if dial != nil {
				res.AtEnd, res.Settled = d.Failover.resettle(ctx, queue, loss.Lost, res.AtStart)
			}
			res.Failovers, res.NoFailover, res.RereadRepeats = append(losses, loss), why, reread
			return res, nil
		}
		if dial == nil {
			res.Failovers, res.NoFailover, res.RereadRepeats = losses, why, reread
			return res, nil
		}
		losses = append(losses, loss)
		d.Dial, d.afterLoss = dial, true
		meter.base += int64(res.Read)
	}
}

// rereadMeter is a command's progress meter as each read sees it: a read
// again after a lost node counts on from what the lost read took, and only
// the command ends the meter.
type rereadMeter struct {
	progress.Meter
	base int64
}

func (m *rereadMeter) SetTotal(n int64) { m.Meter.SetTotal(m.base + n) }
func (m *rereadMeter) Done()            {}

func (f *Failover) wait() time.Duration {
	if f.Wait <= 0 {
		return 30 * time.Second
	}
	return f.Wait
}

// next waits for another node to answer for the queue after a read lost
// its node (the lost one is dialled last) and returns the dialer for the
// read again and that node; or, when none answered, why. others are the
// consumers attached before the read (not the read's: they stay). A classic queue
// lives on one node: when another says the queue's node is down, waiting
// would only end in the same answer, so it gives up at once. afterRead
// asks only for a node where the queue has no consumer left (a lost
// read's consumer gone, a quorum queue's leader elected again).
func (f *Failover) next(ctx context.Context, queue, lost string, others int, afterRead bool) (Dialer, string, string) {
	actx, cancel := context.WithCancel(ctx)
	defer cancel()
	var down error
	probe := func(ctx context.Context) (*amqp.Connection, error) {
		conn, err := f.Dial(ctx, "read", lost)
		if err != nil {
			return nil, err
		}
		if err := homeDown(conn, queue); err != nil {
			conn.Close()
			down = err
			cancel()
			return nil, err
		}
		return conn, nil
	}
	node := consume.AwaitNode(actx, probe, queue, others, f.wait())
	switch {
	case node != "":
		return func(ctx context.Context, role string) (*amqp.Connection, error) { return f.Dial(ctx, role, lost) }, node, ""
	case down != nil:
		return nil, "", "the queue lives on the lost node, and no other node can serve it until that node is back (" + down.Error() + ")"
	case ctx.Err() != nil:
		return nil, "", "interrupted"
	}
	if afterRead {
		return nil, "", fmt.Sprintf("no other node showed the queue without the read's consumer within %s", f.wait())
	}
	return nil, "", fmt.Sprintf("no other node answered for the queue within %s", f.wait())
}

// homeDown is the broker's answer when a queue's node is down: RabbitMQ
// answers a declare of a classic queue whose node is stopped with 404
// "home node '...' of durable queue '...' is down or inaccessible" - not
// that the queue does not exist.
func homeDown(conn *amqp.Connection, queue string) error {
	ch, err := conn.Channel()
	if err != nil {
		return nil // the probe's own reading will say
	}
	defer ch.Close()
	_, err = ch.QueueDeclarePassive(queue, false, false, false, false, nil)
	var ae *amqp.Error
	if errors.As(err, &ae) && ae.Code == amqp.NotFound && strings.Contains(ae.Reason, "down or inaccessible") {
		return errors.New(ae.Reason)
	}
	return nil
}

// resettle reads the queue through another node after the connection was
// lost while a whole read gave its messages back (they are back then
// anyway: the broker returns a dead channel's messages), waiting as a read
// does at its end for them to show; it returns the last reading and
// whether it showed them all back.
func (f *Failover) resettle(ctx context.Context, queue, lost string, atStart QueueState) (QueueState, bool) {
	conn, err := f.Dial(ctx, "read", lost)
	if err != nil {
		return QueueState{}, false
	}
	defer conn.Close()
	deadline := time.Now().Add(f.wait())
	for {
		st, ok, err := consume.AwaitIdle(ctx, conn, queue, atStart.Consumers, time.Until(deadline))
		if err != nil {
			return st, false
		}
		// No consumer: a quorum queue has nothing outstanding; a classic
		// one drops the consumer first, so its count must be back too.
		if ok && (atStart.Consumers > 0 || st.Messages >= atStart.Messages) {
			return st, true
		}
		if !time.Now().Before(deadline) || ctx.Err() != nil {
			return st, false
		}
		time.Sleep(100 * time.Millisecond)
	}
}
