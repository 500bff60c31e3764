package judge

import (
	"fmt"
	"strings"
	"time"

	"github.com/dupctl/dupctl/internal/inspect/lock/internal/keyspace"
)

// A lease renewed while the scan reads it (Redisson's watchdog re-sets
// 30 s every 10 s; a 100 ms lease re-set every 50 ms) can read far below
// its family's TTL at the instant of the scan. So the keys a family would
// report far below are read again a moment later (the lock package reads
// them): a TTL that went up under the same owner was renewed, another
// owner or no key at all means the lock was re-taken or released - none
// of them is an outlier. Only a key whose TTL only fell stays one. A long
// TTL is no safer for being renewed, so keys far above are not read again.

// lowKept is how many of a family's lowest granted TTLs are kept with
// their reads, to be read again.
const lowKept = 16

// TTLSuspect is a key whose granted TTL is far below its family's, with
// what the scan read of it.
type TTLSuspect struct {
	Key, Node string
	PTTL      int64     // ms, at the scan's read
	Token     uint64    // keyspace.Key.Token at the scan's read (0: value not read)
	At        time.Time // when that read's replies had arrived
	fam       *Tally
}

// Reread is what a suspect's second read says.
type Reread int

const (
	StillLow Reread = iota // its TTL only fell: an outlier
	Renewed                // the same owner, and a TTL that went up
	Retaken                // another owner
	Gone                   // released, expired, or re-taken and released
)

// ShortTTLSuspects are the family's keys that would be reported far below
// its TTL (only of a family whose findings are judged).
func (f *Tally) ShortTTLSuspects(minConfidence float64) []TTLSuspect {
	if f.lockish == 0 || f.granted.count < minSiblings || f.Certainty(minConfidence) < Likely {
		return nil
	}
	var out []TTLSuspect
	for _, k := range f.ttlOutliers(f.ttlStats().GrantedMedianMs, false) {
		if k.at.IsZero() {
			continue // not read by a walk (no time to reckon from)
		}
		out = append(out, TTLSuspect{Key: k.key, Node: k.node, PTTL: k.pttl, Token: k.token, At: k.at, fam: f})
	}
	return out
}

// Judge says what a suspect's second read means: now is that read (nil:
// the key is gone), sent when it was sent. Untouched, a key's PTTL falls
// by at least the time between the two reads (less 1 ms of rounding); a
// PTTL above that was set again. A key gone or held by another owner
// after its TTL would have run out anyway tells nothing of renewal (it
// may just have expired): it stays low.
func (s TTLSuspect) Judge(now *keyspace.Key, sent time.Time) Reread {
	expired := s.PTTL >= 0 && sent.Sub(s.At).Milliseconds() >= s.PTTL
	switch {
	case (now == nil || s.Token != 0 && now.Token() != s.Token) && expired:
		return StillLow
	case now == nil:
		return Gone
	case s.Token != 0 && now.Token() != s.Token:
		return Retaken
	case now.PTTL < 0 || now.PTTL > s.PTTL-sent.Sub(s.At).Milliseconds()+1:
		return Renewed
	}
	return StillLow
}

// Record notes a second read in the suspect's family: a key renewed,
// re-taken or gone is no outlier.
func (s TTLSuspect) Record(r Reread) { s.fam.mark(s.Key, r) }

// rereads counts the family's second reads by what they found.
func (f *Tally) rereads() (renewed, retaken, gone int64) {
	for _, r := range f.reread {
		switch r {
		case Renewed:
			renewed++
		case Retaken:
			retaken++
		case Gone:
			gone++
		}
	}
	return renewed, retaken, gone
}

func (f *Tally) mark(key string, r Reread) {
	if f.reread == nil {
		f.reread = map[string]Reread{}
	}
	f.reread[key] = r
}

// rereadText words the family's second reads: "2 renewed (the same owner,
// a TTL that went up), 1 re-taken (another owner)".
func (f *Tally) rereadText() string {
	return RereadText(f.rereads())
}

// RereadText words counts of second reads.
func RereadText(renewed, retaken, gone int64) string {
	return rereadWords(renewed, retaken, gone, true)
}

// RereadShort words them in a table cell: "2 renewed, 1 re-taken".
func RereadShort(renewed, retaken, gone int64) string {
	return rereadWords(renewed, retaken, gone, false)
}

func rereadWords(renewed, retaken, gone int64, long bool) string {
	var parts []string
	for _, c := range []struct {
		n           int64
		short, long string
	}{{renewed, "renewed", " (the same owner, a TTL that went up)"}, {retaken, "re-taken", " (another owner)"},
		{gone, "gone", " (released, or expired)"}} {
		if c.n > 0 {
			text := fmt.Sprintf("%d %s", c.n, c.short)
			if long {
				text += c.long
			}
			parts = append(parts, text)
		}
	}
	return strings.Join(parts, ", ")
}
