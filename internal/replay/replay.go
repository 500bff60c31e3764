package replay

import (
	"context"
	"fmt"
	"io"
	"time"

	"github.com/dupctl/dupctl/internal/replay/classify"
	"github.com/dupctl/dupctl/internal/replay/dlqread"
	"github.com/dupctl/dupctl/internal/replay/journal"

	"github.com/dupctl/dupctl/internal/platform/problem"
	"github.com/dupctl/dupctl/internal/platform/progress"
	amqp "github.com/rabbitmq/amqp091-go"
	"golang.org/x/time/rate"
)

// ReplayDeps are what a replay reads and writes besides its options: the
// broker, export records (for a file source), the source of truth for
// SUCCEEDED keys, the journal, the clock and a progress meter.
type ReplayDeps struct {
	Dial dlqread.Dialer
	// Records are export records to replay (ReplayOptions.File names
	// them); nil for a queue source.
	Records io.Reader
	// Idempotency, when set, skips messages whose key is SUCCEEDED.
	Idempotency Idempotency
	Journal     *journal.Journal // nil: none (a dry run)
	Now         func() time.Time
	Progress    progress.Meter
	// Failover, when the URL names several nodes of a cluster, lets a
	// replay of a queue that lost its connection to one node go on through
	// another in the same process (failover.go); nil: a lost connection
	// ends the run.
	Failover *Failover
}

// ReplayOptions are one `dlq replay` run.
type ReplayOptions struct {
	// Exactly one source: Queue, or File (the name of ReplayDeps.Records).
	Queue string
	File  string
	Vhost string
	// FileDigest is File's SHA-256 (journal.FileDigest), kept in the journal.
	FileDigest string

	Router   classify.Router
	Filter   classify.Filter
	Max      int // replay at most this many (0: no limit)
	Analyzer *classify.Analyzer
	Rewrite  Rewrite // Run, ResetAttempts, User; Now is set per publish

	Window int // prefetch and unconfirmed publishes
	// WindowBytes bounds the prefetch in bytes: 0 is dlqread.DefaultWindowBytes,
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
	IdempotencyKeys []classify.Field
	ParkSucceeded   bool // park them instead of leaving them in the DLQ
	RetryInDoubt    bool
	// CheckDestination: a resumed part first reads each destination queue
	// (with no consumer) holding publishes in doubt, to settle them
	// (destcheck.go): non-destructive, but every message read there is
	// redelivered, and on a quorum queue counts one more delivery.
	CheckDestination bool
	Resume           *journal.State
	Args             []string // the command line, for the journal
	Version          string
	Yes              bool // publish; without it, a dry run
	// CreateDestination consents to declaring a destination queue that
	// does not exist (durable); without it the run refuses to publish to
	// one. A missing exchange is never created.
	CreateDestination bool
	// DrainGrace bounds the waits when stopping: for outstanding confirms,
	// then for the broker to apply the DLQ acks and requeues (internal/consume/settle.go).
	DrainGrace time.Duration
	// StartWait bounds the wait for the DLQ to have no consumer before the
	// count is taken (0: 5 s).
	StartWait time.Duration
	// Idle ends the run when no message arrives for this long while it
	// waits for one (0: 10 s).
	Idle             time.Duration
	DeclareParkQueue bool

	// partWhy is why a part after a failover started (its start record);
	// after is what that part's DLQ must show (nil for a first part).
	partWhy string
	after   *afterLoss
}

// afterLoss is what a part that follows a lost node knows of the DLQ
// before it counts it.
type afterLoss struct {
	// mustHold is how many messages the DLQ holds at least: its count at
	// the run's start less every DLQ ack the run sent (-1: unknown, when
	// another consumer was attached at the start). A count below it is
	// not the DLQ's (a quorum queue without its leader answers 0).
	mustHold int
	// ghosts are the lost connections' consumers the broker may go on
	// counting (consume.Expect.Ghosts).
	ghosts int
	// short: the node that took over showed fewer than mustHold for the
	// whole failover wait; the part counts what it shows without waiting
	// again.
	short bool
	wait  time.Duration
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
	// AckUnknown are DLQ acks sent on a consumer connection that was lost
	// and not seen applied, when the DLQ could not be read back
	// (acklost.go): each of these copies may be back in the DLQ.
	AckUnknown int `json:"ack_unknown"`
	Filtered   int `json:"filtered"`
	Succeeded  int `json:"skipped_succeeded"`
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
	Unread int `json:"not_read"`
	// Unaccounted, after a failover, are messages the DLQ still holds
	// that the run neither read nor left there by choice: its depth at
	// the end beyond what the run left in it, and what it must still hold
	// (its count at the start less the acks sent) but did not show -
	// held by a lost node's consumers (RabbitMQ 3.10 keeps those a killed
	// node's reader had cancelled until the queue's leader changes again),
	// or removed by something else (a TTL, another consumer).
	Unaccounted     int `json:"unaccounted"`
	UserIDDropped   int `json:"user_id_dropped"`
	MalformedHeader int `json:"malformed_headers"`
	// NonRetryable are messages the run replays (a dry run: would replay) that the rules
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
	Run          string             `json:"run"`
	DryRun       bool               `json:"dry_run"`
	Queue        string             `json:"queue,omitempty"`
	File         string             `json:"file,omitempty"`
	Vhost        string             `json:"vhost,omitempty"`
	AtStart      dlqread.QueueState `json:"at_start"`
	Counts       Counts             `json:"counts"`
	Destinations []DestCount        `json:"destinations"`
	Problems     []MessageRef       `json:"problems"`
	StoppedBy    string             `json:"stopped_by"`
	ElapsedMs    int64              `json:"elapsed_ms"`
	PerSecond    float64            `json:"per_second"`
	ParkQueue    string             `json:"park_queue,omitempty"`
	Quorum       bool               `json:"quorum"`
	MaxBounces   int                `json:"max_bounces"`
	// Groups are the --group ids asked for that matched no message.
	UnmatchedGroups []string `json:"unmatched_groups"`
	// Lost is set when a connection went away mid-run.
	Lost string `json:"connection_lost,omitempty"`
	// Settled is false when, at the end, the DLQ did not show every ack
	// and requeue of the run applied within --drain-grace (internal/consume/settle.go).
	Settled bool `json:"settled"`
	// AckLostExact is set when ack_lost is a count, not a bound: nothing
	// was acked on a lost consumer connection, or the DLQ was read back
	// after it (acklost.go). AckLostWhy says why it could not be.
	AckLostExact bool   `json:"ack_lost_exact"`
	AckLostWhy   string `json:"ack_lost_why,omitempty"`
	// DestinationChecks are the destination queues a resumed part read to
	// settle publishes in doubt (CheckDestination).
	DestinationChecks []DestCheck `json:"destination_checks"`
	// Failovers are the times the run lost a node and went on through
	// another (failover.go); Rereads the parts after them that read the
	// DLQ again because it still held messages the run had not read.
	Failovers []FailoverEvent `json:"failovers"`
	Rereads   int             `json:"rereads"`
	// AtEnd is the DLQ once every ack and requeue of the last part was
	// seen applied (nil when that was not seen). MustHold, after a
	// failover, is how many messages the DLQ held at least at the end:
	// its count at the start less every ack the run sent.
	AtEnd    *dlqread.QueueState `json:"at_end,omitempty"`
	MustHold int                 `json:"must_hold,omitempty"`
	// EndUnchecked says why, after a failover, the DLQ's depth at the end
	// could not confirm the run read everything it had to ("" when it did).
	EndUnchecked string `json:"end_unchecked,omitempty"`
	// lostNode is the address of the node whose connection was lost;
	// acksSent the DLQ acks this part sent; ghosts its consumers a lost
	// node may leave counted; untaken the earlier parts' publishes its
	// read found no copy for.
	lostNode string
	acksSent int
	ghosts   int
	untaken  journal.Untaken
}

// DestCount is one row of the routing preview.
type DestCount struct {
	Target   classify.Target `json:"target"`
	Kind     string          `json:"kind"` // replay or park
	Messages int             `json:"messages"`
	Bytes    int64           `json:"bytes"`
	Exists   *bool           `json:"exists,omitempty"`
	Reasons  string          `json:"reasons"`
	reasons  map[string]int
}

// SkipBounced is the journal's reason for a message the loop guard held:
// one of this run's own replays, dead-lettered again.
const SkipBounced = "bounced: replayed by this run and dead-lettered again (loop guard)"

// MessageRef names a message that needs a person's attention.
type MessageRef struct {
	MessageID string `json:"message_id"`
	FP        string `json:"fingerprint"`
	What      string `json:"what"` // returned, nacked, in-doubt, no-destination, bounced, ack-lost, ...
	Why       string `json:"why,omitempty"`
}

// Replay replays (or with Yes false, previews) a DLQ or an export file.
// A run that ends early (a lost connection, an interrupt, a missing
// destination) still returns its result; the error says why it could not
// go on. With ReplayDeps.Failover, a lost connection to one node is
// followed by another part of the run through the next node (failover.go).
func Replay(ctx context.Context, d ReplayDeps, o ReplayOptions) (*ReplayResult, error) {
	if o.Window == 0 {
		o.Window = 1
	}
	if o.Router.Via == "" {
		o.Router.Via = classify.ViaQueue
	}
	if err := o.Validate(); err != nil {
		return nil, err
	}
	if d.Failover == nil || !o.Yes || d.Records != nil {
		return replayPart(ctx, d, o)
	}
	return d.Failover.run(ctx, d, o)
}

// replayPart is one part of a run: from its connections' start to their
// end (a --resume, and each failover, is another part).
func replayPart(ctx context.Context, d ReplayDeps, o ReplayOptions) (*ReplayResult, error) {
	if d.Now == nil {
		d.Now = time.Now
	}
	if o.Analyzer == nil {
		o.Analyzer = &classify.Analyzer{}
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
		UnmatchedGroups: []string{}, Failovers: []FailoverEvent{}, DestinationChecks: []DestCheck{}}
	e := &engine{o: &o, d: &d, res: res, outst: map[uint64]*pending{}, ret: map[string]amqp.Return{},
		dest: map[string]*DestCount{}, unready: map[string]string{}, groups: map[string]bool{}, start: d.Now(),
		copies: map[[16]byte]int32{}}
	var settled []journal.Record
	if o.Resume != nil && o.CheckDestination && d.Records == nil {
		settled = e.settleInDoubt(ctx)
	}
	if o.Resume != nil {
		e.book = journal.NewBook(o.Resume, d.Records != nil)
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
	d.Journal.Add(journal.Record{T: journal.Start, Queue: o.Queue, File: o.File, Vhost: o.Vhost, Args: o.Args, Count: res.AtStart.Messages,
		Version: o.Version, FileDigest: o.FileDigest, Why: o.partWhy})
	for _, r := range settled {
		d.Journal.Add(r)
	}
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
	if res.Lost != "" {
		res.lostNode = e.lostNode()
	}
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
