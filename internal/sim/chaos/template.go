package chaos

import (
	"fmt"
	"net"
	"net/url"
	"regexp"
	"sort"
	"strconv"
	"strings"

	"github.com/dupctl/dupctl/internal/platform/connect"
	"github.com/dupctl/dupctl/internal/platform/problem"
)

// varPattern is a template variable: {amqp}, {redis_port}, {prefix}.
// Braces around anything else (JSON in a value) are left alone.
var varPattern = regexp.MustCompile(`\{[a-z][a-z0-9_]*\}`)

// expand replaces every {name} in s with vars[name]; an unknown name is
// an error, so a typo does not reach the worker as a literal.
func expand(s string, vars map[string]string) (string, error) {
	var bad string
	out := varPattern.ReplaceAllStringFunc(s, func(m string) string {
		v, ok := vars[m[1:len(m)-1]]
		if !ok && bad == "" {
			bad = m
		}
		return v
	})
	if bad != "" {
		names := make([]string, 0, len(vars))
		for k := range vars {
			names = append(names, k)
		}
		sort.Strings(names)
		for i, n := range names {
			names[i] = "{" + n + "}"
		}
		return "", fmt.Errorf("unknown template %s: want one of %s", bad, strings.Join(names, " "))
	}
	return out, nil
}

// templateNames are the templates a worker run fills in ({redis...} only
// with redis set, {replica...} only with a replica).
func templateNames(redis, replica bool) map[string]string {
	vars := map[string]string{"prefix": "", "worker": ""}
	services := []string{"amqp", "postgres"}
	if redis {
		services = append(services, "redis")
	}
	if replica {
		services = append(services, "replica")
		vars["replica_jdbc"] = ""
	}
	for _, s := range services {
		for _, suffix := range []string{"", "_addr", "_host", "_port"} {
			vars[s+suffix] = ""
		}
	}
	for _, k := range []string{"postgres_db", "postgres_user", "postgres_password", "postgres_jdbc"} {
		vars[k] = ""
	}
	return vars
}

// proxyVars are the addresses a worker is given for one service's proxy:
// {NAME} (a URL with the real credentials, the proxy's address),
// {NAME_addr}, {NAME_host}, {NAME_port}, and for PostgreSQL {postgres_db},
// {postgres_user}, {postgres_password} and {postgres_jdbc} ({replica_jdbc}
// for the standby, whose user and database are the primary's).
func proxyVars(vars map[string]string, name, realURL, addr string) error {
	if name == "redis" && connect.IsSentinel(realURL) {
		// The worker talks to the proxy, which finds the master through
		// the Sentinels: it gets a plain redis:// URL of the proxy with the
		// master's user, password and database.
		s, err := connect.ParseSentinel(realURL)
		if err != nil {
			return err
		}
		realURL = s.DataURL(addr)
	}
	u, err := url.Parse(realURL)
	if err != nil {
		return err
	}
	host, port, _ := net.SplitHostPort(addr)
	pu := *u
	pu.Host = addr
	switch name {
	case "amqp":
		pu.Scheme = "amqp" // the worker talks plain to the proxy; the proxy dials TLS when the URL says amqps
	case "redis":
		pu.Scheme = "redis"
	case "replica":
		q := pu.Query()
		q.Set("sslmode", "disable")
		pu.RawQuery = q.Encode()
		vars["replica_jdbc"] = "jdbc:postgresql://" + addr + "/" + strings.TrimPrefix(u.Path, "/") + "?sslmode=disable"
	case "postgres":
		q := pu.Query()
		q.Set("sslmode", "disable") // the proxy reads the protocol; it dials the server itself
		pu.RawQuery = q.Encode()
		db := strings.TrimPrefix(u.Path, "/")
		vars["postgres_db"] = db
		vars["postgres_user"] = u.User.Username()
		pw, _ := u.User.Password()
		vars["postgres_password"] = pw
		vars["postgres_jdbc"] = "jdbc:postgresql://" + addr + "/" + db + "?sslmode=disable"
	}
	vars[name] = pu.String()
	vars[name+"_addr"] = addr
	vars[name+"_host"] = host
	vars[name+"_port"] = port
	return nil
}

// splitPublish reads EXCHANGE:ROUTING_KEY; an empty exchange is the
// default exchange, where the routing key is the queue's name.
func splitPublish(s string) (exchange, key string, err error) {
	exchange, key, ok := strings.Cut(s, ":")
	if !ok || key == "" {
		return "", "", problem.Inputf("Publish", "%q: want EXCHANGE:ROUTING_KEY (an empty exchange is the default exchange: :QUEUE)", s)
	}
	return exchange, key, nil
}

// body renders the message body for a business key.
func body(tmpl, key, id string, copyN int) []byte {
	r := strings.NewReplacer("{{key}}", key, "{{prefix}}", id, "{{copy}}", strconv.Itoa(copyN))
	return []byte(r.Replace(tmpl))
}
