package idemtable

import (
	"fmt"
	"strings"

	"github.com/jackc/pgx/v5"
)

// maxIdentLen is PostgreSQL's NAMEDATALEN-1: no object can have a longer
// name, so a longer one can only be a typo.
const maxIdentLen = 63

// Name is a possibly schema-qualified object name as PostgreSQL reads it:
// unquoted parts folded to lower case, quoted parts kept exactly.
type Name struct {
	Schema string // "" when not qualified
	Name   string
}

// SQL is the name quoted for a query (pgx.Identifier): the only way a
// table name enters SQL text.
func (n Name) SQL() string {
	if n.Schema == "" {
		return pgx.Identifier{n.Name}.Sanitize()
	}
	return pgx.Identifier{n.Schema, n.Name}.Sanitize()
}

// String is the name as a person would type it back: quoted only where
// PostgreSQL needs quotes.
func (n Name) String() string {
	if n.Schema == "" {
		return DisplayIdent(n.Name)
	}
	return DisplayIdent(n.Schema) + "." + DisplayIdent(n.Name)
}

// DisplayIdent quotes an identifier only when reading it back unquoted
// would change it (upper case, spaces, punctuation, a leading digit).
func DisplayIdent(id string) string {
	plain := id != ""
	for i := 0; i < len(id) && plain; i++ {
		c := id[i]
		plain = (c >= 'a' && c <= 'z') || c == '_' || (i > 0 && ((c >= '0' && c <= '9') || c == '$'))
	}
	if plain {
		return id
	}
	return pgx.Identifier{id}.Sanitize()
}

// ParseName reads a table name the way PostgreSQL would: `orders`,
// `billing.orders`, `"Orders"`, `"my schema"."odd""name"`. User text never
// reaches SQL: the parts are looked up in the catalog as values and the
// query uses the catalog's names, quoted.
func ParseName(s string) (Name, error) {
	parts, err := parseIdents(s, '.')
	if err != nil {
		return Name{}, err
	}
	switch len(parts) {
	case 1:
		return Name{Name: parts[0]}, nil
	case 2:
		return Name{Schema: parts[0], Name: parts[1]}, nil
	}
	return Name{}, fmt.Errorf("%q has %d dotted parts: want table or schema.table (quote a name that contains a dot)", s, len(parts))
}

// ParseIdentList reads a comma-separated list of column names, each
// unquoted (folded to lower case) or double-quoted.
func ParseIdentList(s string) ([]string, error) {
	return parseIdents(s, ',')
}

// parseIdents splits s on sep outside double quotes and reads every part
// as an SQL identifier.
func parseIdents(s string, sep byte) ([]string, error) {
	var out []string
	i := 0
	for {
		for i < len(s) && isSpace(s[i]) {
			i++
		}
		id, n, err := readIdent(s[i:])
		if err != nil {
			return nil, fmt.Errorf("%q: %w", s, err)
		}
		out = append(out, id)
		i += n
		for i < len(s) && isSpace(s[i]) {
			i++
		}
		if i == len(s) {
			return out, nil
		}
		if s[i] != sep {
			return nil, fmt.Errorf("%q: unexpected %q at byte %d: quote names with spaces or punctuation, e.g. '\"Odd Name\"'", s, s[i], i)
		}
		i++
	}
}

// readIdent reads one identifier at the start of s and returns it with
// the number of bytes consumed.
func readIdent(s string) (string, int, error) {
	if s == "" {
		return "", 0, fmt.Errorf("empty name")
	}
	if s[0] == '"' {
		var b strings.Builder
		for i := 1; i < len(s); i++ {
			if s[i] != '"' {
				b.WriteByte(s[i])
				continue
			}
			if i+1 < len(s) && s[i+1] == '"' {
				b.WriteByte('"')
				i++
				continue
			}
			id := b.String()
			if id == "" {
				return "", 0, fmt.Errorf("empty quoted name")
			}
			if len(id) > maxIdentLen {
				return "", 0, fmt.Errorf("name %q is longer than PostgreSQL's %d bytes", id, maxIdentLen)
			}
			if strings.IndexByte(id, 0) >= 0 {
				return "", 0, fmt.Errorf("name contains a NUL byte")
			}
			return id, i + 1, nil
		}
		return "", 0, fmt.Errorf("unterminated quoted name")
	}
	n := 0
	for n < len(s) && isIdentByte(s[n], n == 0) {
		n++
	}
	if n == 0 {
		return "", 0, fmt.Errorf("unexpected %q: a name starts with a letter or underscore, or is double-quoted", s[0])
	}
	if n > maxIdentLen {
		return "", 0, fmt.Errorf("name %q is longer than PostgreSQL's %d bytes", s[:n], maxIdentLen)
	}
	// PostgreSQL folds only ASCII letters of unquoted names.
	return asciiLower(s[:n]), n, nil
}

func isIdentByte(c byte, first bool) bool {
	switch {
	case c >= 'a' && c <= 'z', c >= 'A' && c <= 'Z', c == '_', c >= 0x80:
		return true
	case c >= '0' && c <= '9', c == '$':
		return !first
	}
	return false
}

func isSpace(c byte) bool { return c == ' ' || c == '\t' || c == '\n' || c == '\r' }

func asciiLower(s string) string {
	b := []byte(s)
	for i, c := range b {
		if c >= 'A' && c <= 'Z' {
			b[i] = c + 'a' - 'A'
		}
	}
	return string(b)
}

// quote is one column name as SQL.
// Quote is a column name quoted for SQL.
func Quote(col string) string { return pgx.Identifier{col}.Sanitize() }
