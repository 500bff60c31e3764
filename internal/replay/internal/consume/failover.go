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
// interrupt, or the wait ran out ("no other node <what> within ...",
// with the last reading).
func (f *Failover) Await(ctx context.Context, queue, lost string, others int, what string) (*amqp.Connection, string) {
	conn, _, why := f.AwaitQueue(ctx, queue, lost, Expect{Others: others}, what)
	return conn, why
}

// Expect is what a node must show of a queue after a lost node before a
// command goes on through it.
type Expect struct {
	// Others are the consumers attached before the command (they stay).
	Others int
	// Ghosts are the lost connection's own consumers the broker may go on
	// counting: a quorum queue keeps a killed node's consumers (marked
	// suspected down, and those it had cancelled with messages still
	// checked out) until that node is back, or for the cancelled ones until
	// the queue's leader changes again (RabbitMQ 3.10). They take no
	// message; a replay's exclusive consume fails if a live one is there.
	Ghosts int
	// AtLeast is how many messages the queue must hold (0: any count): a
	// count below it is not trusted at once.
	AtLeast int
}

// Reading is the queue as the node a command goes on through showed it.
type Reading struct {
	QueueState
	// Ghosts: it still counted consumers beyond Expect.Others (the lost
	// connection's, up to Expect.Ghosts). Short: it showed fewer messages
	// than Expect.AtLeast for the whole wait.
	Ghosts, Short bool
}

// ghostGrace is how long a reading that counts the lost connection's
// consumers must hold before a command goes on with them counted (a clean
// loss drops them within it).
const ghostGrace = 5 * time.Second

// takes reports whether a reading is one to go on with: no consumer
// beyond Others and at least AtLeast messages, or with up to Ghosts more
// consumers once such readings held for grace (since: when they began).
func (e Expect) takes(r Reading, since *time.Time, grace time.Duration) bool {
	if !r.Ghosts {
		*since = time.Time{}
	} else if since.IsZero() {
		*since = time.Now()
	}
	switch {
	case r.Consumers > e.Others+e.Ghosts || r.Short:
		return false
	case !r.Ghosts:
		return true
	}
	return time.Since(*since) >= grace
}

// AwaitQueue is Await with what the queue must show: at once a trusted
// reading with no consumer beyond e.Others and at least e.AtLeast
// messages; one that still counts up to e.Ghosts more consumers once it
// held for ghostGrace; and, when the wait runs out, the last trusted
// reading within e.Ghosts that holds fewer than e.AtLeast (Reading.Short:
// the caller says what that count misses) - the last two only when the
// caller allows ghosts or asks for a count.
func (f *Failover) AwaitQueue(ctx context.Context, queue, lost string, e Expect, what string) (*amqp.Connection, Reading, string) {
	deadline := time.Now().Add(f.Budget())
	var conn *amqp.Connection
	var last, best *Reading
	var ghostSince time.Time
	node := ""
	closeConn := func() {
		if conn != nil {
			conn.Close()
			conn = nil
		}
	}
	for {
		if conn == nil {
			dctx, cancel := context.WithTimeout(ctx, max(time.Until(deadline), time.Second))
			c, err := f.Dial(dctx, "read", lost)
			cancel()
			if err == nil {
				conn, node = c, c.RemoteAddr().String()
			}
		}
		if conn != nil {
			st, trusted, err := probeQueue(conn, queue)
			switch {
			case NodeDown(err) != "":
				closeConn()
				return nil, Reading{}, "the queue lives on the lost node, and no other node can serve it until that node is back (" +
					NodeDown(err) + ")"
			case err != nil:
				closeConn() // that node went too, or the channel broke: dial again
			case trusted:
				r := Reading{QueueState: st, Ghosts: st.Consumers > e.Others, Short: st.Messages < e.AtLeast}
				last = &r
				if st.Consumers <= e.Others+e.Ghosts && (e.Ghosts > 0 || e.AtLeast > 0) {
					best = &r
				}
				if e.takes(r, &ghostSince, min(ghostGrace, f.Budget()/2)) {
					return conn, r, ""
				}
			}
		}
		t := time.NewTimer(250 * time.Millisecond)
		select {
		case <-ctx.Done():
			t.Stop()
		case <-t.C:
		}
		switch {
		case ctx.Err() != nil:
			closeConn()
			return nil, Reading{}, "interrupted"
		case !time.Now().Before(deadline):
			if best != nil && conn != nil && *best == *last {
				return conn, *best, ""
			}
			closeConn()
			why := fmt.Sprintf("no other node %s within %s", what, f.Budget())
			if last != nil {
				why += fmt.Sprintf(" (the last reading, through %s: %d messages, %d consumers)", node, last.Messages, last.Consumers)
			}
			return nil, Reading{}, why
		}
	}
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
