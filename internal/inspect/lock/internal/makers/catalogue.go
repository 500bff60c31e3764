package makers

import (
	"bytes"
	_ "embed"
	"fmt"
	"regexp"
	"slices"
	"strings"

	"github.com/dupctl/dupctl/internal/inspect/lock/internal/keyshape"
	"github.com/dupctl/dupctl/internal/inspect/lock/internal/keyspace"
	"go.yaml.in/yaml/v3"
)

// The library catalogue is data: catalogue.yaml, embedded and parsed when
// dupctl starts, documents for every library how it writes its keys and
// cites the source that does; users add entries in dupctl.yaml (locks:).
// Each entry compiles into a matcher: the key's type, a Redis glob on its
// name, a named format of its value (formats.go) and whether it needs a
// TTL. Matching is on the scan's hot path, so entries are indexed by the
// literal start of their glob and pre-filtered by the literal text in it.

//go:embed catalogue.yaml
var catalogueYAML []byte

// Entry is one catalogue entry (the schema is documented at the top of
// catalogue.yaml).
type Entry struct {
	ID         string    `yaml:"id" json:"id"`
	Maker      string    `yaml:"maker" json:"maker"`
	Library    string    `yaml:"library" json:"library"`
	Object     string    `yaml:"object" json:"object"`
	Language   string    `yaml:"language" json:"language"`
	Role       Role      `yaml:"role" json:"role"`
	Sources    []Source  `yaml:"sources" json:"sources"`
	Key        KeySpec   `yaml:"key" json:"key"`
	Value      ValueSpec `yaml:"value" json:"value"`
	Token      TokenSpec `yaml:"token" json:"token"`
	TTL        TTLSpec   `yaml:"ttl" json:"ttl"`
	Companions []string  `yaml:"companions" json:"companions,omitempty"`
	Confirms   bool      `yaml:"confirms" json:"confirms"`
	Problems   []Problem `yaml:"problems" json:"problems,omitempty"`
	// User is set on entries from dupctl.yaml.
	User bool `yaml:"-" json:"user,omitempty"`

	globs   []keyspace.Glob
	anchors []string // each glob's literal start ("" when it starts with a wildcard)
	// namespaces: a queue or data entry's globs that are a literal and one
	// final '*' ("rl:*"), as that literal (see lockPastNamespace).
	namespaces []string
	tails      []string // each glob's literal end ("" when it ends with a wildcard)
	needles    []string // each glob's longest literal run, checked before the glob
	anyName    bool     // the only glob is "*"
	value      format
	keyFmt     func(string) bool
}

// Source is where a library writes the bytes an entry matches.
type Source struct {
	Repo     string `yaml:"repo" json:"repo"`
	File     string `yaml:"file" json:"file"`
	Function string `yaml:"function" json:"function"`
}

// KeySpec is how the library names its keys.
type KeySpec struct {
	Layout string `yaml:"layout" json:"layout"`
	Match  Globs  `yaml:"match" json:"match"`
	Format string `yaml:"format" json:"format,omitempty"`
}

// Globs is one Redis glob or a list of them.
type Globs []string

// UnmarshalYAML reads a scalar or a sequence.
func (g *Globs) UnmarshalYAML(n *yaml.Node) error {
	if n.Kind == yaml.ScalarNode {
		*g = Globs{n.Value}
		return nil
	}
	var list []string
	if err := n.Decode(&list); err != nil {
		return err
	}
	*g = list
	return nil
}

// ValueSpec is what the library stores.
type ValueSpec struct {
	Type     string `yaml:"type" json:"type"`
	Format   string `yaml:"format" json:"format"`
	Describe string `yaml:"describe" json:"describe,omitempty"`
}

// TokenSpec is what the owner value is.
type TokenSpec struct {
	Format   string `yaml:"format" json:"format"`
	Shared   bool   `yaml:"shared" json:"shared"`
	Describe string `yaml:"describe" json:"describe,omitempty"`
}

// TTL behaviours.
const (
	TTLLease    = "lease"
	TTLRenewed  = "renewed"
	TTLOptional = "optional"
	TTLNone     = "none-by-design"
)

// TTLSpec is how the library expires its keys.
type TTLSpec struct {
	Behaviour string `yaml:"behaviour" json:"behaviour"`
	Default   string `yaml:"default" json:"default,omitempty"`
	Match     string `yaml:"match" json:"match"`
	Describe  string `yaml:"describe" json:"describe,omitempty"`
}

// Problem is what one finding means for this library.
type Problem struct {
	Code string `yaml:"code" json:"code"`
	Note string `yaml:"note" json:"note"`
}

// Note returns what the entry says of a finding code ("" for nothing).
func (e *Entry) Note(code string) string {
	for _, p := range e.Problems {
		if p.Code == code {
			return p.Note
		}
	}
	return ""
}

// NoToken reports entries whose value names no holder (a permit count, an
// empty value): owner checks do not apply to them... except the constant
// one, which is their problem.
func (e *Entry) NoToken() bool { return e.Token.Format == "none" }

type catalogueFile struct {
	Version int     `yaml:"version"`
	Entries []Entry `yaml:"entries"`
}

var (
	roles      = []Role{RoleLock, RoleDedup, RoleFence, RoleMeta, RoleQueue, RoleData}
	types      = []string{"string", "hash", "zset", "set", "list", "stream", "any"}
	behaviours = []string{TTLLease, TTLRenewed, TTLOptional, TTLNone}
	ttlMatches = []string{"required", "absent", "any"}
	idPattern  = regexp.MustCompile(`^[a-z0-9][a-z0-9.-]*$`)
)

// ParseCatalogue reads catalogue entries (the embedded file's layout) and
// checks each against the schema.
func ParseCatalogue(b []byte) ([]Entry, error) {
	var f catalogueFile
	dec := yaml.NewDecoder(bytes.NewReader(b))
	dec.KnownFields(true)
	if err := dec.Decode(&f); err != nil {
		return nil, fmt.Errorf("lock catalogue: %w", err)
	}
	if f.Version != 1 {
		return nil, fmt.Errorf("lock catalogue: version %d, want 1", f.Version)
	}
	seen := map[string]bool{}
	for i := range f.Entries {
		e := &f.Entries[i]
		if seen[e.ID] {
			return nil, fmt.Errorf("lock catalogue: entry %q twice", e.ID)
		}
		seen[e.ID] = true
		if err := e.compile(); err != nil {
			return nil, fmt.Errorf("lock catalogue: entry %q: %w", e.ID, err)
		}
	}
	return f.Entries, nil
}

// compile checks an entry and builds its matcher.
func (e *Entry) compile() error {
	switch {
	case !idPattern.MatchString(e.ID):
		return fmt.Errorf("id must be lower-case letters, digits, '-' and '.'")
	case e.Maker == "" || e.Library == "":
		return fmt.Errorf("maker and library are required")
	case !slices.Contains(roles, e.Role):
		return fmt.Errorf("role %q: want one of %v", e.Role, roles)
	case !e.User && len(e.Sources) == 0:
		return fmt.Errorf("sources: cite where the library writes these bytes")
	case !slices.Contains(types, e.Value.Type):
		return fmt.Errorf("value.type %q: want one of %v", e.Value.Type, types)
	case !slices.Contains(behaviours, e.TTL.Behaviour):
		return fmt.Errorf("ttl.behaviour %q: want one of %v", e.TTL.Behaviour, behaviours)
	case !slices.Contains(ttlMatches, e.TTL.Match):
		return fmt.Errorf("ttl.match %q: want one of %v", e.TTL.Match, ttlMatches)
	case len(e.Key.Match) == 0:
		return fmt.Errorf("key.match: a Redis glob (\"*\" for any name)")
	}
	for _, s := range e.Sources {
		if s.Repo == "" || s.File == "" || s.Function == "" {
			return fmt.Errorf("a source needs repo, file and function")
		}
	}
	f, ok := formats[e.Value.Format]
	if !ok {
		return fmt.Errorf("value.format %q: want one of %v", e.Value.Format, FormatNames())
	}
	if f.types != "" && e.Value.Type != "any" && !strings.Contains(f.types, e.Value.Type) {
		return fmt.Errorf("value.format %q reads a %s, not a %s", e.Value.Format, f.types, e.Value.Type)
	}
	e.value = f
	if e.Key.Format != "" {
		if e.keyFmt = keyFormats[e.Key.Format]; e.keyFmt == nil {
			return fmt.Errorf("key.format %q: unknown", e.Key.Format)
		}
	}
	for _, p := range e.Key.Match {
		g, err := keyspace.CompileGlob(p)
		if err != nil {
			return fmt.Errorf("key.match %q: %w", p, err)
		}
		e.globs = append(e.globs, g)
		e.anchors = append(e.anchors, literalStart(p))
		e.tails = append(e.tails, literalEnd(p))
		e.needles = append(e.needles, longestLiteral(p))
	}
	if e.Role == RoleQueue || e.Role == RoleData {
		e.namespaces = bareNamespaces(e.Key.Match)
	}
	e.anyName = slices.Equal(e.Key.Match, Globs{"*"})
	return nil
}

// bareNamespaces are the globs that are a literal and one final '*'
// ("rl:*"), as that literal.
func bareNamespaces(globs Globs) []string {
	var out []string
	for _, p := range globs {
		if ns := literalStart(p); ns != "" && ns+"*" == p {
			out = append(out, ns)
		}
	}
	return out
}

// literalStart is the glob's text before its first wildcard.
func literalStart(p string) string {
	if i := strings.IndexAny(p, `*?[\`); i >= 0 {
		return p[:i]
	}
	return p
}

// literalEnd is the glob's text after its last wildcard.
func literalEnd(p string) string {
	if i := strings.LastIndexAny(p, `*?]`); i >= 0 {
		return p[i+1:]
	}
	return p
}

// longestLiteral is the glob's longest run of plain text.
func longestLiteral(p string) string {
	best, cur := "", ""
	for i := 0; i < len(p); i++ {
		switch p[i] {
		case '*', '?', '\\':
			cur = ""
		case '[':
			cur = ""
			for i < len(p) && p[i] != ']' {
				i++
			}
		default:
			cur += p[i : i+1]
			if len(cur) > len(best) {
				best = cur
			}
		}
	}
	return best
}

// keyMatches reports whether the key's name fits the entry.
func (e *Entry) keyMatches(key string) bool {
	if e.keyFmt != nil && !e.keyFmt(key) {
		return false
	}
	if e.anyName {
		return true
	}
	for i, g := range e.globs {
		if strings.HasPrefix(key, e.anchors[i]) && strings.HasSuffix(key, e.tails[i]) && strings.Contains(key, e.needles[i]) && g.Match(key) {
			return true
		}
	}
	return false
}

// lockPastNamespace reports a lock word after one of the bare
// namespaces a queue or data entry names whole ("rl:*"): the library's
// layout says nothing of the rest, which may be another code's lock that
// shares the namespace ("rl:lock:job" beside rate-limit-redis's
// "rl:<client>"), so the entry does not take it.
func (e *Entry) lockPastNamespace(key string) bool {
	for _, ns := range e.namespaces {
		if rest, ok := strings.CutPrefix(key, ns); ok {
			lock, _ := keyshape.NameWords(rest)
			return lock
		}
	}
	return false
}

// specificity is 1 for an entry that names keys by a layout, 0 for one
// that takes any name ("*") and decides by the value.
func (e *Entry) specificity() int {
	if e.keyFmt != nil || !e.anyName {
		return 1
	}
	return 0
}

// ttlFits reports whether the key's TTL fits the entry.
func (e *Entry) ttlFits(pttl int64) bool {
	switch e.TTL.Match {
	case "required":
		return pttl >= 0
	case "absent":
		return pttl == -1
	}
	return true
}

// Catalogue is the compiled catalogue: the built-in entries and the
// user's, indexed for matching.
type Catalogue struct {
	Entries []*Entry
	// byType holds, per value type, the entries that can match it, in
	// catalogue order (users' entries first).
	byType map[string][]*Entry
	// first indexes byType by the first byte of the key: a key is tried
	// only against the entries whose layout can start with it (most have
	// a literal prefix), in catalogue order. Matching every key against
	// every entry was a third of inspect lock's CPU at 240,000 keys.
	first map[string]*firstIndex
}

type firstIndex struct {
	byByte [256][]int32 // entries whose every layout starts with that byte
	any    []int32      // entries that can start with any byte
}

func newFirstIndex(entries []*Entry) *firstIndex {
	x := &firstIndex{}
	for i, e := range entries {
		starts, ok := e.firstBytes()
		if !ok {
			x.any = append(x.any, int32(i))
			continue
		}
		for _, b := range starts {
			x.byByte[b] = append(x.byByte[b], int32(i))
		}
	}
	return x
}

// firstBytes are the bytes a key this entry matches can start with (false:
// any byte - a key format, a name taking any key, a layout that starts
// with a wildcard).
func (e *Entry) firstBytes() ([]byte, bool) {
	if e.keyFmt != nil || e.anyName || len(e.anchors) == 0 {
		return nil, false
	}
	var out []byte
	for _, a := range e.anchors {
		if a == "" {
			return nil, false
		}
		if !slices.Contains(out, a[0]) {
			out = append(out, a[0])
		}
	}
	return out, true
}

var builtin = func() []Entry {
	es, err := ParseCatalogue(catalogueYAML)
	if err != nil {
		panic(err) // the embedded file is checked by the tests
	}
	return es
}()

// Builtin is the embedded catalogue's entries.
func Builtin() []Entry { return slices.Clone(builtin) }

// NewCatalogue compiles the built-in entries after the user's (which win
// when both match: the user knows their keyspace).
func NewCatalogue(user []Entry) (*Catalogue, error) {
	c := &Catalogue{byType: map[string][]*Entry{}}
	for i := range user {
		e := user[i]
		e.User = true
		if err := e.compile(); err != nil {
			return nil, fmt.Errorf("lock library %q: %w", e.ID, err)
		}
		c.Entries = append(c.Entries, &e)
	}
	for i := range builtin {
		c.Entries = append(c.Entries, &builtin[i])
	}
	// Entries that name a key by its layout go before those that take
	// any name and decide by the value alone.
	ordered := slices.Clone(c.Entries)
	slices.SortStableFunc(ordered, func(a, b *Entry) int { return b.specificity() - a.specificity() })
	for _, e := range ordered {
		// The family-level entries (one shared value on many keys) are
		// judged per family, not per key.
		if e.Token.Shared && !e.Confirms {
			continue
		}
		for _, t := range types {
			if e.Value.Type == t || e.Value.Type == "any" {
				c.byType[t] = append(c.byType[t], e)
			}
		}
	}
	c.first = map[string]*firstIndex{}
	for t, es := range c.byType {
		c.first[t] = newFirstIndex(es)
	}
	return c, nil
}

// Default is the catalogue without user entries.
var Default = func() *Catalogue {
	c, err := NewCatalogue(nil)
	if err != nil {
		panic(err)
	}
	return c
}()

// Match returns the first entry whose layout the key has, and what its
// value says (owner, holders, metadata, time), or nil.
func (c *Catalogue) Match(o *keyspace.Key) (*Entry, Recognised) {
	es, x := c.byType[o.Type], c.first[o.Type]
	if x == nil || o.Key == "" {
		return nil, Recognised{}
	}
	// The entries for this first byte and those for any byte, merged back
	// into catalogue order.
	a, b := x.byByte[o.Key[0]], x.any
	// One r for the whole walk: a value matcher is called through a func
	// value, so r escapes, and one per tried entry was a fifth of Match.
	var r Recognised
	for len(a) > 0 || len(b) > 0 {
		var i int32
		if len(b) == 0 || len(a) > 0 && a[0] < b[0] {
			i, a = a[0], a[1:]
		} else {
			i, b = b[0], b[1:]
		}
		e := es[i]
		if !e.ttlFits(o.PTTL) || !e.keyMatches(o.Key) || e.namespaces != nil && e.lockPastNamespace(o.Key) {
			continue
		}
		r = Recognised{Maker: e.Maker, Role: e.Role, Entry: e, Confirmed: e.Confirms}
		if o.Read && e.value.match(o, &r) || !o.Read && !e.value.needsValue {
			return e, r
		}
	}
	return nil, Recognised{}
}

// Shared returns the family-level entries: libraries that store one value
// on many locks by design (Spring Integration's clientId).
func (c *Catalogue) Shared() []*Entry {
	var out []*Entry
	for _, e := range c.Entries {
		if e.Token.Shared && !e.Confirms {
			out = append(out, e)
		}
	}
	return out
}
