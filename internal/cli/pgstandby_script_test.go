package cli_test

import (
	"net/url"
	"sync"

	"github.com/dupctl/dupctl/internal/testenv"
	"github.com/rogpeppe/go-internal/testscript"
)

// standbys holds each script's streaming standby.
var standbys sync.Map // *testscript.TestScript -> *testenv.Standby

// cmdPGStandby drives a streaming standby of the local PostgreSQL for a
// script (guard it with [replication]):
//
//	pgstandby start     copy the cluster (pg_basebackup) and start the copy;
//	                    $REPLICA is its URL, on the script's database ($SQLDB)
//	pgstandby pause     pause WAL replay (pg_wal_replay_pause)
//	pgstandby resume    resume it
//	pgstandby catchup   wait until it replayed all the primary has written
//
// The standby stops and is removed when the script ends.
func cmdPGStandby(ts *testscript.TestScript, neg bool, args []string) {
	if neg || len(args) != 1 {
		ts.Fatalf("usage: pgstandby start|pause|resume|catchup")
	}
	if args[0] == "start" {
		sb := testenv.ScriptStandby(ts)
		standbys.Store(ts, sb)
		ts.Defer(func() { standbys.Delete(ts) })
		u, err := url.Parse(sb.URL)
		ts.Check(err)
		if db := ts.Getenv("SQLDB"); db != "" {
			own, err := url.Parse(db)
			ts.Check(err)
			u.Path = own.Path
		}
		ts.Setenv("REPLICA", u.String())
		return
	}
	v, ok := standbys.Load(ts)
	if !ok {
		ts.Fatalf("pgstandby %s: no standby: pgstandby start first", args[0])
	}
	sb := v.(*testenv.Standby)
	switch args[0] {
	case "pause":
		sb.PauseReplay()
	case "resume":
		sb.ResumeReplay()
	case "catchup":
		sb.CatchUp()
	default:
		ts.Fatalf("usage: pgstandby start|pause|resume|catchup")
	}
}
