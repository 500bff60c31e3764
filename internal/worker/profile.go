package worker

import (
	"fmt"
	"strings"
)

// LockKey says what the lock key is built from.
type LockKey uint8

const (
	LockKeyBusiness LockKey = iota // lock:payment:order:<orderId>: the practice's rule
	LockKeyJob                     // lock:<jobId>: a random id, one lock per message
)

// Unlock says how a lock is released.
type Unlock uint8

const (
	UnlockCAS Unlock = iota // compare-and-delete Lua script: only the holder's token deletes
	UnlockDel               // plain DEL by key, also on the lock-busy path (defer unlock())
)

// Idem is the idempotency strategy.
type Idem uint8

const (
	IdemNone  Idem = iota // no ledger at all
	IdemCheck             // read status, act if not done, write SUCCEEDED after (check-then-act)
	IdemClaim             // atomic INSERT ... PROCESSING first; a conflict is treated as done
	IdemTxn               // side effect and SUCCEEDED record in one transaction
)

// KeyMode says whether the idempotency key is stable across deliveries.
type KeyMode uint8

const (
	KeyStable     KeyMode = iota // payment:<orderId>
	KeyPerAttempt                // includes the attempt or a fresh UUID per delivery
)

// StatusFrom says where "already done?" is read.
type StatusFrom uint8

const (
	StatusDB      StatusFrom = iota // the source of truth
	StatusCache                     // a cache that lags the database
	StatusReplica                   // a streaming read replica that replays the database's writes late
)

// StatusWrite says whether a status write may regress SUCCEEDED.
type StatusWrite uint8

const (
	StatusGuarded   StatusWrite = iota // UPDATE ... WHERE status <> 'SUCCEEDED'
	StatusOverwrite                    // a late FAILED overwrites SUCCEEDED
)

// AckMode says when the message is acknowledged.
type AckMode uint8

const (
	AckAfter  AckMode = iota // after the status commit: at-least-once
	AckBefore                // on receipt: at-most-once, loses work on a crash
)

// Profile is one combination of mitigations.
type Profile struct {
	Name        string
	Lock        bool
	LockKey     LockKey
	Unlock      Unlock
	Renew       bool // extend the lock while working, only while the token is ours
	Fence       bool // INCR a fencing token with the lock; the sink rejects older tokens
	Idem        Idem
	Key         KeyMode
	StatusFrom  StatusFrom
	StatusWrite StatusWrite
	Ack         AckMode
	Summary     string
}

// Profiles are the named bundles, from the naive consumer to the practice's
// safe flow. The order is the matrix's column order.
func Profiles() []Profile {
	return []Profile{
		{Name: "naive", Idem: IdemNone, StatusWrite: StatusOverwrite,
			Summary: "no lock, no idempotency, ack after the work"},
		{Name: "lock-only", Lock: true, Idem: IdemNone, StatusWrite: StatusOverwrite,
			Summary: "business-key lock with token unlock, no idempotency"},
		{Name: "check", Idem: IdemCheck, StatusWrite: StatusOverwrite,
			Summary: "no lock; check status in the database, act, then record SUCCEEDED"},
		{Name: "lock-check", Lock: true, Idem: IdemCheck, StatusWrite: StatusOverwrite,
			Summary: "business-key lock + check-then-act: the common pattern"},
		{Name: "lock-jobid", Lock: true, LockKey: LockKeyJob, Idem: IdemCheck, StatusWrite: StatusOverwrite,
			Summary: "lock key built from the job id + check-then-act"},
		{Name: "lock-del", Lock: true, Unlock: UnlockDel, Idem: IdemCheck, StatusWrite: StatusOverwrite,
			Summary: "lock released with plain DEL (also on the lock-busy path) + check-then-act"},
		{Name: "lock-fence", Lock: true, Fence: true, Idem: IdemCheck, StatusWrite: StatusOverwrite,
			Summary: "lock + fencing token checked by the sink + check-then-act"},
		{Name: "lock-renew", Lock: true, Renew: true, Idem: IdemCheck, StatusWrite: StatusOverwrite,
			Summary: "lock renewed while working + check-then-act"},
		{Name: "claim", Lock: true, Idem: IdemClaim, StatusWrite: StatusGuarded,
			Summary: "lock + atomic claim (INSERT PROCESSING) before the effect; conflict = done"},
		{Name: "ack-first", Lock: true, Idem: IdemCheck, StatusWrite: StatusOverwrite, Ack: AckBefore,
			Summary: "lock + check-then-act, but the message is acked on receipt"},
		{Name: "cache", Lock: true, Idem: IdemCheck, StatusFrom: StatusCache, StatusWrite: StatusOverwrite,
			Summary: "lock + check-then-act reading status from a lagging cache"},
		{Name: "replica", Lock: true, Idem: IdemCheck, StatusFrom: StatusReplica, StatusWrite: StatusOverwrite,
			Summary: "lock + check-then-act reading status from a read replica that lags the primary"},
		{Name: "txn", Idem: IdemTxn, StatusWrite: StatusOverwrite,
			Summary: "no lock; effect + SUCCEEDED in one transaction; FAILED may overwrite SUCCEEDED"},
		{Name: "per-attempt", Lock: true, Idem: IdemTxn, Key: KeyPerAttempt, StatusWrite: StatusGuarded,
			Summary: "lock + transaction, but the idempotency key changes per delivery"},
		{Name: "safe", Lock: true, Renew: true, Idem: IdemTxn, StatusWrite: StatusGuarded,
			Summary: "the safe flow: business-key lock with token unlock and renewal, effect + record in one transaction, stable key, " +
				"status from the database, guarded writes, ack after commit"},
	}
}

// ProfileByName returns a named profile.
func ProfileByName(name string) (Profile, error) {
	for _, p := range Profiles() {
		if p.Name == name {
			return p, nil
		}
	}
	return Profile{}, fmt.Errorf("unknown profile %q: want one of %s", name, strings.Join(ProfileNames(), ", "))
}

// ProfileNames lists the profile names in order.
func ProfileNames() []string {
	var out []string
	for _, p := range Profiles() {
		out = append(out, p.Name)
	}
	return out
}

// Switches are the single-mitigation flags; Set applies one by name.
var Switches = []struct{ Name, Values, Help string }{
	{"lock", "on|off", "take a Redis lock before the work"},
	{"lock-key", "business|job", "build the lock key from the business key or the job id"},
	{"unlock", "cas|del", "release with compare-and-delete or plain DEL"},
	{"renew", "on|off", "renew the lock while working, only while the token is ours"},
	{"fence", "on|off", "fencing token checked by the sink"},
	{"idem", "none|check|claim|txn", "idempotency strategy"},
	{"key", "stable|per-attempt", "idempotency key stable across deliveries or not"},
	{"status", "db|cache|replica", "read \"already done?\" from the database, a lagging cache or a lagging read replica"},
	{"status-write", "guarded|overwrite", "may a FAILED write overwrite SUCCEEDED"},
	{"ack", "after|before", "ack after the status commit or on receipt"},
}

// Set changes one mitigation switch.
func (p *Profile) Set(name, value string) error {
	bad := func() error {
		for _, s := range Switches {
			if s.Name == name {
				return fmt.Errorf("--%s: unknown value %q: want %s", name, value, s.Values)
			}
		}
		return fmt.Errorf("unknown mitigation switch %q", name)
	}
	onOff := func(dst *bool) error {
		switch value {
		case "on", "true", "yes":
			*dst = true
		case "off", "false", "no":
			*dst = false
		default:
			return bad()
		}
		return nil
	}
	var err error
	switch name {
	case "lock":
		err = onOff(&p.Lock)
	case "renew":
		err = onOff(&p.Renew)
	case "fence":
		err = onOff(&p.Fence)
	case "lock-key":
		err = pick(value, &p.LockKey, bad, "business", "job")
	case "unlock":
		err = pick(value, &p.Unlock, bad, "cas", "del")
	case "idem":
		err = pick(value, &p.Idem, bad, "none", "check", "claim", "txn")
	case "key":
		err = pick(value, &p.Key, bad, "stable", "per-attempt")
	case "status":
		err = pick(value, &p.StatusFrom, bad, "db", "cache", "replica")
	case "status-write":
		err = pick(value, &p.StatusWrite, bad, "guarded", "overwrite")
	case "ack":
		err = pick(value, &p.Ack, bad, "after", "before")
	default:
		return bad()
	}
	if err != nil {
		return err
	}
	p.Name = "custom"
	p.Summary = p.Describe()
	return nil
}

func pick[T ~uint8](value string, dst *T, bad func() error, names ...string) error {
	for i, n := range names {
		if n == value {
			*dst = T(i)
			return nil
		}
	}
	return bad()
}

// Describe lists the profile's switches, e.g.
// "lock=on lock-key=business unlock=cas renew=off fence=off idem=txn ...".
func (p Profile) Describe() string {
	onOff := func(b bool) string {
		if b {
			return "on"
		}
		return "off"
	}
	return fmt.Sprintf("lock=%s lock-key=%s unlock=%s renew=%s fence=%s idem=%s key=%s status=%s status-write=%s ack=%s",
		onOff(p.Lock), []string{"business", "job"}[p.LockKey], []string{"cas", "del"}[p.Unlock],
		onOff(p.Renew), onOff(p.Fence), []string{"none", "check", "claim", "txn"}[p.Idem],
		[]string{"stable", "per-attempt"}[p.Key], []string{"db", "cache", "replica"}[p.StatusFrom],
		[]string{"guarded", "overwrite"}[p.StatusWrite], []string{"after", "before"}[p.Ack])
}
