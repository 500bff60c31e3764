// Package connect opens dupctl's connections to Redis, PostgreSQL and
// RabbitMQ from URLs, the same way for every command: errors name the
// system and the redacted URL and say what to do, and are typed as a
// system's failure (problem.Unavailable, exit 3); a malformed or missing
// URL is bad input (problem.Input, exit 2).
package connect

import (
	"context"
	"crypto/tls"
	"errors"
	"fmt"
	"net"
	"net/url"
	"strings"
	"time"

	"github.com/dupctl/dupctl/internal/platform/problem"
	"github.com/dupctl/dupctl/internal/platform/redact"
	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/pgxpool"
	amqp "github.com/rabbitmq/amqp091-go"
	"github.com/redis/go-redis/v9"
)

// DialTimeout bounds every connection attempt.
const DialTimeout = 5 * time.Second

// missing is the error for a URL nobody gave; field is the option that
// holds it.
func missing(system, field, env string) error {
	return &problem.Input{Why: fmt.Sprintf("no %s URL: give {%s} or set %s", system, field, env)}
}

// badURL is the error for a URL that does not parse, with the password
// already removed.
func badURL(system, raw, why string) error {
	return &problem.Input{Why: fmt.Sprintf("%s URL %s: %s", system, redact.URL(raw), why)}
}

// Redis connects to a standalone Redis or a Redis Cluster. A cluster is
// named by several comma-separated seed addresses
// (redis://h1:7000,h2:7001) or by ?cluster=true; TLS with rediss://; ACL
// user and password in the URL.
func Redis(ctx context.Context, raw string) (redis.UniversalClient, error) {
	if raw == "" {
		return nil, missing("Redis", "RedisURL", "DUPCTL_REDIS_URL or REDIS_URL")
	}
	u, err := url.Parse(raw)
	if err != nil || (u.Scheme != "redis" && u.Scheme != "rediss") {
		return nil, badURL("Redis", raw, "want redis://[user:password@]host:port[/db] or rediss://")
	}
	hosts := strings.Split(u.Host, ",")
	q := u.Query()
	cluster := len(hosts) > 1 || q.Get("cluster") == "true"
	q.Del("cluster")
	var client redis.UniversalClient
	if cluster {
		opts := &redis.ClusterOptions{Addrs: hosts, DialTimeout: DialTimeout, ReadOnly: false}
		if u.User != nil {
			opts.Username = u.User.Username()
			opts.Password, _ = u.User.Password()
		}
		if u.Scheme == "rediss" {
			opts.TLSConfig = &tls.Config{MinVersion: tls.VersionTLS12, ServerName: hostOnly(hosts[0])}
		}
		client = redis.NewClusterClient(opts)
	} else {
		u.RawQuery = q.Encode()
		opts, err := redis.ParseURL(u.String())
		if err != nil {
			return nil, badURL("Redis", raw, redact.String(err.Error()))
		}
		opts.DialTimeout = DialTimeout
		client = redis.NewClient(opts)
	}
	pctx, cancel := context.WithTimeout(ctx, DialTimeout)
	defer cancel()
	if err := client.Ping(pctx).Err(); err != nil {
		cmd, denied := NoPermission(err.Error())
		if denied && cmd == "ping" {
			// The server answered and the login worked; this ACL user may
			// just not PING (-@all +@read), which no command needs.
			return client, nil
		}
		client.Close()
		if denied {
			return nil, problem.System(fmt.Errorf("Redis at %s refused %s to this ACL user: %s", redact.URL(raw), strings.ToUpper(cmd), redact.String(err.Error())),
				GrantHint(cmd))
		}
		return nil, Unreachable("Redis", raw, err)
	}
	return client, nil
}

// NoPermission reads a Redis NOPERM error message: denied is set for any
// NOPERM, and command names the command the ACL refused, lowercased ("" when
// the user may run it but not on that key or channel). Redis words it
// "this user has no permissions to run the 'info' command" (6.x, 7.0) or
// "User u has no permissions to run the 'info' command" (7.2+).
func NoPermission(msg string) (command string, denied bool) {
	if !strings.HasPrefix(msg, "NOPERM") {
		return "", false
	}
	if _, rest, ok := strings.Cut(msg, "to run the '"); ok {
		if name, _, ok := strings.Cut(rest, "'"); ok {
			return strings.ToLower(name), true
		}
	}
	return "", true
}

// GrantHint says what a Redis ACL user needs to run a refused command
// (cmd as NoPermission names it).
func GrantHint(cmd string) string {
	switch cmd {
	case "select":
		return "grant the ACL user +select to use a database other than 0, or put the keys in database 0"
	case "":
		return "the ACL user may not touch these keys: widen its key patterns (~...)"
	}
	return "grant the ACL user +" + cmd
}

func hostOnly(hostport string) string {
	h, _, err := net.SplitHostPort(hostport)
	if err != nil {
		return hostport
	}
	return h
}

// PostgresOptions shape a PostgreSQL session.
type PostgresOptions struct {
	// ReadOnly sets default_transaction_read_only, so the session cannot
	// write even if asked to.
	ReadOnly bool
	// StatementTimeout and LockTimeout keep inspection from hurting
	// production (0: server default).
	StatementTimeout time.Duration
	LockTimeout      time.Duration
	MaxConns         int32
}

// Postgres opens a pool.
func Postgres(ctx context.Context, raw string, o PostgresOptions) (*pgxpool.Pool, error) {
	if raw == "" {
		return nil, missing("PostgreSQL", "DatabaseURL", "DUPCTL_DATABASE_URL or DATABASE_URL")
	}
	cfg, err := pgxpool.ParseConfig(raw)
	if err != nil {
		return nil, badURL("PostgreSQL", raw, redact.String(err.Error()))
	}
	cfg.ConnConfig.ConnectTimeout = DialTimeout
	rp := cfg.ConnConfig.RuntimeParams
	rp["application_name"] = "dupctl"
	if o.ReadOnly {
		rp["default_transaction_read_only"] = "on"
	}
	if o.StatementTimeout > 0 {
		rp["statement_timeout"] = fmt.Sprint(o.StatementTimeout.Milliseconds())
	}
	if o.LockTimeout > 0 {
		rp["lock_timeout"] = fmt.Sprint(o.LockTimeout.Milliseconds())
	}
	if o.MaxConns > 0 {
		cfg.MaxConns = o.MaxConns
	}
	pool, err := pgxpool.NewWithConfig(ctx, cfg)
	if err != nil {
		return nil, Unreachable("PostgreSQL", raw, err)
	}
	pctx, cancel := context.WithTimeout(ctx, DialTimeout)
	defer cancel()
	if err := pool.Ping(pctx); err != nil {
		pool.Close()
		return nil, Unreachable("PostgreSQL", raw, err)
	}
	return pool, nil
}

// PostgresConn opens a single connection (for work that needs one
// session, such as a transaction held open).
func PostgresConn(ctx context.Context, raw string) (*pgx.Conn, error) {
	if raw == "" {
		return nil, missing("PostgreSQL", "DatabaseURL", "DUPCTL_DATABASE_URL or DATABASE_URL")
	}
	cfg, err := pgx.ParseConfig(raw)
	if err != nil {
		return nil, badURL("PostgreSQL", raw, redact.String(err.Error()))
	}
	cfg.ConnectTimeout = DialTimeout
	conn, err := pgx.ConnectConfig(ctx, cfg)
	if err != nil {
		return nil, Unreachable("PostgreSQL", raw, err)
	}
	return conn, nil
}

type amqpNameKey struct{}

// WithAMQPName makes connections AMQP opens with ctx carry "dupctl " + name
// as their connection_name, so an operator (or a test) can tell dupctl's
// connections apart in the management UI and rabbitmqctl list_connections.
func WithAMQPName(ctx context.Context, name string) context.Context {
	return context.WithValue(ctx, amqpNameKey{}, name)
}

// AMQP dials RabbitMQ (amqp:// or amqps://).
func AMQP(ctx context.Context, raw string) (*amqp.Connection, error) {
	if raw == "" {
		return nil, missing("RabbitMQ", "AMQPURL", "DUPCTL_AMQP_URL or AMQP_URL")
	}
	if _, err := amqp.ParseURI(raw); err != nil {
		return nil, badURL("AMQP", raw, redact.String(err.Error()))
	}
	name := "dupctl"
	if v, ok := ctx.Value(amqpNameKey{}).(string); ok && v != "" {
		name += " " + v
	}
	conn, err := amqp.DialConfig(raw, amqp.Config{
		Dial:       amqp.DefaultDial(DialTimeout),
		Properties: amqp.Table{"connection_name": name},
	})
	if err != nil {
		return nil, Unreachable("RabbitMQ", raw, err)
	}
	return conn, nil
}

// Unreachable wraps a connection failure: which system, which (redacted)
// URL, the driver's reason, and what to check; exit code 3.
func Unreachable(system, raw string, err error) error {
	hint := "check that it runs and the URL, user and password are right"
	var ne net.Error
	if errors.As(err, &ne) && ne.Timeout() {
		hint = "it did not answer in time: check host, port and firewall"
	}
	return problem.System(fmt.Errorf("cannot reach %s at %s: %s", system, redact.URL(raw), redact.String(err.Error())), hint)
}

// IsLoopback reports whether every host in a URL is a loopback address
// (localhost, 127.0.0.0/8, ::1). Commands that write refuse anything else
// without --allow-remote.
func IsLoopback(raw string) bool {
	u, err := url.Parse(raw)
	if err != nil || u.Host == "" {
		// key=value DSNs: look for host=
		for _, f := range strings.Fields(raw) {
			if v, ok := strings.CutPrefix(f, "host="); ok {
				return loopbackHost(v)
			}
		}
		return false
	}
	for _, h := range strings.Split(u.Host, ",") {
		if !loopbackHost(hostOnly(h)) {
			return false
		}
	}
	return true
}

func loopbackHost(h string) bool {
	h = strings.Trim(h, "[]")
	if h == "localhost" || strings.HasPrefix(h, "/") {
		return true
	}
	ip := net.ParseIP(h)
	return ip != nil && ip.IsLoopback()
}
