package lock

import (
	"context"
	"fmt"
	"strconv"
	"strings"

	"github.com/dupctl/dupctl/internal/inspect/lock/internal/judge"
	"github.com/dupctl/dupctl/internal/inspect/lock/internal/keyspace"
	"github.com/dupctl/dupctl/internal/platform/connect"
	"github.com/dupctl/dupctl/internal/platform/findings"
)

// Redis settings that lose locks, from INFO (which a read-only ACL user
// may run) and CONFIG GET where the ACL allows it.

// parseInfo reads INFO's "key:value" lines.
func parseInfo(s string) map[string]string {
	m := map[string]string{}
	for _, line := range strings.Split(s, "\n") {
		line = strings.TrimSpace(line)
		if line == "" || line[0] == '#' {
			continue
		}
		if k, v, ok := strings.Cut(line, ":"); ok {
			m[k] = v
		}
	}
	return m
}

// keyCount reads "keys=N" from an INFO keyspace line.
func keyCount(line string) int64 {
	for _, f := range strings.Split(line, ",") {
		if v, ok := strings.CutPrefix(f, "keys="); ok {
			n, _ := strconv.ParseInt(v, 10, 64)
			return n
		}
	}
	return 0
}

// serverInfo reads a node's settings, marks whether it supports CLIENT
// NO-TOUCH and whether it shares integer objects (keyspace.Node.SetMemory),
// and judges the settings that lose locks. An ACL user may lack
// INFO (-@all +@read): the node is then returned with Info "denied" and
// no findings, and the run goes on without the settings checks.
func serverInfo(ctx context.Context, n *keyspace.Node, db int) (Server, []findings.Finding, error) {
	s := Server{Node: n.Name, Info: "ok", ConfigGet: "ok"}
	// CLIENT NO-TOUCH OFF (the default) answers OK where the server has it
	// (7.2+) and the user may use it, and changes nothing.
	n.NoTouch = n.Conn.Do(ctx, "CLIENT", "NO-TOUCH", "OFF").Err() == nil
	raw, err := n.Conn.Info(ctx).Result()
	if err != nil {
		if _, denied := connect.NoPermission(err.Error()); denied {
			s.Info, s.ConfigGet = "denied", "not tried"
			return s, nil, nil
		}
		return Server{}, nil, keyspace.RedisError(err, "INFO", n.Name)
	}
	info := parseInfo(raw)
	s.Version, s.Role, s.Policy = info["redis_version"], info["role"], info["maxmemory_policy"]
	s.MaxMemory, _ = strconv.ParseInt(info["maxmemory"], 10, 64)
	n.SetMemory(s.MaxMemory, s.Policy)
	s.EvictedKeys, _ = strconv.ParseInt(info["evicted_keys"], 10, 64)
	s.AOF = info["aof_enabled"] == "1"
	s.Keys = keyCount(info[fmt.Sprintf("db%d", db)])
	if cfg, err := n.Conn.ConfigGet(ctx, "appendfsync").Result(); err == nil {
		s.AppendFsync = cfg["appendfsync"]
	} else {
		s.ConfigGet = "denied" // NOPERM for a read-only user, or renamed away
	}
	return s, settingsFindings(s), nil
}

func settingsFindings(s Server) []findings.Finding {
	var out []findings.Finding
	subject := "redis " + s.Node
	if p := s.Policy; strings.HasPrefix(p, "allkeys-") || strings.HasPrefix(p, "volatile-") {
		f := judge.RuleEviction.New(subject, fmt.Sprintf("maxmemory-policy %s lets Redis delete locks under memory pressure", p),
			fmt.Sprintf("maxmemory %d bytes", s.MaxMemory))
		if s.MaxMemory == 0 {
			f.Severity = findings.Warn
			f.Message += " (inactive while maxmemory is 0, armed as soon as a limit is set)"
		}
		out = append(out, f)
	}
	if s.EvictedKeys > 0 {
		out = append(out, judge.RuleEvicted.New(subject, fmt.Sprintf("%d keys evicted since the server started", s.EvictedKeys),
			"maxmemory-policy "+s.Policy))
	}
	if s.Role == "slave" || s.Role == "replica" {
		out = append(out, judge.RuleReplica.New(subject, "this node is a replica: what it shows of locks lags the master"))
	}
	if !s.AOF {
		ev := []string{"aof_enabled:0"}
		out = append(out, judge.RulePersistence.New(subject,
			"AOF is off: a restart or failover loses the locks taken since the last snapshot", ev...))
	}
	return out
}
