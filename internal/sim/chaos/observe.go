package chaos

import (
	"bytes"
	"context"
	"fmt"
	"slices"
	"strconv"
	"strings"
	"time"

	"github.com/dupctl/dupctl/internal/platform/problem"
	"github.com/dupctl/dupctl/internal/platform/resp"
	"github.com/dupctl/dupctl/internal/sim/chaos/amqpproxy"
	"github.com/dupctl/dupctl/internal/sim/chaos/pgproxy"
	"github.com/dupctl/dupctl/internal/sim/chaos/respproxy"
)

// amqpObs watches one slot's AMQP connections.
type amqpObs struct {
	r *run
	s *slot
}

func (a *amqpObs) Before(c *amqpproxy.Conn, ev *amqpproxy.Event) bool {
	if ev.Kind != amqpproxy.KindAck {
		return true
	}
	r, s := a.r, a.s
	r.mu.Lock()
	defer r.mu.Unlock()
	inst := r.gates[c.Gate]
	ds := r.settled(c, ev, false)
	if !r.due(BeforeAck, deliveryKeys(ds), s, inst) {
		return true
	}
	lane := s.lane(inst)
	for _, d := range ds {
		d.faulted = true
	}
	pass, _ := r.fault().fire(r, firing{p: BeforeAck, s: s, inst: inst, lane: lane, drop: func() {
		c.CloseAsServer(320, "CONNECTION_FORCED - closed by dupctl (simulate redelivery)")
	}})
	return pass
}

func (a *amqpObs) After(c *amqpproxy.Conn, ev *amqpproxy.Event) {
	r, s := a.r, a.s
	r.mu.Lock()
	defer r.mu.Unlock()
	inst := r.gates[c.Gate]
	lane := s.lane(inst)
	switch ev.Kind {
	case amqpproxy.KindConsume:
		r.consumed[ev.Queue] = true
		r.noAck[chanKey{c, ev.Channel}] = ev.NoAck
	case amqpproxy.KindConsumeOk:
		if inst == s.inst {
			s.consumers++
			r.add(lane, "consume", "", "consumes (basic.consume-ok)")
		}
	case amqpproxy.KindQueueDeclare, amqpproxy.KindDeclareOk:
		if strings.Contains(ev.Queue, r.id) {
			r.queues[ev.Queue] = true
		}
	case amqpproxy.KindExchangeDeclare:
		if strings.Contains(ev.Exchange, r.id) {
			r.exchanges[ev.Exchange] = true
		}
	case amqpproxy.KindPublish:
		for _, k := range r.keysIn(ev.Content) {
			r.repub[k] = true
			r.add(lane, "republish", k, fmt.Sprintf("the worker publishes %s to %s:%s", k, ev.Exchange, ev.RoutingKey))
		}
	case amqpproxy.KindDeliver:
		keys := r.keysIn(ev.Content)
		if len(keys) == 0 {
			return // not the run's message
		}
		d := &delivery{slot: s, inst: inst, key: keys[0], redelivered: ev.Redelivered, from: ev.At, lagged: r.cacheHeld(keys[0]),
			copyN: copyOf(ev.Content, keys[0])}
		r.delivs = append(r.delivs, d)
		text := "basic.deliver " + d.key
		if ev.Redelivered {
			text += " (redelivered)"
		}
		if d.lagged {
			text += ", while its status cache write is held back"
		}
		if r.noAck[chanKey{c, ev.Channel}] {
			d.end, d.to = "auto-ack", d.from
			text += " with no-ack: the broker forgets it now"
		} else {
			r.open[tagKey{c, ev.Channel, ev.Tag}] = d
		}
		d.seq = r.addAt(d.from, lane, "deliver", d.key, text).Seq // one clock reading: the span starts at its event
		if d.end != "" {
			d.endSeq = d.seq
		}
		if r.due(AfterReceive, keys, s, inst) {
			r.fault().fire(r, firing{p: AfterReceive, s: s, inst: inst, lane: lane, key: d.key, deliv: d})
		}
	case amqpproxy.KindAck, amqpproxy.KindNack, amqpproxy.KindReject:
		ds := r.settled(c, ev, true)
		for _, d := range ds {
			how := map[string]string{"requeued": " (requeue)", "rejected": " (no requeue: dead-lettered or dropped)"}[d.end]
			d.endSeq = r.addAt(d.to, lane, d.end, d.key, ev.Kind.String()+" "+d.key+how).Seq
		}
		r.secondHandled(ds)
		if ev.Kind == amqpproxy.KindAck && r.due(AfterAck, deliveryKeys(ds), s, inst) {
			r.fault().fire(r, firing{p: AfterAck, s: s, inst: inst, lane: lane})
		}
	}
}

// copyOf is which of dupctl's messages for a key a delivery carries: its
// message id is KEY#N (publish); 0 when it names none (a message the
// worker published itself, with an id of its own).
func copyOf(content []byte, key string) int {
	_, rest, ok := bytes.Cut(content, []byte(key+"#"))
	if !ok {
		return 0
	}
	end := 0
	for end < len(rest) && end < 4 && rest[end] >= '0' && rest[end] <= '9' {
		end++
	}
	n, _ := strconv.Atoi(string(rest[:end]))
	return n
}

func (a *amqpObs) Closed(c *amqpproxy.Conn) {
	r, s := a.r, a.s
	r.mu.Lock()
	defer r.mu.Unlock()
	for k, d := range r.open {
		if k.conn != c {
			continue
		}
		delete(r.open, k)
		d.end, d.to = "returned", time.Now()
		d.endSeq = r.addAt(d.to, s.lane(d.inst), "returned", d.key, "connection closed with "+d.key+" unacked: the broker requeues it").Seq
	}
}

// redisObs watches one slot's Redis connections: lock acquisitions,
// renewals and releases, plain DELs of another worker's lock, and the
// status cache (whose writes it holds back in stale-cache).
type redisObs struct {
	r *run
	s *slot
}

// lagged are the cache writes dupctl answers itself and applies later,
// with the reply Redis would give.
var lagged = map[string]string{"SET": "+OK\r\n", "SETEX": "+OK\r\n", "PSETEX": "+OK\r\n", "HSET": ":1\r\n", "HMSET": "+OK\r\n",
	"DEL": ":1\r\n", "UNLINK": ":1\r\n", "HDEL": ":1\r\n"}

func (o *redisObs) Command(c *respproxy.Conn, cmd *respproxy.Cmd) []byte {
	r := o.r
	if r.fo != nil {
		r.cutBeforeLock(o.s, c, cmd)
		return nil
	}
	if r.plan.Fault != LagCache {
		return nil
	}
	name, key := cmd.Name(), cmd.Arg(1)
	reply, ok := lagged[name]
	if !ok || !r.isCacheKey(key) || (name == "SET" && hasOption(cmd, "NX", "XX", "GET")) ||
		(name == "DEL" || name == "UNLINK") && len(cmd.Args) != 2 {
		return nil
	}
	args := make([]any, len(cmd.Args))
	for i, a := range cmd.Args {
		args[i] = string(a)
	}
	r.mu.Lock()
	defer r.mu.Unlock()
	inst := r.gates[c.Gate]
	r.held[key]++
	r.add(o.s.lane(inst), "cache-held", r.firstKey(key),
		fmt.Sprintf("%s %s: dupctl answers it and holds it back %s (the cache lags)", name, key, r.o.CacheLag))
	r.timers = append(r.timers, time.AfterFunc(r.o.CacheLag, func() {
		r.mu.Lock()
		if r.stopping { // cleanup is deleting the run's keys: a late write would outlive it
			r.mu.Unlock()
			return
		}
		r.landing.Add(1)
		r.mu.Unlock()
		defer r.landing.Done()
		ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
		defer cancel()
		err := r.d.Redis.Do(ctx, args...).Err()
		r.mu.Lock()
		defer r.mu.Unlock()
		if r.held[key]--; r.held[key] <= 0 {
			delete(r.held, key)
		}
		text := name + " " + key + " reaches Redis"
		if err != nil && err.Error() != "redis: nil" {
			text += " (error: " + err.Error() + ")"
		}
		r.add("dupctl", "cache-landed", r.firstKey(key), text)
	}))
	return []byte(reply)
}

// lagFaultText words stale-cache's fault, at the first message's ack,
// from what was recorded by then: whether a status cache write of the key
// is held back now (held) and, if not, when the last one reached Redis.
func lagFaultText(key string, held bool, events []Event) string {
	text := "the first message for " + key + " is acked; dupctl publishes a second"
	if held {
		return text + " while its cache write is still held back"
	}
	for i := len(events) - 1; i >= 0; i-- {
		if e := events[i]; e.Kind == "cache-landed" && e.Key == key {
			return text + fmt.Sprintf(", but its status cache write already reached Redis at t=%dms: nothing is held back now", e.T)
		}
	}
	return text + ", but no status cache write of it was held back"
}

func hasOption(cmd *respproxy.Cmd, opts ...string) bool {
	for _, a := range cmd.Args[min(3, len(cmd.Args)):] {
		if slices.Contains(opts, strings.ToUpper(string(a))) {
			return true
		}
	}
	return false
}

// ttlOf reads SET's expiry options.
func ttlOf(cmd *respproxy.Cmd) time.Duration {
	for i := 3; i+1 < len(cmd.Args); i++ {
		n, err := strconv.ParseInt(cmd.Arg(i+1), 10, 64)
		if err != nil {
			continue
		}
		switch strings.ToUpper(cmd.Arg(i)) {
		case "PX":
			return time.Duration(n) * time.Millisecond
		case "EX":
			return time.Duration(n) * time.Second
		case "PXAT":
			return time.Until(time.UnixMilli(n))
		case "EXAT":
			return time.Until(time.Unix(n, 0))
		}
	}
	return 0
}

func (o *redisObs) Reply(c *respproxy.Conn, cmd *respproxy.Cmd, v *resp.Value) (then func()) {
	r, s := o.r, o.s
	if r.fo != nil {
		defer r.uncutIfMissed(cmd)
	}
	name, key := cmd.Name(), cmd.Arg(1)
	if !strings.Contains(string(joinArgs(cmd)), r.id) {
		return nil
	}
	switch name {
	case "EVAL", "EVALSHA", "EVAL_RO", "EVALSHA_RO", "FCALL", "FCALL_RO":
		return o.script(c, cmd)
	}
	r.mu.Lock()
	defer r.mu.Unlock()
	inst := r.gates[c.Gate]
	lane := s.lane(inst)
	switch name {
	case "SET", "SETNX":
		if name == "SET" && !hasOption(cmd, "NX") {
			return nil
		}
		if v.IsOK() || (name == "SETNX" && v.Int == 1) {
			return r.acquired(time.Now(), s, inst, key, cmd.Arg(2), ttlOf(cmd), name+" "+key+" NX -> OK")
		} else if !v.IsError() {
			r.add(lane, "busy", r.lockKeyOf(s, inst, key), name+" "+key+" NX -> busy")
		}
	case "DEL", "UNLINK":
		if v.Type == ':' && v.Int > 0 {
			for _, k := range cmd.Args[1:] {
				r.deleted(s, inst, string(k))
			}
		}
	case "PEXPIRE", "EXPIRE":
		if l := r.current[key]; l != nil && v.Int == 1 && l.slot == s && l.inst == inst {
			r.renewed(l, time.Now())
		}
	case "GET", "HGET", "HGETALL", "HMGET", "MGET", "EXISTS":
		r.cacheRead(s, inst, name, key, v)
	}
	return nil
}

// read counts a read of the delivery's key (the event seq); before its
// first write it is a check.
func (d *delivery) read(what string, seq int) {
	d.reads++
	if d.writes == 0 {
		d.readFirst = true
		d.checks = append(d.checks, what)
		d.checkSeqs = append(d.checkSeqs, seq)
	}
}

func joinArgs(cmd *respproxy.Cmd) []byte {
	var b []byte
	for _, a := range cmd.Args[1:] {
		b = append(b, a...)
		b = append(b, 0)
	}
	return b
}

// script handles a Lua lock script (Redisson's tryLock, bsm/redislock's
// obtain, a compare-and-delete release): whatever its text, dupctl asks
// Redis afterwards whether the key now holds one of the call's arguments
// (a string value or a hash field: the caller's token).
func (o *redisObs) script(c *respproxy.Conn, cmd *respproxy.Cmd) (then func()) {
	r, s := o.r, o.s
	numKeys, err := strconv.Atoi(cmd.Arg(2))
	if err != nil || numKeys < 1 || len(cmd.Args) < 3+numKeys {
		return nil
	}
	lock := cmd.Arg(3)
	argv := make([]string, 0, len(cmd.Args))
	for _, a := range cmd.Args[3+numKeys:] {
		argv = append(argv, string(a))
	}
	replied := time.Now()
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Second)
	defer cancel()
	holds, token, ttl := false, "", time.Duration(0)
	switch t, _ := r.d.Redis.Type(ctx, lock).Result(); t {
	case "string":
		v, _ := r.d.Redis.Get(ctx, lock).Result()
		holds, token = slices.Contains(argv, v), v
	case "hash":
		fields, _ := r.d.Redis.HKeys(ctx, lock).Result()
		for _, f := range fields {
			if slices.Contains(argv, f) {
				holds, token = true, f
			}
		}
	}
	if holds {
		ttl, _ = r.d.Redis.PTTL(ctx, lock).Result()
	}
	r.mu.Lock()
	defer r.mu.Unlock()
	inst := r.gates[c.Gate]
	l := r.current[lock]
	switch {
	case holds && l != nil && l.slot == s && l.inst == inst && l.token == token && l.released.IsZero() && l.deleted.IsZero():
		r.renewed(l, time.Now().Add(ttl-l.ttl))
	case holds:
		return r.acquired(replied, s, inst, lock, token, ttl, "lock script on "+lock+" -> acquired")
	case l != nil && l.slot == s && l.inst == inst && l.released.IsZero() && l.deleted.IsZero():
		l.released = replied
		r.addAt(replied, s.lane(inst), "unlock", l.key, "lock script on "+lock+" -> released")
	}
	return nil
}

// acquired records a new lease and fires after-lock, as the reply goes to
// the worker: a kill or a stop at once, so nothing the worker does on it
// gets through; a cut or a played failover in then, once the worker has
// its OK (it must believe it holds the lock). The caller holds r.mu.
func (r *run) acquired(now time.Time, s *slot, inst int, lock, token string, ttl time.Duration, text string) (then func()) {
	key := r.lockKeyOf(s, inst, lock)
	l := &lease{lock: lock, key: key, slot: s, inst: inst, token: token, from: now, ttl: ttl, expires: now.Add(ttl),
		deliv: r.openOf(s, inst, key)}
	r.current[lock] = l
	r.leases = append(r.leases, l)
	lane := s.lane(inst)
	if ttl > 0 {
		text += fmt.Sprintf(" (TTL %s)", ttl.Round(time.Millisecond))
	} else {
		text += " (no TTL)"
	}
	l.seq = r.addAt(now, lane, "lock", key, text).Seq
	if !r.due(AfterLock, []string{key}, s, inst) {
		return nil
	}
	if l.deliv != nil {
		l.deliv.faulted = true
	}
	_, then = r.fault().fire(r, firing{p: AfterLock, s: s, inst: inst, lane: lane, key: key, lock: lock, lease: l})
	return then
}

// failover plays a Redis failover at the proxy right after the lease was
// taken, before it replicated (a Sentinel setup gets a real one:
// forceFailover). The lock key is deleted on the real Redis (the
// promoted replica never had it), every worker's Redis connection is
// dropped (the demoted master's clients are killed, and they reconnect to
// the new one at once), and a second copy of the key is published for
// another worker to be granted the same lock while this one still works.
// The caller holds r.mu; the delete is one round trip on loopback.
func (r *run) failover(lane, key string, l *lease) {
	r.faultLease = l
	ctx, cancel := context.WithTimeout(r.ctx, 2*time.Second)
	defer cancel()
	n, err := r.d.Redis.Del(ctx, l.lock).Result()
	switch {
	case err != nil:
		r.failure = problem.System(fmt.Errorf("failover: delete the lock %s: %w", l.lock, err), "")
		return
	case n == 0:
		// The lock is already gone (released, or expired): nothing was
		// lost, so no fault; a later attempt tries again.
		r.add("dupctl", "note", key, "the lock "+l.lock+" was already gone when dupctl came to fail Redis over: no failover")
		r.faultLease = nil
		return
	}
	r.fire(lane, key, fmt.Sprintf("Redis fails over right after the worker took the lock %s, before it replicated, "+
		"played at dupctl's proxy (the workers' Redis is no Sentinel setup): dupctl deletes the key (the promoted master "+
		"never had it) and drops every worker's Redis connection; a second message for %s is published", l.lock, key))
	for _, o := range r.slots {
		if o.redis != nil {
			o.redis.CloseConns()
		}
	}
	r.publishLater(key, 2)
}

// outage is how long lock-expiry's pause and the Redis cut last: --pause,
// or the lease's TTL plus a margin, so that the lock expires meanwhile;
// why words the choice.
func (r *run) outage(l *lease) (d time.Duration, why string) {
	switch {
	case r.o.Pause > 0:
		return r.o.Pause, ""
	case l != nil && l.ttl > 0:
		return l.ttl + max(250*time.Millisecond, l.ttl/4), fmt.Sprintf(": the lock's TTL %s plus a margin", l.ttl.Round(time.Millisecond))
	}
	return time.Second, ": no lock with a TTL was seen, so 1s"
}

// cutRedis drops the slot's Redis connections right after it took the
// lock and refuses new ones for the outage (a partition between the
// worker and Redis: it can neither renew nor release the lock), and
// publishes a second copy of the key for another worker to take the lock
// once it expires. The caller holds r.mu.
func (r *run) cutRedis(s *slot, lane, key string, l *lease) {
	d, why := r.outage(l)
	r.faultLease = l
	r.fire(lane, key, fmt.Sprintf("dupctl drops the worker's Redis connections right after it took the lock %s "+
		"and refuses new ones for %s%s; a second message for %s is published", l.lock, d.Round(time.Millisecond), why, key))
	r.cut[s] = time.Now().Add(d)
	if s.redis != nil {
		s.redis.Refuse(d)
	}
	r.timers = append(r.timers, time.AfterFunc(d, func() {
		r.mu.Lock()
		defer r.mu.Unlock()
		r.add("dupctl", "reconnect", key, fmt.Sprintf("%s can reach Redis again", lane))
	}))
	r.publishLater(key, 2)
}

// pause stops a slot past its lease and publishes a second copy of the
// key for another worker to take.
func (r *run) pause(s *slot, lane, key, where string, l *lease) {
	d, why := r.outage(l)
	r.faultLease = l
	r.fire(lane, key, fmt.Sprintf("dupctl stops the worker (SIGSTOP) %s, for %s%s, and publishes a second message for %s",
		where, d.Round(time.Millisecond), why, key))
	r.stopLocked(s, d)
	r.publishLater(key, 2)
}

func (o *redisObs) Closed(*respproxy.Conn) {}

// pgObs watches one slot's PostgreSQL connections: to the primary, or
// (replica) to the standby the workers read through {replica}.
type pgObs struct {
	r       *run
	s       *slot
	replica bool
}

func (o *pgObs) Statement(c *pgproxy.Conn, st *pgproxy.Statement) bool {
	if o.replica {
		return o.replicaStatement(c, st)
	}
	if pgproxy.Commits(st.SQL) {
		return o.commit(c)
	}
	if st.Kind != pgproxy.KindRead && st.Kind != pgproxy.KindWrite {
		return true
	}
	r, s := o.r, o.s
	keys := r.keysIn(st.Raw)
	if st.Kind == pgproxy.KindWrite && r.plan.Fault == LagReplica && slices.Contains(keys, r.plan.Victim) {
		r.pauseReplica(r.plan.Victim) // before the write goes on: its commit must not be replayed
	}
	r.mu.Lock()
	defer r.mu.Unlock()
	inst := r.gates[c.Gate]
	if len(keys) == 0 {
		return true
	}
	lane := s.lane(inst)
	for _, k := range keys {
		seq := r.add(lane, st.Kind.String(), k, sqlSummary(st.SQL)).Seq
		if d := r.openOf(s, inst, k); d != nil {
			if st.Kind == pgproxy.KindRead {
				d.read(sqlSummary(st.SQL), seq)
			} else {
				d.writes++
			}
		}
	}
	if st.Kind != pgproxy.KindWrite || !r.due(BeforeWrite, keys, s, inst) {
		return true
	}
	r.markVictim(s, inst)
	pass, _ := r.fault().fire(r, firing{p: BeforeWrite, s: s, inst: inst, lane: lane})
	return pass
}

// commit sees a COMMIT on its way: at before-commit, when the transaction
// holds a write of the victim, the fault is due (closeFault withholds it
// and drops the connection, so the server rolls the transaction back and
// the worker gets a connection error instead of its commit).
func (o *pgObs) commit(c *pgproxy.Conn) bool {
	return o.fireAtCommit(c, BeforeCommit, c.PendingWrites(), firing{drop: func() { c.Pair.Close() }})
}

// Committing is the commit's reply on its way: at after-write the fault
// is due with the reply withheld (closeFault drops the connection
// instead: the write is durable, and the worker never learns it).
func (o *pgObs) Committing(c *pgproxy.Conn, writes []*pgproxy.Statement) bool {
	return o.fireAtCommit(c, AfterWrite, writes, firing{withheld: true})
}

// fireAtCommit fires the plan's fault at p when the transaction's writes
// name the victim, and reports whether the traffic goes on.
func (o *pgObs) fireAtCommit(c *pgproxy.Conn, p Point, writes []*pgproxy.Statement, at firing) bool {
	r, s := o.r, o.s
	r.mu.Lock()
	defer r.mu.Unlock()
	inst := r.gates[c.Gate]
	if !r.due(p, r.writeKeys(writes), s, inst) {
		return true
	}
	at.p, at.s, at.inst, at.lane = p, s, inst, s.lane(inst)
	pass, _ := r.fault().fire(r, at)
	return pass
}

// replicaStatement records the reads through the replica proxy; the
// standby refuses writes itself.
func (o *pgObs) replicaStatement(c *pgproxy.Conn, st *pgproxy.Statement) bool {
	if st.Kind != pgproxy.KindRead {
		return true
	}
	r := o.r
	r.mu.Lock()
	defer r.mu.Unlock()
	if keys := r.keysIn(st.Raw); len(keys) > 0 {
		o.replicaRead(c, st, keys)
	}
	return true
}

func (o *pgObs) Committed(c *pgproxy.Conn, writes []*pgproxy.Statement) {
	r, s := o.r, o.s
	r.mu.Lock()
	defer r.mu.Unlock()
	inst := r.gates[c.Gate]
	lane := s.lane(inst)
	for _, w := range writes {
		values := pgproxy.Values(w)
		for _, k := range r.keysIn(w.Raw) {
			d := r.openOf(s, inst, k)
			if d == nil {
				continue
			}
			for _, v := range values {
				if strings.Contains(v, k) && !slices.Contains(d.values, v) {
					d.values = append(d.values, v)
				}
			}
		}
	}
	keys := r.writeKeys(writes)
	for _, k := range keys {
		seq := r.add(lane, "commit", k, "COMMIT: the writes for "+k+" are durable").Seq
		if d := r.openOf(s, inst, k); d != nil {
			d.committed++
			d.commitSeqs = append(d.commitSeqs, seq)
		}
	}
	if r.due(AfterWrite, keys, s, inst) {
		r.markVictim(s, inst)
		r.fault().fire(r, firing{p: AfterWrite, s: s, inst: inst, lane: lane})
	}
}

func (o *pgObs) Closed(*pgproxy.Conn) {}

// sqlSummary is a statement's first words, for the schedule.
func sqlSummary(sql string) string {
	s := strings.Join(strings.Fields(sql), " ")
	if len(s) > 72 {
		s = s[:72] + "…"
	}
	return s
}
