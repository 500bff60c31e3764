// Package logs reads structured (JSON-lines) worker logs and turns every
// line into a normalized Event: which kind of step it records (received,
// lock acquired, side effect, ack, ...) and the flow's fields (jobId,
// business key, idempotency key, lock key and token, attempt, consumer
// instance, message id, timestamps, durations), whatever the logging
// library called them.
//
// It reads files, globs, directories, gzip files and any io.Reader (stdin),
// lines of any length, on every core: a reader goroutine cuts the input
// into chunks at line boundaries, workers parse chunks in parallel and the
// caller receives events in input order. Malformed lines are counted and
// sampled with file:line, or stop the scan in strict mode.
//
// Field names come from a Mapping: built-in aliases (camelCase, snake_case
// and dotted forms, logstash-logback-encoder with MDC top-level or nested,
// Go slog and zap defaults, OpenTelemetry messaging attributes), overridden
// by --field name=path flags or a JSON config file. A line without an event
// field is classified by its message text: the embedded vocabulary
// (vocabulary.txt) compiled into a trie over words, its verdict cached per
// message template, so a message costs about what a field lookup does.
package logs

import (
	"strconv"
	"strings"
	"time"

	"github.com/dupctl/dupctl/internal/logs/internal/infer"
)

// Kind is the step of the worker flow a log line records.
type Kind uint8

// The kinds of step of the safe consumer flow. KindOther is any line that names
// no known step (it still carries fields and may carry a duration).
const (
	KindOther Kind = iota
	KindReceived
	KindLockAcquired
	KindLockFailed
	KindLockReleased
	KindCheck        // an idempotency/status check; Hit says what it found
	KindDuplicate    // a duplicate caught by the idempotency layer
	KindClaimed      // PROCESSING reserved
	KindSideEffect   // the business side effect ran
	KindCommitted    // final status stored
	KindAcked        // message acknowledged
	KindRetry        // nack, requeue, retry scheduled
	KindFailed       // the handler failed
	KindDeadLettered // routed to the DLQ
	KindCrash        // worker crash or kill
	KindCompleted    // job finished (often with a duration)
	KindLockLost     // the holder learnt its lock expired or was taken over
	numKinds
)

// kindNames are the kinds' names, as the inference's roles are named: the
// two lists are one (TestKindsAreRoles).
var kindNames = func() (names [numKinds]string) {
	for k := range names {
		names[k] = infer.Role(k).String()
	}
	return names
}()

func (k Kind) String() string {
	if k < numKinds {
		return kindNames[k]
	}
	return "other"
}

// NumKinds is the number of kinds (KindOther is 0), for counting per kind.
const NumKinds = int(numKinds)

// ParseKind reads a kind name as --event uses it.
func ParseKind(s string) (Kind, bool) {
	n := normName(s)
	for k, name := range kindNames {
		if normName(name) == n {
			return Kind(k), true
		}
	}
	return KindOther, false
}

// KindNames lists the kind names, for help and errors.
func KindNames() []string { return append([]string(nil), kindNames[1:]...) }

// Tri is a boolean a line may not carry.
type Tri int8

const (
	Unknown Tri = iota
	False
	True
)

// Event is one log line, normalized. Its strings borrow the scanner's
// buffers: they are valid only until the callback that received the event
// returns. Keep an event with Clone.
type Event struct {
	Kind Kind
	// Name is the raw event name or, without one, the message text.
	Name string

	Time    time.Time // zero when the line has none
	Source  string    // file name, "-" for stdin
	Line    int64     // 1-based line number in Source
	Chunk   int       // index of the input chunk (for a second, selective pass)
	Fields  [NumFields]string
	Attempt int // 0 when absent (HasAttempt tells a logged 0)
	// HasAttempt says the line carried an attempt (or retry count):
	// libraries count from 0 or from 1.
	HasAttempt bool
	LockTTL    time.Duration // 0 when absent
	Duration   time.Duration // 0 when absent
	// Redelivered is the broker's redelivery flag; Hit the answer of a
	// check (True: already processed); FromCache whether a check was
	// answered by a cache rather than the database.
	Redelivered, Hit, FromCache Tri
	// Match says what decided Kind, for --explain-mapping.
	Match Match
	// Paths are the JSON paths the fields came from, with
	// Options.RecordPaths (else nil).
	Paths *[NumFields]string
	// Tag is the caller's, set by Options.Prepare.
	Tag uint64
}

// Match is what decided a line's kind: an event name the mapping knows
// (Phrase 0) or a phrase of the vocabulary (Phrase is its index + 1, see
// Mapping.Phrase), found in the event name or the message (In).
type Match struct {
	In     Field
	Phrase int32
}

// Get returns a field's value ("" when absent).
func (e *Event) Get(f Field) string { return e.Fields[f] }

// Clone returns a copy that owns its strings.
func (e *Event) Clone() Event {
	c := *e
	c.Name = strings.Clone(e.Name)
	c.Source = strings.Clone(e.Source)
	for i := range c.Fields {
		c.Fields[i] = strings.Clone(e.Fields[i])
	}
	return c
}

// Convenience accessors for the flow's fields.
func (e *Event) JobID() string          { return e.Fields[JobID] }
func (e *Event) BusinessKey() string    { return e.Fields[BusinessKey] }
func (e *Event) IdempotencyKey() string { return e.Fields[IdempotencyKey] }
func (e *Event) LockKey() string        { return e.Fields[LockKey] }
func (e *Event) LockToken() string      { return e.Fields[LockToken] }
func (e *Event) Consumer() string       { return e.Fields[Consumer] }
func (e *Event) MessageID() string      { return e.Fields[MessageID] }
func (e *Event) JobType() string        { return e.Fields[JobType] }

// Where is "file:line".
func (e *Event) Where() string { return e.Source + ":" + itoa(e.Line) }

func itoa(n int64) string { return strconv.FormatInt(n, 10) }
