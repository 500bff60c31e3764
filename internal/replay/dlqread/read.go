package dlqread

import (
	"cmp"
	"context"
	"errors"
	"fmt"
	"net"
	"strconv"
	"time"

	"github.com/dupctl/dupctl/internal/deadletter"
	"github.com/dupctl/dupctl/internal/platform/progress"
	"github.com/dupctl/dupctl/internal/replay/internal/consume"
	amqp "github.com/rabbitmq/amqp091-go"
)

// Dialer opens one AMQP connection. The role ("read", "consume",
// "publish") goes into the connection name, so an operator can tell
// dupctl's two connections apart in the management UI and close one.
type Dialer func(ctx context.Context, role string) (*amqp.Connection, error)

// QueueState is what a passive queue.declare says: the messages ready
// and the consumers attached.
type QueueState = consume.QueueState

// DefaultWindowBytes bounds what a read lets the broker push ahead of
// it, in bytes (Options.WindowBytes 0).
const DefaultWindowBytes = consume.DefaultWindowBytes

// IsNotFound reports whether err says the queue does not exist.
func IsNotFound(err error) bool { return consume.IsNotFound(err) }

// Deps are what the read verbs (stats, peek, export) use: the broker,
// the clock and a progress meter.
type Deps struct {
	Dial     Dialer
	Now      func() time.Time // nil: time.Now
	Progress progress.Meter   // nil: none
	// Failover, when the URL names several nodes, lets a read go on
	// through another node after losing one (nil: one address).
	Failover *Failover
	// afterLoss: this read follows one that lost its node (failingOver);
	// before is what the queue held when the lost read began, with no
	// other consumer (0: no count to hold this read's to); ghosts are the
	// lost reads' consumers a killed node leaves counted.
	afterLoss bool
	before    int
	ghosts    int
}

func (d *Deps) defaults() {
	if d.Now == nil {
		d.Now = time.Now
	}
	d.Progress = progress.Or(d.Progress)
}

// Options shape a non-destructive read of a queue (stats, peek, export,
// and what replay --dry-run reads).
type Options struct {
	Queue  string
	Limit  int // 0: every message counted at the start
	Window int // prefetch
	// WindowBytes bounds the prefetch in bytes: 0 is DefaultWindowBytes,
	// a negative value no bound.
	WindowBytes int64
	// Idle ends the read when no message arrives for this long (the queue
	// held fewer messages than it said, or another consumer took them).
	Idle time.Duration
	// StartWait bounds the wait for the queue to have no consumer before
	// the count is taken (an earlier read's messages coming back); 0 is
	// 5 s. SettleWait bounds the wait at the end for this read's messages
	// to be back (internal/consume/settle.go); 0 is 30 s.
	StartWait  time.Duration
	SettleWait time.Duration
}

// Result says what a read saw.
type Result struct {
	AtStart QueueState `json:"at_start"`
	// Target is how many messages the read meant to read: the count at
	// the start, or --limit when lower.
	Target int `json:"target"`
	Read   int `json:"read"`
	// Settled is false when the messages the read took were not all back
	// in the queue (or, with drain, gone from it) when it ended.
	Settled bool `json:"settled"`
	// AtEnd is the queue once the read's messages were back (or the last
	// reading when they were not); Acked are those a drain removed.
	AtEnd QueueState `json:"at_end"`
	Acked int        `json:"acked"`
	// Redelivered counts messages that were already marked redelivered
	// when read: someone (or an earlier peek) read them before.
	Redelivered int `json:"redelivered"`
	// Quorum is true when a message carried x-delivery-count: the queue is
	// a quorum queue and reading counts toward its delivery limit.
	Quorum bool `json:"quorum"`
	// MaxDeliveryCount is the highest x-delivery-count seen.
	MaxDeliveryCount int64 `json:"max_delivery_count"`
	// Malformed counts messages whose death headers had the wrong shape.
	Malformed int `json:"malformed_headers"`
	// Repeats counts deliveries of a message the read had already taken
	// (same content): counted in Read, shown and written once.
	Repeats int `json:"repeats"`
	// SettleUnanswered: the broker stopped answering before the read's
	// messages showed back in the queue (Settled is false).
	SettleUnanswered bool `json:"settle_unanswered,omitempty"`
	// CountBefore is what the queue held when a read lost its node, when
	// the read after it counted fewer and the count did not come back
	// within the failover wait: that count is not trusted (0: none;
	// Untrusted).
	CountBefore int `json:"count_before_loss,omitempty"`
	// RereadRepeats is how many repeats a read after a failover saw,
	// which made it read the queue again, whole (0: none).
	RereadRepeats int `json:"reread_after_repeats,omitempty"`
	// Lost says how the connection was lost mid-read, and LostNode the
	// node it went through: the read holds only what it took before (the
	// broker gave the rest back to the queue).
	Lost     string `json:"connection_lost,omitempty"`
	LostNode string `json:"lost_node,omitempty"`
	// Failovers are the nodes lost by earlier reads of this command, each
	// followed by a whole read again through another node (or, AfterRead,
	// by a reading of the queue through it).
	Failovers []NodeLoss `json:"failovers,omitempty"`
	// NoFailover says why a lost read was not read again through another
	// node (or its give-back not checked through one).
	NoFailover string `json:"no_failover,omitempty"`

	// settleLost is the node lost after a whole read, while it gave its
	// messages back (settleWhy how): another node can say whether they are.
	settleLost, settleWhy string
	// gens is how many consumers the read started (consume.Expect.Ghosts).
	gens int
}

// Untrusted reports whether the read's count is not the queue's: after a
// lost node the queue showed fewer messages than it held before the loss
// for the whole failover wait (CountBefore). On RabbitMQ 3.10 the messages
// a killed node's reader had taken on a consumer it had cancelled (a
// restart for held messages) stay with that consumer until the quorum
// queue's leader changes again: they are in no count.
func (r Result) Untrusted() bool { return r.CountBefore > r.AtStart.Messages }

// readQueue reads up to the count at the start (or Limit) messages and
// calls fn for each. Every message is held and, at the end, requeued with
// one basic.nack; with drain, commit runs first and the messages fn saw
// are acked only when it succeeds (export --drain: ack after fsync).
func readQueue(ctx context.Context, d Deps, o Options, fn func(*deadletter.Message) error, drain bool,
	commit func() error) (Result, error) {
	var res Result
	d.defaults()
	conn, err := d.Dial(ctx, "read")
	if err != nil {
		return res, err
	}
	defer closeWithin(conn.Close)
	node := conn.RemoteAddr().String()
	st, shown, before, err := startCount(ctx, conn, d, o)
	if err != nil {
		return res, err
	}
	res.AtStart, res.CountBefore = shown, before
	res.Target = st.Messages
	if o.Limit > 0 && o.Limit < res.Target {
		res.Target = o.Limit
	}
	meter := d.Progress
	defer meter.Done()
	meter.SetTotal(int64(res.Target))
	if res.Target == 0 {
		res.Settled, res.AtEnd = true, st
		return res, commitIf(commit)
	}
	c, err := consume.New(conn, o.Queue, consume.Window(o.Window, res.Target), o.WindowBytes, false, "dupctl-read-"+consume.NewID())
	if err != nil && connLost(conn, err) {
		res.Lost, res.LostNode = err.Error(), node // lost before the first message
		return res, nil
	}
	if err != nil {
		return res, err
	}
	defer closeWithin(c.Close)
	r := &reader{c: c, res: &res, fn: fn, meter: meter}
	if d.afterLoss {
		r.seen = map[uint64]struct{}{}
	}
	readErr := r.run(ctx, o)
	res.gens = c.Generations()
	// A read that took every message and lost its node while giving them
	// back is whole: the broker gives a dead channel's messages back
	// itself. Not so a drain, whose acks went with the connection.
	whole := readErr == nil && res.Read == res.Target && !drain
	if connLost(conn, readErr) && !whole {
		// Nothing to give back or wait for: the broker returns what a
		// dead channel held. What was read is all there is to say.
		res.Lost, res.LostNode = closedWhy(c, readErr), node
		return res, nil
	}
	if errors.Is(readErr, amqp.ErrCommandInvalid) {
		// The channel's replies came out of step (a quorum queue's leader
		// changing under the read was seen to send one twice): nothing
		// more can be asked of it. Closing the connection gives its
		// messages back; the read is lost as if its node were.
		res.Lost, res.LostNode = "the broker's replies on the read's channel came out of step ("+readErr.Error()+")", node
		return res, nil
	}
	c.Rest() // prefetched beyond the target: requeued with the rest
	readErr = r.release(conn, node, readErr, whole, drain, commit)
	if res.Lost != "" {
		return res, nil // lost while giving back: nothing to wait for
	}
	r.settle(ctx, conn, o, st, node, whole && readErr == nil)
	return res, readErr
}

// startCount is the queue's count at a read's start. After a lost node
// the queue may go on counting the lost read's own consumers (d.ghosts: a
// killed node's, which take nothing), and a count below the one before the
// loss waits to come back: right after a quorum queue's leader moved, a
// node was seen to show 0 messages for a queue holding 12,000, and a read
// gives back all it took. It returns the reading the read settles against,
// the one it shows (without those consumers), and the count before the
// loss when the count did not come back (not trusted; 0 when it did).
func startCount(ctx context.Context, conn *amqp.Connection, d Deps, o Options) (settle, shown QueueState, before int, err error) {
	st, err := consume.StartStateWith(ctx, conn, o.Queue, d.ghosts, o.StartWait)
	if err != nil {
		return st, st, 0, consume.QueueError(o.Queue, err)
	}
	if d.afterLoss && st.Messages < d.before && d.Failover != nil {
		back, ok, err := consume.AwaitMessages(ctx, conn, o.Queue, d.ghosts, d.before, d.Failover.Budget())
		if err != nil {
			return st, st, 0, consume.QueueError(o.Queue, err)
		}
		if st = back; !ok {
			before = d.before
		}
	}
	shown = st
	shown.Consumers = max(0, st.Consumers-d.ghosts)
	return st, shown, before, nil
}

// errStuck: the broker's connection answered nothing within the wait.
var errStuck = errors.New("no answer")

// settleWithin is c.Settle, bounded: after a quorum queue's leader change a
// read's connection was seen to stop answering for good (a reply for its
// consumer's channel that no call waited for holds amqp091's reader),
// and a read must not hang on it. Its messages come back to the queue when
// the connection closes, at the latest when dupctl exits.
func settleWithin(ctx context.Context, c *consume.Consumer, st QueueState, budget time.Duration) (QueueState, bool, error) {
	type settled struct {
		st  QueueState
		ok  bool
		err error
	}
	done := make(chan settled, 1)
	go func() {
		end, ok, err := c.Settle(ctx, st.Consumers, st.Messages, budget)
		done <- settled{end, ok, err}
	}()
	t := time.NewTimer(budget + 10*time.Second)
	defer t.Stop()
	select {
	case s := <-done:
		return s.st, s.ok, s.err
	case <-t.C:
		return QueueState{}, false, errStuck
	}
}

// closeWithin closes a channel or connection, waiting at most 10 s: one
// that stopped answering (settleWithin) would keep the close waiting for
// ever. Its messages come back when dupctl exits.
func closeWithin(closeFn func() error) {
	done := make(chan struct{})
	go func() {
		_ = closeFn()
		close(done)
	}()
	select {
	case <-done:
	case <-time.After(10 * time.Second):
	}
}

// release gives the read's messages back - with drain, acks them once
// commit succeeded - and returns the read's error. A whole read whose node
// went meanwhile is not in error: the broker gives them back itself.
func (r *reader) release(conn *amqp.Connection, node string, readErr error, whole, drain bool, commit func() error) error {
	// A drain acks nothing when a message came twice: the second copy may
	// stand for one never delivered (reader.seen), which an ack would remove.
	ack := drain && r.res.Repeats == 0
	err := giveBack(r.c, readErr == nil && ack, r.lastTag, commit)
	closed := err != nil && (conn.IsClosed() || errors.Is(err, amqp.ErrClosed))
	switch {
	case closed && whole:
		r.res.settleLost, r.res.settleWhy, err = node, closedWhy(r.c, err), nil
	case closed && readErr == nil && !drain:
		// The read ended short without an error (no message for the idle
		// time: its timer also fires when the process was stopped for
		// that long) and its node went meanwhile: a read lost mid-read,
		// whose messages the broker gives back itself.
		r.res.Lost, r.res.LostNode = closedWhy(r.c, err), node
		return nil
	}
	if err != nil {
		return cmp.Or(readErr, err)
	}
	if readErr == nil && !ack {
		return commitIf(commit)
	}
	return readErr
}

// settle waits for the queue to show the read's messages back (or, with
// drain, gone). A whole read whose node went meanwhile leaves the check to
// another node.
func (r *reader) settle(ctx context.Context, conn *amqp.Connection, o Options, st QueueState, node string, whole bool) {
	res := r.res
	sctx, budget := consume.SettleContext(ctx, o.SettleWait)
	end, ok, err := settleWithin(sctx, r.c, st, budget)
	res.Settled, res.AtEnd, res.Acked, res.SettleUnanswered = ok && err == nil, end, r.c.Acked(), errors.Is(err, errStuck)
	if !res.Settled && whole && res.settleLost == "" && conn.IsClosed() {
		res.settleLost, res.settleWhy = node, closedWhy(r.c, err)
	}
}

// closedWhy says how a read's connection was lost: the broker's reason
// when it gave one, else err's text.
func closedWhy(c *consume.Consumer, err error) string {
	select {
	case cerr := <-c.Closed():
		if cerr != nil {
			return cerr.Reason
		}
	default:
	}
	if err != nil {
		return err.Error()
	}
	return "connection closed"
}

// connLost reports whether a read ended because its channel or
// connection went away (a node lost, a connection closed by the broker).
func connLost(conn *amqp.Connection, err error) bool {
	if err == nil {
		// An idle end on a connection that closed meanwhile is a loss too.
		return conn.IsClosed()
	}
	// A write or read on a socket the node closed is a frame error, or the
	// socket's own error when the consumer restarts (basic.qos,
	// basic.consume: "write: connection reset by peer"), either of which
	// can come before the connection marks itself closed.
	var ae *amqp.Error
	var ne *net.OpError
	return errors.Is(err, consume.ErrChannelClosed) || errors.Is(err, amqp.ErrClosed) || conn.IsClosed() ||
		errors.As(err, &ae) && ae.Code == amqp.FrameError || errors.As(err, &ne)
}

// reader takes a read's messages off its consumer, one at a time.
type reader struct {
	c       *consume.Consumer
	res     *Result
	fn      func(*deadletter.Message) error
	meter   progress.Meter
	lastTag uint64 // the last delivery handed to fn
	// seen are the fingerprints read so far (their first 64 bits), in a
	// read after a lost node only: a quorum queue whose leader had just
	// changed was seen to deliver a message twice in one read, and another
	// not at all (RabbitMQ 3.10.8, docs/dlq.md); the second copy is held,
	// never handed to fn. (Elsewhere identical copies are the queue's own.)
	seen map[uint64]struct{}
}

// run reads until the target is read, no message arrives for o.Idle (3 s
// when unset), or ctx ends; it returns why it stopped early.
func (r *reader) run(ctx context.Context, o Options) error {
	idle := o.Idle
	if idle <= 0 {
		idle = 3 * time.Second
	}
	timer := time.NewTimer(idle)
	defer timer.Stop()
	for r.res.Read < r.res.Target {
		select {
		case si, ok := <-r.c.Deliveries():
			if !ok {
				return fmt.Errorf("read %q: %w", o.Queue, consume.ErrChannelClosed)
			}
			if err := r.take(si); err != nil {
				return err
			}
			timer.Reset(idle)
		case cerr := <-r.c.Closed():
			// The connection or the channel went away (a node lost): the
			// deliveries stream does not end by itself then.
			if cerr != nil {
				return fmt.Errorf("read %q: %w (%s)", o.Queue, consume.ErrChannelClosed, cerr.Reason)
			}
			return fmt.Errorf("read %q: %w", o.Queue, consume.ErrChannelClosed)
		case <-timer.C:
			return nil
		case <-ctx.Done():
			return ctx.Err()
		}
	}
	return nil
}

// take hands one delivery to fn and holds it.
func (r *reader) take(si consume.Item) error {
	if err := r.c.Seen(si.Delivery); err != nil {
		return err
	}
	r.lastTag = si.Delivery.DeliveryTag
	r.res.Read++
	r.meter.Add(1)
	if r.repeat(si.Msg) {
		r.res.Repeats++
		return r.c.Hold(si.Delivery)
	}
	r.res.note(si.Msg)
	if err := r.fn(si.Msg); err != nil {
		return err
	}
	return r.c.Hold(si.Delivery)
}

// repeat reports whether the read already took a message with m's
// content (x-delivery-count aside).
func (r *reader) repeat(m *deadletter.Message) bool {
	if r.seen == nil {
		return false
	}
	k, err := strconv.ParseUint(m.Fingerprint()[:16], 16, 64)
	if err != nil {
		return false
	}
	if _, ok := r.seen[k]; ok {
		return true
	}
	r.seen[k] = struct{}{}
	return false
}

// giveBack requeues every message the read holds - or, with drain, runs
// commit and acks those up to lastTag (requeuing what was prefetched past
// it) once commit succeeded.
func giveBack(c *consume.Consumer, drain bool, lastTag uint64, commit func() error) error {
	if drain && lastTag > 0 {
		if err := commitIf(commit); err != nil {
			if rerr := c.ReleaseAll(); rerr != nil {
				return fmt.Errorf("%w (and requeue read messages: %v)", err, rerr)
			}
			return err
		}
		// Requeue what came after the last message written, then ack
		// everything up to it in one frame.
		for tag := uint64(c.Taken()); tag > lastTag; tag-- {
			if err := c.Requeue(tag); err != nil {
				return fmt.Errorf("requeue: %w", err)
			}
		}
		if err := c.AckUpTo(lastTag); err != nil {
			return fmt.Errorf("ack exported messages: %w", err)
		}
		return nil
	}
	if err := c.ReleaseAll(); err != nil {
		return fmt.Errorf("requeue read messages: %w", err)
	}
	if drain {
		return commitIf(commit)
	}
	return nil
}

func commitIf(commit func() error) error {
	if commit == nil {
		return nil
	}
	return commit()
}

func (r *Result) note(m *deadletter.Message) {
	if m.Redelivered {
		r.Redelivered++
	}
	if v, ok := m.Props.Headers["x-delivery-count"]; ok {
		r.Quorum = true
		if n, ok := deadletter.Int(v); ok {
			r.MaxDeliveryCount = max(r.MaxDeliveryCount, n)
		}
	}
	if len(deadletter.ReadOrigin(m.Props.Headers).Malformed) > 0 {
		r.Malformed++
	}
}

// Scan reads the messages a queue holds at its start, hands each to fn
// and requeues them all, as stats does - a replay reads its destination
// so (replay's CheckDestination). It does not fail over: a lost read is
// in the result (Lost), and what fn saw is then only part of the queue.
func Scan(ctx context.Context, d Deps, o Options, fn func(*deadletter.Message) error) (Result, error) {
	d.defaults()
	d.Failover = nil
	return readQueue(ctx, d, o, fn, false, nil)
}
