package replay

import (
	"context"
	"encoding/hex"
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
	// FileDigest is File's SHA-256 (FileDigest), kept in the journal.
	FileDigest string

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
	// MaxBounces is how many of this run's replays may come back to the
	// DLQ before the run stops (0: the first stops it).
	MaxBounces int
	// IdempotencyKeys are the fields holding a message's idempotency key,
	// looked up in ReplayDeps.Idempotency.
	IdempotencyKeys []Field
	ParkSucceeded   bool // park them instead of leaving them in the DLQ
	RetryInDoubt    bool
	Resume          *JournalState
	Args            []string // the command line, for the journal
	Version         string
	Yes             bool // publish; without it, a dry run
	// CreateDestination consents to declaring a destination queue that
	// does not exist (durable); without it the run refuses to publish to
	// one. A missing exchange is never created.
	CreateDestination bool
	// DrainGrace bounds the waits when stopping: for outstanding confirms,
	// then for the broker to apply the DLQ acks and requeues (settle.go).
	DrainGrace time.Duration
	// StartWait bounds the wait for the DLQ to have no consumer before the
	// count is taken (0: DefaultStartWait).
	StartWait time.Duration
	// Idle ends the run when no message arrives for this long while it
	// waits for one (0: 10 s).
	Idle             time.Duration
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
	Read           int `json:"read"`
	Replayed       int `json:"replayed"`
	Parked         int `json:"parked"`
	AlreadyDone    int `json:"already_done"` // resume: acked without republishing
	Returned       int `json:"returned"`
	Nacked         int `json:"nacked"`
	InDoubt        int `json:"in_doubt"`
	InDoubtEarlier int `json:"in_doubt_earlier"` // resume: left in the DLQ
	AckLost        int `json:"ack_lost"`
	Filtered       int `json:"filtered"`
	Succeeded      int `json:"skipped_succeeded"`
	// SucceededLeft are the skipped ones left in the DLQ (the others were
	// parked: --succeeded park).
	SucceededLeft int `json:"succeeded_left"`
	NoKey         int `json:"no_idempotency_key"`
	NoDestination int `json:"no_destination"`
	// DestinationMissing were not published: their destination does not
	// exist (and no consent to create it was given).
	DestinationMissing int `json:"destination_missing"`
	// NotPublished were decided but not yet published when the run
	// stopped (Ctrl-C while pacing, a closed channel): left in the DLQ.
	NotPublished int `json:"not_published"`
	// Bounced are this run's replays that came back to the DLQ and were
	// read; Arrived is how many messages the DLQ gained during the run
	// (at least), bounced or new.
	Bounced int `json:"bounced"`
	Arrived int `json:"arrived_during_run"`
	// New are messages read past the count at the start (looking for
	// bounces) that were not this run's: left for a later run.
	New     int `json:"new_dead_letters"`
	OverMax int `json:"over_max"`
	// Unread were counted at the start but not read (--max reached, or
	// the run stopped early).
	Unread          int `json:"not_read"`
	UserIDDropped   int `json:"user_id_dropped"`
	MalformedHeader int `json:"malformed_headers"`
	// NonRetryable are messages the dry run would replay that the rules
	// classify non-retryable.
	NonRetryable int `json:"non_retryable"`
}

// Left is how many messages the run read and left in the DLQ.
func (c Counts) Left() int {
	return c.Returned + c.Nacked + c.InDoubt + c.InDoubtEarlier + c.Filtered + c.SucceededLeft + c.NoDestination +
		c.DestinationMissing + c.NotPublished + c.Bounced + c.New + c.OverMax
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
	MaxBounces   int          `json:"max_bounces"`
	// Groups are the --group ids asked for that matched no message.
	UnmatchedGroups []string `json:"unmatched_groups"`
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
	What      string `json:"what"` // returned, nacked, in-doubt, no-destination, bounced, ack-lost, ...
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
	exists   map[string]bool // destinations checked before their first publish
	groups   map[string]bool // --group ids seen
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
	book *resumeBook
}

// Replay replays (or with Yes false, previews) a DLQ or an export file.
// A run that ends early (a lost connection, an interrupt, a missing
// destination) still returns its result; the error says why it could not
// go on.
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
	if o.Idle <= 0 {
		o.Idle = 10 * time.Second
	}
	res := &ReplayResult{Run: o.Rewrite.Run, DryRun: !o.Yes, Queue: o.Queue, File: o.File, Vhost: o.Vhost,
		Destinations: []DestCount{}, Problems: []MessageRef{}, ParkQueue: o.ParkQueue, MaxBounces: o.MaxBounces,
		UnmatchedGroups: []string{}}
	e := &engine{o: &o, d: &d, res: res, outst: map[uint64]*pending{}, ret: map[string]amqp.Return{},
		dest: map[string]*DestCount{}, exists: map[string]bool{}, groups: map[string]bool{}, start: d.Now(),
		copies: map[[16]byte]int32{}}
	if o.Resume != nil {
		e.book = newResumeBook(o.Resume, d.Records != nil)
	}
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
	d.Journal.Add(JournalRecord{T: JStart, Queue: o.Queue, File: o.File, Vhost: o.Vhost, Args: o.Args, Count: res.AtStart.Messages,
		Version: o.Version, FileDigest: o.FileDigest})
	if err := d.Journal.Flush(); err != nil {
		src.release()
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
	switch {
	case runErr != nil:
	case e.runErr != nil:
		runErr = e.runErr
	case e.srcErr != nil:
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
		return nil, queueError(e.o.Queue, err)
	}
	e.res.AtStart = st
	if st.Consumers > 0 && e.o.Yes {
		conn.Close()
		return nil, &problem.Input{Field: "Queue", Value: e.o.Queue, Quote: true,
			Why:  fmt.Sprintf("%s attached: a replay must be the only reader (a consumer on a DLQ races the replay and can loop messages back)", english.Count(st.Consumers, "consumer", "consumers")),
			Hint: "stop it, then run again"}
	}
	window := e.o.Window
	switch {
	case !e.o.Yes:
		window = readWindow(window, st.Messages)
	case e.o.Rate > 0:
		// Paced: a quarter second of messages is enough ahead, and what
		// the broker has sent but the run has not read yet is what the
		// DLQ's depth cannot tell from bounces (checkArrivals).
		window = min(window, max(10, int(e.o.Rate/4)))
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
	// The channel's own close carries the broker's reason (404 NOT_FOUND
	// for a missing exchange); the connection's says it went away.
	e.chErr = ch.NotifyClose(make(chan *amqp.Error, 1))
	e.pubErr = conn.NotifyClose(make(chan *amqp.Error, 1))
	e.pubConn, e.pubCh = conn, ch
	return nil
}

// watchEvery is how often a replay looks at the DLQ's depth for messages
// coming back.
const watchEvery = 250 * time.Millisecond

// loop is the run: one goroutine owns every decision, so the order of
// events (a return is always seen before its confirm) is the broker's.
// Each turn first settles every confirm and return that has arrived (so
// confirms are handled as they come, never behind new publishes or the
// --rate pacing), then publishes what --rate allows, then waits for the
// next event.
func (e *engine) loop(ctx context.Context, meter progress.Meter) error {
	o := e.o
	consuming := true
	bound := e.src.bound()
	srcClosed := e.src.closed()
	idle := time.NewTimer(o.Idle)
	defer idle.Stop()
	pacer := time.NewTimer(time.Hour)
	defer pacer.Stop()
	var watch <-chan time.Time
	if o.Yes && bound >= 0 {
		t := time.NewTicker(watchEvery)
		defer t.Stop()
		watch = t.C
	}
	stopConsuming := func(why string) {
		if consuming {
			consuming = false
			if e.stop == "" {
				e.stop = why
			}
			e.src.stop()
		}
	}
	for {
		e.settleReady()
		if consuming {
			switch {
			case e.stop != "":
				stopConsuming(e.stop)
			case bound >= 0 && e.res.Counts.Read >= bound+e.bounceCheck:
				if e.bounceCheck == 0 && e.startBounceCheck(bound) {
					// What arrived is right behind: a short wait.
					resetTimer(idle, min(o.Idle, 2*time.Second))
					continue
				}
				stopConsuming("count at start reached")
			case o.Yes && o.Max > 0 && e.selected >= o.Max && e.bounceCheck == 0:
				stopConsuming("--max reached")
			}
		}
		if err := e.publishQueued(ctx); err != nil {
			return err
		}
		if !consuming && len(e.outst) == 0 && len(e.queued) == 0 {
			return nil
		}
		var in <-chan srcItem
		var idleC <-chan time.Time
		if consuming && len(e.queued) == 0 && len(e.outst) < o.Window {
			in, idleC = e.src.items(), idle.C
		}
		var pace <-chan time.Time
		if len(e.queued) > 0 {
			resetTimer(pacer, time.Until(e.paceAt))
			pace = pacer.C
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
			if e.bounceCheck == 0 {
				resetTimer(idle, o.Idle)
			}
			batch := append(make([]srcItem, 0, 64), si)
			batch = e.more(batch, in, e.batchSize(bound))
			if err := e.handle(ctx, batch, meter); err != nil {
				return err
			}
		case r, ok := <-e.rets:
			e.returned(r, ok)
		case c, ok := <-e.confs:
			if !e.confirmed(c, ok) {
				stopConsuming(e.stop)
			}
		case <-pace:
		case <-idleC:
			stopConsuming(fmt.Sprintf("no message arrived for %s", o.Idle))
		case <-watch:
			e.checkArrivals(bound, e.bounceCheck == 0)
		case err := <-e.chErr:
			e.chErr = nil
			if err != nil {
				e.channelClosed(err)
				stopConsuming(e.stop)
			}
		case err := <-e.pubErr:
			e.pubErr = nil
			if err != nil && e.lost == "" {
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
			stopConsuming("interrupted")
			e.unqueue("not published: interrupted")
			return e.drainConfirms()
		}
	}
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

// handle decides a batch of messages and queues those to replay or park.
func (e *engine) handle(ctx context.Context, batch []srcItem, meter progress.Meter) error {
	o := e.o
	now := e.d.Now()
	items := make([]*item, 0, len(batch))
	bound := e.src.bound()
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
		it := &item{m: si.m, d: si.d, past: bound >= 0 && e.res.Counts.Read > bound}
		if len(o.Filter.Groups) > 0 || !o.Yes {
			it.in = o.Analyzer.Analyze(it.m)
		} else {
			it.in = o.Analyzer.Origin(it.m)
		}
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
		_ = e.src.hold(&item{m: si.m, d: si.d})
	}
	if err := e.src.release(); err != nil && e.lost == "" {
		e.lost = "requeue held messages: " + err.Error()
	}
	res := e.res
	res.Settled = true
	seen := false // the DLQ was seen to apply every ack and requeue
	if e.lost == "" {
		sctx, budget := settleContext(ctx, e.o.DrainGrace)
		res.Settled = e.src.settle(sctx, res.AtStart.Consumers, res.AtStart.Messages, budget)
		seen = res.Settled
	}
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
	e.d.Journal.Add(JournalRecord{T: JEnd, Summary: &c, Why: res.StoppedBy, Settled: seen && e.src.bound() >= 0})
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
