package deadletter

import (
	"time"

	amqp "github.com/rabbitmq/amqp091-go"
)

// Headers dupctl reads or writes.
const (
	HeaderXDeath = "x-death"
	// Spring AMQP's RepublishMessageRecoverer.
	HeaderExceptionMessage = "x-exception-message"
	HeaderExceptionTrace   = "x-exception-stacktrace"
	HeaderExceptionClass   = "x-exception-fqcn"
	HeaderOriginalExchange = "x-original-exchange"
	HeaderOriginalRK       = "x-original-routingKey"

	// dupctl's replay lineage: never x- (RabbitMQ 4 owns x- headers).
	HeaderReplayCount = "dupctl-replay-count"
	HeaderReplayRun   = "dupctl-replay-run"
	HeaderReplayID    = "dupctl-replay-id"
	HeaderReplayedAt  = "dupctl-replayed-at"
	HeaderDeath       = "dupctl-death"
)

// ReasonDeliveryLimit is the x-death reason of a message a quorum queue
// dead-lettered because it was delivered more often than its delivery
// limit allows (x-delivery-limit): returned or requeued by a consumer that
// failed on it, crashed or timed out, every time - a poison message.
const ReasonDeliveryLimit = "delivery_limit"

// Death is one x-death entry.
type Death struct {
	Queue       string    `json:"queue"`
	Reason      string    `json:"reason"`
	Exchange    string    `json:"exchange"`
	RoutingKeys []string  `json:"routing_keys"`
	Count       int64     `json:"count"`
	Time        time.Time `json:"time"`
}

// Origin is what a message says about where it came from and why it died.
type Origin struct {
	Deaths []Death // x-death, most recent first
	// Spring RepublishMessageRecoverer's x-original-*.
	OriginalExchange   string
	OriginalRoutingKey string
	HasOriginal        bool
	ReplayCount        int64  // dupctl-replay-count
	ReplayRun          string // dupctl-replay-run
	// Malformed names headers that were present but not of the expected
	// shape (counted, never fatal).
	Malformed []string
}

// ReadOrigin parses x-death, x-original-* and dupctl's own headers.
func ReadOrigin(h amqp.Table) Origin {
	var o Origin
	if v, ok := h[HeaderXDeath]; ok {
		arr, ok := v.([]any)
		if !ok {
			o.Malformed = append(o.Malformed, HeaderXDeath)
		}
		for _, e := range arr {
			t, ok := e.(amqp.Table)
			if !ok {
				o.Malformed = append(o.Malformed, HeaderXDeath)
				continue
			}
			o.Deaths = append(o.Deaths, readDeath(t))
		}
	}
	ex, hasEx := h[HeaderOriginalExchange]
	rk, hasRK := h[HeaderOriginalRK]
	if hasEx || hasRK {
		exs, ok1 := ex.(string)
		rks, ok2 := rk.(string)
		if (hasEx && !ok1) || (hasRK && !ok2) {
			o.Malformed = append(o.Malformed, HeaderOriginalExchange)
		} else {
			o.OriginalExchange, o.OriginalRoutingKey, o.HasOriginal = exs, rks, true
		}
	}
	if v, ok := h[HeaderReplayCount]; ok {
		n, ok := Int(v)
		if !ok {
			o.Malformed = append(o.Malformed, HeaderReplayCount)
		}
		o.ReplayCount = n
	}
	if v, ok := h[HeaderReplayRun].(string); ok {
		o.ReplayRun = v
	}
	return o
}

func readDeath(t amqp.Table) Death {
	d := Death{}
	d.Queue, _ = t["queue"].(string)
	d.Reason, _ = t["reason"].(string)
	d.Exchange, _ = t["exchange"].(string)
	d.Count, _ = Int(t["count"])
	d.Time, _ = t["time"].(time.Time)
	if rks, ok := t["routing-keys"].([]any); ok {
		for _, r := range rks {
			if s, ok := r.(string); ok {
				d.RoutingKeys = append(d.RoutingKeys, s)
			}
		}
	}
	return d
}

// Int reads an AMQP integer header value of any width (false for any
// other type).
func Int(v any) (int64, bool) {
	switch x := v.(type) {
	case int8:
		return int64(x), true
	case uint8:
		return int64(x), true
	case int16:
		return int64(x), true
	case uint16:
		return int64(x), true
	case int32:
		return int64(x), true
	case uint32:
		return int64(x), true
	case int64:
		return x, true
	case int:
		return int64(x), true
	}
	return 0, false
}

// Last is the most recent death, the one that brought the message here.
func (o *Origin) Last() (Death, bool) {
	if len(o.Deaths) == 0 {
		return Death{}, false
	}
	return o.Deaths[0], true
}

// DeathCount is how often the message died in total (sum of x-death counts).
func (o *Origin) DeathCount() int64 {
	var n int64
	for _, d := range o.Deaths {
		n += d.Count
	}
	return n
}

// Reason is the last death's reason, or "republished" for a Spring
// recoverer message, or "unknown".
func (o *Origin) Reason() string {
	if d, ok := o.Last(); ok && d.Reason != "" {
		return d.Reason
	}
	if o.HasOriginal {
		return "republished"
	}
	return "unknown"
}

// DeliveryLimited reports whether its last death was its queue's delivery
// limit: it was delivered, and its handler ran, more than the limit times
// though x-death counts one death.
func (o *Origin) DeliveryLimited() bool {
	d, ok := o.Last()
	return ok && d.Reason == ReasonDeliveryLimit
}

// SourceQueue is the queue the message died in last ("" when unknown).
func (o *Origin) SourceQueue() string {
	d, _ := o.Last()
	return d.Queue
}

// Route is the exchange and routing keys it was originally published with.
func (o *Origin) Route() (exchange string, keys []string, ok bool) {
	if d, has := o.Last(); has && (d.Exchange != "" || len(d.RoutingKeys) > 0) {
		return d.Exchange, d.RoutingKeys, true
	}
	if o.HasOriginal {
		return o.OriginalExchange, []string{o.OriginalRoutingKey}, true
	}
	return "", nil, false
}

// DiedAt is when it was last dead-lettered (zero when unknown).
func (o *Origin) DiedAt() time.Time {
	d, _ := o.Last()
	return d.Time
}
