package replay

import (
	"fmt"
	"slices"
	"time"

	"github.com/dupctl/dupctl/internal/deadletter"
	"github.com/dupctl/dupctl/internal/replay/classify"
	amqp "github.com/rabbitmq/amqp091-go"
)

// brokerHeaders are set by the broker when it dead-letters, shovels or
// redelivers; a replay moves them into dupctl-death instead of copying
// them (a copied x-death feeds the broker's cycle detection on 3.x and
// crashed dead-lettering after upgrades to 4.0.4).
var brokerHeaders = []string{
	"x-death", "x-first-death-queue", "x-first-death-reason", "x-first-death-exchange",
	"x-last-death-queue", "x-last-death-reason", "x-last-death-exchange",
	"x-delivery-count", "x-acquired-count", "x-shovelled", "x-shovelled-timestamp", "x-opt-deaths",
}

// springHeaders are written by Spring AMQP's RepublishMessageRecoverer;
// a replay moves them into dupctl-death too.
var springHeaders = []string{deadletter.HeaderExceptionMessage, deadletter.HeaderExceptionTrace, deadletter.HeaderExceptionClass,
	deadletter.HeaderOriginalExchange, deadletter.HeaderOriginalRK}

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

// replayed is the publishing for a replay: properties, message id and
// correlation id kept; broker death headers (and Spring's recoverer
// headers) moved into dupctl-death, newest first; a replay counter, the
// run id and a per-publish replay id added; persistent.
func (rw *Rewrite) replayed(m *deadletter.Message, seq int64, t classify.Target) amqp.Publishing {
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
		if prev, ok := h[deadletter.HeaderDeath].([]any); ok {
			history = append(history, prev...)
		}
		h[deadletter.HeaderDeath] = history
	}
	prev, _ := deadletter.Int(h[deadletter.HeaderReplayCount])
	h[deadletter.HeaderReplayCount] = prev + 1
	h[deadletter.HeaderReplayRun] = rw.Run
	h[deadletter.HeaderReplayID] = fmt.Sprintf("%s-%d", rw.Run, seq)
	h[deadletter.HeaderReplayedAt] = rw.Now
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

// parked is the publishing for the parking queue: the message unchanged
// (death headers and all, for the post-mortem) plus why and by which run.
func (rw *Rewrite) parked(m *deadletter.Message, seq int64, why string) amqp.Publishing {
	p := m.Publishing()
	h := make(amqp.Table, len(m.Props.Headers)+3)
	for k, v := range m.Props.Headers {
		h[k] = v
	}
	h["dupctl-parked-run"] = rw.Run
	h["dupctl-parked-why"] = why
	h[deadletter.HeaderReplayID] = fmt.Sprintf("%s-%d", rw.Run, seq)
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
