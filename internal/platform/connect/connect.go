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
	"github.com/redis/go-redis/v9"
)

// DialTimeout bounds every connection attempt.
const DialTimeout = 5 * time.Second

// missing is the error for a URL nobody gave; field is the option that
// holds it.
func missing(system, field, env string) error {
	return &problem.Input{Why: fmt.Sprintf("no %s URL: give {%s} or set %s", system, field, env)}
}

// badURL is the error for a URL that does not parse: the URL and the
// parser's words about it (which may quote it) with the password removed
// before anything else happens to them.
func badURL(system, raw, why string) error {
	in := &problem.Input{Why: fmt.Sprintf("%s URL %s: %s", system, redact.URL(raw), redact.InError(why, raw))}
	if u, err := url.Parse(raw); err != nil || u.User == nil && strings.Contains(raw, "@") {
		in.Hint = "a '/', '#', '?', '@' or space in a user or password must be percent-encoded: %2F %23 %3F %40 %20"
	}
	return in
}

// parseError words a parser's refusal of raw with the same parser's words
// about the masked URL, which can quote nothing of the password (issue 27:
// a parser quoting the piece of a raw password it stopped at leaked 12 of
// 13 characters). When only the raw URL fails, its password holds what a
// URL cannot carry raw.
func parseError(system, raw string, parse func(string) error) error {
	if err := parse(redact.URL(raw)); err != nil {
		return badURL(system, raw, err.Error())
	}
	return cutPassword(system, raw)
}

// cutPassword is the error for a URL whose password holds a raw '@', '/',
// '#', '?' or space: a parser ends the password there and reads the rest
// as the host, the path or the query - another server, another database.
func cutPassword(system, raw string) error {
	return &problem.Input{Why: fmt.Sprintf("%s URL %s: the password holds a character that ends it early in a URL, "+
		"so the rest would be read as the host, path or query",
		system, redact.URL(raw)),
		Hint: "percent-encode '/', '#', '?', '@', '%' and spaces in a user or password: %2F %23 %3F %40 %25 %20"}
}

// sameAsMasked reports whether raw means what its masked form means: the
// same scheme, user, host, path and query once the password is Mask.
func sameAsMasked(raw string) bool {
	u, err := url.Parse(raw)
	m, errm := url.Parse(redact.URL(raw))
	if err != nil || errm != nil {
		return err == nil && errm == nil
	}
	return u.Scheme == m.Scheme && u.Host == m.Host && u.Path == m.Path && u.RawQuery == m.RawQuery && u.Fragment == m.Fragment &&
		u.User.Username() == m.User.Username()
}

// noHost refuses a URL that names no host: libraries would silently
// mean localhost, which is never what a user who typed a URL meant.
func noHost(system, raw, want string) error {
	return badURL(system, raw, "no host: want "+want)
}

func init() {
	// go-redis logs dial failures to stderr on its own; dupctl reports
	// them once, in its own error.
	redis.SetLogger(silent{})
}

type silent struct{}

func (silent) Printf(context.Context, string, ...any) {}

// Redis connects to a standalone Redis, a Redis Cluster or the master a
// group of Sentinels names. A cluster is named by several comma-separated
// seed addresses (redis://h1:7000,h2:7001) or by ?cluster=true; a
// Sentinel group by redis+sentinel:// (sentinel.go; the client is then a
// *Failover); TLS with rediss://; ACL user and password in the URL.
func Redis(ctx context.Context, raw string) (redis.UniversalClient, error) {
	if raw == "" {
		return nil, missing("Redis", "RedisURL", "DUPCTL_REDIS_URL or REDIS_URL")
	}
	if IsSentinel(raw) {
		return redisSentinel(ctx, raw)
	}
	const want = "redis://host:port[/db], rediss://host:port or redis+sentinel://host:26379/master_name " +
		"(a user and password go before the host)"
	u, err := url.Parse(raw)
	if err != nil {
		return nil, parseError("Redis", raw, func(s string) error { _, err := url.Parse(s); return err })
	}
	if u.Scheme != "redis" && u.Scheme != "rediss" {
		return nil, badURL("Redis", raw, "want "+want)
	}
	if !sameAsMasked(raw) {
		return nil, cutPassword("Redis", raw)
	}
	if u.Host == "" || strings.HasPrefix(u.Host, ":") {
		return nil, noHost("Redis", raw, want)
	}
	hosts := strings.Split(u.Host, ",")
	q := u.Query()
	cluster := len(hosts) > 1 || q.Get("cluster") == "true"
	q.Del("cluster")
	var client redis.UniversalClient
	if cluster {
		opts := &redis.ClusterOptions{Addrs: hosts, DialTimeout: DialTimeout, ReadOnly: false, ContextTimeoutEnabled: true}
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
			return nil, parseError("Redis", raw, func(s string) error {
				m, err := url.Parse(s)
				if err == nil {
					mq := m.Query()
					mq.Del("cluster")
					m.RawQuery = mq.Encode()
					_, err = redis.ParseURL(m.String())
				}
				return err
			})
		}
		opts.DialTimeout = DialTimeout
		// Every command, and the dial itself, ends with its context:
		// --timeout and Ctrl-C bound them (go-redis ignores deadlines
		// otherwise).
		opts.ContextTimeoutEnabled = true
		client = redis.NewClient(opts)
	}
	if err := pingRedis(ctx, client, raw); err != nil {
		return nil, err
	}
	return client, nil
}

// pingRedis checks that a new client reaches its server and logs in; on
// failure it closes the client and words the error.
func pingRedis(ctx context.Context, client redis.UniversalClient, raw string) error {
	pctx, cancel := context.WithTimeout(ctx, DialTimeout)
	defer cancel()
	// A blocked read ignores a cancelled context (only deadlines reach
	// go-redis): wait for the ping or Ctrl-C, whichever comes first.
	pinged := make(chan error, 1)
	go func() { pinged <- client.Ping(pctx).Err() }()
	var err error
	select {
	case err = <-pinged:
	case <-ctx.Done():
		client.Close()
		return unreachable(ctx, "Redis", raw, ctx.Err())
	}
	if err == nil {
		return nil
	}
	cmd, denied := NoPermission(err.Error())
	if denied && cmd == "ping" {
		// The server answered and the login worked; this ACL user may
		// just not PING (-@all +@read), which no command needs.
		return nil
	}
	client.Close()
	if denied {
		return problem.System(fmt.Errorf("Redis at %s refused %s to this ACL user: %s", redact.URL(raw), strings.ToUpper(cmd),
			redact.InError(err.Error(), raw)),
			GrantHint(cmd))
	}
	return unreachable(ctx, "Redis", raw, err)
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
	if err := pgHost(raw); err != nil {
		return nil, err
	}
	cfg, err := pgxpool.ParseConfig(raw)
	if err != nil {
		return nil, parseError("PostgreSQL", raw, func(s string) error { _, err := pgxpool.ParseConfig(s); return err })
	}
	if err := pgSameAsMasked(raw, cfg.ConnConfig); err != nil {
		return nil, err
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
		return nil, unreachable(ctx, "PostgreSQL", raw, err)
	}
	pctx, cancel := context.WithTimeout(ctx, DialTimeout)
	defer cancel()
	if err := pool.Ping(pctx); err != nil {
		pool.Close()
		return nil, unreachable(ctx, "PostgreSQL", raw, err)
	}
	return pool, nil
}

// PostgresConn opens a single connection (for work that needs one
// session, such as a transaction held open).
func PostgresConn(ctx context.Context, raw string) (*pgx.Conn, error) {
	if raw == "" {
		return nil, missing("PostgreSQL", "DatabaseURL", "DUPCTL_DATABASE_URL or DATABASE_URL")
	}
	if err := pgHost(raw); err != nil {
		return nil, err
	}
	cfg, err := pgx.ParseConfig(raw)
	if err != nil {
		return nil, parseError("PostgreSQL", raw, func(s string) error { _, err := pgx.ParseConfig(s); return err })
	}
	if err := pgSameAsMasked(raw, cfg); err != nil {
		return nil, err
	}
	cfg.ConnectTimeout = DialTimeout
	conn, err := pgx.ConnectConfig(ctx, cfg)
	if err != nil {
		return nil, unreachable(ctx, "PostgreSQL", raw, err)
	}
	return conn, nil
}

// pgSameAsMasked refuses a connection string that the driver reads as
// another server, database or user than its masked form: a raw character
// in the password cut it early (a URL), or a raw space did (key=value).
func pgSameAsMasked(raw string, cfg *pgx.ConnConfig) error {
	m, err := pgx.ParseConfig(redact.URL(raw))
	if err != nil || m.Host != cfg.Host || m.Port != cfg.Port || m.Database != cfg.Database || m.User != cfg.User {
		return cutPassword("PostgreSQL", raw)
	}
	return nil
}

// pgHost refuses a postgres:// URL that names no host (neither in the
// authority nor as ?host=); key=value DSNs keep libpq's defaults.
func pgHost(raw string) error {
	if !strings.Contains(raw, "://") {
		return nil
	}
	u, err := url.Parse(raw)
	if err != nil || u.Host != "" || u.Query().Get("host") != "" {
		return nil // a parse error is reported by the driver's parser
	}
	return noHost("PostgreSQL", raw, "postgres://host[:port]/database (a user and password go before the host)")
}

// unreachable is Unreachable, except that an interruption or --timeout
// stays what it is (exit 130, or the timeout's own message).
func unreachable(ctx context.Context, system, raw string, err error) error {
	ctxErr := ctx.Err()
	if dl, ok := ctx.Deadline(); ok && ctxErr == nil && !time.Now().Before(dl) {
		// A socket deadline set from ctx can fire before ctx's own timer.
		ctxErr = context.DeadlineExceeded
	}
	if ctxErr != nil {
		return fmt.Errorf("connect to %s at %s: %w", system, redact.URL(raw), ctxErr)
	}
	return Unreachable(system, raw, err)
}

// Unreachable wraps a connection failure: which system, which (redacted)
// URL, the driver's reason, and what to check; exit code 3.
func Unreachable(system, raw string, err error) error {
	hint := "check that it runs and the URL, user and password are right"
	var ne net.Error
	if errors.As(err, &ne) && ne.Timeout() {
		hint = "it did not answer in time: check host, port and firewall"
	}
	return problem.System(fmt.Errorf("cannot reach %s at %s: %s", system, redact.URL(raw), redact.InError(err.Error(), raw)), hint)
}

// IsLoopback reports whether every host in a URL is a loopback address
// (localhost, 127.0.0.0/8, ::1); of a list of AMQP URLs (redact.SplitList),
// every host of every URL. Commands that write refuse anything else
// without --allow-remote.
func IsLoopback(raw string) bool {
	if parts := redact.SplitList(raw); len(parts) > 1 {
		for i, p := range parts {
			if i > 0 {
				p = p[1:]
			}
			if !IsLoopback(p) {
				return false
			}
		}
		return true
	}
	if IsSentinel(raw) {
		if norm, err := withSentinelPorts(raw); err == nil {
			raw = norm
		}
	}
	if t, err := amqpTarget(raw); err == nil {
		// Its hosts as ParseAMQP reads them (a list of IPv6 hosts does not
		// parse as one URL).
		for _, a := range t.Addrs {
			if !loopbackHost(hostOnly(AMQPHostPort(a))) {
				return false
			}
		}
		return true
	}
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
