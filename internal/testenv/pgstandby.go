package testenv

import (
	"context"
	"fmt"
	"net"
	"net/url"
	"os"
	"os/exec"
	"os/user"
	"path/filepath"
	"strconv"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"

	"github.com/jackc/pgx/v5/pgconn"
	"github.com/jackc/pgx/v5/pgxpool"
	"github.com/rogpeppe/go-internal/testscript"
)

// Standby is a streaming standby of the local PostgreSQL, made for one
// test: pg_basebackup -R into a temp dir, started with pg_ctl on a free
// loopback port, stopped and removed when the test ends. Tests inject lag
// by pausing its WAL replay.
type Standby struct {
	URL     string // the standby, same database and user as the primary's URL
	Port    int
	Dir     string
	Primary *pgxpool.Pool
	Standby *pgxpool.Pool
	t       harness
	version int // server_version_num
}

// harness is what the standby needs of a test: testing.TB, or a
// testscript run through ScriptStandby.
type harness interface {
	Helper()
	Fatalf(format string, args ...any)
	Skip(args ...any)
	Logf(format string, args ...any)
	Cleanup(func())
}

// standbyPrefix names the temp dirs, with the test process's pid, so a
// later run can stop the standby of a run that was killed.
const standbyPrefix = "dupctl-standby-"

// PGStandby makes and starts a standby for t, and waits until it streams.
// It needs the primary to accept replication connections from 127.0.0.1
// (.ci/run adds `host replication all 127.0.0.1/32 trust` to pg_hba.conf)
// and the server's binaries under /usr/lib/postgresql/<major>/bin. Without
// them it skips, or fails when DUPCTL_INTEGRATION=required.
func PGStandby(t testing.TB) *Standby {
	t.Helper()
	return startStandby(t, Need(t, Postgres))
}

// ScriptStandby is PGStandby for a testscript command, stopped when the
// script ends. A script cannot skip from a command: guard it with the
// [replication] condition.
func ScriptStandby(ts *testscript.TestScript) *Standby {
	h := scriptHarness{ts}
	if err := Postgres.up(); err != nil {
		skipOrFail(h, fmt.Sprintf("postgres is not reachable at %s (%v)", Postgres.hostPort(), err))
	}
	return startStandby(h, Postgres.ConnURL())
}

type scriptHarness struct{ ts *testscript.TestScript }

func (scriptHarness) Helper()                             {}
func (h scriptHarness) Fatalf(format string, args ...any) { h.ts.Fatalf(format, args...) }
func (h scriptHarness) Skip(args ...any)                  { h.ts.Fatalf("%s", fmt.Sprint(args...)) }
func (h scriptHarness) Logf(format string, args ...any)   { h.ts.Logf(format, args...) }
func (h scriptHarness) Cleanup(f func())                  { h.ts.Defer(f) }

func startStandby(t harness, primaryURL string) *Standby {
	t.Helper()
	ctx := context.Background()
	primary, err := pgxpool.New(ctx, primaryURL)
	if err != nil {
		t.Fatalf("%v", err)
	}
	t.Cleanup(primary.Close)
	bin, version := standbyBinaries(t, primary)
	reapStandbys(bin)
	s := &Standby{Primary: primary, t: t, Port: freePort(t), version: version}
	s.Dir = standbyDir(t)
	data := filepath.Join(s.Dir, "data")
	// -c fast: an immediate checkpoint, not one spread over minutes;
	// -X stream: the WAL written during the copy comes along.
	out, err := asPostgres(bin, "pg_basebackup", "-d", primaryURL, "-D", data, "-R", "-X", "stream", "-c", "fast", "--no-sync").
		CombinedOutput()
	if err != nil {
		msg := strings.TrimSpace(string(out))
		if strings.Contains(msg, "pg_hba.conf") && strings.Contains(msg, "replication") {
			skipOrFail(t, "the primary refuses replication connections ("+msg+"): "+
				"add `host replication all 127.0.0.1/32 trust` to pg_hba.conf and reload (.ci/run does)")
		}
		t.Fatalf("pg_basebackup: %v\n%s", err, msg)
	}
	s.writeConfig(t, primary, data)
	logFile := filepath.Join(s.Dir, "standby.log")
	if out, err := asPostgres(bin, "pg_ctl", "-D", data, "-l", logFile, "-w", "-t", "60", "start").CombinedOutput(); err != nil {
		log, _ := os.ReadFile(logFile)
		t.Fatalf("pg_ctl start: %v\n%s\n%s", err, out, log)
	}
	t.Cleanup(func() {
		if out, err := asPostgres(bin, "pg_ctl", "-D", data, "-m", "immediate", "-w", "stop").CombinedOutput(); err != nil {
			t.Logf("pg_ctl stop: %v\n%s", err, out)
		}
		_ = os.RemoveAll(s.Dir)
	})
	u, err := url.Parse(primaryURL)
	if err != nil {
		t.Fatalf("%v", err)
	}
	u.Host = net.JoinHostPort("127.0.0.1", strconv.Itoa(s.Port))
	s.URL = u.String()
	if s.Standby, err = pgxpool.New(ctx, s.URL); err != nil {
		t.Fatalf("%v", err)
	}
	t.Cleanup(s.Standby.Close)
	s.waitStreaming()
	return s
}

func skipOrFail(t harness, msg string) {
	t.Helper()
	if Required() {
		t.Fatalf("DUPCTL_INTEGRATION=required: %s", msg)
	}
	t.Skip(msg)
}

// standbyBinaries is the bin directory of the primary's major version:
// pg_basebackup and the server must match it.
func standbyBinaries(t harness, primary *pgxpool.Pool) (string, int) {
	t.Helper()
	var version int
	var walLevel string
	var senders int
	err := primary.QueryRow(context.Background(), `SELECT current_setting('server_version_num')::int, current_setting('wal_level'),
  current_setting('max_wal_senders')::int`).Scan(&version, &walLevel, &senders)
	if err != nil {
		t.Fatalf("%v", err)
	}
	if walLevel == "minimal" || senders == 0 {
		skipOrFail(t, fmt.Sprintf("the primary cannot stream (wal_level %s, max_wal_senders %d)", walLevel, senders))
	}
	bin := fmt.Sprintf("/usr/lib/postgresql/%d/bin", version/10000)
	for _, b := range []string{"pg_basebackup", "pg_ctl", "postgres"} {
		if _, err := os.Stat(filepath.Join(bin, b)); err != nil {
			skipOrFail(t, fmt.Sprintf("no %s for PostgreSQL %d in %s: install postgresql-%d", b, version/10000, bin, version/10000))
		}
	}
	if os.Geteuid() == 0 {
		if _, err := exec.LookPath("runuser"); err != nil {
			skipOrFail(t, "running as root and no runuser to start PostgreSQL as postgres")
		}
		if _, err := user.Lookup("postgres"); err != nil {
			skipOrFail(t, "running as root and no postgres user to start PostgreSQL as")
		}
	}
	return bin, version
}

// asPostgres runs a PostgreSQL binary, as the postgres user when the
// tests run as root (the server refuses to run as root).
func asPostgres(bin, name string, args ...string) *exec.Cmd {
	path := filepath.Join(bin, name)
	if os.Geteuid() == 0 {
		return exec.Command("runuser", append([]string{"-u", "postgres", "--", path}, args...)...)
	}
	return exec.Command(path, args...)
}

// standbyDir is a temp dir the server's user owns; its name carries the
// test process's pid for reapStandbys.
func standbyDir(t harness) string {
	t.Helper()
	dir, err := os.MkdirTemp("", fmt.Sprintf("%s%d-", standbyPrefix, os.Getpid()))
	if err != nil {
		t.Fatalf("%v", err)
	}
	chownPostgres(t, dir)
	return dir
}

// chownPostgres gives a path to the server's user when the tests run as
// root.
func chownPostgres(t harness, path string) {
	t.Helper()
	if os.Geteuid() != 0 {
		return
	}
	u, err := user.Lookup("postgres")
	if err != nil {
		t.Fatalf("%v", err)
	}
	uid, _ := strconv.Atoi(u.Uid)
	gid, _ := strconv.Atoi(u.Gid)
	if err := os.Chown(path, uid, gid); err != nil {
		t.Fatalf("%v", err)
	}
}

// writeConfig gives the copy what a Debian cluster keeps outside its data
// directory: a postgresql.conf and pg_hba.conf of its own. A hot standby
// needs max_connections and the other shared-memory limits at least the
// primary's.
func (s *Standby) writeConfig(t harness, primary *pgxpool.Pool, data string) {
	t.Helper()
	conf := []string{
		"port = " + strconv.Itoa(s.Port),
		"listen_addresses = '127.0.0.1'",
		"unix_socket_directories = '" + s.Dir + "'",
		"hot_standby = on",
		"shared_buffers = 16MB",
		"fsync = off", // a throwaway copy
		"autovacuum = off",
		"hba_file = '" + filepath.Join(data, "pg_hba.conf") + "'",
		"ident_file = '" + filepath.Join(data, "pg_ident.conf") + "'",
	}
	limits := []string{"max_connections", "max_worker_processes", "max_wal_senders", "max_prepared_transactions", "max_locks_per_transaction"}
	for _, name := range limits {
		var v string
		if err := primary.QueryRow(context.Background(), "SELECT current_setting($1)", name).Scan(&v); err != nil {
			t.Fatalf("%v", err)
		}
		conf = append(conf, name+" = "+v)
	}
	files := map[string]string{
		"postgresql.conf": strings.Join(conf, "\n") + "\n",
		"pg_hba.conf":     "local all all trust\nhost all all 127.0.0.1/32 trust\n",
		"pg_ident.conf":   "",
	}
	for name, text := range files {
		path := filepath.Join(data, name)
		if err := os.WriteFile(path, []byte(text), 0o600); err != nil {
			t.Fatalf("%v", err)
		}
		chownPostgres(t, path)
	}
}

// waitStreaming waits until the standby answers, is in recovery and its
// WAL receiver streams from the primary.
func (s *Standby) waitStreaming() {
	s.t.Helper()
	deadline := time.Now().Add(60 * time.Second)
	for {
		var recovery bool
		var status string
		err := s.Standby.QueryRow(context.Background(),
			"SELECT pg_is_in_recovery(), coalesce((SELECT status FROM pg_stat_wal_receiver), '')").Scan(&recovery, &status)
		if err == nil && recovery && status == "streaming" {
			return
		}
		if time.Now().After(deadline) {
			log, _ := os.ReadFile(filepath.Join(s.Dir, "standby.log"))
			s.t.Fatalf("the standby on :%d does not stream: in recovery %v, receiver %q, %v\n%s", s.Port, recovery, status, err, log)
		}
		time.Sleep(100 * time.Millisecond)
	}
}

// PauseReplay stops applying WAL (pg_wal_replay_pause): the standby keeps
// receiving, and its data stays as it is now. It waits until the pause
// took effect.
func (s *Standby) PauseReplay() {
	s.t.Helper()
	ctx := context.Background()
	if _, err := s.Standby.Exec(ctx, "SELECT pg_wal_replay_pause()"); err != nil {
		s.t.Fatalf("%v", err)
	}
	// Before PostgreSQL 14 a requested pause and a pause in effect look
	// the same.
	query := "SELECT pg_is_wal_replay_paused()"
	if s.version >= 140000 {
		query = "SELECT pg_get_wal_replay_pause_state() = 'paused'"
	}
	deadline := time.Now().Add(30 * time.Second)
	for {
		var paused bool
		if err := s.Standby.QueryRow(ctx, query).Scan(&paused); err != nil {
			s.t.Fatalf("%v", err)
		}
		if paused {
			return
		}
		if time.Now().After(deadline) {
			s.t.Fatalf("WAL replay did not pause")
		}
		time.Sleep(20 * time.Millisecond)
	}
}

// ResumeReplay applies WAL again (pg_wal_replay_resume).
func (s *Standby) ResumeReplay() {
	s.t.Helper()
	if _, err := s.Standby.Exec(context.Background(), "SELECT pg_wal_replay_resume()"); err != nil {
		s.t.Fatalf("%v", err)
	}
}

// CatchUp waits until the standby has replayed everything the primary had
// written when it was called.
func (s *Standby) CatchUp() {
	s.t.Helper()
	ctx := context.Background()
	var target string
	if err := s.Primary.QueryRow(ctx, "SELECT pg_current_wal_lsn()::text").Scan(&target); err != nil {
		s.t.Fatalf("%v", err)
	}
	deadline := time.Now().Add(60 * time.Second)
	for {
		var done bool
		err := s.Standby.QueryRow(ctx, "SELECT pg_last_wal_replay_lsn() >= $1::pg_lsn", target).Scan(&done)
		if err != nil {
			s.t.Fatalf("%v", err)
		}
		if done {
			return
		}
		if time.Now().After(deadline) {
			s.t.Fatalf("the standby did not replay up to %s", target)
		}
		time.Sleep(20 * time.Millisecond)
	}
}

// reapStandbys stops and removes the standbys of test processes that no
// longer run (a run killed before its clean-up): each would otherwise
// keep a server and a WAL sender of the shared primary alive.
func reapStandbys(bin string) {
	dirs, _ := filepath.Glob(filepath.Join(os.TempDir(), standbyPrefix+"*"))
	for _, dir := range dirs {
		rest := strings.TrimPrefix(filepath.Base(dir), standbyPrefix)
		pid, err := strconv.Atoi(strings.SplitN(rest, "-", 2)[0])
		if err != nil || pid == os.Getpid() || processAlive(pid) {
			continue
		}
		data := filepath.Join(dir, "data")
		if _, err := os.Stat(filepath.Join(data, "postmaster.pid")); err == nil {
			_ = asPostgres(bin, "pg_ctl", "-D", data, "-m", "immediate", "-w", "stop").Run()
		}
		_ = os.RemoveAll(dir)
	}
}

func processAlive(pid int) bool {
	p, err := os.FindProcess(pid)
	if err != nil {
		return false
	}
	return p.Signal(syscall.Signal(0)) == nil
}

// freePort is a loopback port nothing listens on now.
func freePort(t harness) int {
	t.Helper()
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatalf("%v", err)
	}
	defer l.Close()
	return l.Addr().(*net.TCPAddr).Port
}

// replicationCondition is the testscript condition [replication]: the
// local PostgreSQL accepts a replication connection from 127.0.0.1, so
// ScriptStandby can copy it. Probed once; an error when integration tests
// are required and it does not.
func replicationCondition() (bool, error) {
	replicationProbe.Do(func() {
		if err := Postgres.up(); err != nil {
			replicationProbe.err = err
			return
		}
		u, err := url.Parse(Postgres.ConnURL())
		if err != nil {
			replicationProbe.err = err
			return
		}
		q := u.Query()
		q.Set("replication", "true")
		u.RawQuery = q.Encode()
		ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
		defer cancel()
		conn, err := pgconn.Connect(ctx, u.String())
		if err != nil {
			replicationProbe.err = err
			return
		}
		_ = conn.Close(ctx)
	})
	if err := replicationProbe.err; err != nil {
		if Required() {
			return false, fmt.Errorf("DUPCTL_INTEGRATION=required but PostgreSQL refuses a replication connection (%v): "+
				"add `host replication all 127.0.0.1/32 trust` to pg_hba.conf and reload (.ci/run does)", err)
		}
		return false, nil
	}
	return true, nil
}

var replicationProbe struct {
	sync.Once
	err error
}
