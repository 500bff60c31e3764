package replay

import (
	"context"
	"errors"
	"fmt"
	"sort"
	"strings"
	"time"

	"github.com/dupctl/dupctl/internal/replay/internal/consume"

	"github.com/dupctl/dupctl/internal/deadletter"
	"github.com/dupctl/dupctl/internal/platform/problem"
	"github.com/dupctl/dupctl/internal/replay/classify"
	"github.com/dupctl/dupctl/internal/replay/dlqread"
	"github.com/dupctl/dupctl/internal/replay/journal"
	amqp "github.com/rabbitmq/amqp091-go"
)

// publishQueued publishes decided messages as fast as --rate allows. It
// never waits: when the rate says "not yet", it notes when and returns,
// and the loop comes back then (handling confirms meanwhile).
func (e *engine) publishQueued(ctx context.Context) error {
	for len(e.queued) > 0 {
		if e.limit != nil {
			now := time.Now()
			r := e.limit.ReserveN(now, 1)
			if d := r.DelayFrom(now); d > 0 {
				r.CancelAt(now)
				e.paceAt = now.Add(d)
				return nil
			}
		}
		p := e.queued[0]
		e.queued[0] = nil
		e.queued = e.queued[1:]
		if err := e.publish(ctx, p); err != nil {
			return err
		}
	}
	return nil
}

// unqueue leaves in the DLQ what was decided but not published.
func (e *engine) unqueue(why string) {
	for _, p := range e.queued {
		e.res.Counts.NotPublished++
		e.d.Journal.Add(journal.Record{T: journal.Returned, Seq: p.seq, Why: why})
		e.hold(p.it)
	}
	e.queued = nil
}

func (e *engine) publish(ctx context.Context, p *pending) error {
	o := e.o
	if e.refused {
		e.res.Counts.NotPublished++
		e.d.Journal.Add(journal.Record{T: journal.Returned, Seq: p.seq, Why: "not published: the broker closed the publishing channel"})
		e.hold(p.it)
		return nil
	}
	switch {
	case p.kind == "park" && !e.parkOK:
		if err := e.ensureParkQueue(); err != nil {
			return err
		}
	case p.kind == "replay" && !e.destinationReady(p):
		return nil
	}
	rw := o.Rewrite
	rw.Now = e.d.Now().UTC().Truncate(time.Second)
	var pub amqp.Publishing
	if p.kind == "park" {
		pub = rw.parked(p.it.m, p.seq, p.it.in.ClassRule)
	} else {
		pub = rw.replayed(p.it.m, p.seq, p.it.dst)
	}
	if p.it.m.Props.UserID != "" && pub.UserId == "" {
		e.res.Counts.UserIDDropped++
	}
	pub.Headers[deadletter.HeaderReplayID] = p.id
	tag := e.pubCh.GetNextPublishSeqNo()
	// Publishing does not take ctx: once started, a publish completes and
	// its confirm is awaited, even on Ctrl-C.
	err := e.pubCh.PublishWithContext(context.WithoutCancel(ctx), p.it.dst.Exchange, p.it.dst.RoutingKey, true, false, pub)
	if errors.Is(err, amqp.ErrClosed) {
		// Refused before anything was sent: not published, not in doubt.
		e.res.Counts.NotPublished++
		e.d.Journal.Add(journal.Record{T: journal.Returned, Seq: p.seq, Why: "not published: publisher channel closed"})
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

// destinationReady checks, before the first publish to a destination,
// that it exists: a dry run reports a missing one (DLQ_REPLAY_DESTINATION_
// MISSING), and a replay does not publish into it - a missing exchange
// would close the channel, a missing queue return every message. With
// CreateDestination a missing queue is declared (durable); an exchange
// never is (its type and bindings are the application's).
func (e *engine) destinationReady(p *pending) bool {
	t := p.it.dst
	key := "q\x00" + t.RoutingKey
	if t.Exchange != "" {
		key = "x\x00" + t.Exchange
	}
	why, seen := e.unready[key]
	if !seen {
		why = e.checkDestination(t)
		e.unready[key] = why
	}
	if why != "" {
		e.res.Counts.DestinationMissing++
		why := "not published: " + t.String() + why
		e.d.Journal.Add(journal.Record{T: journal.Returned, Seq: p.seq, Why: why})
		e.problem(p.it, "destination-missing", why)
		e.hold(p.it)
	}
	return why == ""
}

// checkDestination says why t cannot take messages (" does not exist",
// " is unavailable (...)"), or "" when it can.
func (e *engine) checkDestination(t classify.Target) string {
	ok, err := destinationExists(e.pubConn, t)
	down := consume.NodeDown(err)
	if err != nil && down == "" {
		return "" // cannot tell: mandatory returns and the channel say it
	}
	if !ok && t.Exchange == "" && e.o.CreateDestination && down == "" {
		ok = declareQueue(e.pubConn, t.RoutingKey) == nil
	}
	if ok {
		return ""
	}
	why, hint := " does not exist", "create it, or choose another destination with {To}"
	switch {
	case down != "":
		// Not missing, but no node can take its messages until its own is back.
		why, hint = " is unavailable ("+down+")", "run again once its node is back, or choose another destination with {To}"
	case t.Exchange == "":
		hint = "create it, pass {CreateDestination} to have the replay declare it (durable), or choose another destination with {To}"
	}
	if e.runErr == nil {
		e.runErr = &problem.Input{Why: t.String() + why + ": nothing was published to it", Hint: hint}
		e.stop = "destination missing"
	}
	return why
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
		if err := declareQueue(e.pubConn, e.o.ParkQueue); err != nil {
			return fmt.Errorf("declare parking queue %q: %w", e.o.ParkQueue, err)
		}
	}
	e.parkOK = true
	return nil
}

func declareQueue(conn *amqp.Connection, name string) error {
	ch, err := conn.Channel()
	if err != nil {
		return fmt.Errorf("open channel: %w", err)
	}
	defer ch.Close()
	_, err = ch.QueueDeclare(name, true, false, false, false, nil)
	return err
}

func queueExists(conn *amqp.Connection, name string) (bool, error) {
	_, err := consume.InspectQueue(conn, name)
	if dlqread.IsNotFound(err) {
		return false, nil
	}
	return err == nil, err
}

// destinationExists checks a target with passive declares (nothing is
// created): the queue behind the default exchange, or the exchange.
func destinationExists(conn *amqp.Connection, t classify.Target) (bool, error) {
	if t.Exchange == "" {
		return queueExists(conn, t.RoutingKey)
	}
	return consume.ExchangeExists(conn, t.Exchange)
}

// settleReady handles every return and confirm that has arrived, then
// writes the outcomes to the journal and only then acks the DLQ messages
// (so a kill between the two leaves them "ok" in the journal and still in
// the DLQ: a --resume acks them without republishing).
func (e *engine) settleReady() {
	for done := false; !done; {
		select {
		case r, ok := <-e.rets:
			e.returned(r, ok)
		case c, ok := <-e.confs:
			e.confirmed(c, ok)
		default:
			done = true
		}
	}
	e.flushOutcomes()
}

// returned records a basic.return (ok false: the stream ended).
func (e *engine) returned(r amqp.Return, ok bool) {
	if !ok {
		e.rets = nil
		return
	}
	e.ret[replayIDOf(r.Headers)] = r
}

// confirmed handles one confirm; ok false means the stream ended (the
// channel closed), and then it reports false.
func (e *engine) confirmed(c amqp.Confirmation, ok bool) bool {
	if !ok {
		e.confs = nil
		e.confirmsEnded()
		return false
	}
	e.confirm(c)
	return true
}

// flushOutcomes writes the journal (nothing when nothing is buffered),
// then acks.
func (e *engine) flushOutcomes() {
	_ = e.d.Journal.Flush()
	e.flushAcks()
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
		e.d.Journal.Add(journal.Record{T: journal.Returned, Seq: p.seq, Why: why})
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
		e.d.Journal.Add(journal.Record{T: journal.Nacked, Seq: p.seq, Why: "broker nack"})
		e.problem(p.it, "nacked", "the broker refused it (nack): still in the DLQ")
		e.hold(p.it)
		return
	}
	e.d.Journal.Add(journal.Record{T: journal.OK, Seq: p.seq})
	if p.kind == "park" {
		e.res.Counts.Parked++
	} else {
		e.res.Counts.Replayed++
	}
	e.ack(p.it)
}

func (e *engine) drainReturns() {
	for e.rets != nil {
		select {
		case r, ok := <-e.rets:
			e.returned(r, ok)
		default:
			return
		}
	}
}

func replayIDOf(h amqp.Table) string {
	s, _ := h[deadletter.HeaderReplayID].(string)
	return s
}

// confirmsEnded handles the end of the confirm stream: the publishing
// channel closed. amqp091-go hands over the channel's close reason before
// it closes the confirm stream, so a broker refusal (404 for a missing
// exchange) is told apart from a lost connection.
func (e *engine) confirmsEnded() {
	if e.refused {
		return // channelClosed settled everything outstanding
	}
	select {
	case err, ok := <-e.chErr:
		e.chErr = nil
		if ok && err != nil {
			e.channelClosed(err)
			return
		}
	default:
	}
	e.publisherLost("publisher channel closed")
}

// channelClosed handles the broker closing the publishing channel. A 404
// names an exchange that does not exist, and the run stops with that
// reason. Every publish still unconfirmed is in doubt, those to that
// exchange too: the broker refused the first publish after the exchange
// was deleted, but the ones before it were routed while it still existed,
// and the close does not say which publish it refused (a CI run under
// load found 2 of them at the destination).
func (e *engine) channelClosed(err *amqp.Error) {
	if err.Code != amqp.NotFound {
		e.publisherLost("publisher channel closed: " + err.Error())
		return
	}
	ex := quotedName(err.Reason)
	e.refused = true
	if e.runErr == nil {
		e.runErr = &problem.Input{Why: "the broker refused a publish: " + err.Reason,
			Hint: "create the exchange or choose another destination with {To}; the messages are still in the DLQ"}
	}
	if e.stop == "" {
		e.stop = "destination missing"
	}
	e.unready["x\x00"+ex] = " does not exist"
	for _, t := range sortedTags(e.outst) {
		p := e.outst[t]
		delete(e.outst, t)
		if p.it.dst.Exchange == ex {
			e.doubt(p, "published to "+ex+" before its confirm, and the broker then refused a publish to it ("+err.Reason+
				"): routed if it went before the exchange was deleted")
			continue
		}
		e.doubt(p, "publisher channel closed before the confirm ("+err.Reason+")")
	}
	e.unqueue("not published: publisher channel closed")
}

// quotedName is the first '...' name in a broker's reply text
// ("NOT_FOUND - no exchange 'orders' in vhost '/'").
func quotedName(s string) string {
	_, rest, ok := strings.Cut(s, "'")
	if !ok {
		return ""
	}
	name, _, _ := strings.Cut(rest, "'")
	return name
}

func sortedTags(m map[uint64]*pending) []uint64 {
	tags := make([]uint64, 0, len(m))
	for t := range m {
		tags = append(tags, t)
	}
	sort.Slice(tags, func(i, j int) bool { return tags[i] < tags[j] })
	return tags
}

// ack queues a DLQ ack; flushAcks sends the queued ones in as few frames
// as is safe, once their outcomes are in the journal.
func (e *engine) ack(it *item) { e.toAck = append(e.toAck, it) }

func (e *engine) flushAcks() {
	if len(e.toAck) == 0 {
		return
	}
	its := e.toAck
	e.toAck = nil
	unsent, err := e.src.ackMany(its)
	if err == nil {
		return
	}
	never := make(map[uint64]bool, len(unsent))
	for _, t := range unsent {
		never[t] = true
	}
	e.unsentAcks += len(unsent)
	e.consumerGone = true // an ack fails only on a closed channel
	for _, it := range its {
		e.res.Counts.AckLost++
		why := "at its destination, but the DLQ ack failed before it left: it is back in the DLQ; a {Resume} run acks it without republishing"
		if !never[it.d.DeliveryTag] {
			why = "at its destination, but the DLQ ack failed and may or may not have reached the broker: a {Resume} run leaves its copy in doubt"
		}
		e.problem(it, "ack-lost", why)
		e.d.Journal.Add(journal.Record{T: journal.AckLost, Seq: it.seq, FP: it.fp, ID: it.m.Props.MessageID, Unsent: never[it.d.DeliveryTag],
			Why: err.Error()})
	}
}

func (e *engine) hold(it *item) {
	if err := e.src.hold(it); err != nil && e.consumerFailed("consumer: "+err.Error()) {
		e.stop = "connection lost"
	}
}

// consumerFailed records that the consumer's channel or connection went
// away, with why as the run's lost connection unless one was already
// recorded; it reports whether this was the first.
func (e *engine) consumerFailed(why string) bool {
	e.consumerGone = true
	if e.lost != "" {
		return false
	}
	e.lost = why
	return true
}

func (e *engine) doubt(p *pending, why string) {
	e.res.Counts.InDoubt++
	e.d.Journal.Add(journal.Record{T: journal.Doubt, Seq: p.seq, Why: why})
	e.problem(p.it, "in-doubt", why)
	e.hold(p.it)
}

// publisherLost marks every unconfirmed publish in doubt: it may or may not
// have reached the destination. Its DLQ message stays (requeued), and the
// journal says so; nothing is retried silently. What was decided but not
// yet published stays in the DLQ, not in doubt.
func (e *engine) publisherLost(why string) {
	if e.lost == "" {
		e.lost = why
	}
	if e.stop == "" {
		e.stop = "connection lost"
	}
	for _, t := range sortedTags(e.outst) {
		e.doubt(e.outst[t], "connection lost before the publish was confirmed")
		delete(e.outst, t)
	}
	e.unqueue("not published: " + why)
}

// drainConfirms waits (at most DrainGrace) for outstanding confirms after
// an interrupt.
func (e *engine) drainConfirms() error {
	deadline := time.NewTimer(e.o.DrainGrace)
	defer deadline.Stop()
	for len(e.outst) > 0 {
		select {
		case r, ok := <-e.rets:
			e.returned(r, ok)
		case c, ok := <-e.confs:
			if !e.confirmed(c, ok) {
				return nil
			}
			e.settleReady()
		case <-deadline.C:
			e.publisherLost(fmt.Sprintf("no confirm within %s of stopping", e.o.DrainGrace))
			return nil
		}
	}
	e.flushOutcomes()
	return nil
}
