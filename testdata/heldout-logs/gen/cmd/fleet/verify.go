package main

import (
	"fmt"
	"time"
)

// verify checks, from the finished script alone, that each planted cause is
// physically true in it (and refuses to write a script where one is not).
func (f *fleet) verify() error {
	byOrder := map[string][]Event{}
	for _, e := range f.events {
		if e.Order != "" {
			byOrder[e.Order] = append(byOrder[e.Order], e)
		}
	}
	for _, o := range f.orders {
		evs := byOrder[o.ID]
		if n := count(evs, "charge"); n != o.Effects {
			return fmt.Errorf("%s: %d charge events, truth says %d", o.ID, n, o.Effects)
		}
		if err := verifyCause(o, evs); err != nil {
			return fmt.Errorf("%s (%s): %w", o.ID, o.Scenario, err)
		}
	}
	return nil
}

func count(evs []Event, step string) int {
	n := 0
	for _, e := range evs {
		if e.Step == step {
			n++
		}
	}
	return n
}

func all(evs []Event, step string) []Event {
	var out []Event
	for _, e := range evs {
		if e.Step == step {
			out = append(out, e)
		}
	}
	return out
}

func ttlOf(e Event) time.Duration { return time.Duration(e.TTLms) * time.Millisecond }

func verifyCause(o *Order, evs []Event) error {
	charges, checks, commits := all(evs, "charge"), all(evs, "idem_check"), all(evs, "commit")
	locks := all(evs, "lock_acquired")
	switch o.Cause {
	case causeRedelivery:
		if count(evs, "killed") != 1 || len(checks) != 0 || !charges[0].T.Before(all(evs, "killed")[0].T) {
			return fmt.Errorf("want a kill after the first charge and no idempotency check")
		}
		if r := all(evs, "received"); !r[len(r)-1].Redelivered {
			return fmt.Errorf("the second charge's delivery is not a redelivery")
		}
	case causeLockExpiry:
		first := locks[0]
		if !locks[1].T.After(first.T.Add(ttlOf(first))) {
			return fmt.Errorf("the second lock came before the first one's TTL passed")
		}
		late := charges[len(charges)-1]
		if late.Instance != first.Instance || !late.T.After(first.T.Add(ttlOf(first))) {
			return fmt.Errorf("the first holder's charge is not after its TTL")
		}
	case causeLockKeyJob:
		if locks[0].LockKey == locks[1].LockKey || !checks[1].T.Before(commits[0].T) {
			return fmt.Errorf("want two lock keys and both checks before the first commit")
		}
	case causeUnlock:
		rel := all(evs, "lock_released")[0]
		if rel.Token != "" || !rel.T.Before(locks[1].T) || !locks[1].T.Before(locks[0].T.Add(ttlOf(locks[0]))) {
			return fmt.Errorf("want a tokenless release, then the second lock, all within the first lock's TTL")
		}
	case causeUnstable:
		if checks[0].IdemKey == checks[1].IdemKey || !commits[0].T.Before(checks[1].T) {
			return fmt.Errorf("want a committed first key and a different second key")
		}
	case causeNonAtomic:
		cf := all(evs, "commit_failed")
		if len(cf) != 1 || checks[0].IdemKey != checks[1].IdemKey || !cf[0].T.Before(checks[1].T) {
			return fmt.Errorf("want one failed commit before the second check of the same key")
		}
	case causeStaleCache:
		if checks[1].Source != "cache" || !commits[0].T.Before(checks[1].T) {
			return fmt.Errorf("want the second check to read the cache after the first commit")
		}
	case causeRace:
		if len(locks) != 0 || !checks[1].T.Before(commits[0].T) {
			return fmt.Errorf("want no lock and both checks before the first commit")
		}
	}
	return nil
}
