package replay

import (
	"fmt"
	"slices"
	"strings"
	"time"

	"github.com/dupctl/dupctl/internal/platform/problem"

	amqp "github.com/rabbitmq/amqp091-go"
)

// Target is where a message is published.
type Target struct {
	Exchange   string   `json:"exchange"`
	RoutingKey string   `json:"routing_key"`
	CC         []string `json:"cc,omitempty"`
	// From says how it was chosen: x-death queue, x-death exchange,
	// x-original, --to.
	From string `json:"from"`
}

func (t Target) String() string {
	if t.Exchange == "" {
		return "queue " + t.RoutingKey + " (default exchange)"
	}
	s := fmt.Sprintf("exchange %s key %q", t.Exchange, t.RoutingKey)
	if len(t.CC) > 0 {
		s += " cc " + strings.Join(t.CC, ",")
	}
	return s
}

// Origin routing modes.
const (
	ViaQueue    = "queue"    // the queue it died in, through the default exchange
	ViaExchange = "exchange" // the exchange and routing keys it was first published with
)

// Router decides each message's destination.
type Router struct {
	// To, when set, sends every message to this exchange; RoutingKey ""
	// with KeepKey true keeps each message's original routing key.
	To      *Target
	KeepKey bool
	// Via is ViaQueue (default) or ViaExchange for origin routing.
	Via string
}

// ParseTo reads a destination, EXCHANGE[:ROUTING-KEY] (the To option). ":QUEUE" (empty exchange)
// publishes straight to a queue through the default exchange.
func ParseTo(s string) (*Target, bool, error) {
	ex, rk, hasKey := strings.Cut(s, ":")
	if ex == "" && (!hasKey || rk == "") {
		return nil, false, &problem.Input{Field: "To", Value: s, Quote: true, Why: "want EXCHANGE[:ROUTING-KEY] or :QUEUE"}
	}
	if strings.ContainsAny(s, "\x00\r\n") || len(ex) > 255 || len(rk) > 255 {
		return nil, false, &problem.Input{Field: "To", Value: s, Quote: true, Why: "names are at most 255 bytes, without control characters"}
	}
	return &Target{Exchange: ex, RoutingKey: rk, From: "--to"}, !hasKey, nil
}

// Route returns the destination of a message, or false when the message
// does not say where it came from and no --to was given.
func (r *Router) Route(m *Message, in *Info) (Target, bool) {
	if r.To != nil {
		t := *r.To
		if r.KeepKey {
			_, keys, ok := in.Origin.Route()
			switch {
			case ok && len(keys) > 0:
				t.RoutingKey, t.CC = keys[0], slices.Clone(keys[1:])
			default:
				t.RoutingKey = m.RoutingKey
			}
		}
		return t, true
	}
	if r.Via != ViaExchange {
		if q := in.Origin.SourceQueue(); q != "" {
			return Target{RoutingKey: q, From: "x-death queue"}, true
		}
	}
	if d, ok := in.Origin.Last(); ok && (d.Exchange != "" || len(d.RoutingKeys) > 0) {
		t := Target{Exchange: d.Exchange, From: "x-death exchange"}
		if len(d.RoutingKeys) > 0 {
			t.RoutingKey, t.CC = d.RoutingKeys[0], slices.Clone(d.RoutingKeys[1:])
		}
		return t, true
	}
	if in.Origin.HasOriginal {
		return Target{Exchange: in.Origin.OriginalExchange, RoutingKey: in.Origin.OriginalRoutingKey, From: "x-original"}, true
	}
	return Target{}, false
}

// Rewrite is how a replay changes a message's headers and properties.
type Rewrite struct {
	Run string
	// ResetAttempts names the application's attempt counter header to set
	// back to 0 (same type), e.g. retry-count.
	ResetAttempts string
	// User is the connection's user: a user-id property that differs is
	// dropped, since RabbitMQ rejects a publish whose user-id is not the
	// connection's (validated user-id).
	User string
	Now  time.Time
}

// Replayed is the publishing for a replay: properties, message id and
// correlation id kept; broker death headers (and Spring's recoverer
// headers) moved into dupctl-death, newest first; a replay counter, the
// run id and a per-publish replay id added; persistent.
func (rw *Rewrite) Replayed(m *Message, seq int64, t Target) amqp.Publishing {
	p := m.Publishing()
	h := make(amqp.Table, len(m.Props.Headers)+5)
	death := amqp.Table{}
	for k, v := range m.Props.Headers {
		if slices.Contains(brokerHeaders, k) || slices.Contains(springHeaders, k) {
			death[k] = v
			continue
		}
		h[k] = v
	}
	if len(death) > 0 {
		death["dupctl-moved-at"] = rw.Now
		history := []any{death}
		if prev, ok := h[HeaderDeath].([]any); ok {
			history = append(history, prev...)
		}
		h[HeaderDeath] = history
	}
	prev, _ := asInt(h[HeaderReplayCount])
	h[HeaderReplayCount] = prev + 1
	h[HeaderReplayRun] = rw.Run
	h[HeaderReplayID] = fmt.Sprintf("%s-%d", rw.Run, seq)
	h[HeaderReplayedAt] = rw.Now
	if rw.ResetAttempts != "" {
		if v, ok := h[rw.ResetAttempts]; ok {
			h[rw.ResetAttempts] = zeroLike(v)
		}
	}
	if len(t.CC) > 0 {
		cc := make([]any, len(t.CC))
		for i, k := range t.CC {
			cc[i] = k
		}
		h["CC"] = cc
	}
	p.Headers = h
	// A replay is a recovery: it must survive a broker restart.
	p.DeliveryMode = amqp.Persistent
	if p.UserId != "" && p.UserId != rw.User {
		p.UserId = ""
	}
	return p
}

// Parked is the publishing for the parking queue: the message unchanged
// (death headers and all, for the post-mortem) plus why and by which run.
func (rw *Rewrite) Parked(m *Message, seq int64, why string) amqp.Publishing {
	p := m.Publishing()
	h := make(amqp.Table, len(m.Props.Headers)+3)
	for k, v := range m.Props.Headers {
		h[k] = v
	}
	h["dupctl-parked-run"] = rw.Run
	h["dupctl-parked-why"] = why
	h[HeaderReplayID] = fmt.Sprintf("%s-%d", rw.Run, seq)
	p.Headers = h
	p.DeliveryMode = amqp.Persistent
	if p.UserId != "" && p.UserId != rw.User {
		p.UserId = ""
	}
	return p
}

// zeroLike is 0 of the same AMQP integer type (or int64 0 for anything
// else, e.g. a counter stored as a string).
func zeroLike(v any) any {
	switch v.(type) {
	case int8:
		return int8(0)
	case uint8:
		return uint8(0)
	case int16:
		return int16(0)
	case uint16:
		return uint16(0)
	case int32:
		return int32(0)
	case uint32:
		return uint32(0)
	case string:
		return "0"
	}
	return int64(0)
}

// Filter selects which dead letters a replay takes.
type Filter struct {
	Where     []Where
	Reasons   []string
	Groups    []string
	OlderThan time.Duration
}

// Match reports whether a message passes every condition. A message whose
// death time is unknown never passes --older-than.
func (f *Filter) Match(m *Message, in *Info, now time.Time) bool {
	if len(f.Reasons) > 0 && !slices.Contains(f.Reasons, in.Reason) {
		return false
	}
	if len(f.Groups) > 0 && !slices.Contains(f.Groups, in.Group) {
		return false
	}
	if f.OlderThan > 0 {
		at := in.DiedAt
		if at.IsZero() {
			at = m.Props.Timestamp
		}
		if at.IsZero() || now.Sub(at) < f.OlderThan {
			return false
		}
	}
	for _, w := range f.Where {
		if !w.Match(m) {
			return false
		}
	}
	return true
}

// Empty reports whether the filter selects everything.
func (f *Filter) Empty() bool {
	return len(f.Where) == 0 && len(f.Reasons) == 0 && len(f.Groups) == 0 && f.OlderThan == 0
}
