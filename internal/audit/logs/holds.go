package logs

import (
	"regexp"
	"strings"
	"time"
)

// LockHold is one lock hold read from a key's timeline: from its
// acquisition to where the key was released, lost, deleted by another
// worker or taken over, or where its holder crashed or logged its last
// line. A holder whose key another worker took goes on as its holder
// until its own release or last line (issue 44: a lock-expiry holder's
// 600 ms of work after its lease ended was unmarked).
type LockHold struct {
	Lane    int
	Key     string // "" when the acquisition named none
	FromRow int    // the acquisition's row
	From    time.Duration
	To      time.Duration
	How     string // how it ended, in words
	Crashed bool
	// TTL is the lease the acquisition logged (0: none logged).
	TTL time.Duration
}

// Key is the key= a row's detail names (a lock's, or an idempotency
// key's), or "".
func (r TimelineRow) Key() string {
	if m := keyInDetail.FindStringSubmatch(r.Detail); m != nil {
		return m[1]
	}
	return ""
}

var (
	keyInDetail = regexp.MustCompile(`\bkey=(\S+)`)
	ttlInDetail = regexp.MustCompile(`\bttl=([0-9][0-9a-zµ.]*)`)
)

// leaseTTL is the ttl= an acquisition's detail names (0: none).
func leaseTTL(detail string) time.Duration {
	m := ttlInDetail.FindStringSubmatch(detail)
	if m == nil {
		return 0
	}
	ttl, err := time.ParseDuration(m[1])
	if err != nil {
		return 0
	}
	return ttl
}

// LockHolds reads the lock holds of every worker (lanes 0..workers-1)
// from rows in time order, and which release lines (by row) deleted a
// lock their worker did not hold or carried no token, in words.
func LockHolds(rows []TimelineRow, workers int) ([]LockHold, map[int]string) {
	h := &holdScan{rows: rows, open: map[string]int{}, taken: map[laneKey]int{}, foreign: map[int]string{},
		lastLine: make([]time.Duration, workers)}
	for i, r := range rows {
		t, k := r.Offset, r.Key()
		h.lastLine[r.Lane] = t
		switch r.Event {
		case "lock_acquired":
			h.acquired(i, r, t, k)
		case "lock_released":
			h.released(i, r, t, k)
		case "lock_lost", "crash":
			h.stopped(r, t, k)
		}
	}
	for key, j := range h.open {
		h.closeHold(key, h.lastLine[h.holds[j].Lane], "no release logged (its last line)", false)
	}
	for lk, j := range h.taken {
		h.closeTaken(lk, h.lastLine[lk.lane], h.holds[j].How+", it went on to its last line", false)
	}
	return h.holds, h.foreign
}

// holdScan reads lock holds line by line.
type holdScan struct {
	rows     []TimelineRow
	holds    []LockHold
	open     map[string]int // lock key -> index in holds
	taken    map[laneKey]int
	foreign  map[int]string
	lastLine []time.Duration
}

// laneKey is one worker's hold of one lock key.
type laneKey struct {
	lane int
	key  string
}

func (h *holdScan) closeHold(k string, t time.Duration, how string, crashed bool) {
	if i, ok := h.open[k]; ok {
		h.holds[i].To, h.holds[i].How, h.holds[i].Crashed = t, how, crashed
		delete(h.open, k)
	}
}

func (h *holdScan) closeTaken(lk laneKey, t time.Duration, how string, crashed bool) {
	if i, ok := h.taken[lk]; ok {
		h.holds[i].To, h.holds[i].How, h.holds[i].Crashed = t, how, crashed
		delete(h.taken, lk)
	}
}

func (h *holdScan) acquired(i int, r TimelineRow, t time.Duration, k string) {
	if j, ok := h.open[k]; ok {
		if h.holds[j].Lane == r.Lane {
			h.closeHold(k, t, "acquired again", false)
		} else {
			h.holds[j].How = "taken over by " + r.Worker
			h.taken[laneKey{h.holds[j].Lane, k}] = j
			delete(h.open, k)
		}
	}
	h.closeTaken(laneKey{r.Lane, k}, t, "acquired again", false)
	h.open[k] = len(h.holds)
	h.holds = append(h.holds, LockHold{Lane: r.Lane, Key: k, FromRow: i, From: t, TTL: leaseTTL(r.Detail)})
}

func (h *holdScan) released(i int, r TimelineRow, t time.Duration, k string) {
	if j, ok := h.taken[laneKey{r.Lane, k}]; ok {
		h.closeTaken(laneKey{r.Lane, k}, t, "released after it was "+h.holds[j].How, false)
	}
	j, held := h.open[k]
	switch {
	case held && h.holds[j].Lane != r.Lane:
		h.foreign[i] = "DEL of " + h.rows[h.holds[j].FromRow].Worker + "'s lock"
		h.closeHold(k, t, "deleted by "+r.Worker, false)
	case strings.Contains(r.Detail, "token=(none)"):
		h.foreign[i] = "DEL without token"
		h.closeHold(k, t, "deleted without token", false)
	case !held:
		h.foreign[i] = "DEL of a lock it did not hold"
	default:
		h.closeHold(k, t, "released", false)
	}
}

// stopped ends the holds a lock_lost (of its key, or every one when it
// names none) or a crash ends.
func (h *holdScan) stopped(r TimelineRow, t time.Duration, k string) {
	how := map[string]string{"lock_lost": "lost", "crash": r.Worker + " crashed"}[r.Event]
	crashed := r.Event == "crash"
	for lk := range h.taken {
		if lk.lane == r.Lane && (crashed || k == "" || k == lk.key) {
			h.closeTaken(lk, t, how, crashed)
		}
	}
	for key, j := range h.open {
		if h.holds[j].Lane == r.Lane && (crashed || k == "" || k == key) {
			h.closeHold(key, t, how, crashed)
		}
	}
}
