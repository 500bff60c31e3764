// Package sentinelask asks Redis Sentinels where the master they monitor
// is. connect's Sentinel URLs and the test harness's Sentinels (testenv)
// both ask so; it is a package of its own because testenv cannot import
// connect, whose tests import testenv.
package sentinelask

import (
	"context"
	"errors"
	"fmt"
	"net"
	"strings"

	"github.com/redis/go-redis/v9"
)

// ErrNoMaster says that a Sentinel knows no master by the name asked.
var ErrNoMaster = errors.New("no master named")

// Master asks the Sentinel c where the master it monitors as name is:
// its host:port, or an error (ErrNoMaster when c knows no such name).
func Master(ctx context.Context, c *redis.SentinelClient, name string) (string, error) {
	hp, err := c.GetMasterAddrByName(ctx, name).Result()
	switch {
	case err == nil && len(hp) == 2:
		return net.JoinHostPort(hp[0], hp[1]), nil
	case errors.Is(err, redis.Nil) || err == nil:
		return "", fmt.Errorf("%w %q", ErrNoMaster, name)
	}
	return "", err
}

// Agreed is the master every Sentinel names, asked with ask, when they all
// answer and name the same one (after a failover they learn the new master
// from each other within seconds); otherwise an error saying what each
// said.
func Agreed(sentinels []string, ask func(addr string) (string, error)) (string, error) {
	var addr string
	var said []string
	agree := true
	for _, a := range sentinels {
		m, err := ask(a)
		if err != nil {
			agree = false
			said = append(said, a+": "+err.Error())
			continue
		}
		agree = agree && (addr == "" || m == addr)
		addr = m
		said = append(said, a+": "+m)
	}
	if !agree {
		return "", errors.New("the Sentinels do not name one master (" + strings.Join(said, "; ") + ")")
	}
	return addr, nil
}
