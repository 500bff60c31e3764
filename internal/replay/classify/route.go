package classify

import (
	"fmt"
	"slices"
	"strings"

	"github.com/dupctl/dupctl/internal/deadletter"
	"github.com/dupctl/dupctl/internal/platform/problem"
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
	return &Target{Exchange: ex, RoutingKey: rk, From: "{To}"}, !hasKey, nil
}

// Route returns the destination of a message, or false when the message
// does not say where it came from and no --to was given.
func (r *Router) Route(m *deadletter.Message, in *Info) (Target, bool) {
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
