// Package testenv decides how tests meet the real services: a test that
// needs Redis, PostgreSQL or RabbitMQ skips with a clear message on a laptop
// without them, and fails when DUPCTL_INTEGRATION=required (as CI sets it),
// so a missing service can never turn into a silent pass.
package testenv

import (
	"fmt"
	"net"
	"net/url"
	"os"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/rogpeppe/go-internal/testscript"
)

// Service is a local server the integration tests use.
type Service struct {
	Name string // redis, postgres, amqp
	Addr string
	Env  string // variable that may override the URL
	URL  string // default URL
}

// The services of DEVELOPERS.md, on loopback only.
var (
	Redis    = Service{Name: "redis", Addr: "127.0.0.1:6379", Env: "DUPCTL_TEST_REDIS_URL", URL: "redis://127.0.0.1:6379/0"}
	Postgres = Service{Name: "postgres", Addr: "127.0.0.1:5432", Env: "DUPCTL_TEST_DATABASE_URL",
		URL: "postgres://postgres@127.0.0.1:5432/test?sslmode=disable"}
	AMQP = Service{Name: "amqp", Addr: "127.0.0.1:5672", Env: "DUPCTL_TEST_AMQP_URL", URL: "amqp://guest:guest@127.0.0.1:5672/"}
	// Management is RabbitMQ's management API (the plugin .ci/run enables).
	Management = Service{Name: "management", Addr: "127.0.0.1:15672", Env: "DUPCTL_TEST_MANAGEMENT_URL",
		URL: "http://guest:guest@127.0.0.1:15672"}
)

var services = []Service{Redis, Postgres, AMQP, Management}

// Required reports whether integration tests must run (CI).
func Required() bool {
	return strings.EqualFold(os.Getenv("DUPCTL_INTEGRATION"), "required")
}

var (
	probeMu sync.Mutex
	probed  = map[string]error{}
)

// up reports whether the service answers on its port (probed once).
func (s Service) up() error {
	probeMu.Lock()
	defer probeMu.Unlock()
	if err, ok := probed[s.Name]; ok {
		return err
	}
	c, err := net.DialTimeout("tcp", s.hostPort(), 2*time.Second)
	if err == nil {
		c.Close()
	}
	probed[s.Name] = err
	return err
}

// hostPort is where the service is probed: the host of the overriding URL
// when its variable is set (a test pointed elsewhere must not be judged by
// the default port), else Addr.
func (s Service) hostPort() string {
	v := os.Getenv(s.Env)
	if v == "" {
		return s.Addr
	}
	u, err := url.Parse(v)
	if err != nil || u.Hostname() == "" {
		return s.Addr
	}
	if u.Port() != "" {
		return u.Host
	}
	_, port, _ := net.SplitHostPort(s.Addr)
	return net.JoinHostPort(u.Hostname(), port)
}

// ConnURL is the URL tests connect with.
func (s Service) ConnURL() string {
	if v := os.Getenv(s.Env); v != "" {
		return v
	}
	return s.URL
}

// Need skips t when the service is down, or fails it when integration
// tests are required, and returns the service's URL.
func Need(t testing.TB, s Service) string {
	t.Helper()
	if err := s.up(); err != nil {
		msg := fmt.Sprintf("%s is not reachable at %s (%v): start it (see CONTRIBUTING.md)", s.Name, s.hostPort(), err)
		if Required() {
			t.Fatalf("DUPCTL_INTEGRATION=required: %s", msg)
		}
		t.Skipf("%s; set DUPCTL_INTEGRATION=required to make this a failure", msg)
	}
	return s.ConnURL()
}

// Condition implements testscript conditions [redis], [postgres], [amqp]:
// true when the service answers. When integration is required, a missing
// service is an error, so the script fails instead of skipping.
func Condition(cond string) (bool, error) {
	if cond == "replication" {
		return replicationCondition()
	}
	for _, s := range services {
		if cond != s.Name {
			continue
		}
		if err := s.up(); err != nil {
			if Required() {
				return false, fmt.Errorf("DUPCTL_INTEGRATION=required but %s is not reachable at %s: %v", s.Name, s.hostPort(), err)
			}
			return false, nil
		}
		return true, nil
	}
	return false, fmt.Errorf("unknown condition %q", cond)
}

// SetupScript gives scripts the service URLs as $REDIS, $POSTGRES, $AMQP
// and a unique $PREFIX for keys, schemas and queues.
func SetupScript(env *testscript.Env) error {
	env.Setenv("REDIS", Redis.ConnURL())
	env.Setenv("POSTGRES", Postgres.ConnURL())
	env.Setenv("AMQP", AMQP.ConnURL())
	env.Setenv("MANAGEMENT", Management.ConnURL())
	env.Setenv("PREFIX", UniqueName("ts"))
	return nil
}

var seq struct {
	sync.Mutex
	n int
}

// UniqueName returns a name no other test run on the shared servers uses:
// prefix, process id, a counter and the time.
func UniqueName(prefix string) string {
	seq.Lock()
	seq.n++
	n := seq.n
	seq.Unlock()
	return fmt.Sprintf("dupctl_%s_%d_%d_%d", prefix, os.Getpid(), n, time.Now().UnixNano()%1e9)
}
