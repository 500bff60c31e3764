package connect

import (
	"context"
	"fmt"
	"math/rand/v2"
	"net"
	"net/url"
	"strconv"
	"strings"
	"time"

	"github.com/dupctl/dupctl/internal/platform/problem"
	"github.com/dupctl/dupctl/internal/platform/redact"
	amqp "github.com/rabbitmq/amqp091-go"
)

type (
	amqpNameKey struct{}
	amqpLastKey struct{}
)

// WithAMQPName makes connections AMQP opens with ctx carry "dupctl " + name
// as their connection_name, so an operator (or a test) can tell dupctl's
// connections apart in the management UI and rabbitmqctl list_connections.
func WithAMQPName(ctx context.Context, name string) context.Context {
	return context.WithValue(ctx, amqpNameKey{}, name)
}

// WithAMQPLast makes AMQP dial the address whose host:port is addr (as the
// URL writes it, or as the lost connection's RemoteAddr says it) after the
// others: a command going on after losing its connection to one node of a
// cluster (dlq replay's failover) tries the other nodes first instead of
// waiting on the lost one.
func WithAMQPLast(ctx context.Context, addr string) context.Context {
	return context.WithValue(ctx, amqpLastKey{}, addr)
}

// AMQPTarget is what an AMQP URL names: one address, or several of one
// cluster, each a whole single-host URL to dial.
type AMQPTarget struct {
	// Addrs are tried in this order (the order given; see Shuffle).
	Addrs []string
	// Vhost and User are the first address's; every address names the
	// same vhost.
	Vhost, User string
	// Shuffle (?shuffle=true, Spring's address-shuffle-mode=random) tries
	// the addresses in a random order on each dial, spreading dupctl's
	// connections over the nodes.
	Shuffle bool
}

const amqpWant = "amqp://host[:port][/vhost] or amqps:// (a user and password go before the host; several addresses: " +
	"amqp://host1:5672,host2:5672/vhost or a comma-separated list of URLs)"

// ParseAMQP reads an AMQP URL that may name several addresses, in the
// spellings clients take: several hosts in one URL
// (amqp://u:p@h1:5672,h2:5673/vhost, as a Redis Cluster URL is written),
// or a list of whole URLs separated by ',' (Spring's
// spring.rabbitmq.addresses, the amqp gem) or ';' (kombu), each with its
// own user and password. Every address must name the same vhost: one DLQ
// lives in one vhost.
func ParseAMQP(raw string) (*AMQPTarget, error) {
	if raw == "" {
		return nil, missing("RabbitMQ", "AMQPURL", "DUPCTL_AMQP_URL or AMQP_URL")
	}
	t := &AMQPTarget{}
	for i, piece := range redact.SplitList(raw) {
		if i > 0 {
			piece = piece[1:] // the ',' or ';' before it
		}
		addrs, shuffle, err := amqpPiece(piece)
		if err != nil {
			return nil, err
		}
		t.Addrs = append(t.Addrs, addrs...)
		t.Shuffle = t.Shuffle || shuffle
	}
	for i, a := range t.Addrs {
		uri, _ := amqp.ParseURI(a) // amqpPiece parsed it
		if i == 0 {
			t.Vhost, t.User = uri.Vhost, uri.Username
			continue
		}
		if uri.Vhost != t.Vhost {
			return nil, &problem.Input{Why: fmt.Sprintf("AMQP URL %s: its addresses name different vhosts (%q and %q): one DLQ lives in one vhost",
				redact.URL(raw), t.Vhost, uri.Vhost)}
		}
	}
	return t, nil
}

// amqpTarget is ParseAMQP of an amqp:// or amqps:// URL (an error for
// any other).
func amqpTarget(raw string) (*AMQPTarget, error) {
	if l := strings.ToLower(raw); !strings.HasPrefix(l, "amqp://") && !strings.HasPrefix(l, "amqps://") {
		return nil, badURL("AMQP", raw, "not amqp:// or amqps://")
	}
	return ParseAMQP(raw)
}

// amqpPiece reads one URL of a list: its hosts (one or several) as
// single-host URLs, and whether it asks for ?shuffle=true.
func amqpPiece(raw string) (addrs []string, shuffle bool, err error) {
	// A list of IPv6 hosts is checked as the URL of its first host (each
	// host is checked below): net/url reads one bracketed host, not a list.
	first := firstHost(raw)
	uri, err := amqp.ParseURI(first)
	if err != nil {
		return nil, false, parseError("AMQP", raw, func(s string) error { _, err := amqp.ParseURI(firstHost(s)); return err })
	}
	if m, err := amqp.ParseURI(redact.URL(first)); err != nil || m.Host != uri.Host || m.Port != uri.Port || m.Vhost != uri.Vhost ||
		m.Username != uri.Username {
		return nil, false, cutPassword("AMQP", raw)
	}
	if u, err := url.Parse(first); err == nil && u.Host == "" || uri.Host == "" {
		return nil, false, noHost("AMQP", raw, amqpWant)
	}
	// The password cannot hold a raw '/', '?' or '#' (checked above): the
	// authority ends at the first of them, and its hosts follow its last '@'.
	from := strings.Index(raw, "://") + 3
	end := from + strings.IndexAny(raw[from:]+"/", "/?#")
	hostsAt := from + strings.LastIndex(raw[from:end], "@") + 1
	path, query, _ := strings.Cut(raw[end:], "?")
	if strings.Contains(path, ",") {
		return nil, false, badURL("AMQP", raw, "the vhost holds a ',': several addresses go before the vhost "+
			"(amqp://host1:5672,host2:5672/vhost) or are whole URLs (amqp://host1/vhost,amqp://host2/vhost); a ',' in a vhost name is written %2C")
	}
	query, shuffle = dropShuffle(query)
	for _, h := range strings.Split(raw[hostsAt:end], ",") {
		a := raw[:hostsAt] + h + path + query
		if u, err := amqp.ParseURI(a); err != nil || u.Host == "" || h == "" {
			return nil, false, noHost("AMQP", raw, amqpWant)
		}
		addrs = append(addrs, a)
	}
	return addrs, shuffle, nil
}

// firstHost is raw with only its first host when its hosts hold an IPv6
// literal and a ','
// (amqp://u:p@[::1]:5672,[::1]:5673/v is amqp://u:p@[::1]:5672/v): net/url
// reads "[::1]:5672,[::1]:5673" as one malformed host, where it reads
// "h1:5672,h2:5673" whole, as dupctl always has. The hosts are where
// amqpPiece cuts them: after the authority's last '@', up to its first
// '/', '?' or '#'.
func firstHost(raw string) string {
	from := strings.Index(raw, "://")
	if from < 0 {
		return raw
	}
	from += 3
	end := from + strings.IndexAny(raw[from:]+"/", "/?#")
	hostsAt := from + strings.LastIndex(raw[from:end], "@") + 1
	hosts := raw[hostsAt:end]
	head, _, list := strings.Cut(hosts, ",")
	if !list || !strings.Contains(hosts, "[") {
		return raw
	}
	return raw[:hostsAt] + head + raw[end:]
}

// dropShuffle takes shuffle=... out of a URL's query (the text after its
// '?', fragment included) and returns what is left, with its '?' when
// anything is.
func dropShuffle(query string) (string, bool) {
	if query == "" {
		return "", false
	}
	q, frag, hasFrag := strings.Cut(query, "#")
	var keep []string
	shuffle := false
	for _, kv := range strings.Split(q, "&") {
		k, v, _ := strings.Cut(kv, "=")
		if k == "shuffle" {
			shuffle = v == "true" || v == "1" || v == "random"
			continue
		}
		keep = append(keep, kv)
	}
	out := strings.Join(keep, "&")
	if out != "" {
		out = "?" + out
	}
	if hasFrag {
		out += "#" + frag
	}
	return out, shuffle
}

// AMQP dials RabbitMQ (amqp:// or amqps://). A URL that names several
// addresses (ParseAMQP) dials them in turn until one answers: a node that
// is down, refuses or does not answer within DialTimeout costs one
// attempt, so a command started again after losing its connection
// (dlq replay --resume) carries on at the next node.
func AMQP(ctx context.Context, raw string) (*amqp.Connection, error) {
	t, err := ParseAMQP(raw)
	if err != nil {
		return nil, err
	}
	name := "dupctl"
	if v, ok := ctx.Value(amqpNameKey{}).(string); ok && v != "" {
		name += " " + v
	}
	addrs := t.Addrs
	if t.Shuffle {
		addrs = append([]string(nil), addrs...)
		rand.Shuffle(len(addrs), func(i, j int) { addrs[i], addrs[j] = addrs[j], addrs[i] })
	}
	if last, ok := ctx.Value(amqpLastKey{}).(string); ok && last != "" {
		addrs = lastOf(addrs, last)
	}
	var failed []string
	for _, a := range addrs {
		conn, err := dialAMQP(ctx, a, name)
		if err == nil {
			return conn, nil
		}
		if len(addrs) == 1 || ctx.Err() != nil {
			return nil, unreachable(ctx, "RabbitMQ", a, err)
		}
		// Joined by "; ": a space ends each URL for the redactor that
		// runs over every printed line.
		failed = append(failed, redact.URL(a)+": "+redact.InError(err.Error(), a))
	}
	return nil, problem.System(fmt.Errorf("cannot reach RabbitMQ at any of its %d addresses: %s", len(addrs), strings.Join(failed, "; ")),
		"check that the nodes run and the URL, user and password are right")
}

// lastOf moves the addresses whose host:port is last behind the others,
// keeping the order of each part.
func lastOf(addrs []string, last string) []string {
	var front, back []string
	for _, a := range addrs {
		if AMQPHostPort(a) == last {
			back = append(back, a)
		} else {
			front = append(front, a)
		}
	}
	return append(front, back...)
}

// AMQPHostPort is the host:port a single-address AMQP URL dials ("" when
// it does not parse).
func AMQPHostPort(raw string) string {
	uri, err := amqp.ParseURI(raw)
	if err != nil {
		return ""
	}
	return net.JoinHostPort(uri.Host, strconv.Itoa(uri.Port))
}

func dialAMQP(ctx context.Context, raw, name string) (*amqp.Connection, error) {
	dial, handshakeDone := dialUnder(ctx)
	conn, err := amqp.DialConfig(raw, amqp.Config{
		Dial:       dial,
		Properties: amqp.Table{"connection_name": name},
	})
	handshakeDone()
	return conn, err
}

// dialUnder is amqp091's dialer bound by ctx: the TCP dial and the AMQP
// handshake end when ctx does (--timeout, Ctrl-C) or after DialTimeout.
// done must be called once DialConfig returns, so that a later Ctrl-C
// leaves the established connection to the caller.
func dialUnder(ctx context.Context) (dial func(network, addr string) (net.Conn, error), done func()) {
	stop := func() bool { return false }
	dial = func(network, addr string) (net.Conn, error) {
		d := net.Dialer{Timeout: DialTimeout}
		conn, err := d.DialContext(ctx, network, addr)
		if err != nil {
			return nil, err
		}
		deadline := time.Now().Add(DialTimeout)
		if dl, ok := ctx.Deadline(); ok && dl.Before(deadline) {
			deadline = dl
		}
		// amqp091 clears the deadline once the handshake is done.
		if err := conn.SetDeadline(deadline); err != nil {
			conn.Close()
			return nil, err
		}
		stop = context.AfterFunc(ctx, func() { _ = conn.SetDeadline(time.Now()) })
		return conn, nil
	}
	return dial, func() { stop() }
}
