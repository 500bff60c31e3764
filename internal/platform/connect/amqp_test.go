package connect

import (
	"context"
	"io"
	"net"
	"net/url"
	"slices"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/dupctl/dupctl/internal/platform/redact"
	"github.com/dupctl/dupctl/internal/testenv"
)

// TestParseAMQPSpellings: the ways clients write several addresses of one
// cluster, each read into single-host URLs in the order given:
//   - several hosts in one URL, as Redis Cluster URLs are written
//     (amqp://guest:guest@127.0.0.1:5672,127.0.0.1:5673/vhost);
//   - Spring Boot's spring.rabbitmq.addresses, a "comma-separated list of
//     addresses to which the client should connect", each of them
//     [amqp://][user:password@]host[:port][/vhost] (RabbitProperties.Address);
//   - the amqp gem's failover list "amqp://localhost:5672/,amqp://localhost:5673/";
//   - kombu's "amqp://broker1.example.com;amqp://broker2.example.com".
func TestParseAMQPSpellings(t *testing.T) {
	tests := []struct {
		raw     string
		addrs   []string
		vhost   string
		shuffle bool
	}{
		{"amqp://guest:guest@127.0.0.1:5672/", []string{"amqp://guest:guest@127.0.0.1:5672/"}, "/", false},
		{"amqp://guest:guest@127.0.0.1:5672,127.0.0.1:5673/vh",
			[]string{"amqp://guest:guest@127.0.0.1:5672/vh", "amqp://guest:guest@127.0.0.1:5673/vh"}, "vh", false},
		{"amqp://a:p1@h1:5672/vh,amqp://b:p2@h2:5673/vh",
			[]string{"amqp://a:p1@h1:5672/vh", "amqp://b:p2@h2:5673/vh"}, "vh", false},
		{"amqp://localhost:5672/,amqp://localhost:5673/", []string{"amqp://localhost:5672/", "amqp://localhost:5673/"}, "/", false},
		{"amqp://broker1.example.com;amqps://broker2.example.com",
			[]string{"amqp://broker1.example.com", "amqps://broker2.example.com"}, "/", false},
		{"amqp://u:p@h1,h2,h3?heartbeat=5&shuffle=true",
			[]string{"amqp://u:p@h1?heartbeat=5", "amqp://u:p@h2?heartbeat=5", "amqp://u:p@h3?heartbeat=5"}, "/", true},
		{"amqp://u:p%2C1@127.0.0.1:5672,127.0.0.2:5673/%2Fv?shuffle=1",
			[]string{"amqp://u:p%2C1@127.0.0.1:5672/%2Fv", "amqp://u:p%2C1@127.0.0.2:5673/%2Fv"}, "/v", true},
		// IPv6 addresses: as a list of URLs, or several hosts in one URL as
		// IPv4 ones are (net/url reads one bracketed host: each is read alone)
		{"amqp://u:p@[::1]:5672/,amqp://u:p@[::1]:5673/", []string{"amqp://u:p@[::1]:5672/", "amqp://u:p@[::1]:5673/"}, "/", false},
		{"amqp://guest:guest@[::1]:5672,[::1]:5673/", []string{"amqp://guest:guest@[::1]:5672/", "amqp://guest:guest@[::1]:5673/"}, "/", false},
		{"amqp://u:p@[::1],[fe80::1%25eth0]:5673,127.0.0.1/vh?shuffle=true&heartbeat=5",
			[]string{"amqp://u:p@[::1]/vh?heartbeat=5", "amqp://u:p@[fe80::1%25eth0]:5673/vh?heartbeat=5", "amqp://u:p@127.0.0.1/vh?heartbeat=5"},
			"vh", true},
		{"amqp://127.0.0.1:5672,[::1]:5673", []string{"amqp://127.0.0.1:5672", "amqp://[::1]:5673"}, "/", false},
		{"amqps://u:p%5B%2C@[2001:db8::7]:5671,[2001:db8::8]:5671/v",
			[]string{"amqps://u:p%5B%2C@[2001:db8::7]:5671/v", "amqps://u:p%5B%2C@[2001:db8::8]:5671/v"}, "v", false},
		// a raw ',' in the password of a single URL stays in the password
		{"amqp://u:p,w@h1:5672/", []string{"amqp://u:p,w@h1:5672/"}, "/", false},
	}
	for _, tt := range tests {
		got, err := ParseAMQP(tt.raw)
		if err != nil {
			t.Errorf("ParseAMQP(%q): %v", tt.raw, err)
			continue
		}
		if !slices.Equal(got.Addrs, tt.addrs) || got.Vhost != tt.vhost || got.Shuffle != tt.shuffle {
			t.Errorf("ParseAMQP(%q) = %q vhost %q shuffle %v, want %q vhost %q shuffle %v",
				tt.raw, got.Addrs, got.Vhost, got.Shuffle, tt.addrs, tt.vhost, tt.shuffle)
		}
	}
}

// TestParseAMQPRefusals: what cannot be a list of one cluster's addresses
// is bad input (exit 2) that names the URL without its passwords.
func TestParseAMQPRefusals(t *testing.T) {
	for raw, want := range map[string]string{
		"amqp://u:s3cret@h1/a,amqp://u:s3cret@h2/b":  "different vhosts",
		"amqp://u:s3cret@h1:5672/v,h2:5673":          "several addresses go before the vhost",
		"amqp://u:s3cret@h1,,h2/":                    "no host",
		"amqp://u:s3cret@h1/,http://u:s3cret@h2/":    "",
		"amqp://u:s3cret@h1/,amqp://u:s3/cret@h2:1/": "",
		"amqp://u:s3cret@[::1]:5672,[::1/":           "no host",
		"amqp://u:s3cret@[::1]:5672,,[::1]:5673/":    "no host",
		"amqp://u:s3cret@[::1]:5672,[::1]:5673/v,w":  "several addresses go before the vhost",
		"amqp://u:s3[c,ret@[::1]:5672,[::1]:5673/":   "",
		"amqp://u:s3/c[,ret@[::1]:5672,[::1]:5673/":  "",
	} {
		_, err := ParseAMQP(raw)
		if !isInput(err) || !strings.Contains(err.Error(), want) || strings.Contains(err.Error(), "s3") {
			t.Errorf("ParseAMQP(%q): %v, want a usage error saying %q without the password", raw, err, want)
		}
	}
}

func TestIsLoopbackList(t *testing.T) {
	for raw, want := range map[string]bool{
		"amqp://u:p@127.0.0.1:5672,127.0.0.1:5673/":          true,
		"amqp://u:p@127.0.0.1:5672,10.0.0.2:5673/":           false,
		"amqp://u:p@127.0.0.1/,amqp://u:p@localhost:5673/":   true,
		"amqp://u:p@127.0.0.1/,amqp://u:p@mq.example:5673/":  false,
		"amqp://u:p@127.0.0.1/;amqps://u:p@10.1.1.1:5671/vh": false,
		"amqp://u:p@[::1]:5672,[::1]:5673/":                  true,
		"amqp://u:p@[::1]:5672,127.0.0.1:5673/":              true,
		"amqp://u:p@[::1]:5672,[2001:db8::1]:5673/":          false,
	} {
		if got := IsLoopback(raw); got != want {
			t.Errorf("IsLoopback(%q) = %v, want %v", raw, got, want)
		}
	}
}

// liveAMQP is the test broker's URL split into its user info and host.
func liveAMQP(t *testing.T) (userinfo, host string) {
	t.Helper()
	u, err := url.Parse(testenv.Need(t, testenv.AMQP))
	if err != nil {
		t.Fatal(err)
	}
	return u.User.String(), u.Host
}

// TestAMQPFailsOverToTheNextAddress: a dead port first, the real broker
// second, in each spelling: the dial skips the dead one and connects.
func TestAMQPFailsOverToTheNextAddress(t *testing.T) {
	ui, live := liveAMQP(t)
	dead := deadPort(t)
	ctx := context.Background()
	for _, raw := range []string{
		"amqp://" + ui + "@" + dead + "," + live + "/",
		"amqp://" + ui + "@" + dead + "/,amqp://" + ui + "@" + live + "/",
		"amqp://" + ui + "@" + dead + "/;amqp://" + ui + "@" + live + "/",
		// an IPv6 literal in the host list, refused, then the broker
		"amqp://" + ui + "@[::1]:" + port(dead) + "," + live + "/",
	} {
		conn, err := AMQP(ctx, raw)
		if err != nil {
			t.Errorf("AMQP(%q): %v", raw, err)
			continue
		}
		if got := conn.RemoteAddr().String(); got != live {
			t.Errorf("AMQP(%q) connected to %s, want %s", raw, got, live)
		}
		conn.Close()
	}
}

// TestAMQPIPv6HostList: a host list of IPv6 literals dials as an IPv4 one
// does: the first refuses, the second (a proxy on [::1] to the broker,
// which listens on 127.0.0.1 only) answers.
func TestAMQPIPv6HostList(t *testing.T) {
	ui, live := liveAMQP(t)
	ln, err := net.Listen("tcp", "[::1]:0")
	if err != nil {
		t.Skipf("no IPv6 loopback: %v", err)
	}
	defer ln.Close()
	go func() {
		for {
			c, err := ln.Accept()
			if err != nil {
				return
			}
			b, err := net.Dial("tcp", live)
			if err != nil {
				c.Close()
				continue
			}
			go func() { _, _ = io.Copy(b, c); b.Close() }()
			go func() { _, _ = io.Copy(c, b); c.Close() }()
		}
	}()
	dead, err := net.Listen("tcp", "[::1]:0")
	if err != nil {
		t.Fatal(err)
	}
	deadAddr := dead.Addr().String()
	dead.Close()
	raw := "amqp://" + ui + "@" + deadAddr + "," + ln.Addr().String() + "/"
	conn, err := AMQP(context.Background(), raw)
	if err != nil {
		t.Fatalf("AMQP(%q): %v", raw, err)
	}
	defer conn.Close()
	if got := conn.RemoteAddr().String(); got != ln.Addr().String() {
		t.Errorf("connected to %s, want the second address %s", got, ln.Addr())
	}
	if !IsLoopback(raw) {
		t.Errorf("IsLoopback(%q) = false", raw)
	}
}

func port(hostport string) string {
	_, p, _ := net.SplitHostPort(hostport)
	return p
}

// TestAMQPAllAddressesDown: every address refused: one error (exit 3)
// naming each address without its password and saying why it failed.
func TestAMQPAllAddressesDown(t *testing.T) {
	d1, d2 := deadPort(t), deadPort(t)
	raw := "amqp://u:s3cretA@" + d1 + "/,amqp://u:s3cretB@" + d2 + "/"
	_, err := AMQP(context.Background(), raw)
	if err == nil || !isSystem(err) {
		t.Fatalf("AMQP: %v, want a system error", err)
	}
	msg := err.Error()
	if strings.Contains(msg, "s3cret") || !strings.Contains(msg, "any of its 2 addresses") ||
		!strings.Contains(msg, "amqp://u:xxxxx@"+d1+"/: ") || !strings.Contains(msg, "amqp://u:xxxxx@"+d2+"/: ") ||
		strings.Count(msg, "connection refused") != 2 {
		t.Errorf("error: %s", msg)
	}
}

// TestAMQPShuffle: with ?shuffle=true the dials spread over the addresses;
// without it the first address is always tried first. The first address
// is a listener that counts and drops connections, the second the broker.
func TestAMQPShuffle(t *testing.T) {
	ui, live := liveAMQP(t)
	counting, accepted := droppingListener(t)
	ctx := context.Background()
	const dials = 40
	dialAll := func(raw string) int64 {
		before := accepted.Load()
		for range dials {
			conn, err := AMQP(ctx, raw)
			if err != nil {
				t.Fatal(err)
			}
			conn.Close()
		}
		return accepted.Load() - before
	}
	if n := dialAll("amqp://" + ui + "@" + counting + "," + live + "/"); n != dials {
		t.Errorf("in order: the first address was tried %d times of %d", n, dials)
	}
	// All 40 in one order by chance: 2 in 2^40.
	if n := dialAll("amqp://" + ui + "@" + counting + "," + live + "/?shuffle=true"); n == 0 || n == dials {
		t.Errorf("shuffled: the first address was tried %d times of %d", n, dials)
	}
}

// deadPort is a loopback address nothing listens on.
func deadPort(t *testing.T) string {
	t.Helper()
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	addr := l.Addr().String()
	l.Close()
	return addr
}

// droppingListener accepts connections and closes them at once, counting
// them.
func droppingListener(t *testing.T) (string, *atomic.Int64) {
	t.Helper()
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { l.Close() })
	var n atomic.Int64
	go func() {
		for {
			c, err := l.Accept()
			if err != nil {
				return
			}
			n.Add(1)
			_ = c.SetDeadline(time.Now())
			c.Close()
		}
	}()
	return l.Addr().String(), &n
}

// FuzzAMQPHostListNeverLeaks: a password of any bytes around a token,
// before a host list of IPv6 and IPv4 literals in one URL: ParseAMQP reads
// every host whole (none taken from the password), or refuses the URL as
// bad input holding no piece of the token; the redacted URL holds none of
// the password.
func FuzzAMQPHostListNeverLeaks(f *testing.F) {
	f.Add("s3cr", "t-pw", 0)
	f.Add("p[a,", "]s@w0rd", 1)
	f.Add("x]:1,[::2", "", 2)
	f.Fuzz(func(t *testing.T, pre, post string, form int) {
		const token = "Qz8Kw"
		pw := pre + token + post
		if strings.ContainsAny(pw, "\x00\n\r") || strings.Contains(strings.ToLower(pw), "amqp") {
			t.Skip()
		}
		// each host as written, then the host:port it dials
		lists := [][][2]string{
			{{"[::1]:5672", "[::1]:5672"}, {"[::1]:5673", "[::1]:5673"}},
			{{"[::1]", "[::1]:5672"}, {"127.0.0.1:5673", "127.0.0.1:5673"}},
			{{"127.0.0.1:5672", "127.0.0.1:5672"}, {"[fe80::1%25lo]:5673", "[fe80::1%lo]:5673"}, {"[::1]", "[::1]:5672"}},
		}
		list := lists[(form%len(lists)+len(lists))%len(lists)]
		var hosts []string
		for _, h := range list {
			hosts = append(hosts, h[0])
		}
		raw := "amqp://u:" + pw + "@" + strings.Join(hosts, ",") + "/vh"
		if got := redact.URL(raw); strings.Contains(got, pw) {
			t.Fatalf("redact.URL(%q) = %q", raw, got)
		}
		tg, err := ParseAMQP(raw)
		if err != nil {
			for i := 0; i+3 <= len(token); i++ {
				if !isInput(err) || strings.Contains(err.Error(), token[i:i+3]) {
					t.Fatalf("ParseAMQP(%q): %v: want bad input without %q", raw, err, token[i:i+3])
				}
			}
			return
		}
		if len(tg.Addrs) != len(hosts) || tg.Vhost != "vh" {
			t.Fatalf("ParseAMQP(%q) = %q vhost %q, want %d addresses", raw, tg.Addrs, tg.Vhost, len(hosts))
		}
		for i, a := range tg.Addrs {
			if got := AMQPHostPort(a); got != list[i][1] {
				t.Fatalf("ParseAMQP(%q): address %d dials %s, want %s", raw, i, got, list[i][1])
			}
		}
	})
}
