package consume

import (
	"context"
	"fmt"
	"time"

	"github.com/dupctl/dupctl/internal/platform/progress"
	amqp "github.com/rabbitmq/amqp091-go"
)

// Failover is how a read or a replay of a queue dials a cluster's nodes
// again after the connection to one was lost: the reads (dlqread) read
// the queue again, whole; a replay goes on as a resume of its journal.
type Failover struct {
	// Dial dials the URL's addresses, the one whose host:port is lost
	// after the others.
	Dial func(ctx context.Context, role, lost string) (*amqp.Connection, error)
	// Nodes is how many addresses the URL names: a command fails over at
	// most that many times.
	Nodes int
	// Wait bounds the wait for another node to answer for the queue (0: 30 s).
	Wait time.Duration
}

// defaultFailoverWait is Failover.Wait when unset.
const defaultFailoverWait = 30 * time.Second

// Budget is the wait for another node to answer for the queue.
func (f *Failover) Budget() time.Duration {
	if f.Wait <= 0 {
		return defaultFailoverWait
	}
	return f.Wait
}

// Redial is the dialer of the command's next part: the lost node last.
func (f *Failover) Redial(lost string) func(ctx context.Context, role string) (*amqp.Connection, error) {
	return func(ctx context.Context, role string) (*amqp.Connection, error) { return f.Dial(ctx, role, lost) }
}

// Await dials (the lost node last) until a node answers for the queue
// with a reading it can trust and no consumer beyond others (those
// attached before the command: they stay) - a lost reader's consumer gone
// and its messages back, a quorum queue's leader elected again - and
// returns that connection, open: the caller closes it. A quorum queue
// without a leader answers late with "0 messages, 0 consumers", which a
// read must not take for its count. When none answers it returns why:
// the queue's node is down (a classic queue lives on one node: waiting
// would only end in the same answer, so it gives up at once), an
// interrupt, or the wait ran out ("no other node <what> within ...").
func (f *Failover) Await(ctx context.Context, queue, lost string, others int, what string) (*amqp.Connection, string) {
	deadline := time.Now().Add(f.Budget())
	for {
		conn, err := f.probe(ctx, queue, lost, others, time.Until(deadline))
		if conn != nil {
			return conn, ""
		}
		if down := NodeDown(err); down != "" {
			return nil, "the queue lives on the lost node, and no other node can serve it until that node is back (" + down + ")"
		}
		t := time.NewTimer(250 * time.Millisecond)
		select {
		case <-ctx.Done():
			t.Stop()
		case <-t.C:
		}
		switch {
		case ctx.Err() != nil:
			return nil, "interrupted"
		case !time.Now().Before(deadline):
			return nil, fmt.Sprintf("no other node %s within %s", what, f.Budget())
		}
	}
}

// probe dials a node and waits (at most budget) for the queue to answer
// through it as Await wants; it returns that connection, or nil and why
// not (an error reading the queue; nil when it answered with consumers).
func (f *Failover) probe(ctx context.Context, queue, lost string, others int, budget time.Duration) (*amqp.Connection, error) {
	if budget <= 0 {
		return nil, nil
	}
	dctx, cancel := context.WithTimeout(ctx, budget)
	conn, err := f.Dial(dctx, "read", lost)
	cancel()
	if err != nil {
		return nil, err
	}
	if _, ok, err := AwaitIdle(ctx, conn, queue, others, budget); err != nil || !ok {
		conn.Close()
		return nil, err
	}
	return conn, nil
}

// PartMeter is a command's progress meter as each part of it sees it (a
// read again, or a replay's next part, after a lost node): a part's total
// counts on from what the earlier parts took (Base), and only the command
// ends the meter.
type PartMeter struct {
	progress.Meter
	Base int64
}

// SetTotal sets the total of the part, counted on from Base.
func (m *PartMeter) SetTotal(n int64) { m.Meter.SetTotal(m.Base + n) }

// Done does nothing: the command ends the meter (m.Meter.Done).
func (m *PartMeter) Done() {}
