// Package pgproxy is a pass-through proxy for the PostgreSQL wire
// protocol that reads just enough to see which statements a worker runs
// (reads, writes, transaction control), to withhold one, and to see when a
// transaction with writes committed.
//
// Message format per the PostgreSQL documentation, "Frontend/Backend
// Protocol", chapters "Message Flow" and "Message Formats"
// (postgresql.org/docs/current/protocol-message-formats.html): after the
// untyped startup packet (int32 length including itself, int32 code:
// 196608 for protocol 3.0, 80877103 SSLRequest, 80877104 GSSENCRequest,
// 80877102 CancelRequest; a single 'S'/'N' (or 'G'/'N') byte answers the
// two encryption requests), every message is a type byte, an int32 length
// including itself, and the body. Frontend: Query 'Q' (the SQL), Parse 'P'
// (statement name, SQL, parameter types), Bind 'B' (portal, statement,
// formats, parameter values), Execute 'E', Sync 'S', Terminate 'X'.
// Backend: CommandComplete 'C' (a tag such as "INSERT 0 1" or "COMMIT"),
// ErrorResponse 'E', ReadyForQuery 'Z' (transaction status 'I' idle, 'T'
// in a transaction, 'E' in a failed one).
package pgproxy

import (
	"bufio"
	"bytes"
	"encoding/binary"
	"errors"
	"fmt"
	"io"
	"strings"
)

// Startup codes.
const (
	codeProtocol3 = 196608
	codeSSL       = 80877103
	codeGSSENC    = 80877104
	codeCancel    = 80877102
	maxMessage    = 1 << 30 // PostgreSQL's own limit on a message
)

// Message is one typed message (Type 0 for the untyped startup packet).
type Message struct {
	Type byte
	Body []byte
}

// Append writes the message's wire form to b.
func (m Message) Append(b []byte) []byte {
	if m.Type != 0 {
		b = append(b, m.Type)
	}
	b = binary.BigEndian.AppendUint32(b, uint32(len(m.Body)+4))
	return append(b, m.Body...)
}

// ReadMessage reads one message; untyped reads a startup packet.
func ReadMessage(r *bufio.Reader, untyped bool) (Message, error) {
	var m Message
	if !untyped {
		t, err := r.ReadByte()
		if err != nil {
			return m, err
		}
		m.Type = t
	}
	var l [4]byte
	if _, err := io.ReadFull(r, l[:]); err != nil {
		return m, noEOF(err)
	}
	n := binary.BigEndian.Uint32(l[:])
	if n < 4 || n > maxMessage {
		return m, fmt.Errorf("pg: message length %d out of range", n)
	}
	m.Body = make([]byte, n-4)
	if _, err := io.ReadFull(r, m.Body); err != nil {
		return m, noEOF(err)
	}
	return m, nil
}

func noEOF(err error) error {
	if err == io.EOF {
		return io.ErrUnexpectedEOF
	}
	return err
}

// StartupCode reads a startup packet's code.
func StartupCode(m Message) uint32 {
	if len(m.Body) < 4 {
		return 0
	}
	return binary.BigEndian.Uint32(m.Body)
}

func cstring(b []byte) (string, []byte, error) {
	i := bytes.IndexByte(b, 0)
	if i < 0 {
		return "", nil, errors.New("pg: unterminated string")
	}
	return string(b[:i]), b[i+1:], nil
}

// ParseMsg reads a Parse message: statement name and SQL.
func ParseMsg(body []byte) (name, sql string, err error) {
	name, rest, err := cstring(body)
	if err != nil {
		return "", "", err
	}
	sql, _, err = cstring(rest)
	return name, sql, err
}

// BindStatement reads the statement name a Bind message binds.
func BindStatement(body []byte) (string, error) {
	_, rest, err := cstring(body) // portal
	if err != nil {
		return "", err
	}
	stmt, _, err := cstring(rest)
	return stmt, err
}

// QueryText reads a Query message's SQL.
func QueryText(body []byte) (string, error) {
	s, _, err := cstring(body)
	return s, err
}

// Kind classifies a statement.
type Kind uint8

// Statement kinds.
const (
	KindOther Kind = iota
	KindRead
	KindWrite
	KindTxn
)

func (k Kind) String() string {
	return [...]string{"other", "read", "write", "transaction control"}[k]
}

// Classify reads a statement's leading keyword (after comments and
// parentheses): INSERT, UPDATE, DELETE, MERGE and COPY ... FROM write;
// SELECT, VALUES, TABLE and SHOW read; WITH is a write when it contains a
// data-modifying statement. A function called from a SELECT that writes is
// a read here: the proxy sees SQL text, not what the server does with it.
func Classify(sql string) Kind {
	kind := KindOther
	for _, stmt := range splitStatements(sql) {
		switch k := classifyOne(stmt); {
		case k == KindWrite:
			return k
		case kind == KindOther:
			kind = k
		}
	}
	return kind
}

func splitStatements(sql string) []string {
	var out []string
	for _, s := range strings.Split(sql, ";") {
		if t := strings.TrimSpace(s); t != "" {
			out = append(out, t)
		}
	}
	return out
}

func classifyOne(sql string) Kind {
	w := strings.ToLower(firstWord(sql))
	switch w {
	case "insert", "update", "delete", "merge", "upsert":
		return KindWrite
	case "copy":
		if strings.Contains(strings.ToLower(sql), " from ") {
			return KindWrite
		}
		return KindRead
	case "select", "values", "table", "show":
		return KindRead
	case "with":
		lower := strings.ToLower(sql)
		for _, kw := range []string{"insert ", "update ", "delete ", "merge "} {
			if strings.Contains(lower, kw) {
				return KindWrite
			}
		}
		return KindRead
	case "begin", "start", "commit", "end", "rollback", "abort", "savepoint", "release", "prepare":
		return KindTxn
	}
	return KindOther
}

func firstWord(s string) string {
	for {
		s = strings.TrimLeft(s, " \t\r\n(")
		switch {
		case strings.HasPrefix(s, "--"):
			i := strings.IndexByte(s, '\n')
			if i < 0 {
				return ""
			}
			s = s[i+1:]
		case strings.HasPrefix(s, "/*"):
			i := strings.Index(s, "*/")
			if i < 0 {
				return ""
			}
			s = s[i+2:]
		default:
			end := strings.IndexFunc(s, func(r rune) bool {
				return !(r >= 'a' && r <= 'z' || r >= 'A' && r <= 'Z' || r == '_')
			})
			if end < 0 {
				return s
			}
			return s[:end]
		}
	}
}

// Commits reports whether a statement commits the open transaction:
// COMMIT or END (with WORK or TRANSACTION), not COMMIT PREPARED, which
// finishes a transaction prepared earlier.
func Commits(sql string) bool {
	if len(splitStatements(sql)) != 1 {
		return false
	}
	words := strings.Fields(strings.ToLower(strings.TrimSuffix(strings.TrimSpace(sql), ";")))
	if len(words) == 0 || (words[0] != "commit" && words[0] != "end") {
		return false
	}
	for _, w := range words[1:] {
		if w != "work" && w != "transaction" {
			return false
		}
	}
	return true
}

// WriteTag reports whether a CommandComplete tag is a write's.
func WriteTag(tag string) bool {
	w := firstWord(tag)
	switch strings.ToUpper(w) {
	case "INSERT", "UPDATE", "DELETE", "MERGE", "COPY":
		return true
	}
	return false
}

// BindParams reads a Bind message's parameter values (nil for SQL NULL):
// portal, statement, the parameter format codes, then each value as an
// int32 length (-1 for NULL) and its bytes.
func BindParams(body []byte) ([][]byte, error) {
	_, rest, err := cstring(body)
	if err != nil {
		return nil, err
	}
	if _, rest, err = cstring(rest); err != nil {
		return nil, err
	}
	short := errors.New("pg: Bind too short")
	if len(rest) < 2 {
		return nil, short
	}
	nf := int(binary.BigEndian.Uint16(rest))
	rest = rest[2:]
	if len(rest) < 2*nf+2 {
		return nil, short
	}
	rest = rest[2*nf:]
	np := int(binary.BigEndian.Uint16(rest))
	rest = rest[2:]
	params := make([][]byte, 0, np)
	for i := 0; i < np; i++ {
		if len(rest) < 4 {
			return nil, short
		}
		n := int32(binary.BigEndian.Uint32(rest))
		rest = rest[4:]
		if n < 0 {
			params = append(params, nil)
			continue
		}
		if int(n) > len(rest) {
			return nil, short
		}
		params = append(params, rest[:n])
		rest = rest[n:]
	}
	return params, nil
}

// Values are the values a statement carries: a Bind's parameters, or the
// quoted literals of a Query's SQL.
func Values(s *Statement) []string {
	var out []string
	if s.Bind {
		ps, _ := BindParams(s.Raw)
		for _, p := range ps {
			if p != nil {
				out = append(out, string(p))
			}
		}
		return out
	}
	parts := strings.Split(s.SQL, "'")
	for i := 1; i < len(parts); i += 2 {
		out = append(out, parts[i])
	}
	return out
}
