package replay

import (
	"context"
	"errors"
	"fmt"
	"io"
	"sort"
	"time"

	"github.com/dupctl/dupctl/internal/platform/english"
	"github.com/dupctl/dupctl/internal/platform/problem"
	"github.com/dupctl/dupctl/internal/platform/progress"
	amqp "github.com/rabbitmq/amqp091-go"
	"golang.org/x/time/rate"
)

// ReplayDeps are what a replay reads and writes besides its options: the
// broker, export records (for a file source), the source of truth for
// SUCCEEDED keys, the journal, the clock and a progress meter.
type ReplayDeps struct {
	Dial Dialer
	// Records are export records to replay (ReplayOptions.File names
	// them); nil for a queue source.
	Records io.Reader
	// Idempotency, when set, skips messages whose key is SUCCEEDED.
	Idempotency Idempotency
	Journal     *Journal // nil: none (a dry run)
	Now         func() time.Time
	Progress    progress.Meter
}

// ReplayOptions are one `dlq replay` run.
type ReplayOptions struct {
	// Exactly one source: Queue, or File (the name of ReplayDeps.Records).
	Queue string
	File  string
	Vhost string

	Router   Router
	Filter   Filter
	Max      int // replay at most this many (0: no limit)
	Analyzer *Analyzer
	Rewrite  Rewrite // Run, ResetAttempts, User; Now is set per publish

	Window int // prefetch and unconfirmed publishes
	// WindowBytes bounds the prefetch in bytes: 0 is DefaultWindowBytes,
	// a negative value no bound.
	WindowBytes int64
	Rate        float64 // publishes per second (0: unlimited)
	MaxReplays  int     // park messages replayed this often already (0: never)
	ParkQueue   string
	// IdempotencyKeys are the fields holding a message's idempotency key,
	// looked up in ReplayDeps.Idempotency.
	IdempotencyKeys []Field
	ParkSucceeded   bool // park them instead of leaving them in the DLQ
	RetryInDoubt    bool
	Resume          *JournalState
	Args            []string // the command line, for the journal
	Version         string
	Yes             bool // publish; without it, a dry run
	// DrainGrace bounds the waits when stopping: for outstanding confirms,
	// then for the broker to apply the DLQ acks and requeues (settle.go).
	DrainGrace time.Duration
	// StartWait bounds the wait for the DLQ to have no consumer before the
	// count is taken (0: DefaultStartWait).
	StartWait        time.Duration
	DeclareParkQueue bool
}

// Idempotency tells which idempotency keys the source of truth already
// recorded as SUCCEEDED.
type Idempotency interface {
	Succeeded(ctx context.Context, keys []string) (map[string]bool, error)
	String() string
}

// Counts are what happened to the messages a run read.
type Counts struct {
	Read            int `json:"read"`
	Replayed        int `json:"replayed"`
	Parked          int `json:"parked"`
	AlreadyDone     int `json:"already_done"` // resume: acked without republishing
	Returned        int `json:"returned"`
	Nacked          int `json:"nacked"`
	InDoubt         int `json:"in_doubt"`
	InDoubtEarlier  int `json:"in_doubt_earlier"` // resume: left in the DLQ
	AckLost         int `json:"ack_lost"`
	Filtered        int `json:"filtered"`
	Succeeded       int `json:"skipped_succeeded"`
	NoKey           int `json:"no_idempotency_key"`
	NoDestination   int `json:"no_destination"`
	Bounced         int `json:"bounced"`
	OverMax         int `json:"over_max"`
	UserIDDropped   int `json:"user_id_dropped"`
	MalformedHeader int `json:"malformed_headers"`
}

// ReplayResult is the outcome of a run (the JSON data of `dlq replay`).
type ReplayResult struct {
	Run          string       `json:"run"`
	DryRun       bool         `json:"dry_run"`
	Queue        string       `json:"queue,omitempty"`
	File         string       `json:"file,omitempty"`
	Vhost        string       `json:"vhost,omitempty"`
	AtStart      QueueState   `json:"at_start"`
	Counts       Counts       `json:"counts"`
	Destinations []DestCount  `json:"destinations"`
	Problems     []MessageRef `json:"problems"`
	StoppedBy    string       `json:"stopped_by"`
	ElapsedMs    int64        `json:"elapsed_ms"`
	PerSecond    float64      `json:"per_second"`
	ParkQueue    string       `json:"park_queue,omitempty"`
	Quorum       bool         `json:"quorum"`
	// Lost is set when a connection went away mid-run.
	Lost string `json:"connection_lost,omitempty"`
	// Settled is false when, at the end, the DLQ did not show every ack
	// and requeue of the run applied within --drain-grace (settle.go).
	Settled bool `json:"settled"`
}

// DestCount is one row of the routing preview.
type DestCount struct {
	Target   Target `json:"target"`
	Kind     string `json:"kind"` // replay or park
	Messages int    `json:"messages"`
	Bytes    int64  `json:"bytes"`
	Exists   *bool  `json:"exists,omitempty"`
	Reasons  string `json:"reasons"`
	reasons  map[string]int
}

// MessageRef names a message that needs a person's attention.
type MessageRef struct {
	MessageID string `json:"message_id"`
	FP        string `json:"fingerprint"`
	What      string `json:"what"` // returned, nacked, in-doubt, no-destination, bounced, ack-lost
	Why       string `json:"why,omitempty"`
}

// maxProblems bounds the per-message list in the result (counts stay exact).
const maxProblems = 1000

// item is one message moving through a run.
type item struct {
	m   *Message
	d   Delivery // zero for a file source
	in  Info
	fp  string
	dst Target
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
	toAck    []*item
	limit    *rate.Limiter
	seq      int64
	outst    map[uint64]*pending // by publisher sequence number
	ret      map[string]amqp.Return
	rets     chan amqp.Return
	confs    chan amqp.Confirmation
	pubErr   chan *amqp.Error
	dest     map[string]*DestCount
	parkOK   bool
	start    time.Time
	stop     string
	lost     string
}

// Replay replays (or with Yes false, previews) a DLQ or an export file.
// A run that ends early (a lost connection, an interrupt) still returns
// its result; the error says why it could not go on.
func Replay(ctx context.Context, d ReplayDeps, o ReplayOptions) (*ReplayResult, error) {
	if d.Now == nil {
		d.Now = time.Now
	}
	if o.Analyzer == nil {
		o.Analyzer = &Analyzer{}
	}
	o.Window = max(o.Window, 1)
	if o.DrainGrace <= 0 {
		o.DrainGrace = 30 * time.Second
	}
	res := &ReplayResult{Run: o.Rewrite.Run, DryRun: !o.Yes, Queue: o.Queue, File: o.File, Vhost: o.Vhost,
		Destinations: []DestCount{}, Problems: []MessageRef{}, ParkQueue: o.ParkQueue}
	e := &engine{o: &o, d: &d, res: res, outst: map[uint64]*pending{}, ret: map[string]amqp.Return{}, dest: map[string]*DestCount{}, start: d.Now()}
	if o.Rate > 0 {
		e.limit = rate.NewLimiter(rate.Limit(o.Rate), 1)
	}
	meter := progress.Or(d.Progress)
	defer meter.Done()

	src, err := e.open(ctx)
	if err != nil {
		return nil, err
	}
	e.src = src
	defer src.close()
	meter.SetTotal(int64(src.bound()))
	d.Journal.Add(JournalRecord{T: JStart, Queue: o.Queue, File: o.File, Vhost: o.Vhost, Args: o.Args, Count: res.AtStart.Messages, Version: o.Version})
	if err := d.Journal.Flush(); err != nil {
		return nil, fmt.Errorf("write journal: %w", err)
	}
	if o.Yes {
		if err := e.openPublisher(ctx); err != nil {
			src.release()
			return nil, err
		}
		defer e.pubConn.Close()
	}
	runErr := e.loop(ctx, meter)
	e.finish(ctx)
	if !o.Yes {
		e.checkDestinations(ctx)
	}
	if runErr == nil && e.srcErr != nil {
		runErr = &problem.Input{Field: "File", Value: o.File, Quote: true, Why: e.srcErr.Error(), Err: e.srcErr,
			Hint: "the messages before it were handled; fix the file and {Resume} the journal"}
	}
	return res, runErr
}

func (e *engine) open(ctx context.Context) (source, error) {
	if e.d.Records != nil {
		return newFileSource(e.d.Records), nil
	}
	conn, err := e.d.Dial(ctx, "consume")
	if err != nil {
		return nil, err
	}
	st, err := startState(ctx, conn, e.o.Queue, e.o.StartWait)
	if err != nil {
		conn.Close()
		return nil, err
	}
	e.res.AtStart = st
	if st.Consumers > 0 && e.o.Yes {
		conn.Close()
		return nil, &problem.Input{Field: "Queue", Value: e.o.Queue, Quote: true,
			Why:  fmt.Sprintf("%s attached: a replay must be the only reader (a consumer on a DLQ races the replay and can loop messages back)", english.Count(st.Consumers, "consumer", "consumers")),
			Hint: "stop it, then run again"}
	}
	window := e.o.Window
	if !e.o.Yes {
		window = readWindow(window, st.Messages)
	}
	c, err := NewConsumer(conn, e.o.Queue, window, e.o.WindowBytes, e.o.Yes, "dupctl-replay-"+e.o.Rewrite.Run)
	if err != nil {
		conn.Close()
		return nil, err
	}
	return &queueSource{c: c, conn: conn, n: st.Messages}, nil
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
	e.pubErr = conn.NotifyClose(make(chan *amqp.Error, 1))
	e.pubConn, e.pubCh = conn, ch
	return nil
}

// loop is the run: one goroutine owns every decision, so the order of
// events (a return is always seen before its confirm) is the broker's.
func (e *engine) loop(ctx context.Context, meter progress.Meter) error {
	o := e.o
	consuming := true
	bound := e.src.bound()
	srcClosed := e.src.closed()
	for {
		if consuming && ((bound >= 0 && e.res.Counts.Read >= bound) || (o.Max > 0 && e.selected >= o.Max) || e.stop != "") {
			consuming = false
			if e.stop == "" {
				e.stop = e.stopReason(bound)
			}
			e.src.stop()
		}
		if !consuming && len(e.outst) == 0 {
			return nil
		}
		var in <-chan srcItem
		if consuming && len(e.outst) < o.Window {
			in = e.src.items()
		}
		select {
		case si, ok := <-in:
			if !ok {
				consuming = false
				if e.stop == "" {
					e.stop = e.src.endReason()
				}
				if err := e.src.err(); err != nil {
					e.srcErr = err
					e.stop = "malformed input"
				}
				continue
			}
			batch := append(make([]srcItem, 0, 64), si)
			batch = e.more(batch, in, e.batchSize())
			if err := e.handle(ctx, batch, meter); err != nil {
				return err
			}
		case r := <-e.rets:
			e.ret[replayIDOf(r.Headers)] = r
		case c, ok := <-e.confs:
			if !ok {
				e.confs = nil
				e.publisherLost("publisher channel closed")
				consuming = false
				continue
			}
			e.confirm(c)
			if len(e.confs) == 0 || len(e.toAck) >= 256 {
				// A burst of confirms is settled (or enough of one that
				// the prefetch window must not wait): ack it, and put the
				// outcomes in the file (after a kill, fewer messages look
				// in doubt).
				e.flushAcks()
				_ = e.d.Journal.Flush()
			}
		case err := <-e.pubErr:
			e.pubErr = nil
			if err != nil {
				e.lost = "publisher connection: " + err.Error()
			}
		case <-srcClosed:
			srcClosed = nil
			if e.lost == "" {
				e.lost = "consumer connection closed"
			}
			consuming = false
			e.stop = "connection lost"
		case <-ctx.Done():
			if consuming {
				consuming = false
				e.stop = "interrupted"
				e.src.stop()
			}
			return e.drainConfirms()
		}
	}
}

func (e *engine) stopReason(bound int) string {
	switch {
	case e.stop != "":
		return e.stop
	case bound >= 0 && e.res.Counts.Read >= bound:
		return "count at start reached"
	}
	return "--max reached"
}

// batchSize is how many ready messages are decided together: enough to
// amortize journal writes, few enough that --rate paces before journaling.
func (e *engine) batchSize() int {
	n := min(256, e.o.Window-len(e.outst))
	if e.o.Rate > 0 {
		n = min(n, int(e.o.Rate/10))
	}
	return max(n, 1)
}

// more takes what else is ready without waiting, to batch journal writes
// and idempotency look-ups.
func (e *engine) more(batch []srcItem, in <-chan srcItem, limit int) []srcItem {
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

// handle decides a batch of messages and publishes those to replay or park.
func (e *engine) handle(ctx context.Context, batch []srcItem, meter progress.Meter) error {
	o := e.o
	now := e.d.Now()
	items := make([]*item, 0, len(batch))
	for _, si := range batch {
		if err := e.src.seen(si); err != nil && e.lost == "" {
			// The consumer could not restart with a new prefetch: stop
			// reading, as when its channel closes (the batch in hand goes
			// on; an ack that then fails is journaled as ack-lost).
			e.lost = "consumer: " + err.Error()
			e.stop = "connection lost"
		}
		e.res.Counts.Read++
		meter.Add(1)
		it := &item{m: si.m, d: si.d}
		if len(o.Filter.Groups) > 0 {
			it.in = o.Analyzer.Analyze(it.m)
		} else {
			it.in = o.Analyzer.Origin(it.m)
		}
		it.fp = it.m.Fingerprint()
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
		p := e.decide(it, succeeded, now)
		if p != nil {
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
	for _, p := range toPublish {
		if err := e.publish(ctx, p); err != nil {
			return err
		}
	}
	return nil
}

// decide is every rule of the replay for one message, in order. It returns
// the publish to make, or nil when the message is settled or held.
func (e *engine) decide(it *item, succeeded map[string]bool, now time.Time) *pending {
	o, c := e.o, &e.res.Counts
	m, in := it.m, &it.in
	if o.Resume != nil {
		switch o.Resume.Outcome[it.fp] {
		case OutcomeDone:
			// At its destination already (its ack was lost): settle it.
			c.AlreadyDone++
			e.ack(it)
			return nil
		case OutcomeDoubt:
			if !o.RetryInDoubt {
				c.InDoubtEarlier++
				e.problem(it, "in-doubt", "published by an earlier part of this run, confirm never seen: left in the DLQ (check the destination, then --retry-in-doubt)")
				e.hold(it)
				return nil
			}
		}
	}
	if in.Origin.ReplayRun != "" && in.Origin.ReplayRun == o.Rewrite.Run {
		// One of this run's own replays died again and came back.
		c.Bounced++
		e.problem(it, "bounced", "replayed by this run and dead-lettered again: the failure is not fixed")
		e.hold(it)
		e.stop = "replayed messages came back (bounced)"
		return nil
	}
	if !o.Filter.Match(m, in, now) {
		c.Filtered++
		e.hold(it)
		return nil
	}
	if o.Max > 0 && e.selected >= o.Max {
		c.OverMax++
		e.hold(it)
		return nil
	}
	if o.MaxReplays > 0 && in.Origin.ReplayCount >= int64(o.MaxReplays) {
		return e.park(it, fmt.Sprintf("replayed %d times already (--max-replays %d)", in.Origin.ReplayCount, o.MaxReplays))
	}
	if succeeded != nil {
		key, _, ok := FirstOf(m, o.IdempotencyKeys)
		switch {
		case !ok:
			c.NoKey++
		case succeeded[key]:
			c.Succeeded++
			e.d.Journal.Add(JournalRecord{T: JSkip, FP: it.fp, ID: m.Props.MessageID, Why: "idempotency key " + key + " already SUCCEEDED"})
			if o.ParkSucceeded {
				return e.park(it, "idempotency key "+key+" already SUCCEEDED")
			}
			e.hold(it)
			return nil
		}
	}
	dst, ok := o.Router.Route(m, in)
	if ok && dst.Exchange == "" && dst.RoutingKey == o.Queue && o.Queue != "" {
		ok = false // its origin is this DLQ itself: replaying would loop
	}
	if !ok {
		c.NoDestination++
		e.problem(it, "no-destination", "no x-death or x-original-* headers (or they name this DLQ): give --to")
		e.d.Journal.Add(JournalRecord{T: JSkip, FP: it.fp, ID: m.Props.MessageID, Why: "no destination"})
		e.hold(it)
		return nil
	}
	it.dst = dst
	e.selected++
	e.count(dst, "replay", it)
	if !o.Yes {
		e.hold(it)
		return nil
	}
	return e.newPending(it, "replay")
}

func (e *engine) park(it *item, why string) *pending {
	q := e.o.ParkQueue
	it.dst = Target{RoutingKey: q, From: "park"}
	it.in.ClassRule = why
	e.count(it.dst, "park", it)
	if !e.o.Yes {
		e.hold(it)
		return nil
	}
	return e.newPending(it, "park")
}

func (e *engine) newPending(it *item, kind string) *pending {
	e.seq++
	seq := e.seq
	if e.o.Resume != nil {
		seq += e.o.Resume.MaxSeq
	}
	p := &pending{it: it, seq: seq, kind: kind, id: fmt.Sprintf("%s-%d", e.o.Rewrite.Run, seq)}
	e.d.Journal.Add(JournalRecord{T: JPub, Seq: seq, FP: it.fp, ID: it.m.Props.MessageID, Kind: kind, To: it.dst.String()})
	return p
}

func (e *engine) count(t Target, kind string, it *item) {
	key := kind + "\x00" + t.String()
	d := e.dest[key]
	if d == nil {
		d = &DestCount{Target: t, Kind: kind, reasons: map[string]int{}}
		e.dest[key] = d
	}
	d.Messages++
	d.Bytes += int64(len(it.m.Body))
	d.reasons[it.in.Reason]++
}

func (e *engine) publish(ctx context.Context, p *pending) error {
	o := e.o
	if p.kind == "park" && !e.parkOK {
		if err := e.ensureParkQueue(); err != nil {
			return err
		}
	}
	if e.limit != nil {
		if err := e.limit.Wait(ctx); err != nil {
			// Interrupted while pacing: this message was never published.
			e.d.Journal.Add(JournalRecord{T: JReturned, Seq: p.seq, Why: "not published: interrupted"})
			e.hold(p.it)
			return nil
		}
	}
	rw := o.Rewrite
	rw.Now = e.d.Now().UTC().Truncate(time.Second)
	var pub amqp.Publishing
	if p.kind == "park" {
		pub = rw.Parked(p.it.m, p.seq, p.it.in.ClassRule)
	} else {
		pub = rw.Replayed(p.it.m, p.seq, p.it.dst)
	}
	if p.it.m.Props.UserID != "" && pub.UserId == "" {
		e.res.Counts.UserIDDropped++
	}
	pub.Headers[HeaderReplayID] = p.id
	tag := e.pubCh.GetNextPublishSeqNo()
	// Publishing does not take ctx: once started, a publish completes and
	// its confirm is awaited, even on Ctrl-C.
	err := e.pubCh.PublishWithContext(context.WithoutCancel(ctx), p.it.dst.Exchange, p.it.dst.RoutingKey, true, false, pub)
	if errors.Is(err, amqp.ErrClosed) {
		// Refused before anything was sent: not published, not in doubt.
		e.d.Journal.Add(JournalRecord{T: JReturned, Seq: p.seq, Why: "not published: publisher channel closed"})
		e.hold(p.it)
		e.publisherLost("publisher channel closed")
		return nil
	}
	if err != nil {
		// The frame may or may not have left: in doubt.
		e.doubt(p, "publish failed: "+err.Error())
		e.publisherLost("publish failed: " + err.Error())
		return nil
	}
	e.outst[tag] = p
	return nil
}

// ensureParkQueue checks (on a channel of its own: a missing queue closes
// the channel) that the parking queue exists, and declares it durable when
// it does not and DeclareParkQueue allows.
func (e *engine) ensureParkQueue() error {
	exists, err := queueExists(e.pubConn, e.o.ParkQueue)
	if err != nil {
		return fmt.Errorf("parking queue %q: %w", e.o.ParkQueue, err)
	}
	if !exists {
		if !e.o.DeclareParkQueue {
			return &problem.Input{Field: "ParkQueue", Value: e.o.ParkQueue, Quote: true, Why: "does not exist", Hint: "create it, or name another"}
		}
		ch, err := e.pubConn.Channel()
		if err != nil {
			return fmt.Errorf("open channel: %w", err)
		}
		defer ch.Close()
		if _, err := ch.QueueDeclare(e.o.ParkQueue, true, false, false, false, nil); err != nil {
			return fmt.Errorf("declare parking queue %q: %w", e.o.ParkQueue, err)
		}
	}
	e.parkOK = true
	return nil
}

// confirm settles one publish: acked and not returned means it is at its
// destination, and only then is the DLQ message acked.
func (e *engine) confirm(c amqp.Confirmation) {
	e.drainReturns()
	p, ok := e.outst[c.DeliveryTag]
	if !ok {
		return
	}
	delete(e.outst, c.DeliveryTag)
	if r, returned := e.ret[p.id]; returned {
		delete(e.ret, p.id)
		e.res.Counts.Returned++
		why := fmt.Sprintf("returned %d %s: no queue is bound for %s", r.ReplyCode, r.ReplyText, p.it.dst)
		e.d.Journal.Add(JournalRecord{T: JReturned, Seq: p.seq, Why: why})
		e.problem(p.it, "returned", why)
		e.hold(p.it)
		return
	}
	if !c.Ack {
		if p.it.dst.Exchange != "" {
			// An exchange may have fanned it out to queues that took it
			// before one refused: retrying would duplicate it there.
			e.doubt(p, "broker nack after publishing to an exchange: some bound queues may have it")
			return
		}
		e.res.Counts.Nacked++
		e.d.Journal.Add(JournalRecord{T: JNacked, Seq: p.seq, Why: "broker nack"})
		e.problem(p.it, "nacked", "the broker refused it (nack): still in the DLQ")
		e.hold(p.it)
		return
	}
	e.d.Journal.Add(JournalRecord{T: JOK, Seq: p.seq})
	if p.kind == "park" {
		e.res.Counts.Parked++
	} else {
		e.res.Counts.Replayed++
	}
	e.ack(p.it)
}

func (e *engine) drainReturns() {
	for {
		select {
		case r := <-e.rets:
			e.ret[replayIDOf(r.Headers)] = r
		default:
			return
		}
	}
}

func replayIDOf(h amqp.Table) string {
	s, _ := h[HeaderReplayID].(string)
	return s
}

// ack queues a DLQ ack; flushAcks sends the queued ones in as few frames
// as is safe, at the end of each burst of confirms.
func (e *engine) ack(it *item) { e.toAck = append(e.toAck, it) }

func (e *engine) flushAcks() {
	if len(e.toAck) == 0 {
		return
	}
	its := e.toAck
	e.toAck = nil
	if err := e.src.ackMany(its); err != nil {
		for _, it := range its {
			e.res.Counts.AckLost++
			e.problem(it, "ack-lost", "at its destination, but the DLQ ack failed: it is back in the DLQ; a --resume run acks it without republishing")
			e.d.Journal.Add(JournalRecord{T: JAckLost, FP: it.fp, ID: it.m.Props.MessageID, Why: err.Error()})
		}
	}
}

func (e *engine) hold(it *item) {
	if err := e.src.hold(it); err != nil && e.lost == "" {
		e.lost = "consumer: " + err.Error()
		e.stop = "connection lost"
	}
}

func (e *engine) doubt(p *pending, why string) {
	e.res.Counts.InDoubt++
	e.d.Journal.Add(JournalRecord{T: JDoubt, Seq: p.seq, Why: why})
	e.problem(p.it, "in-doubt", why)
	e.hold(p.it)
}

// publisherLost marks every unconfirmed publish in doubt: it may or may not
// have reached the destination. Its DLQ message stays (requeued), and the
// journal says so; nothing is retried silently.
func (e *engine) publisherLost(why string) {
	if e.lost == "" {
		e.lost = why
	}
	if e.stop == "" {
		e.stop = "connection lost"
	}
	tags := make([]uint64, 0, len(e.outst))
	for t := range e.outst {
		tags = append(tags, t)
	}
	sort.Slice(tags, func(i, j int) bool { return tags[i] < tags[j] })
	for _, t := range tags {
		e.doubt(e.outst[t], "connection lost before the publish was confirmed")
		delete(e.outst, t)
	}
}

// drainConfirms waits (at most DrainGrace) for outstanding confirms after
// an interrupt.
func (e *engine) drainConfirms() error {
	deadline := time.NewTimer(e.o.DrainGrace)
	defer deadline.Stop()
	for len(e.outst) > 0 {
		select {
		case r := <-e.rets:
			e.ret[replayIDOf(r.Headers)] = r
		case c, ok := <-e.confs:
			if !ok {
				e.publisherLost("publisher channel closed")
				return nil
			}
			e.confirm(c)
			e.flushAcks()
		case <-deadline.C:
			e.publisherLost(fmt.Sprintf("no confirm within %s of stopping", e.o.DrainGrace))
			return nil
		}
	}
	return nil
}

func (e *engine) problem(it *item, what, why string) {
	if len(e.res.Problems) >= maxProblems {
		return
	}
	e.res.Problems = append(e.res.Problems, MessageRef{MessageID: it.m.Props.MessageID, FP: it.fp, What: what, Why: why})
}

// finish requeues everything held, closes the journal and fills the result.
func (e *engine) finish(ctx context.Context) {
	e.flushAcks()
	for _, si := range e.src.rest() {
		_ = e.src.seen(si) // stopped: records the tag, never restarts
		_ = e.src.hold(&item{m: si.m, d: si.d})
	}
	if err := e.src.release(); err != nil && e.lost == "" {
		e.lost = "requeue held messages: " + err.Error()
	}
	res := e.res
	res.Settled = true
	if e.lost == "" {
		sctx, budget := settleContext(ctx, e.o.DrainGrace)
		res.Settled = e.src.settle(sctx, res.AtStart.Consumers, res.AtStart.Messages, budget)
	}
	if e.stop == "" {
		e.stop = e.src.endReason()
	}
	res.StoppedBy = e.stop
	res.Lost = e.lost
	if ctx.Err() != nil {
		res.StoppedBy = "interrupted"
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
	e.d.Journal.Add(JournalRecord{T: JEnd, Summary: &c, Why: res.StoppedBy})
	_ = e.d.Journal.Sync()
}

func reasonText(m map[string]int) string {
	keys := make([]string, 0, len(m))
	for k := range m {
		keys = append(keys, k)
	}
	sort.Strings(keys)
	s := ""
	for i, k := range keys {
		if i > 0 {
			s += ", "
		}
		s += fmt.Sprintf("%s %d", k, m[k])
	}
	return s
}

// lookup asks the idempotency store about a batch's keys at once.
func (e *engine) lookup(ctx context.Context, items []*item) (map[string]bool, error) {
	if e.d.Idempotency == nil {
		return nil, nil
	}
	var keys []string
	for _, it := range items {
		if k, _, ok := FirstOf(it.m, e.o.IdempotencyKeys); ok {
			keys = append(keys, k)
		}
	}
	if len(keys) == 0 {
		return map[string]bool{}, nil
	}
	got, err := e.d.Idempotency.Succeeded(ctx, keys)
	if err != nil {
		if errors.Is(err, context.Canceled) {
			return map[string]bool{}, nil
		}
		return nil, fmt.Errorf("idempotency look-up in %s: %w", e.d.Idempotency, err)
	}
	return got, nil
}

func queueExists(conn *amqp.Connection, name string) (bool, error) {
	_, err := InspectQueue(conn, name)
	if errors.Is(err, ErrQueueNotFound) {
		return false, nil
	}
	return err == nil, err
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
		var ok bool
		var err error
		if d.Target.Exchange == "" {
			ok, err = queueExists(conn, d.Target.RoutingKey)
		} else {
			ok, err = ExchangeExists(conn, d.Target.Exchange)
		}
		if err == nil {
			d.Exists = &ok
		}
	}
}
