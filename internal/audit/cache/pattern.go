package cache

import (
	"bufio"
	"bytes"
	"errors"
	"fmt"
	"github.com/dupctl/dupctl/internal/platform/problem"
	"io"
	"strings"
	"unicode/utf8"
)

// Placeholder marks where the database key sits in a cache key pattern.
const Placeholder = "{key}"

// Pattern is a cache key pattern such as job:status:{key}: literal text
// around exactly one {key}.
type Pattern struct {
	Raw    string
	Prefix string
	Suffix string
}

// ParsePattern reads a cache key pattern (job:status:{key}).
func ParsePattern(s string) (Pattern, error) {
	n := strings.Count(s, Placeholder)
	if n != 1 {
		return Pattern{}, problem.Inputf("Pattern", "want exactly one %s where the database key goes, e.g. job:status:{key} (found %d)",
			Placeholder, n).WithValue(s)
	}
	prefix, suffix, _ := strings.Cut(s, Placeholder)
	return Pattern{Raw: s, Prefix: prefix, Suffix: suffix}, nil
}

// Match is the SCAN MATCH glob: the literal parts escaped, * for the key.
func (p Pattern) Match() string {
	return globEscape(p.Prefix) + "*" + globEscape(p.Suffix)
}

// ID extracts the database key from a cache key; false when the key does
// not fit the pattern (SCAN's glob is looser than the pattern only in
// that * may match an empty key).
func (p Pattern) ID(key string) (string, bool) {
	if len(key) <= len(p.Prefix)+len(p.Suffix) || !strings.HasPrefix(key, p.Prefix) || !strings.HasSuffix(key, p.Suffix) {
		return "", false
	}
	return key[len(p.Prefix) : len(key)-len(p.Suffix)], true
}

// Key is the cache key of a database key.
func (p Pattern) Key(id string) string { return p.Prefix + id + p.Suffix }

// globEscape escapes Redis glob metacharacters with a backslash.
func globEscape(s string) string {
	var b strings.Builder
	for i := 0; i < len(s); i++ { // bytes: Redis keys are binary
		switch s[i] {
		case '*', '?', '[', ']', '\\':
			b.WriteByte('\\')
		}
		b.WriteByte(s[i])
	}
	return b.String()
}

// ReadLiveKeys reads the keys of live messages, one per line: the
// database key, or a cache key of the pattern. Blank lines and # comments
// are skipped.
func ReadLiveKeys(r io.Reader) ([]string, error) {
	sc := bufio.NewScanner(r)
	sc.Buffer(make([]byte, 64*1024), 1<<20)
	keys := []string{}
	for n := 1; sc.Scan(); n++ {
		b := sc.Bytes()
		// Keys are text: a file that is not (a binary, another encoding)
		// would match nothing and say nothing; refuse it instead.
		if !utf8.Valid(b) || bytes.IndexByte(b, 0) >= 0 {
			return nil, fmt.Errorf("line %d is not UTF-8 text: want one key per line", n)
		}
		if line := strings.TrimSpace(string(b)); line != "" && !strings.HasPrefix(line, "#") {
			keys = append(keys, line)
		}
	}
	if errors.Is(sc.Err(), bufio.ErrTooLong) {
		return nil, errors.New("a line is longer than 1 MiB: want one key per line")
	}
	return keys, sc.Err()
}
