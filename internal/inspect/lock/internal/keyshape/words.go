package keyshape

import "strings"

// lockWords name locks in key names. "locked" and "blocked" are left out:
// they name a state (an account locked), not a lock.
var lockWords = words(`lock locks mutex mutexes lease leases semaphore semaphores redlock redsync shedlock`)

// otherWords name the data that shares a Redis with locks.
var otherWords = words(`session sessions sess cache cached caches status state stats stat statistics count counts counter
counters total totals metric metrics offset views hits rate ratelimit ratelimiter throttle quota limit limits config
settings profile profiles prefs preferences csrf xsrf otp jwt token tokens auth refresh idem idempotency response
responses result results cart queue leaderboard score scores feed inbox notification notifications`)

// NameWords splits a key into words - at punctuation, between letters
// and digits, and at camelCase humps - and reports whether one names a
// lock and whether one names other data. "clock", "deadlock_count" and
// "blockedBy" hold no lock word.
func NameWords(key string) (lock, other bool) {
	var buf [24]byte
	n := 0
	flush := func() {
		if n > 0 && n <= len(buf) {
			w := string(buf[:n]) // no allocation for a map lookup
			lock = lock || lockWords[w]
			other = other || otherWords[w]
		}
		n = 0
	}
	for i := 0; i < len(key); i++ {
		c := key[i]
		upper, lower, digit := c >= 'A' && c <= 'Z', c >= 'a' && c <= 'z', c >= '0' && c <= '9'
		if !upper && !lower {
			flush()
			if !digit {
				continue
			}
			for i+1 < len(key) && key[i+1] >= '0' && key[i+1] <= '9' {
				i++
			}
			continue
		}
		if upper {
			if camelStart(key, i) {
				flush()
			}
			c += 'a' - 'A'
		}
		if n < len(buf) {
			buf[n] = c
		}
		n++
	}
	flush()
	return lock, other
}

// camelStart reports whether the upper-case letter at i starts a word:
// after a lower-case letter (orderLock), or the last capital before a
// lower-case one (HTTPLock).
func camelStart(key string, i int) bool {
	if i == 0 {
		return false
	}
	p := key[i-1]
	prevLower := p >= 'a' && p <= 'z'
	nextLower := i+1 < len(key) && key[i+1] >= 'a' && key[i+1] <= 'z'
	return prevLower || (p >= 'A' && p <= 'Z' && nextLower)
}

func words(s string) map[string]bool {
	m := map[string]bool{}
	for _, w := range strings.Fields(s) {
		m[w] = true
	}
	return m
}
