package main

import (
	"fmt"
	"time"
)

// The causes, in the words of the truth file (the scorer maps dupctl's codes onto them).
const (
	causeRedelivery = "redelivery"           // crash before ack, redelivered, and the flow has no idempotency check
	causeLockExpiry = "lock-expiry"          // the lock's TTL passed mid-job and another worker took it
	causeLockKeyJob = "lock-key-from-job-id" // the lock key is per delivery (job id or random), not per order
	causeUnlock     = "unlock-without-token" // a worker that never held the lock deleted it; another took it
	causeUnstable   = "unstable-key"         // the idempotency key changed between attempts
	causeNonAtomic  = "non-atomic-commit"    // the charge ran, its record's commit failed, the retry charged again
	causeStaleCache = "stale-cache"          // the check read a cache that did not yet have the committed record
	causeRace       = "race"                 // no lock: two deliveries checked before either committed
)

const ttl = 10000 // ms, every lock in this fleet

var scenarios = []*scenario{
	{name: "clean", n: 9, run: clean},
	{name: "clean-charge-retried", n: 4, run: cleanChargeRetried},
	{name: "clean-redelivered-seen", n: 3, run: cleanRedeliveredSeen},
	{name: "clean-duplicate-busy-then-seen", n: 4, run: cleanDuplicateBusy},
	{name: "clean-lock-expired-alone", n: 2, run: cleanLockExpiredAlone},
	{name: "clean-commit-retried", n: 2, run: cleanCommitRetried},
	{name: "redelivery-after-crash", cause: causeRedelivery, n: 9, run: redelivery},
	{name: "lock-expired-mid-job", cause: causeLockExpiry, n: 9, run: lockExpiry},
	{name: "lock-key-job-id", cause: causeLockKeyJob, n: 5, run: lockKeyPerDelivery(false)},
	{name: "lock-key-random", cause: causeLockKeyJob, n: 4, run: lockKeyPerDelivery(true)},
	{name: "unlock-without-token", cause: causeUnlock, n: 9, run: unlockWithoutToken},
	{name: "unstable-key", cause: causeUnstable, n: 9, run: unstableKey},
	{name: "non-atomic-commit", cause: causeNonAtomic, n: 9, run: nonAtomic},
	{name: "stale-cache", cause: causeStaleCache, n: 9, run: staleCache},
	{name: "race-no-lock", cause: causeRace, n: 9, run: race},
}

// jobAt books a thread for [t, t+dur] and returns a job on it.
func (f *fleet) jobAt(o *Order, t time.Time, dur time.Duration, msgID string, delivery int, exclude ...*Instance) *job {
	in, th := f.take(span{t, t.Add(dur)}, exclude...)
	return f.newJob(o, in, th, t, msgID, delivery)
}

func (f *fleet) newJob(o *Order, in *Instance, th int, t time.Time, msgID string, delivery int) *job {
	return &job{o: o, c: f.at(in, th, t, o.ID), msgID: msgID, delivery: delivery,
		lockKey: "lock:order:" + o.ID, ttl: ttl, idemKey: "charge:" + o.ID}
}

// deliverUntil hands the message to free workers, each finding the lock busy and
// requeueing it, until free; it returns the job that will get the lock.
func (f *fleet) deliverUntil(o *Order, msgID string, d int, t, free time.Time, dur time.Duration,
	exclude ...*Instance) (*job, int) {
	for {
		if !t.Before(free) {
			return f.jobAt(o, t, dur, msgID, d, exclude...), d
		}
		j := f.jobAt(o, t, 300*time.Millisecond, msgID, d, exclude...)
		j.received(0)
		j.busy(f.ms(2, 6))
		j.nack(f.ms(1, 3), 4000, "lock busy")
		t = j.c.t.Add(4000*time.Millisecond + f.ms(5, 60))
		d++
	}
}

// happy runs lock, check, charge, commit, unlock, ack on j.
func (j *job) happy(f *fleet, latency time.Duration, source string) {
	j.received(0)
	j.lock(f.ms(2, 6))
	j.check(f.ms(1, 4), source)
	j.charge(f.ms(1, 3), latency)
	j.commit(f.ms(5, 20))
	j.release(f.ms(1, 4), true)
	j.ack(f.ms(1, 3))
}

func clean(f *fleet, o *Order, t time.Time) {
	f.jobAt(o, t, 3*time.Second, f.uuid(), 1).happy(f, f.ms(250, 1200), "db")
	o.Note = "one delivery, one charge"
}

func cleanChargeRetried(f *fleet, o *Order, t time.Time) {
	j := f.jobAt(o, t, 12*time.Second, f.uuid(), 1)
	j.received(0)
	j.lock(f.ms(2, 6))
	j.check(f.ms(1, 4), "db")
	errs := []string{"gateway returned 503 Service Unavailable", "gateway timeout after 5000ms (request not sent)"}
	j.chargeFailed(f.ms(1, 3), f.ms(200, 5000), errs[f.rng.IntN(2)])
	back := 1000 + f.rng.IntN(1500)
	j.c.ev(f.ms(1, 3), Event{Step: "retry", Level: "warn", Attempt: 2, BackoffMs: back, Error: "charge failed"})
	j.check(time.Duration(back)*time.Millisecond, "db")
	j.charge(f.ms(1, 3), f.ms(250, 1200))
	j.commit(f.ms(5, 20))
	j.release(f.ms(1, 4), true)
	j.ack(f.ms(1, 3))
	o.Note = "the first charge attempt failed at the gateway (no charge), the retry charged once"
}

// crashAfter runs a job that charges and then loses its process (no unlock, no
// ack); with commit it records the charge first. It returns the job, the kill
// time and when its lock expires.
func crashAfter(f *fleet, o *Order, t time.Time, commit, check bool) (*job, time.Time, time.Time) {
	kill := t.Add(f.ms(2400, 3500))
	back := kill.Add(f.ms(6000, 9000))
	in, th := f.takeCrash(span{t, kill}, back)
	f.restart(in, back)
	j := f.newJob(o, in, th, t, f.uuid(), 1)
	j.received(0)
	j.lock(f.ms(2, 6))
	locked := j.c.t
	if check {
		j.check(f.ms(1, 4), "db")
	}
	j.charge(f.ms(1, 3), f.ms(250, 1500))
	if commit {
		j.commit(f.ms(5, 20))
	}
	j.c.ev(kill.Sub(j.c.t), Event{Step: "killed", Silent: true, Level: "error", Error: "OOMKilled"})
	return j, kill, locked.Add(ttl * time.Millisecond)
}

func cleanRedeliveredSeen(f *fleet, o *Order, t time.Time) {
	a, kill, expiry := crashAfter(f, o, t, true, true)
	b, _ := f.deliverUntil(o, a.msgID, 2, kill.Add(f.ms(100, 600)), expiry, 2*time.Second, a.c.in)
	b.received(0)
	b.lock(f.ms(2, 6))
	b.seen(f.ms(1, 4), "db")
	b.release(f.ms(1, 4), true)
	b.ack(f.ms(1, 3))
	o.Note = "killed after commit, before ack; the redelivery found the record and skipped"
}

func redelivery(f *fleet, o *Order, t time.Time) {
	commit := f.rng.IntN(9) < 5
	a, kill, expiry := crashAfter(f, o, t, commit, false)
	b, _ := f.deliverUntil(o, a.msgID, 2, kill.Add(f.ms(100, 600)), expiry, 3*time.Second, a.c.in)
	b.received(0)
	b.lock(f.ms(2, 6))
	b.charge(f.ms(1, 3), f.ms(250, 1200))
	b.commit(f.ms(5, 20))
	b.release(f.ms(1, 4), true)
	b.ack(f.ms(1, 3))
	o.Note = fmt.Sprintf("flow without an idempotency check; killed after the charge (commit=%v), before ack; "+
		"the redelivery charged again once the dead worker's lock expired", commit)
}

func cleanDuplicateBusy(f *fleet, o *Order, t time.Time) {
	a := f.jobAt(o, t, 4*time.Second, f.uuid(), 1)
	a.happy(f, f.ms(900, 2000), "db")
	b := f.jobAt(o, t.Add(f.ms(150, 600)), 300*time.Millisecond, f.uuid(), 1, a.c.in)
	b.received(0)
	b.busy(f.ms(2, 6))
	b.nack(f.ms(1, 3), 4000, "lock busy")
	c := f.jobAt(o, b.c.t.Add(4000*time.Millisecond+f.ms(5, 60)), 2*time.Second, b.msgID, 2)
	c.received(0)
	c.lock(f.ms(2, 6))
	c.seen(f.ms(1, 4), "db")
	c.release(f.ms(1, 4), true)
	c.ack(f.ms(1, 3))
	o.Note = "published twice; the second delivery found the lock busy, requeued, then found the record"
}

func cleanLockExpiredAlone(f *fleet, o *Order, t time.Time) {
	a := f.jobAt(o, t, 20*time.Second, f.uuid(), 1)
	a.received(0)
	a.lock(f.ms(2, 6))
	a.check(f.ms(1, 4), "db")
	a.charge(f.ms(1, 3), f.ms(11000, 14000))
	a.commit(f.ms(5, 20))
	a.c.ev(f.ms(1, 4), Event{Step: "lock_release_failed", Level: "warn", LockKey: a.lockKey, Token: a.token,
		Error: "lock not held (expired)"})
	a.ack(f.ms(1, 3))
	o.Note = "the gateway was slower than the lock TTL but no other delivery existed: one charge"
}

func cleanCommitRetried(f *fleet, o *Order, t time.Time) {
	a := f.jobAt(o, t, 6*time.Second, f.uuid(), 1)
	a.received(0)
	a.lock(f.ms(2, 6))
	a.check(f.ms(1, 4), "db")
	a.charge(f.ms(1, 3), f.ms(250, 1200))
	a.c.ev(f.ms(5, 30), Event{Step: "commit_failed", Level: "error", IdemKey: a.idemKey,
		Error: "write tcp 10.20.8.4:45122->10.20.0.5:5432: connection reset by peer"})
	a.c.ev(f.ms(1, 3), Event{Step: "retry", Level: "warn", Attempt: 2, BackoffMs: 500, Error: "commit failed"})
	a.commit(f.ms(500, 520))
	a.release(f.ms(1, 4), true)
	a.ack(f.ms(1, 3))
	o.Note = "the commit was retried on its own; the charge was not repeated"
}

func lockExpiry(f *fleet, o *Order, t time.Time) {
	a := f.jobAt(o, t, 30*time.Second, f.uuid(), 1)
	a.received(0)
	a.lock(f.ms(2, 6))
	expiry := a.c.t.Add(ttl * time.Millisecond)
	a.check(f.ms(1, 4), "db")
	aStart := a.c.t
	// the duplicate (the publisher's retry) arrives meanwhile and waits on the lock
	b, _ := f.deliverUntil(o, f.uuid(), 1, t.Add(f.ms(1000, 3000)), expiry, 3*time.Second, a.c.in)
	b.received(0)
	b.lock(f.ms(2, 6))
	b.check(f.ms(1, 4), "db")
	b.charge(f.ms(1, 3), f.ms(250, 900))
	b.commit(f.ms(5, 20))
	b.release(f.ms(1, 4), true)
	b.ack(f.ms(1, 3))
	// a's gateway call outlives the TTL and the other worker's check
	latency := b.c.t.Sub(aStart) + f.ms(1500, 6000)
	a.c.t = aStart
	a.charge(f.ms(1, 3), latency)
	a.commit(f.ms(5, 20))
	a.c.ev(f.ms(1, 4), Event{Step: "lock_release_failed", Level: "warn", LockKey: a.lockKey, Token: a.token,
		Error: "lock not held (expired)"})
	a.ack(f.ms(1, 3))
	o.Note = "the first worker's charge took longer than the lock's TTL; the duplicate delivery took the " +
		"expired lock, found no record and charged; then the first charge completed"
}

func lockKeyPerDelivery(random bool) func(*fleet, *Order, time.Time) {
	return func(f *fleet, o *Order, t time.Time) {
		a := f.jobAt(o, t, 5*time.Second, f.uuid(), 1)
		b := f.jobAt(o, t.Add(f.ms(50, 700)), 5*time.Second, f.uuid(), 1, a.c.in)
		for _, j := range []*job{a, b} {
			j.lockKey = "lock:job:" + j.msgID
			if random {
				j.lockKey = "lock:" + f.uuid()
			}
		}
		a.happy(f, f.ms(1200, 2500), "db")
		b.happy(f, f.ms(300, 1200), "db")
		o.Note = "published twice; each delivery locked a key of its own (" + map[bool]string{false: "the job id",
			true: "a random id"}[random] + "), so both got a lock, both found no record, both charged"
	}
}

func unlockWithoutToken(f *fleet, o *Order, t time.Time) {
	a := f.jobAt(o, t, 10*time.Second, f.uuid(), 1)
	a.received(0)
	a.lock(f.ms(2, 6))
	a.check(f.ms(1, 4), "db")
	aStart := a.c.t
	b := f.jobAt(o, t.Add(f.ms(300, 1200)), 400*time.Millisecond, f.uuid(), 1, a.c.in)
	b.received(0)
	b.busy(f.ms(2, 6))
	b.release(f.ms(1, 3), false) // the finally block's DEL: a's lock is gone
	b.nack(f.ms(1, 3), 1000, "lock busy")
	c := f.jobAt(o, b.c.t.Add(1000*time.Millisecond+f.ms(5, 60)), 3*time.Second, b.msgID, 2, a.c.in)
	c.received(0)
	c.lock(f.ms(2, 6))
	c.check(f.ms(1, 4), "db")
	c.charge(f.ms(1, 3), f.ms(250, 700))
	c.commit(f.ms(5, 20))
	c.release(f.ms(1, 4), false)
	c.ack(f.ms(1, 3))
	a.c.t = aStart
	a.charge(f.ms(1, 3), c.c.t.Sub(aStart)+f.ms(300, 2500))
	a.commit(f.ms(5, 20))
	a.release(f.ms(1, 4), false)
	a.ack(f.ms(1, 3))
	if a.c.t.Sub(aStart) > ttl*time.Millisecond {
		panic("unlock scenario outlived the TTL")
	}
	o.Note = "a duplicate delivery found the lock busy and its cleanup deleted the lock without a token; " +
		"its redelivery then got the lock while the first worker was still charging"
}

func unstableKey(f *fleet, o *Order, t time.Time) {
	inProcess := f.rng.IntN(9) < 5
	a := f.jobAt(o, t, 8*time.Second, f.uuid(), 1)
	if inProcess {
		a.idemKey = fmt.Sprintf("charge:%s:%d", o.ID, t.UnixMilli())
	} else {
		a.idemKey = fmt.Sprintf("%s-attempt-1", o.ID)
	}
	a.received(0)
	a.lock(f.ms(2, 6))
	a.check(f.ms(1, 4), "db")
	a.charge(f.ms(1, 3), f.ms(250, 1200))
	a.commit(f.ms(5, 20))
	errs := []string{"smtp: 421 4.7.0 try again later", "publish receipt.created: channel closed"}
	a.c.ev(f.ms(20, 200), Event{Step: "receipt_failed", Level: "error", Error: errs[f.rng.IntN(2)]})
	if inProcess {
		back := 1000 + f.rng.IntN(2000)
		a.c.ev(f.ms(1, 3), Event{Step: "retry", Level: "warn", Attempt: 2, BackoffMs: back, Error: "receipt failed"})
		a.c.t = a.c.t.Add(time.Duration(back) * time.Millisecond)
		a.idemKey = fmt.Sprintf("charge:%s:%d", o.ID, a.c.t.UnixMilli())
		a.check(0, "db")
		a.charge(f.ms(1, 3), f.ms(250, 1200))
		a.commit(f.ms(5, 20))
		a.release(f.ms(1, 4), true)
		a.ack(f.ms(1, 3))
		o.Note = "the idempotency key carries the attempt's clock; the in-process retry after a failed " +
			"receipt used a new key, found no record and charged again"
		return
	}
	a.release(f.ms(1, 4), true)
	a.nack(f.ms(1, 3), 0, "receipt failed")
	b := f.jobAt(o, a.c.t.Add(f.ms(20, 300)), 3*time.Second, a.msgID, 2, a.c.in)
	b.idemKey = fmt.Sprintf("%s-attempt-2", o.ID)
	b.happy(f, f.ms(250, 1200), "db")
	o.Note = "the idempotency key carries the delivery attempt; the redelivery after a failed receipt " +
		"used a new key, found no record and charged again"
}

func nonAtomic(f *fleet, o *Order, t time.Time) {
	inProcess := f.rng.IntN(9) < 5
	a := f.jobAt(o, t, 8*time.Second, f.uuid(), 1)
	a.received(0)
	a.lock(f.ms(2, 6))
	a.check(f.ms(1, 4), "db")
	a.charge(f.ms(1, 3), f.ms(250, 1200))
	errs := []string{"pq: could not serialize access due to concurrent update",
		"dial tcp 10.20.0.5:5432: i/o timeout"}
	a.c.ev(f.ms(5, 3000), Event{Step: "commit_failed", Level: "error", IdemKey: a.idemKey, Error: errs[f.rng.IntN(2)]})
	if inProcess {
		back := 1000 + f.rng.IntN(2000)
		a.c.ev(f.ms(1, 3), Event{Step: "retry", Level: "warn", Attempt: 2, BackoffMs: back, Error: "commit failed"})
		a.check(time.Duration(back)*time.Millisecond, "db")
		a.charge(f.ms(1, 3), f.ms(250, 1200))
		a.commit(f.ms(5, 20))
		a.release(f.ms(1, 4), true)
		a.ack(f.ms(1, 3))
		o.Note = "the charge and its record are not one transaction: the record's commit failed and the " +
			"job retried from the top, found no record and charged again"
		return
	}
	a.release(f.ms(1, 4), true)
	a.nack(f.ms(1, 3), 0, "commit failed")
	b := f.jobAt(o, a.c.t.Add(f.ms(20, 300)), 3*time.Second, a.msgID, 2, a.c.in)
	b.happy(f, f.ms(250, 1200), "db")
	o.Note = "the charge and its record are not one transaction: the record's commit failed, the " +
		"message was requeued, and its redelivery found no record and charged again"
}

func staleCache(f *fleet, o *Order, t time.Time) {
	a := f.jobAt(o, t, 3*time.Second, f.uuid(), 1)
	a.happy(f, f.ms(250, 1200), "cache")
	b := f.jobAt(o, a.c.t.Add(f.ms(200, 1500)), 3*time.Second, f.uuid(), 1)
	b.happy(f, f.ms(250, 1200), "cache")
	o.Note = "published twice; the second delivery came after the first committed and unlocked, but its " +
		"check read the cache, which did not have the record yet"
}

func race(f *fleet, o *Order, t time.Time) {
	a := f.jobAt(o, t, 4*time.Second, f.uuid(), 1)
	b := f.jobAt(o, t.Add(f.ms(50, 500)), 4*time.Second, f.uuid(), 1, a.c.in)
	for i, j := range []*job{a, b} {
		j.received(0)
		j.check(f.ms(1, 4), "db")
		j.charge(f.ms(1, 3), []time.Duration{f.ms(900, 2000), f.ms(300, 1200)}[i])
		j.commit(f.ms(5, 20))
		j.ack(f.ms(1, 3))
	}
	o.Note = "published twice; this flow takes no lock: both deliveries checked before either committed"
}
