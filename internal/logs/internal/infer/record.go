package infer

// Role is the step of the worker flow a message template records. The
// names are the reader's kind names (internal/logs), which maps them.
type Role uint8

// The roles a template can be given. RoleNone: no step (a heartbeat, a
// start line) or not decided.
const (
	RoleNone Role = iota
	RoleReceived
	RoleLockAcquired
	RoleLockFailed
	RoleLockReleased
	RoleCheck
	RoleDuplicate
	RoleClaimed
	RoleSideEffect
	RoleCommitted
	RoleAcked
	RoleRetry
	RoleFailed
	RoleDeadLettered
	RoleCrash
	RoleCompleted
	RoleLockLost
	numRoles
)

var roleNames = [numRoles]string{
	"other", "received", "lock_acquired", "lock_failed", "lock_released", "check",
	"duplicate_caught", "claimed", "side_effect", "committed", "acked", "retry",
	"failed", "dead_lettered", "crash", "completed", "lock_lost",
}

func (r Role) String() string {
	if r < numRoles {
		return roleNames[r]
	}
	return "other"
}

// NumRoles is how many roles there are (RoleNone included).
const NumRoles = int(numRoles)

// RoleByName is the role of a kind name ("side_effect"), RoleNone when none.
func RoleByName(s string) Role {
	for i, n := range roleNames {
		if n == s {
			return Role(i)
		}
	}
	return RoleNone
}

// KV is one field of a sampled line: its key (a JSON path, a logfmt or
// key=value key, or a layout's slot: "@prefix.instance", "@thread", ...)
// and its value as written.
type KV struct{ Key, Value string }

// Record is one sampled line as the reader took it apart: every field it
// carries, its message, and what the reader's vocabulary made of it (a
// hint: the inference weighs it against where the line's template sits in
// each job's sequence).
type Record struct {
	Source int   // index of the file the line is in
	Line   int64 // 1-based, in its file
	Time   int64 // Unix nanoseconds; 0: no readable time
	Fields []KV
	// Message is the line's sentence (or event name).
	Message string
	// Level is the line's level as written ("", "INFO", "warn", "40").
	Level string
	// Hint is the vocabulary's kind for the line (RoleNone: it matched
	// nothing); ByName says an exact event name decided it.
	Hint   Role
	ByName bool
	// Key is the business key the reader found with its own mapping ("":
	// none); the inference may find more.
	Key string
}

// Get returns the value of the first field named k.
func (r *Record) Get(k string) (string, bool) {
	for _, kv := range r.Fields {
		if kv.Key == k {
			return kv.Value, true
		}
	}
	return "", false
}

// File is the pseudo-field naming a record's source: when files are one
// instance each, the file is the worker.
const File = "@file"
