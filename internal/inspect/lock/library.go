package lock

import "github.com/dupctl/dupctl/internal/inspect/lock/internal/makers"

// UserLibrary is a lock library the user describes (dupctl.yaml
// locks.libraries): the fields of a built-in catalogue entry that
// matching needs (docs/inspect-lock.md, "Your own libraries").
type UserLibrary struct {
	ID       string   // unique name of the entry
	Library  string   // the name reports give the library
	Role     string   // lock (default) or dedup
	Match    []string // Redis globs of its keys
	Type     string   // string (default), hash or zset
	Format   string   // a named value format; any (default)
	TTL      string   // lease (default), renewed, optional or none-by-design
	Shared   bool     // one token on many locks by design
	NameOnly bool     // a match only names the maker; the key must be likely on its own
	Note     string   // what its locks' problems mean, shown as evidence
}

// entry turns the user's description into a catalogue entry.
func (l UserLibrary) entry() makers.Entry {
	e := makers.Entry{ID: l.ID, Maker: l.Library, Library: l.Library, Object: "from dupctl.yaml", Role: makers.Role(or(l.Role, "lock")),
		Key:      makers.KeySpec{Layout: "from dupctl.yaml", Match: l.Match},
		Value:    makers.ValueSpec{Type: or(l.Type, "string"), Format: or(l.Format, "any")},
		Token:    makers.TokenSpec{Format: "from dupctl.yaml", Shared: l.Shared},
		TTL:      makers.TTLSpec{Behaviour: or(l.TTL, makers.TTLLease), Match: "any"},
		Confirms: !l.NameOnly}
	if l.Note != "" {
		for _, code := range []string{"LOCK_NO_TTL", "LOCK_TOKEN_CONSTANT", "LOCK_TOKEN_HOST", "LOCK_TOKEN_SHARED", "LOCK_TOKEN_LOW_ENTROPY"} {
			e.Problems = append(e.Problems, makers.Problem{Code: code, Note: l.Note})
		}
	}
	return e
}

func or(s, def string) string {
	if s == "" {
		return def
	}
	return s
}

// ValueFormats are the named value formats a library entry may use.
func ValueFormats() []string { return makers.FormatNames() }
