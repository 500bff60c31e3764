package chaos

import (
	"context"
	"crypto/rand"
	"encoding/hex"
	"errors"
	"fmt"
	"net"
	"slices"
	"strconv"
	"strings"
	"sync"
	"time"

	"github.com/dupctl/dupctl/internal/platform/connect"
	"github.com/dupctl/dupctl/internal/platform/english"
	"github.com/dupctl/dupctl/internal/platform/problem"
	"github.com/dupctl/dupctl/internal/sim/chaos/respproxy"
	"github.com/redis/go-redis/v9"
)

// failover on a Sentinel setup is played for real. Before the victim's
// lock command is forwarded, dupctl cuts every replica off the master
// (CONFIG SET masterauth to a wrong one, then CLIENT KILL TYPE master: the
// replica's next sync fails to log in) and waits until ROLE on each says
// "connect" (its link down, its next attempt on the wrong masterauth);
// the master then holds a lock no replica has.
// Right after the lock answered success, dupctl asks a Sentinel for a
// failover (SENTINEL FAILOVER: it needs neither the master's process nor
// a down-after wait, and Sentinel itself promotes the replica and later
// demotes the old master, whose full resync drops the lock there too),
// gives each replica its masterauth back as soon as one was promoted, and
// waits until every Sentinel names the new master. There it looks for
// the lock key: absent, the write was lost and a second message is
// published; present, it had replicated after all and the run proves
// nothing. The workers' Redis connections are dropped, as a Sentinel-aware
// client drops them on +switch-master, so their next ones reach the new
// master through the proxy (dialer asks the Sentinels on every dial).

// Bounds of the real failover's waits.
const (
	// sentinelReadyWait bounds the wait before a run for the Sentinels to
	// agree on a master and every replica to be in sync with it: after
	// the previous run's failover the old master is demoted some seconds
	// later, then resyncs in full.
	sentinelReadyWait = 90 * time.Second
	// sentinelFailoverWait bounds SENTINEL FAILOVER until every Sentinel
	// names the promoted replica.
	sentinelFailoverWait = time.Minute
)

// sentinelHint is what a refused command needs.
const sentinelHint = "simulate failover fails a Sentinel setup over for real: the user of {RedisURL} needs CONFIG GET, CONFIG SET, " +
	"CONFIG REWRITE and CLIENT KILL on the replicas, and a Sentinel must accept SENTINEL FAILOVER; grant them, or give {RedisURL} " +
	"as the master's redis:// URL to have the failover played at dupctl's proxy instead"

// sentinelFailover is one run's real failover of the Sentinel setup the
// workers' Redis URL names.
type sentinelFailover struct {
	s  *connect.Sentinel
	cl *connect.Clients // one per Sentinel and data node for the run
	// master and replicas are the setup as the run found it: the master
	// every Sentinel names, and the replicas in sync with it; masterauth
	// is each replica's own, which a cut replica gets back.
	master     string
	replicas   []string
	masterauth map[string]string
	waited     time.Duration // for the setup to be ready

	// cutMu serialises cutting and restoring; cut are the replicas cut
	// off.
	cutMu sync.Mutex
	cut   []string

	// Under run.mu: cutting while the replicas are being cut; cutFor the
	// lock command they were cut for (nil when none is cut); running while
	// the failover goes on; newMaster where it went, once the lock was
	// looked for there; lostSeq the event saying it was missing there (0
	// while it was not found missing).
	cutting   bool
	cutFor    any
	running   bool
	newMaster string
	lostSeq   int
	wg        sync.WaitGroup
}

// poll calls try at once, then every `every`, until it is done or fails,
// or ctx ends: then it reports not done and no error.
func poll(ctx context.Context, every time.Duration, try func() (done bool, err error)) (bool, error) {
	for {
		if done, err := try(); done || err != nil {
			return done, err
		}
		select {
		case <-ctx.Done():
			return false, nil
		case <-time.After(every):
		}
	}
}

// newSentinelFailover waits until the Sentinel setup can fail over for
// real: the Sentinels agree on a master, it says it is one, and every
// replica they list up is connected to it. Each replica must be on
// loopback unless AllowRemote, must let dupctl read its masterauth, and
// must not refuse the cut's commands where ACL DRYRUN can tell.
func newSentinelFailover(ctx context.Context, o *Options) (*sentinelFailover, error) {
	s, err := connect.ParseSentinel(o.RedisURL)
	if err != nil {
		return nil, err
	}
	f := &sentinelFailover{s: s, cl: s.Keep()}
	start := time.Now()
	wctx, cancel := context.WithTimeout(ctx, sentinelReadyWait)
	defer cancel()
	var why string
	ready, err := poll(wctx, 200*time.Millisecond, func() (bool, error) {
		var err error
		f.master, f.replicas, why, err = f.ready(wctx)
		return why == "", err
	})
	switch {
	case err != nil:
	case !ready && ctx.Err() != nil:
		err = ctx.Err()
	case !ready:
		err = problem.System(fmt.Errorf("the Sentinel setup at %s was not ready to fail over within %s: %s",
			s.Target(), sentinelReadyWait, why), "a failover needs the Sentinels to agree on the master and a replica in sync with it")
	default:
		f.waited = time.Since(start)
		err = f.check(wctx, o.AllowRemote)
	}
	if err != nil {
		f.cl.Close()
		return nil, err
	}
	return f, nil
}

// check holds the replicas to the loopback rule, reads their masterauth
// (the only time: a cut replica gets this one back) and asks whether the
// cut's commands would be refused, so that a refusal is said before any
// worker starts.
func (f *sentinelFailover) check(ctx context.Context, allowRemote bool) error {
	f.masterauth = map[string]string{}
	for _, addr := range f.replicas {
		if !allowRemote && !connect.IsLoopback("redis://"+addr) {
			return &problem.Input{Why: fmt.Sprintf("the Sentinels at %s list the replica %s, which is not a loopback address, "+
				"and simulate failover changes its settings", f.s.Target(), addr), Hint: "pass {AllowRemote} to run against it anyway"}
		}
		c := f.cl.Node(addr)
		kv, err := c.ConfigGet(ctx, "masterauth").Result()
		if err != nil {
			return refused("CONFIG GET masterauth", addr, err)
		}
		f.masterauth[addr] = kv["masterauth"]
		if err := dryRun(ctx, c, addr); err != nil {
			return err
		}
	}
	return nil
}

// cutCommands are the commands a replica is sent to cut it off and give
// it its setting back (see cutOne and restoreLocked), as errors name them.
var cutCommands = []struct {
	name string
	args []any
}{
	{"CONFIG SET masterauth", []any{"CONFIG", "SET", "masterauth", "x"}},
	{"CLIENT KILL TYPE master", []any{"CLIENT", "KILL", "TYPE", "master"}},
	{"ROLE", []any{"ROLE"}},
	{"CONFIG REWRITE", []any{"CONFIG", "REWRITE"}},
}

// dryRun asks the replica whether the connected user may send it the
// cut's commands (ACL WHOAMI, then ACL DRYRUN: Redis >= 7), without
// running them. Where that cannot be asked (an older Redis, or a user
// refused ACL WHOAMI or ACL DRYRUN), nothing is checked and a refusal
// shows at the cut, mid-run: no other read says it (ACL GETUSER's rules
// would need Redis's own matching of categories, subcommands and
// selectors), and trying the commands would change the replica.
func dryRun(ctx context.Context, c *redis.Client, addr string) error {
	user, err := c.Do(ctx, "ACL", "WHOAMI").Text()
	if err != nil {
		return nil
	}
	for _, cmd := range cutCommands {
		said, err := c.Do(ctx, append([]any{"ACL", "DRYRUN", user}, cmd.args...)...).Text()
		switch {
		case err == nil && said == "OK":
		case err == nil: // "This user has no permissions to run the 'config|set' command"
			return refused(cmd.name, addr, fmt.Errorf("ACL DRYRUN %s: %s", user, said))
		case strings.HasPrefix(err.Error(), "ERR Command '"): // "... 'config' not found": renamed away
			return refused(cmd.name, addr, fmt.Errorf("ACL DRYRUN %s: %w", user, err))
		default: // ACL DRYRUN itself refused, or unknown before Redis 7
			return nil
		}
	}
	return nil
}

// ready reads the setup: why it is not ready yet ("" when it is), or an
// error that waiting will not cure.
func (f *sentinelFailover) ready(ctx context.Context) (master string, replicas []string, why string, err error) {
	master, err = f.cl.Agreed(ctx)
	if err != nil {
		return "", nil, err.Error(), nil
	}
	if role, err := f.role(ctx, master); err != nil || role[0] != "master" {
		return "", nil, fmt.Sprintf("the master %s does not say it is one yet (ROLE %v %v)", master, role, err), refusal(err, "ROLE", master)
	}
	var list []map[string]string
	for _, a := range f.s.Sentinels {
		list, err = f.cl.Sentinel(a).Replicas(ctx, f.s.Master).Result()
		if err == nil {
			break
		}
	}
	if err != nil {
		return "", nil, "no Sentinel lists the replicas: " + err.Error(), nil
	}
	for _, rep := range list {
		if flags := rep["flags"]; strings.Contains(flags, "s_down") || strings.Contains(flags, "disconnected") {
			continue
		}
		addr := net.JoinHostPort(rep["ip"], rep["port"])
		role, err := f.role(ctx, addr)
		if err != nil || len(role) < 4 || role[0] != "slave" || net.JoinHostPort(fmt.Sprint(role[1]), fmt.Sprint(role[2])) != master ||
			role[3] != "connected" {
			return "", nil, fmt.Sprintf("the replica %s is not in sync with the master %s yet (ROLE %v %v)", addr, master, role, err),
				refusal(err, "ROLE", addr)
		}
		replicas = append(replicas, addr)
	}
	if len(replicas) == 0 {
		return "", nil, fmt.Sprintf("the Sentinels list no replica of %s that is up", master), nil
	}
	return master, replicas, "", nil
}

// role is ROLE on a data node.
func (f *sentinelFailover) role(ctx context.Context, addr string) ([]any, error) {
	role, err := f.cl.Node(addr).Do(ctx, "ROLE").Slice()
	if err == nil && len(role) == 0 {
		err = errors.New("empty reply")
	}
	return role, err
}

// refusedPrefixes are the error replies no wait cures: a command refused
// by an ACL or renamed away, a wrong password.
var refusedPrefixes = []string{"NOPERM", "WRONGPASS", "NOAUTH", "ERR unknown command", "ERR unknown subcommand", "ERR AUTH"}

// refusal is err as a refusal of cmd on addr, or nil when it is none.
func refusal(err error, cmd, addr string) error {
	var rerr redis.Error
	if err == nil || !errors.As(err, &rerr) {
		return nil
	}
	if !slices.ContainsFunc(refusedPrefixes, func(p string) bool { return strings.HasPrefix(rerr.Error(), p) }) {
		return nil
	}
	return refused(cmd, addr, err)
}

// refused is a command the setup refused dupctl (or failed).
func refused(cmd, addr string, err error) error {
	return problem.System(fmt.Errorf("%s on %s: %w", cmd, addr, err), sentinelHint)
}

// cutReplicas cuts every replica off the master and waits until each
// says its link is down. On an error the replicas cut so far get their
// setting back.
func (f *sentinelFailover) cutReplicas(ctx context.Context) error {
	f.cutMu.Lock()
	defer f.cutMu.Unlock()
	var b [6]byte
	_, _ = rand.Read(b[:])
	wrong := "dupctl-cut-" + hex.EncodeToString(b[:])
	for _, addr := range f.replicas {
		if err := f.cutOne(ctx, addr, wrong); err != nil {
			return errors.Join(err, f.restoreLocked())
		}
	}
	return nil
}

// cutOne cuts one replica off; the caller holds cutMu.
func (f *sentinelFailover) cutOne(ctx context.Context, addr, wrong string) error {
	c := f.cl.Node(addr)
	if err := c.ConfigSet(ctx, "masterauth", wrong).Err(); err != nil {
		return refused("CONFIG SET masterauth", addr, err)
	}
	f.cut = append(f.cut, addr)
	if err := c.ClientKillByFilter(ctx, "TYPE", "master").Err(); err != nil {
		return refused("CLIENT KILL TYPE master", addr, err)
	}
	// Cut means ROLE's state "connect": the link is down and the next
	// attempt uses the wrong masterauth. master_link_status:down alone is
	// also true while a handshake begun with the right one (a restore just
	// before) runs on; that one may still connect, and is killed again.
	state := ""
	down, err := poll(ctx, 10*time.Millisecond, func() (bool, error) {
		role, err := c.Do(ctx, "ROLE").Slice()
		if err != nil {
			return false, refused("ROLE", addr, err)
		}
		if len(role) > 3 {
			state, _ = role[3].(string)
		}
		if state == "connected" {
			if err := c.ClientKillByFilter(ctx, "TYPE", "master").Err(); err != nil {
				return false, refused("CLIENT KILL TYPE master", addr, err)
			}
		}
		return state == "connect", nil
	})
	if err == nil && !down {
		err = problem.System(fmt.Errorf("the replica %s is still in replication state %q, not cut off, after CLIENT KILL TYPE master",
			addr, state), sentinelHint)
	}
	return err
}

// restore gives every cut replica its masterauth back (and writes it to
// its config file: Sentinel's failover ran CONFIG REWRITE on it while the
// wrong one was set). Not the run's context: a cancelled run restores all
// the same.
func (f *sentinelFailover) restore() error {
	f.cutMu.Lock()
	defer f.cutMu.Unlock()
	return f.restoreLocked()
}

func (f *sentinelFailover) restoreLocked() error {
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	var errs []error
	for _, addr := range f.cut {
		c := f.cl.Node(addr)
		err := c.ConfigSet(ctx, "masterauth", f.masterauth[addr]).Err()
		if err == nil {
			if err = c.ConfigRewrite(ctx).Err(); err != nil && strings.Contains(err.Error(), "without a config file") {
				err = nil
			}
		}
		if err != nil {
			errs = append(errs, fmt.Errorf("%s: %w", addr, err))
		}
	}
	f.cut = nil
	if len(errs) > 0 {
		return problem.System(fmt.Errorf("give the replica its masterauth back: %w", errors.Join(errs...)),
			"dupctl had set a wrong masterauth to cut it off: set the right one (CONFIG SET masterauth, then CONFIG REWRITE)")
	}
	return nil
}

// force asks a Sentinel for the failover, gives the replicas their
// setting back once one of them was promoted, and waits until every
// Sentinel names a new master that says it is one. The replicas get their
// setting back on every path.
func (f *sentinelFailover) force(ctx context.Context) (newMaster string, err error) {
	defer func() {
		if rerr := f.restore(); rerr != nil {
			err = errors.Join(err, rerr)
		}
	}()
	ctx, cancel := context.WithTimeout(ctx, sentinelFailoverWait)
	defer cancel()
	if err := f.ask(ctx); err != nil {
		return "", err
	}
	restored := false
	var why string
	named, err := poll(ctx, 50*time.Millisecond, func() (bool, error) {
		newMaster, why = f.named(ctx)
		if !restored && (why == "" || f.promoted(ctx)) {
			// The promoted replica needs no master any more; the others
			// must follow it, which Sentinel waits for before it names it.
			if err := f.restore(); err != nil {
				return false, err
			}
			restored = true
		}
		return why == "", nil
	})
	switch {
	case err != nil:
		return "", err
	case named:
		return newMaster, nil
	case ctx.Err() == context.DeadlineExceeded:
		return "", problem.System(fmt.Errorf("SENTINEL FAILOVER %s: no new master within %s: %s", f.s.Master, sentinelFailoverWait, why), "")
	}
	return "", ctx.Err()
}

// named is the new master when every Sentinel names it and it says it is
// one; otherwise why not.
func (f *sentinelFailover) named(ctx context.Context) (addr, why string) {
	addr, err := f.cl.Agreed(ctx)
	switch {
	case err != nil:
		return "", err.Error()
	case addr == f.master:
		return "", "the Sentinels still name " + addr
	}
	if role, err := f.role(ctx, addr); err != nil || role[0] != "master" {
		return "", fmt.Sprintf("%s does not say it is a master yet (ROLE %v %v)", addr, role, err)
	}
	return addr, ""
}

// ask sends SENTINEL FAILOVER to the Sentinels in turn until one takes
// it; a Sentinel that does not deem the replica fit yet is asked again.
func (f *sentinelFailover) ask(ctx context.Context) error {
	var errs []string
	taken, err := poll(ctx, 200*time.Millisecond, func() (bool, error) {
		errs = errs[:0]
		for _, a := range f.s.Sentinels {
			err := f.cl.Sentinel(a).Failover(ctx, f.s.Master).Err()
			if err == nil {
				return true, nil
			}
			if rerr := refusal(err, "SENTINEL FAILOVER", a); rerr != nil {
				return false, rerr
			}
			errs = append(errs, a+": "+err.Error())
		}
		return false, nil
	})
	if err == nil && !taken {
		err = problem.System(fmt.Errorf("SENTINEL FAILOVER %s: %s", f.s.Master, strings.Join(errs, "; ")), sentinelHint)
	}
	return err
}

// promoted reports whether a cut replica says it is a master now.
func (f *sentinelFailover) promoted(ctx context.Context) bool {
	f.cutMu.Lock()
	cut := slices.Clone(f.cut)
	f.cutMu.Unlock()
	for _, addr := range cut {
		if role, err := f.role(ctx, addr); err == nil && role[0] == "master" {
			return true
		}
	}
	return false
}

// holds reports whether the data node at addr has the key.
func (f *sentinelFailover) holds(ctx context.Context, addr, key string) (bool, error) {
	n, err := f.cl.Node(addr).Exists(ctx, key).Result()
	if err != nil {
		return false, refused("EXISTS "+strconv.Quote(key), addr, err)
	}
	return n > 0, nil
}

// prepareFailover readies a failover run's real failover when the
// workers' Redis is a Sentinel setup (r.fo stays nil otherwise: the
// failover is played at the proxy).
func (r *run) prepareFailover() error {
	if r.spec.Fault != Failover || !connect.IsSentinel(r.o.RedisURL) {
		return nil
	}
	f, err := newSentinelFailover(r.ctx, r.o)
	r.fo = f
	return err
}

// noteFailover records the Sentinel setup a real failover is played on.
func (r *run) noteFailover() {
	f := r.fo
	if f == nil {
		return
	}
	text := fmt.Sprintf("the Sentinels name the master %s, and its %s %s in sync with it: a real failover is played",
		f.master, english.Plural(len(f.replicas), "replica", "replicas"), strings.Join(f.replicas, ", "))
	if f.waited >= time.Second {
		text += fmt.Sprintf(" (dupctl waited %s for the setup to be ready)", f.waited.Round(100*time.Millisecond))
	}
	r.mu.Lock()
	defer r.mu.Unlock()
	r.add("dupctl", "sentinel", "", text)
}

// lockAttempt is the key a command may take a lock on: SET NX, SETNX, or
// a script's first key (a lock script; a release is told apart only by
// its reply).
func lockAttempt(cmd *respproxy.Cmd) (string, bool) {
	switch cmd.Name() {
	case "SET":
		return cmd.Arg(1), hasOption(cmd, "NX")
	case "SETNX":
		return cmd.Arg(1), true
	case "EVAL", "EVALSHA", "FCALL":
		if n, err := strconv.Atoi(cmd.Arg(2)); err == nil && n >= 1 && len(cmd.Args) > 3 {
			return cmd.Arg(3), true
		}
	}
	return "", false
}

// cutBeforeLock cuts the replicas off before the victim's lock command is
// forwarded, once a run; a refusal fails the run (the command goes on).
func (r *run) cutBeforeLock(s *slot, c *respproxy.Conn, cmd *respproxy.Cmd) {
	lock, ok := lockAttempt(cmd)
	if !ok || !strings.Contains(string(joinArgs(cmd)), r.id) { // as Reply: only the run's own traffic
		return
	}
	f := r.fo
	r.mu.Lock()
	inst := r.gates[c.Gate]
	key := r.lockKeyOf(s, inst, lock)
	if !r.due(AfterLock, []string{key}, s, inst) || f.cutting || f.cutFor != nil || r.stopping {
		r.mu.Unlock()
		return
	}
	f.cutting = true
	r.mu.Unlock()
	ctx, cancel := context.WithTimeout(r.ctx, 10*time.Second)
	err := f.cutReplicas(ctx)
	cancel()
	r.mu.Lock()
	defer r.mu.Unlock()
	f.cutting = false
	if err != nil {
		if r.failure == nil {
			r.failure = err
		}
		return
	}
	if r.stopping {
		// The run ended during the cut: no failover may start in its
		// cleanup; the replicas get their setting back at once.
		r.mu.Unlock()
		err := f.restore()
		r.mu.Lock()
		if err != nil && r.failure == nil {
			r.failure = err
		}
		return
	}
	f.cutFor = cmd
	what := cmd.Name() + " " + lock
	if cmd.Name() == "SET" {
		what += " NX"
	}
	r.add("dupctl", "replica-cut", key, fmt.Sprintf("%s sends %s; before forwarding it, dupctl cuts the %s %s off the master %s "+
		"(CONFIG SET masterauth to a wrong one, CLIENT KILL TYPE master): ROLE says its link is down (state connect)",
		s.lane(inst), what, english.Plural(len(f.replicas), "replica", "replicas"), strings.Join(f.replicas, ", "), f.master))
}

// uncutIfMissed gives the replicas their setting back when the command
// they were cut for did not take the lock (busy, or an error).
func (r *run) uncutIfMissed(cmd *respproxy.Cmd) {
	f := r.fo
	r.mu.Lock()
	if f.cutFor != cmd || r.fired != nil {
		r.mu.Unlock()
		return
	}
	f.cutFor = nil
	r.mu.Unlock()
	err := f.restore()
	r.mu.Lock()
	defer r.mu.Unlock()
	if err != nil && r.failure == nil {
		r.failure = err
	}
	r.add("dupctl", "replica-restored", r.plan.Victim, cmd.Name()+" did not take the lock: dupctl gives the replicas their masterauth back")
}

// forceFailover starts the real failover right after the victim's lock
// was taken on the master alone. The caller holds r.mu.
func (r *run) forceFailover(lane, key string, l *lease) {
	f := r.fo
	switch {
	case r.stopping:
		return
	case f.cutFor == nil:
		// The cut failed (r.failure says why), or this lock command went
		// uncut while another's cut ran: no failover, and the run says so
		// (it is then not reached, never a pass).
		r.add("dupctl", "note", key, "no failover after "+l.lock+" was taken: the replicas were not cut off before it, "+
			"so the lock may be on them too")
		return
	}
	r.faultLease = l
	r.fire(lane, key, fmt.Sprintf("a real Sentinel failover right after the worker took the lock %s: the master %s answered OK "+
		"with no replica connected, so it alone has the lock; dupctl asks the Sentinels to fail %s over (SENTINEL FAILOVER)",
		l.lock, f.master, f.s.Master))
	f.running = true
	f.wg.Add(1)
	go r.runFailover(key, l.lock)
}

// runFailover fails the setup over, looks for the lock on the new master,
// and - when it is not there - drops the workers' Redis connections and
// publishes a second message.
func (r *run) runFailover(key, lock string) {
	defer r.fo.wg.Done()
	f := r.fo
	start := time.Now()
	addr, err := f.force(r.ctx)
	held := false
	if err == nil {
		ctx, cancel := context.WithTimeout(r.ctx, 5*time.Second)
		held, err = f.holds(ctx, addr, lock)
		cancel()
	}
	r.mu.Lock()
	defer r.mu.Unlock()
	f.running = false
	if err != nil {
		if r.failure == nil && r.ctx.Err() == nil {
			r.failure = err
		}
		return
	}
	f.newMaster = addr
	text := fmt.Sprintf("the Sentinels name the new master %s in place of %s, %s after SENTINEL FAILOVER; ", addr, f.master,
		time.Since(start).Round(time.Millisecond))
	if held {
		r.add("dupctl", "failover", key, text+"EXISTS "+lock+" there -> 1: the lock had replicated after all, nothing was lost")
		return
	}
	f.lostSeq = r.add("dupctl", "failover", key, text+"EXISTS "+lock+" there -> 0: the lock write was lost with the old master; "+
		"dupctl drops every worker's Redis connection (as a Sentinel-aware client does on +switch-master), so the next ones reach "+
		addr+", and publishes a second message for "+key).Seq
	for _, s := range r.slots {
		if s.redis != nil {
			s.redis.CloseConns()
		}
	}
	if !r.stopping {
		r.publishLater(key, 2)
	}
}

// endFailover waits for a failover under way and gives any replica still
// cut off its setting back (a run that ended between the cut and the
// lock's reply).
func (r *run) endFailover() error {
	if r.fo == nil {
		return nil
	}
	r.fo.wg.Wait()
	return r.fo.restore()
}

// closeFailover closes the failover's clients once the run's cleanup
// undid any cut: until it set stopping, a lock command could still cut.
func (r *run) closeFailover() {
	if r.fo != nil {
		r.fo.cl.Close()
	}
}
