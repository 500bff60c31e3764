package connect

import (
	"context"
	"crypto/tls"
	"errors"
	"fmt"
	"net"
	"net/url"
	"slices"
	"strconv"
	"strings"
	"sync"

	"github.com/dupctl/dupctl/internal/platform/problem"
	"github.com/dupctl/dupctl/internal/platform/redact"
	"github.com/dupctl/dupctl/internal/platform/sentinelask"
	"github.com/redis/go-redis/v9"
)

// The redis+sentinel:// form is the one redis-py users know from Prefect and
// docket, and redis-vl (Python and Java) parse alike:
//
//	redis+sentinel://[user:pass@]host[:port][,host2[:port2]...]/master_name[/db][?sentinel_username=..&sentinel_password=..]
//	rediss+sentinel://...   (TLS to the Sentinels and to the data nodes)
//
// Sentinels default to port 26379; the user and password in the URL log in
// to the master (and replicas); the Sentinels get credentials only from
// sentinel_username and sentinel_password, since most deployments run them
// without any (https://docs.prefect.io/integrations/prefect-redis/api-ref/prefect_redis-connection,
// https://github.com/redis/redis-vl-java/pull/15). go-redis's own
// ParseFailoverURL takes one Sentinel and ?master_name=, which no other
// client spells so; its FailoverOptions carry what this form says.

// sentinelSchemes are the schemes of a Sentinel URL.
var sentinelSchemes = []string{"redis+sentinel", "rediss+sentinel"}

// SentinelPort is where a Sentinel listens unless the URL says otherwise.
const SentinelPort = "26379"

// sentinelWant is the form, for errors.
const sentinelWant = "redis+sentinel://[user:password@]host1:26379,host2:26379/master_name[/db]"

// IsSentinel reports whether raw names a Redis master through Sentinels.
func IsSentinel(raw string) bool {
	scheme, _, ok := strings.Cut(raw, "://")
	return ok && slices.Contains(sentinelSchemes, strings.ToLower(scheme))
}

// Sentinel is a redis+sentinel:// URL read.
type Sentinel struct {
	Master    string   // the name the Sentinels monitor the master under
	Sentinels []string // host:port of each Sentinel, in the URL's order
	DB        int
	// Username and Password log in to the master and replicas;
	// SentinelUsername and SentinelPassword to the Sentinels.
	Username, Password                 string
	SentinelUsername, SentinelPassword string
	TLS                                bool
	raw                                string
}

// ParseSentinel reads a redis+sentinel:// URL: a malformed one is bad
// input naming the redacted URL.
func ParseSentinel(raw string) (*Sentinel, error) {
	norm, err := withSentinelPorts(raw)
	if err != nil {
		return nil, err
	}
	u, err := url.Parse(norm)
	if err != nil {
		return nil, parseError("Redis", raw, func(s string) error {
			n, err := withSentinelPorts(s)
			if err == nil {
				_, err = url.Parse(n)
			}
			return err
		})
	}
	if !sentinelSameAsMasked(u, norm) {
		return nil, cutPassword("Redis", raw)
	}
	s := &Sentinel{TLS: strings.EqualFold(u.Scheme, "rediss+sentinel"), raw: raw}
	for _, h := range strings.Split(u.Host, ",") {
		if hostOnly(h) == "" {
			return nil, noHost("Redis", raw, sentinelWant)
		}
		s.Sentinels = append(s.Sentinels, h)
	}
	if u.User != nil {
		s.Username = u.User.Username()
		s.Password, _ = u.User.Password()
	}
	if err := s.path(u.Path); err != nil {
		return nil, err
	}
	return s, s.query(u.Query())
}

// path reads /master_name[/db].
func (s *Sentinel) path(p string) error {
	parts := strings.Split(strings.TrimPrefix(p, "/"), "/")
	if len(parts) > 0 && parts[len(parts)-1] == "" && len(parts) > 1 {
		parts = parts[:len(parts)-1] // a trailing '/'
	}
	switch {
	case parts[0] == "":
		return badURL("Redis", s.raw, "no master name: want "+sentinelWant+" (SENTINEL MASTERS on a Sentinel lists the names)")
	case len(parts) > 2:
		return badURL("Redis", s.raw, "want /master_name[/db] after the Sentinels, got "+strconv.Quote(p))
	}
	s.Master = parts[0]
	if len(parts) == 2 {
		db, err := strconv.Atoi(parts[1])
		if err != nil || db < 0 {
			return badURL("Redis", s.raw, fmt.Sprintf("database %q is not a number", parts[1]))
		}
		s.DB = db
	}
	return nil
}

// query reads the Sentinels' credentials; any other option is refused
// rather than ignored.
func (s *Sentinel) query(q url.Values) error {
	for k, v := range q {
		switch k {
		case "sentinel_username":
			s.SentinelUsername = v[len(v)-1]
		case "sentinel_password":
			s.SentinelPassword = v[len(v)-1]
		default:
			return badURL("Redis", s.raw, fmt.Sprintf("unknown option %q: a Sentinel URL takes sentinel_username and sentinel_password", k))
		}
	}
	return nil
}

// withSentinelPorts gives every Sentinel in raw's host list the default
// port where it has none: url.Parse reads the list as one host and checks
// only what follows its last ':' (h1:26379,h2 would be a bad port).
func withSentinelPorts(raw string) (string, error) {
	i := strings.Index(raw, "://")
	if i < 0 {
		return "", badURL("Redis", raw, "want "+sentinelWant)
	}
	start := i + 3
	// The host list starts after the userinfo's last '@' (as redact.URL
	// reads a password) and ends at the path, query or fragment.
	if at := strings.LastIndex(raw, "@"); at >= start {
		start = at + 1
	}
	end := len(raw)
	if j := strings.IndexAny(raw[start:], "/?#"); j >= 0 {
		end = start + j
	}
	hosts := strings.Split(raw[start:end], ",")
	for k, h := range hosts {
		if h == "" {
			return "", noHost("Redis", raw, sentinelWant)
		}
		if _, _, err := net.SplitHostPort(h); err != nil {
			hosts[k] = net.JoinHostPort(strings.Trim(h, "[]"), SentinelPort)
		}
	}
	return raw[:start] + strings.Join(hosts, ",") + raw[end:], nil
}

// sentinelSameAsMasked reports whether u (parsed from norm) means what
// norm's masked form means: a raw character in a password must not move
// the boundary to the Sentinels, the master name or the options.
func sentinelSameAsMasked(u *url.URL, norm string) bool {
	m, err := url.Parse(redact.URL(norm))
	if err != nil {
		return false
	}
	same := strings.EqualFold(u.Scheme, m.Scheme) && u.Host == m.Host && u.Path == m.Path && u.Fragment == m.Fragment &&
		u.User.Username() == m.User.Username()
	uq, mq := u.Query(), m.Query()
	if len(uq) != len(mq) {
		return false
	}
	for k := range uq {
		if _, ok := mq[k]; !ok {
			return false
		}
	}
	return same
}

// Target is how the URL reads without a password.
func (s *Sentinel) Target() string { return redact.URL(s.raw) }

// tlsConfig is the TLS of a rediss+sentinel:// URL (nil for plain).
func (s *Sentinel) tlsConfig() *tls.Config {
	if !s.TLS {
		return nil
	}
	return &tls.Config{MinVersion: tls.VersionTLS12, ServerName: hostOnly(s.Sentinels[0])}
}

// SentinelClient is a client of the Sentinel at addr, with the URL's
// Sentinel credentials and TLS.
func (s *Sentinel) SentinelClient(addr string) *redis.SentinelClient {
	return redis.NewSentinelClient(&redis.Options{Addr: addr, Username: s.SentinelUsername, Password: s.SentinelPassword,
		DialTimeout: DialTimeout, ContextTimeoutEnabled: true, TLSConfig: s.tlsConfig(), MaxRetries: -1})
}

// Clients are clients of a Sentinel URL's Sentinels and data nodes, one
// per address, made on first use and kept until Close: for what asks them
// again and again (a failover watched every 50 ms), where a client per
// ask would dial, and on rediss+sentinel shake hands, each time.
type Clients struct {
	s         *Sentinel
	mu        sync.Mutex
	sentinels map[string]*redis.SentinelClient
	nodes     map[string]*redis.Client
}

// Keep starts a set of kept clients of the URL's servers.
func (s *Sentinel) Keep() *Clients {
	return &Clients{s: s, sentinels: map[string]*redis.SentinelClient{}, nodes: map[string]*redis.Client{}}
}

// Sentinel is the kept client of the Sentinel at addr.
func (c *Clients) Sentinel(addr string) *redis.SentinelClient {
	c.mu.Lock()
	defer c.mu.Unlock()
	if c.sentinels[addr] == nil {
		c.sentinels[addr] = c.s.SentinelClient(addr)
	}
	return c.sentinels[addr]
}

// Node is the kept client of the data node (master or replica) at addr,
// with the URL's user, password, database and TLS: what dupctl asks a node
// itself (ROLE, INFO) rather than the Sentinels. It sends a command again
// once on a new connection when its connection broke: Sentinel's
// reconfiguration of a node kills its clients (CLIENT KILL TYPE normal),
// and the pool finds such a connection dead before use over TCP but not
// over TLS. What dupctl sends a node can be sent twice.
func (c *Clients) Node(addr string) *redis.Client {
	c.mu.Lock()
	defer c.mu.Unlock()
	if c.nodes[addr] == nil {
		var conf *tls.Config
		if c.s.TLS {
			conf = c.s.tlsConfig()
			conf.ServerName = hostOnly(addr)
		}
		c.nodes[addr] = redis.NewClient(&redis.Options{Addr: addr, Username: c.s.Username, Password: c.s.Password, DB: c.s.DB,
			DialTimeout: DialTimeout, ContextTimeoutEnabled: true, TLSConfig: conf, MaxRetries: 1})
	}
	return c.nodes[addr]
}

// Agreed is the master every Sentinel names now, when they all answer and
// name the same one; otherwise an error saying what each said.
func (c *Clients) Agreed(ctx context.Context) (string, error) {
	return sentinelask.Agreed(c.s.Sentinels, func(a string) (string, error) { return c.s.askMaster(ctx, c.Sentinel(a)) })
}

// Close closes every kept client.
func (c *Clients) Close() error {
	c.mu.Lock()
	defer c.mu.Unlock()
	var errs []error
	for _, sc := range c.sentinels {
		errs = append(errs, sc.Close())
	}
	for _, n := range c.nodes {
		errs = append(errs, n.Close())
	}
	return errors.Join(errs...)
}

// askMaster asks the Sentinel c where the master is; an error other than
// sentinelask.ErrNoMaster (no master by the URL's name) is said with the
// URL's secrets masked.
func (s *Sentinel) askMaster(ctx context.Context, c *redis.SentinelClient) (string, error) {
	addr, err := sentinelask.Master(ctx, c, s.Master)
	if err != nil && !errors.Is(err, sentinelask.ErrNoMaster) {
		err = errors.New(redact.InError(err.Error(), s.raw))
	}
	return addr, err
}

// ErrNoMaster says that no Sentinel named a master under the URL's name.
var ErrNoMaster = errors.New("no Sentinel knows the master")

// MasterAddr asks the Sentinels in turn where the master is now (the
// procedure of the Sentinel clients guide: the first Sentinel that
// answers with an address wins). The error names each Sentinel's refusal.
func (s *Sentinel) MasterAddr(ctx context.Context) (string, error) {
	var why []string
	unknown := 0
	for _, a := range s.Sentinels {
		c := s.SentinelClient(a)
		addr, err := s.askMaster(ctx, c)
		c.Close()
		switch {
		case err == nil:
			return addr, nil
		case errors.Is(err, sentinelask.ErrNoMaster):
			unknown++
		case ctx.Err() != nil:
			return "", ctx.Err()
		}
		why = append(why, a+": "+err.Error())
	}
	err := errors.New(strings.Join(why, "; "))
	if unknown == len(s.Sentinels) {
		err = fmt.Errorf("%w %q (%s)", ErrNoMaster, s.Master, strings.Join(why, "; "))
	}
	return "", err
}

// Failover is a Redis client of the master a group of Sentinels names:
// go-redis's failover client (each new connection asks the Sentinels
// where the master is, and a switch-master closes the old ones), with the
// Sentinel URL it came from, so a report can say which server it read.
type Failover struct {
	*redis.Client
	Sentinel *Sentinel

	mu   sync.Mutex
	last string // the master address a connection last went to
}

// Node names the master for reports: its address now and its name, e.g.
// "127.0.0.1:6380 (mymaster)". It asks the Sentinels, so after a failover
// it names the new master.
func (f *Failover) Node(ctx context.Context) string {
	addr, err := f.Sentinel.MasterAddr(ctx)
	if err != nil {
		f.mu.Lock()
		addr = f.last
		f.mu.Unlock()
	}
	return addr + " (" + f.Sentinel.Master + ")"
}

// Dialed names the server the client's last connection went to, as Node
// does: the Sentinels may name another a moment after a failover, while
// a connection made then tells where the client reads.
func (f *Failover) Dialed() string {
	f.mu.Lock()
	defer f.mu.Unlock()
	return f.last + " (" + f.Sentinel.Master + ")"
}

// dialed records where a connection went.
func (f *Failover) dialed(addr string) {
	f.mu.Lock()
	f.last = addr
	f.mu.Unlock()
}

// redisSentinel connects to the master a redis+sentinel:// URL names.
func redisSentinel(ctx context.Context, raw string) (redis.UniversalClient, error) {
	s, err := ParseSentinel(raw)
	if err != nil {
		return nil, err
	}
	pctx, cancel := context.WithTimeout(ctx, DialTimeout)
	defer cancel()
	addr, err := s.MasterAddr(pctx)
	switch {
	case errors.Is(err, ErrNoMaster):
		return nil, problem.System(fmt.Errorf("Redis Sentinels at %s: %s", s.Target(), err),
			"check the master name after the Sentinels: SENTINEL MASTERS on a Sentinel lists the names it monitors")
	case err != nil:
		return nil, unreachable(ctx, "Redis Sentinels", raw, err)
	}
	f := &Failover{Sentinel: s, last: addr}
	d := &net.Dialer{Timeout: DialTimeout}
	tlsConf := s.tlsConfig()
	f.Client = redis.NewFailoverClient(&redis.FailoverOptions{
		MasterName: s.Master, SentinelAddrs: s.Sentinels, SentinelUsername: s.SentinelUsername, SentinelPassword: s.SentinelPassword,
		Username: s.Username, Password: s.Password, DB: s.DB, TLSConfig: tlsConf, DialTimeout: DialTimeout,
		// As for a standalone server: --timeout and Ctrl-C end every command.
		ContextTimeoutEnabled: true,
		// Called with the master's address once the Sentinels gave it.
		Dialer: func(ctx context.Context, network, addr string) (net.Conn, error) {
			var c net.Conn
			var err error
			if tlsConf != nil {
				conf := tlsConf.Clone()
				conf.ServerName = hostOnly(addr)
				c, err = (&tls.Dialer{NetDialer: d, Config: conf}).DialContext(ctx, network, addr)
			} else {
				c, err = d.DialContext(ctx, network, addr)
			}
			if err == nil {
				f.dialed(addr)
			}
			return c, err
		},
	})
	if err := pingRedis(ctx, f, raw); err != nil {
		return nil, err
	}
	return f, nil
}

// DialMaster opens a TCP (or, for rediss+sentinel://, TLS) connection to
// the master the Sentinels name now; addr is where it went. A proxy in
// front of a Sentinel setup dials each connection so, and follows a
// failover from the next connection on.
func (s *Sentinel) DialMaster(ctx context.Context) (conn net.Conn, addr string, err error) {
	if addr, err = s.MasterAddr(ctx); err != nil {
		return nil, "", fmt.Errorf("Redis Sentinels at %s: %w", s.Target(), err)
	}
	d := &net.Dialer{Timeout: DialTimeout}
	if s.TLS {
		conf := s.tlsConfig()
		conf.ServerName = hostOnly(addr)
		conn, err = (&tls.Dialer{NetDialer: d, Config: conf}).DialContext(ctx, "tcp", addr)
	} else {
		conn, err = d.DialContext(ctx, "tcp", addr)
	}
	return conn, addr, err
}

// DataURL is a redis:// URL of the data nodes' user, password and
// database at addr: what a client that does not speak Sentinel (a worker
// behind a proxy) is given.
func (s *Sentinel) DataURL(addr string) string {
	u := url.URL{Scheme: "redis", Host: addr}
	if s.Username != "" || s.Password != "" {
		u.User = url.UserPassword(s.Username, s.Password)
	}
	if s.DB != 0 {
		u.Path = "/" + strconv.Itoa(s.DB)
	}
	return u.String()
}
