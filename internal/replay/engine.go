package replay

import (
	"context"
	"encoding/hex"
	"fmt"
	"sort"
	"time"

	"github.com/dupctl/dupctl/internal/replay/internal/consume"

	"github.com/dupctl/dupctl/internal/deadletter"
	"github.com/dupctl/dupctl/internal/replay/classify"
	"github.com/dupctl/dupctl/internal/replay/dlqread"
	"github.com/dupctl/dupctl/internal/replay/journal"

	"github.com/dupctl/dupctl/internal/platform/english"
	"github.com/dupctl/dupctl/internal/platform/problem"
	"github.com/dupctl/dupctl/internal/platform/progress"
	amqp "github.com/rabbitmq/amqp091-go"
	"golang.org/x/time/rate"
)

// maxProblems bounds the per-message list in the result (counts stay exact).
const maxProblems = 1000

// item is one message moving through a run.
type item struct {
	m   *deadletter.Message
	d   consume.Delivery // zero for a file source
	in  classify.Info
	fp  string
	dst classify.Target
	// occ is which copy of fp this is in this part's read (1 for the
	// first); seq is the journal sequence its DLQ ack belongs to; of is
	// the earlier publish a --retry-in-doubt publish stands for.
	occ int
	seq int64
	of  int64
	// past is set for a message read past the count at the start: only
	// looked at for this run's bounces, never replayed.
	past bool
}

type pending struct {
	it   *item
	seq  int64 // journal sequence
	kind string
	id   string // dupctl-replay-id
}

type engine struct {
	o        *ReplayOptions
	d        *ReplayDeps
	res      *ReplayResult
	src      source
	pubConn  *amqp.Connection
	pubCh    *amqp.Channel
	selected int
	srcErr   error
	runErr   error // what ends the run early and is the caller's to fix
	toAck    []*item
	limit    *rate.Limiter
	seq      int64
	queued   []*pending // decided and journaled, waiting for --rate
	paceAt   time.Time  // when --rate allows the next publish
	outst    map[uint64]*pending
	ret      map[string]amqp.Return
	rets     chan amqp.Return
	confs    chan amqp.Confirmation
	pubErr   chan *amqp.Error
	chErr    chan *amqp.Error
	dest     map[string]*DestCount
	unready  map[string]string // destinations checked before their first publish: why not ("" when ready)
	groups   map[string]bool   // --group ids seen
	parkOK   bool
	// refused is set when the broker closed the publishing channel over a
	// missing exchange: what was outstanding is settled, nothing more is
	// published, and it is not a lost connection.
	refused bool
	start   time.Time
	stop    string
	lost    string
	// bounceCheck is how many messages past the count at the start the
	// run reads (holding them) to find its own replays coming back.
	bounceCheck int
	// copies counts the copies of each fingerprint read so far (item.occ).
	copies map[[16]byte]int32
	// book is what a resumed run's earlier parts published (nil: none).
	book *journal.Book
	// consNode and pubNode are the addresses of the nodes the consumer
	// and the publisher connections reached.
	consNode, pubNode string
	// consumerGone is set when the consumer's channel or connection went
	// away; unsentAcks counts the DLQ acks that certainly never left
	// (acklost.go).
	consumerGone bool
	unsentAcks   int
	// acksLostMax bounds the lost acks after a killed node (acklost.go;
	// 0: counted, or no bound).
	acksLostMax int
}

func (e *engine) open(ctx context.Context) (source, error) {
	if e.d.Records != nil {
		return newFileSource(e.d.Records), nil
	}
	conn, err := e.d.Dial(ctx, "consume")
	if err != nil {
		return nil, err
	}
	st, others, err := e.startState(ctx, conn)
	if err != nil {
		conn.Close()
		return nil, consume.QueueError(e.o.Queue, err)
	}
	e.res.AtStart = st
	e.consNode = conn.RemoteAddr().String()
	if st.Consumers > others && e.o.Yes {
		conn.Close()
		return nil, &problem.Input{Field: "Queue", Value: e.o.Queue, Quote: true,
			Why: fmt.Sprintf("%s attached: a replay must be the only reader (a consumer on a DLQ races the replay and can loop messages back)",
				english.Count(st.Consumers, "consumer", "consumers")),
			Hint: "stop it, then run again"}
	}
	window := e.o.Window
	switch {
	case !e.o.Yes:
		window = consume.Window(window, st.Messages)
	case e.o.Rate > 0:
		// Paced: a quarter second of messages is enough ahead, and what
		// the broker has sent but the run has not read yet is what the
		// DLQ's depth cannot tell from bounces (checkArrivals).
		window = min(window, max(10, int(e.o.Rate/4)))
	}
	c, err := consume.New(conn, e.o.Queue, window, e.o.WindowBytes, e.o.Yes, "dupctl-replay-"+e.o.Rewrite.Run)
	if err != nil {
		conn.Close()
		return nil, err
	}
	return &queueSource{c: c, conn: conn, n: st.Messages}, nil
}

// startState is the DLQ's count at the part's start, and how many
// consumers it may show that are not another reader's: none for a first
// part; after a lost node, the lost connections' consumers a quorum queue
// goes on counting (they take nothing; the exclusive consume fails if a
// live one is there). After a lost node the count must also reach what
// the DLQ holds at least (afterLoss.mustHold): a lower one waits, and is
// taken as it is only once the failover wait ran out.
func (e *engine) startState(ctx context.Context, conn *amqp.Connection) (dlqread.QueueState, int, error) {
	a := e.o.after
	if a == nil {
		st, err := consume.StartState(ctx, conn, e.o.Queue, e.o.StartWait)
		return st, 0, err
	}
	st, err := consume.StartStateWith(ctx, conn, e.o.Queue, a.ghosts, e.o.StartWait)
	if err != nil || st.Messages >= a.mustHold || a.short {
		return st, a.ghosts, err
	}
	st, _, err = consume.AwaitMessages(ctx, conn, e.o.Queue, a.ghosts, a.mustHold, a.wait)
	return st, a.ghosts, err
}

func (e *engine) openPublisher(ctx context.Context) error {
	conn, err := e.d.Dial(ctx, "publish")
	if err != nil {
		return err
	}
	ch, err := conn.Channel()
	if err != nil {
		conn.Close()
		return fmt.Errorf("open publish channel: %w", err)
	}
	if err := ch.Confirm(false); err != nil {
		conn.Close()
		return fmt.Errorf("enable publisher confirms: %w", err)
	}
	// Buffers hold every outstanding publish's confirm and return:
	// amqp091-go drops a notification that blocks for 5 s.
	e.confs = ch.NotifyPublish(make(chan amqp.Confirmation, e.o.Window+16))
	e.rets = ch.NotifyReturn(make(chan amqp.Return, e.o.Window+16))
	// The channel's own close carries the broker's reason (404 NOT_FOUND
	// for a missing exchange); the connection's says it went away.
	e.chErr = ch.NotifyClose(make(chan *amqp.Error, 1))
	e.pubErr = conn.NotifyClose(make(chan *amqp.Error, 1))
	e.pubConn, e.pubCh = conn, ch
	e.pubNode = conn.RemoteAddr().String()
	return nil
}

// lostNode is the address of the node whose connection closed: the
// consumer's, else the publisher's (a channel that closed on a connection
// still open: the consumer's node).
func (e *engine) lostNode() string {
	if q, ok := e.src.(*queueSource); ok && q.conn.IsClosed() {
		return e.consNode
	}
	if e.pubConn != nil && e.pubConn.IsClosed() {
		return e.pubNode
	}
	return e.consNode
}

// watchEvery is how often a replay looks at the DLQ's depth for messages
// coming back.
const watchEvery = 250 * time.Millisecond

// runLoop is the state of one run's loop: whether it still consumes, and
// the timers that wake it.
type runLoop struct {
	e         *engine
	meter     progress.Meter
	consuming bool
	bound     int // the count at the start (-1: a file)
	srcClosed <-chan *amqp.Error
	idle      *time.Timer
	pacer     *time.Timer
	watcher   *time.Ticker
	watch     <-chan time.Time
}

func newRunLoop(e *engine, meter progress.Meter) *runLoop {
	l := &runLoop{e: e, meter: meter, consuming: true, bound: e.src.bound(), srcClosed: e.src.closed(),
		idle: time.NewTimer(e.o.Idle), pacer: time.NewTimer(time.Hour)}
	if e.o.Yes && l.bound >= 0 {
		l.watcher = time.NewTicker(watchEvery)
		l.watch = l.watcher.C
	}
	return l
}

func (l *runLoop) stopTimers() {
	l.idle.Stop()
	l.pacer.Stop()
	if l.watcher != nil {
		l.watcher.Stop()
	}
}

// loop is the run: one goroutine owns every decision, so the order of
// events (a return is always seen before its confirm) is the broker's.
// Each turn first settles every confirm and return that has arrived (so
// confirms are handled as they come, never behind new publishes or the
// --rate pacing), then publishes what --rate allows, then waits for the
// next event.
func (e *engine) loop(ctx context.Context, meter progress.Meter) error {
	l := newRunLoop(e, meter)
	defer l.stopTimers()
	for {
		e.settleReady()
		if l.consuming && l.checkStop() {
			continue
		}
		if err := e.publishQueued(ctx); err != nil {
			return err
		}
		if !l.consuming && len(e.outst) == 0 && len(e.queued) == 0 {
			return nil
		}
		if done, err := l.wait(ctx); done || err != nil {
			return err
		}
	}
}

// stopConsuming stops reading the source, for why unless the run already
// has a reason to stop.
func (l *runLoop) stopConsuming(why string) {
	if l.consuming {
		l.consuming = false
		if l.e.stop == "" {
			l.e.stop = why
		}
		l.e.src.stop()
	}
}

// checkStop stops consuming when the run has a reason to, the count at the
// start is read or --max is reached. It reports true when it started the
// bounce check instead (the loop then turns again at once).
func (l *runLoop) checkStop() bool {
	e, o := l.e, l.e.o
	switch {
	case e.stop != "":
		l.stopConsuming(e.stop)
	case l.bound >= 0 && e.res.Counts.Read >= l.bound+e.bounceCheck:
		if e.bounceCheck == 0 && e.startBounceCheck(l.bound) {
			// What arrived is right behind: a short wait.
			resetTimer(l.idle, min(o.Idle, 2*time.Second))
			return true
		}
		l.stopConsuming("count at start reached")
	case o.Yes && o.Max > 0 && e.selected >= o.Max && e.bounceCheck == 0:
		l.stopConsuming("{Max} reached")
	}
	return false
}

// wait handles the next event: a message, a return or confirm, the pacer,
// the idle timer, the DLQ watch, a closed channel or connection, or the
// end of ctx (then it drains the confirms and reports done).
func (l *runLoop) wait(ctx context.Context) (done bool, err error) {
	e, o := l.e, l.e.o
	var in <-chan consume.Item
	var idleC <-chan time.Time
	if l.consuming && len(e.queued) == 0 && len(e.outst) < o.Window {
		in, idleC = e.src.items(), l.idle.C
	}
	var pace <-chan time.Time
	if len(e.queued) > 0 {
		resetTimer(l.pacer, time.Until(e.paceAt))
		pace = l.pacer.C
	}
	select {
	case si, ok := <-in:
		return false, l.received(ctx, si, ok, in)
	case r, ok := <-e.rets:
		e.returned(r, ok)
	case c, ok := <-e.confs:
		if !e.confirmed(c, ok) {
			l.stopConsuming(e.stop)
		}
	case <-pace:
	case <-idleC:
		l.stopConsuming(fmt.Sprintf("no message arrived for %s", o.Idle))
	case <-l.watch:
		e.checkArrivals(l.bound, e.bounceCheck == 0)
	case err := <-e.chErr:
		e.chErr = nil
		if err != nil {
			e.channelClosed(err)
			l.stopConsuming(e.stop)
		}
	case err := <-e.pubErr:
		e.pubErr = nil
		if err != nil && e.lost == "" {
			e.lost = "publisher connection: " + err.Error()
		}
	case <-l.srcClosed:
		l.consumerLost()
	case <-ctx.Done():
		l.stopConsuming("interrupted")
		e.unqueue("not published: interrupted")
		return true, e.drainConfirms()
	}
	return false, nil
}

// received handles a message from the source (ok false: the source ended)
// with whatever else is ready, as one batch.
func (l *runLoop) received(ctx context.Context, si consume.Item, ok bool, in <-chan consume.Item) error {
	e := l.e
	if !ok {
		l.consuming = false
		if e.stop == "" {
			e.stop = e.src.endReason()
		}
		if err := e.src.err(); err != nil {
			e.srcErr = err
			e.stop = "malformed input"
		}
		return nil
	}
	if e.bounceCheck == 0 {
		resetTimer(l.idle, e.o.Idle)
	}
	batch := append(make([]consume.Item, 0, 64), si)
	batch = e.more(batch, in, e.batchSize(l.bound))
	return e.handle(ctx, batch, l.meter)
}

// consumerLost handles the consumer's channel or connection closing: every
// message it held is back in the DLQ.
func (l *runLoop) consumerLost() {
	e := l.e
	l.srcClosed = nil
	e.consumerFailed("consumer connection closed")
	l.consuming = false
	e.stop = "connection lost"
}

func resetTimer(t *time.Timer, d time.Duration) {
	t.Stop()
	t.Reset(d)
}

// batchSize is how many ready messages are decided together: enough to
// amortize journal writes, few enough that --rate paces before journaling
// and never past the count at the start.
func (e *engine) batchSize(bound int) int {
	n := min(256, e.o.Window-len(e.outst))
	if e.o.Rate > 0 {
		n = min(n, int(e.o.Rate/10))
	}
	if bound >= 0 {
		n = min(n, bound+e.bounceCheck-e.res.Counts.Read)
	}
	return max(n, 1)
}

// more takes what else is ready without waiting, to batch journal writes
// and idempotency look-ups.
func (e *engine) more(batch []consume.Item, in <-chan consume.Item, limit int) []consume.Item {
	for len(batch) < limit {
		select {
		case si, ok := <-in:
			if !ok {
				return batch
			}
			// Put nothing back: a closed stream is noticed by the next
			// receive in loop.
			batch = append(batch, si)
		default:
			return batch
		}
	}
	return batch
}

// handle decides a batch of messages and queues those to replay or park.
func (e *engine) handle(ctx context.Context, batch []consume.Item, meter progress.Meter) error {
	o := e.o
	now := e.d.Now()
	items := make([]*item, 0, len(batch))
	bound := e.src.bound()
	for _, si := range batch {
		if err := e.src.seen(si); err != nil {
			// The consumer could not restart with a new prefetch: stop
			// reading, as when its channel closes (the batch in hand goes
			// on; an ack that then fails is journaled as ack-lost).
			if e.consumerFailed("consumer: " + err.Error()) {
				e.stop = "connection lost"
			}
		}
		e.res.Counts.Read++
		meter.Add(1)
		it := &item{m: si.Msg, d: si.Delivery, past: bound >= 0 && e.res.Counts.Read > bound}
		// Classified under --yes too: the run repeats the dry run's
		// warnings (issue 44: it said "No findings" while replaying what
		// the dry run had called non-retryable).
		it.in = o.Analyzer.Analyze(it.m)
		it.fp = it.m.Fingerprint()
		it.occ = e.copyOf(it.fp)
		if len(it.in.Origin.Malformed) > 0 {
			e.res.Counts.MalformedHeader++
		}
		if _, ok := it.m.Props.Headers["x-delivery-count"]; ok {
			e.res.Quorum = true
		}
		items = append(items, it)
	}
	succeeded, err := e.lookup(ctx, items)
	if err != nil {
		return err
	}
	var toPublish []*pending
	for _, it := range items {
		if p := e.decide(it, succeeded, now); p != nil {
			toPublish = append(toPublish, p)
		}
	}
	e.flushAcks() // resumed messages already at their destination
	if len(toPublish) == 0 {
		return nil
	}
	// The "pub" records reach the file before the publishes leave, so a
	// crash at any point leaves them in doubt, never unknown.
	if err := e.d.Journal.Flush(); err != nil {
		return fmt.Errorf("write journal: %w", err)
	}
	e.queued = append(e.queued, toPublish...)
	return e.publishQueued(ctx)
}

// copyOf counts one more copy of fp read and says which it is.
func (e *engine) copyOf(fp string) int {
	var k [16]byte
	if _, err := hex.Decode(k[:], []byte(fp)); err != nil {
		copy(k[:], fp)
	}
	e.copies[k]++
	return int(e.copies[k])
}

// startBounceCheck decides, when the count at the start has been read,
// whether to read on for this run's replays coming back: only when the DLQ
// has gained messages and something was replayed. It reads at most that
// many more, holding every one (nothing read past the count is replayed).
func (e *engine) startBounceCheck(bound int) bool {
	if !e.o.Yes || e.res.Counts.Replayed+len(e.outst) == 0 || e.stop != "" {
		return false
	}
	e.checkArrivals(bound, false)
	if e.res.Counts.Arrived == 0 {
		return false
	}
	e.bounceCheck = min(e.res.Counts.Arrived, e.res.Counts.Replayed+len(e.outst))
	return true
}

// checkArrivals reads the DLQ's depth: what it holds beyond the messages
// counted at the start and not yet taken arrived during the run (a lower
// bound: deliveries prefetched but not read count as taken). When more
// arrived than MaxBounces allows while this run replays, they are most
// likely its replays failing again: the run stops.
func (e *engine) checkArrivals(bound int, stop bool) {
	if e.res.Counts.Replayed == 0 {
		return
	}
	st, ok := e.src.probe()
	if !ok {
		return
	}
	arrived := st.Messages - (bound - e.src.taken())
	if arrived <= e.res.Counts.Arrived {
		return
	}
	e.res.Counts.Arrived = arrived
	if stop && arrived > e.o.MaxBounces && e.stop == "" {
		e.stop = "the DLQ grew while replaying: replayed messages are coming back"
	}
}

// finish requeues everything held, waits for the broker to settle the
// DLQ, closes the journal and fills the result.
func (e *engine) finish(ctx context.Context) {
	e.flushAcks()
	for _, si := range e.src.rest() {
		_ = e.src.seen(si) // stopped: records the tag, never restarts
		_ = e.src.hold(&item{m: si.Msg, d: si.Delivery})
	}
	if err := e.src.release(); err != nil {
		e.consumerFailed("requeue held messages: " + err.Error())
	}
	res := e.res
	res.Settled = true
	seen := false // the DLQ was seen to apply every ack and requeue
	switch {
	case !e.consumerGone:
		// Only the publisher went (or nothing): the consumer's channel is
		// still open, so the DLQ can still be seen to apply its acks.
		sctx, budget := consume.SettleContext(ctx, e.o.DrainGrace)
		var end dlqread.QueueState
		end, res.Settled = e.src.settle(sctx, res.AtStart.Consumers, res.AtStart.Messages, budget)
		seen = res.Settled
		res.AckLostExact = res.Settled || e.src.acked() == 0
		if res.Settled && e.src.bound() >= 0 {
			res.AtEnd = &end
			seen = !e.countSurplusAcks(end)
		}
	default:
		res.Settled = false
		seen = e.countLostAcks(ctx)
	}
	res.acksSent, res.ghosts, res.untaken = e.src.acked(), e.src.generations(), e.book.Untaken()
	if e.stop == "" {
		e.stop = e.src.endReason()
	}
	res.StoppedBy = e.stop
	res.Lost = e.lost
	if ctx.Err() != nil {
		res.StoppedBy = "interrupted"
	}
	if b := e.src.bound(); b >= 0 {
		res.Counts.Unread = max(0, b-min(res.Counts.Read, b))
	}
	for _, g := range e.o.Filter.Groups {
		if !e.groups[g] {
			res.UnmatchedGroups = append(res.UnmatchedGroups, g)
		}
	}
	el := e.d.Now().Sub(e.start)
	res.ElapsedMs = el.Milliseconds()
	if el > 0 {
		res.PerSecond = float64(res.Counts.Replayed+res.Counts.Parked) / el.Seconds()
	}
	keys := make([]string, 0, len(e.dest))
	for k := range e.dest {
		keys = append(keys, k)
	}
	sort.Strings(keys)
	for _, k := range keys {
		d := e.dest[k]
		d.Reasons = reasonText(d.reasons)
		res.Destinations = append(res.Destinations, *d)
	}
	c := res.Counts
	e.d.Journal.Add(journal.Record{T: journal.End, Summary: &c, Why: res.StoppedBy, Settled: seen && e.src.bound() >= 0,
		AcksLostMax: e.acksLostMax})
	_ = e.d.Journal.Sync()
}

// checkDestinations fills the dry run's routing preview with whether each
// destination exists (passive declares: nothing is created).
func (e *engine) checkDestinations(ctx context.Context) {
	if len(e.res.Destinations) == 0 {
		return
	}
	conn, err := e.d.Dial(ctx, "read")
	if err != nil {
		return
	}
	defer conn.Close()
	for i := range e.res.Destinations {
		d := &e.res.Destinations[i]
		if ok, err := destinationExists(conn, d.Target); err == nil {
			d.Exists = &ok
		}
	}
}
