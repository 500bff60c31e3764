package chaos

// A fault is what a run's plan does to the run, once: each kind is a type
// that arms what it needs before the run's t=0, fires where the plan's
// point came for its victim, and heals what it changed as the run ends,
// whatever happened. The observers (observe.go) only say where a fault
// is due; what happens then is the fault's.
type fault interface {
	// arm readies what the fault needs before the run's t=0.
	arm(r *run) error
	// fire carries the fault out at a point where it is due; the caller
	// holds r.mu. pass reports whether the traffic that brought the point
	// goes on; then, when not nil, runs once the reply reached the worker.
	fire(r *run, at firing) (pass bool, then func())
	// heal undoes what the fault changed, as the run ends.
	heal(r *run) error
}

// firing is where a fault is due: the plan's point, the worker copy
// (its slot, process and lane), and what the point offers the fault.
type firing struct {
	p    Point
	s    *slot
	inst int
	lane string
	// key is the business key the point came with (AfterReceive,
	// AfterLock); lock and lease the lock just taken (AfterLock), deliv
	// the delivery just received (AfterReceive).
	key   string
	lock  string
	lease *lease
	deliv *delivery
	// withheld: at AfterWrite, the commit's reply is still held back
	// from the worker (else the worker has it).
	withheld bool
	// drop closes the connection the point came on as its server would
	// (BeforeAck, BeforeCommit).
	drop func()
}

// fault is the plan's fault.
func (r *run) fault() fault {
	switch r.plan.Fault {
	case Kill:
		return killFault{}
	case Stop:
		return stopFault{}
	case Close:
		return closeFault{}
	case LagCache:
		return lagCacheFault{}
	case Failover:
		return failoverFault{}
	case LagReplica:
		return lagReplicaFault{}
	}
	return duplicateFault{}
}

// noLife is a fault that needs nothing before the run and leaves nothing
// to undo after it.
type noLife struct{}

func (noLife) arm(*run) error  { return nil }
func (noLife) heal(*run) error { return nil }

// killFault SIGKILLs the worker copy at the point.
type killFault struct{ noLife }

func (killFault) fire(r *run, at firing) (bool, func()) {
	v := r.plan.Victim
	switch at.p {
	case BeforeAck:
		r.killAt(at.s, at.lane, v, "the worker sends basic.ack for "+v+"; dupctl withholds it and SIGKILLs the worker")
		return false, nil
	case AfterReceive:
		at.deliv.faulted = true
		r.killAt(at.s, at.lane, at.key, "dupctl SIGKILLs the worker right after it received "+at.key)
	case AfterAck:
		r.killAt(at.s, at.lane, v, "dupctl SIGKILLs the worker right after its basic.ack for "+v+" reached the broker")
	case AfterLock:
		r.killAt(at.s, at.lane, at.key, "dupctl SIGKILLs the worker right after it took the lock "+at.lock)
	case BeforeWrite:
		r.killAt(at.s, at.lane, v, "the worker sends its first write for "+v+"; dupctl withholds it and SIGKILLs the worker")
		return false, nil
	case AfterWrite:
		if !at.withheld {
			r.killAt(at.s, at.lane, v, "dupctl SIGKILLs the worker right after its first write for "+v+" committed")
		}
	}
	return true, nil
}

// stopFault pauses the worker copy (SIGSTOP) past its lease and publishes
// a second copy of the key (pause).
type stopFault struct{ noLife }

func (stopFault) fire(r *run, at firing) (bool, func()) {
	v := r.plan.Victim
	switch at.p {
	case AfterLock:
		r.pause(at.s, at.lane, at.key, "right after it took the lock "+at.lock, at.lease)
	case BeforeWrite:
		r.pause(at.s, at.lane, v, "as it sends its first write for "+v, r.leaseOf(at.s, at.inst, v))
	}
	return true, nil
}

// closeFault drops a connection of the worker copy as its server would:
// the broker's before its ack, Redis's right after the lock (cutRedis),
// PostgreSQL's before its COMMIT or instead of the commit's reply.
type closeFault struct{ noLife }

func (closeFault) fire(r *run, at firing) (bool, func()) {
	v := r.plan.Victim
	switch at.p {
	case BeforeAck:
		r.fire(at.lane, v, "the worker sends basic.ack for "+v+
			"; dupctl withholds it and closes the connection as the broker would (connection.close 320)")
		r.await(at.lane)
		at.drop()
		return false, nil
	case AfterLock:
		// Once the worker has its OK: it must believe it holds the lock.
		return true, func() {
			r.mu.Lock()
			defer r.mu.Unlock()
			if r.fired == nil && !r.stopping {
				r.cutRedis(at.s, at.lane, at.key, at.lease)
			}
		}
	case BeforeCommit:
		r.dropPostgres(at, "the worker sends COMMIT for its writes of "+v+
			"; dupctl withholds it and drops its PostgreSQL connection: the server rolls the transaction back")
		at.drop()
		return false, nil
	case AfterWrite:
		if at.withheld {
			r.dropPostgres(at, "the worker's first write for "+v+" commits; dupctl withholds the reply and drops its PostgreSQL connection")
			return false, nil
		}
	}
	return true, nil
}

// dropPostgres records the dropped PostgreSQL connection on the victim's
// delivery and awaits the copy's reaction. The caller holds r.mu.
func (r *run) dropPostgres(at firing, text string) {
	r.markVictim(at.s, at.inst)
	r.fire(at.lane, r.plan.Victim, text)
	r.await(at.lane)
}

// lagCacheFault holds the status cache writes back (redisObs.Command) and
// fires at the first message's ack: a second message for the key is
// published while the write may still be held.
type lagCacheFault struct{ noLife }

func (lagCacheFault) fire(r *run, at firing) (bool, func()) {
	if at.p == AfterAck {
		v := r.plan.Victim
		r.fire("dupctl", v, lagFaultText(v, r.cacheHeld(v), r.events))
		r.publishLater(v, 2)
	}
	return true, nil
}

// duplicateFault is the workload itself: a second message for the
// victim, published at once with the first (publishWorkload). No point
// fires it.
type duplicateFault struct{ noLife }

func (duplicateFault) fire(*run, firing) (bool, func()) { return true, nil }

// failoverFault fails Redis over right after the lock was taken: a real
// failover of a Sentinel setup (sentinelfailover.go), or one played at
// the proxy (failover).
type failoverFault struct{}

func (failoverFault) arm(r *run) error  { return r.prepareFailover() }
func (failoverFault) heal(r *run) error { return r.endFailover() }

func (failoverFault) fire(r *run, at firing) (bool, func()) {
	if at.p != AfterLock {
		return true, nil
	}
	if r.fo != nil {
		r.forceFailover(at.lane, at.key, at.lease) // a real one starts now and takes far longer than the reply
		return true, nil
	}
	return true, func() {
		r.mu.Lock()
		defer r.mu.Unlock()
		if r.fired == nil && !r.stopping {
			r.failover(at.lane, at.key, at.lease)
		}
	}
}

// lagReplicaFault pauses the standby's replay before the victim's write
// (pgObs.Statement), fires when that write committed on the primary, and
// resumes the replay as the run ends.
type lagReplicaFault struct{}

func (lagReplicaFault) arm(*run) error    { return nil }
func (lagReplicaFault) heal(r *run) error { return r.resumeReplica("as the run ends") }

func (lagReplicaFault) fire(r *run, at firing) (bool, func()) {
	if at.p == AfterWrite && !at.withheld {
		r.replicaCommitted(at.lane)
	}
	return true, nil
}
