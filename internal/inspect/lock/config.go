package lock

import (
	"slices"
	"time"

	"github.com/dupctl/dupctl/internal/platform/config"
)

// Defaults are the options of a run given nothing but its target: what
// `inspect lock`'s flags start from, and what doctor runs with.
func Defaults() Options {
	return Options{Count: 1000, Top: 20, Observe: 1, Interval: 30 * time.Second, IdleAfter: 5 * time.Minute, MaxTTL: time.Hour,
		FailoverWait: DefaultFailoverWait, MinConfidence: DefaultMinConfidence}
}

// Configure adds what dupctl.yaml says to o: the locks it names
// (locks.patterns and locks.libraries), and for job j (nil: none) its
// lock_pattern as the keys considered and as keys that are locks whatever
// their shape (the job says so), and ten times its lock_ttl as {MaxTTL}.
// given says which options the user set (a flag), which the job does not
// override; nil: none. `inspect lock` and doctor both configure a run
// here, so a key one calls a lock the other does too.
func (o *Options) Configure(locks config.Locks, j *config.Job, given func(field string) bool) {
	if given == nil {
		given = func(string) bool { return false }
	}
	if j != nil && !given("Key") && !given("All") {
		if j.LockPattern != "" && !given("Patterns") {
			o.Patterns = []string{j.LockPattern}
		}
		if j.LockTTL > 0 && !given("MaxTTL") {
			// A lock family held ten times the job's own TTL is long.
			o.MaxTTL = 10 * time.Duration(j.LockTTL)
		}
	}
	o.LockPatterns = append(o.LockPatterns, locks.Patterns...)
	for _, l := range locks.Libraries {
		o.Libraries = append(o.Libraries, UserLibrary{ID: l.ID, Library: l.Library, Role: l.Role, Match: l.Match, Type: l.Type,
			Format: l.Format, TTL: l.TTL, Shared: l.Shared, NameOnly: l.NameOnly, Note: l.Note})
	}
	if j != nil && j.LockPattern != "" && !slices.Contains(o.LockPatterns, j.LockPattern) {
		o.LockPatterns = append(o.LockPatterns, j.LockPattern)
	}
}
