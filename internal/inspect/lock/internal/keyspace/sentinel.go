package keyspace

import (
	"context"
	"errors"
	"fmt"
	"strings"
	"time"
)

// A master named by Sentinels can fail during a walk as a cluster master
// can: the Sentinels promote its replica after their down-after time, and
// the client's next connections go to it. The walk waits (up to
// FailoverWait) until the Sentinels name a master that says it is one,
// and goes on: on the same server from its SCAN cursor, on a new one from
// the start with the filter skipping what was read. Past the wait the
// node is Unread - the report says the keyspace was not all read, never a
// silent partial result, and never an error without the report.

// sentinelMaster is a client of the master a group of Sentinels names
// (connect.Failover): its Addr is a placeholder; Node names the master
// the Sentinels name now ("host:port (name)"), Dialed the server its last
// connection went to.
type sentinelMaster interface {
	Node(ctx context.Context) string
	Dialed() string
}

// followMaster waits until the client reaches a server that says it is a
// master and points n at it: a Move, or Unread when none does within wait
// or n moved too often. The server is known by its run_id, not by what
// the Sentinels say: for a moment after a failover some of them still name
// the old master, and a walk that took the new one for the old would go
// on from a cursor that means nothing there. The claims are a cluster's:
// a Sentinel group has one master, read by one walk.
func (n *Node) followMaster(ctx context.Context, wait time.Duration, _ *claims, w *nodeWalk, cause error, moves int) (Move, *Unread) {
	return n.follow(ctx, wait, w, cause, moves, []SlotRange{}, func(mv Move, _ func(string) *Unread) (Move, *Unread, error) {
		runID, err := masterRunID(ctx, n.Conn)
		if err != nil && strings.Contains(err.Error(), "NOPERM") {
			runID, err = "", helloMaster(ctx, n.Conn) // the ACL hides who it is: read it all again
		}
		if err != nil {
			return mv, nil, err
		}
		mv.To = n.Name
		if runID == "" || runID != n.runID {
			n.Name, n.runID = n.sentinel.Dialed(), runID
			mv.To = n.Name
			n.relearnMemory(ctx)
			w.cursor, w.done, w.rescan = 0, false, true
		}
		return mv, nil, nil
	})
}

// masterRunID is the run_id of the server c reaches, when it says it is a
// master (a demoted or loading one is not yet): ROLE and INFO in one
// pipeline, so both come from one connection, one server.
func masterRunID(ctx context.Context, c Conn) (string, error) {
	pl := c.Pipeline()
	role := pl.Do(ctx, "ROLE")
	info := pl.Info(ctx, "server")
	if _, err := pl.Exec(ctx); err != nil {
		return "", fmt.Errorf("ROLE: %w", err)
	}
	r, err := role.Slice()
	if err != nil || len(r) == 0 || r[0] != "master" {
		return "", fmt.Errorf("the server the client reaches is not a master yet (ROLE %v)", r)
	}
	for _, line := range strings.Split(info.Val(), "\n") {
		if id, ok := strings.CutPrefix(strings.TrimSpace(line), "run_id:"); ok {
			return id, nil
		}
	}
	return "", errors.New("INFO server has no run_id")
}

// helloMaster says whether the server c reaches says it is a master, by
// HELLO (without a protocol: nothing changes), which Redis lets every user
// run: a user refused ROLE and INFO (-@all +@read refuses both, and PING)
// can learn a server's role no other way.
func helloMaster(ctx context.Context, c Conn) error {
	v, err := c.Do(ctx, "HELLO").Result()
	if err != nil {
		return fmt.Errorf("HELLO: %w", err)
	}
	role := ""
	switch m := v.(type) {
	case map[any]any: // RESP3
		role, _ = m["role"].(string)
	case map[string]any:
		role, _ = m["role"].(string)
	case []any: // RESP2: name, value, ...
		for i := 0; i+1 < len(m); i += 2 {
			if m[i] == "role" {
				role, _ = m[i+1].(string)
			}
		}
	}
	if role != "master" {
		return fmt.Errorf("the server the client reaches is not a master yet (HELLO role %q)", role)
	}
	return nil
}
