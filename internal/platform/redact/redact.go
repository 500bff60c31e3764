// Package redact removes secrets from anything dupctl prints: passwords in
// connection URLs (redis, rediss, postgres, postgresql, amqp, amqps and any
// other scheme://user:pass@host form), secret query parameters, and
// key=value DSN fields such as password=... in libpq connection strings.
//
// Every message, error and renderer goes through String, so a URL given on
// the command line or echoed back by a driver error never leaks its password.
package redact

import (
	"bytes"
	"io"
	"regexp"
	"slices"
	"strconv"
	"strings"
)

// Mask replaces every secret.
const Mask = "xxxxx"

// userinfo matches scheme://user:password@ and scheme://:password@ and
// scheme://token@ (a lone userinfo is a password for Redis: redis://secret@host).
// A password after "user:" may hold anything but a space, quote, backslash
// or angle bracket (so the same pattern runs over JSON and XML output):
// also the '/', '?', '#', ':' and '@' a user types raw into a URL, which
// make it unparsable; the last '@' before a space ends it. A bare userinfo
// (no colon) stops at the characters that end an authority.
var userinfo = regexp.MustCompile(`(?i)\b([a-z][a-z0-9+.-]*://)(?:([^\s/?#@:"'\\<>]*:)([^\s"'\\<>]*)|([^\s/?#"'\\<>:]*))@`)

// secretParam matches key=value DSN fields and parameters that hold
// credentials. A bare "token=" is left alone except as a URL query
// parameter: lock owner tokens are evidence dupctl must show, not secrets.
var secretParam = regexp.MustCompile(`(?i)(\b(?:password|passwd|pwd|sslpassword|sentinel_password|secret|client_secret|` +
	`access_token|auth_token|authtoken|apikey|api_key)|[?&](?:token|key|sig|signature|auth))` +
	`(\s*=\s*)` +
	`('(?:[^'\\]|\\.)*'|"(?:[^"\\]|\\.)*"|[^\s&;,'"]+)`)

// String returns s with every secret it can recognise masked. The
// patterns run only when s may hold a secret (a "://" with an '@' after
// it, or a '=' after a secret's name or after ? or &): a report of 20 MB is
// mostly evidence such as key=payment:42, and the regular expressions over
// all of it cost seconds.
func String(s string) string {
	if !strings.ContainsAny(s, "@=") || !mayHoldSecret(s) {
		return s
	}
	s = userinfo.ReplaceAllStringFunc(s, maskUserinfo)
	s = secretParam.ReplaceAllString(s, "${1}${2}"+Mask)
	return s
}

// secretNames are the names secretParam masks after '=' (lower case).
var secretNames = []string{"password", "passwd", "pwd", "sslpassword", "sentinel_password", "secret", "client_secret", "access_token",
	"auth_token", "authtoken", "apikey", "api_key"}

// secretQueryNames are the names secretParam masks only as URL query
// parameters (after ? or &).
var secretQueryNames = []string{"token", "key", "sig", "signature", "auth"}

// mayHoldSecret is a fast test that holds wherever the patterns could
// match (it may hold where they do not): a URL's userinfo (scheme:// then
// an '@') or a '=' after a secret's name (blanks between, as \s allows) or
// after ? or &.
func mayHoldSecret(line string) bool {
	if i := strings.Index(line, "://"); i >= 0 && strings.IndexByte(line[i:], '@') >= 0 {
		return true
	}
	for i := strings.IndexByte(line, '='); i >= 0; {
		j := i
		for j > 0 && isSpace(line[j-1]) {
			j--
		}
		k := j
		for k > 0 && isNameByte(line[k-1]) {
			k--
		}
		name := strings.ToLower(line[k:j])
		for _, n := range secretNames {
			if strings.HasSuffix(name, n) {
				return true
			}
		}
		if k > 0 && (line[k-1] == '?' || line[k-1] == '&') {
			return true
		}
		next := strings.IndexByte(line[i+1:], '=')
		if next < 0 {
			break
		}
		i += next + 1
	}
	return false
}

func isSpace(c byte) bool {
	return c == ' ' || c == '\t' || c == '\n' || c == '\r' || c == '\v' || c == '\f'
}

func isNameByte(c byte) bool {
	return c >= 'a' && c <= 'z' || c >= 'A' && c <= 'Z' || c >= '0' && c <= '9' || c == '_'
}

func maskUserinfo(m string) string {
	// A match that runs over a list of AMQP URLs (the password pattern
	// takes every '@' up to the last) is masked one URL at a time, so the
	// hosts of all but the last survive.
	if parts := SplitList(m); len(parts) > 1 {
		for i, p := range parts {
			parts[i] = userinfo.ReplaceAllStringFunc(p, maskUserinfo)
		}
		return strings.Join(parts, "")
	}
	sub := userinfo.FindStringSubmatch(m)
	scheme, user, rest := sub[1], sub[2], sub[3]
	if user == "" {
		rest = sub[4]
		// scheme://secret@host: a bare userinfo. For redis:// this is the
		// password (AUTH secret); elsewhere it is a user name, but masking
		// a user name costs little and leaking a password costs much.
		if rest == "" {
			return m
		}
		if isUserOnlyScheme(scheme) {
			return m
		}
		return scheme + Mask + "@"
	}
	return scheme + user + Mask + "@"
}

// isUserOnlyScheme reports schemes whose bare userinfo is a user name, not a
// secret.
func isUserOnlyScheme(scheme string) bool {
	switch strings.ToLower(strings.TrimSuffix(scheme, "://")) {
	case "postgres", "postgresql", "amqp", "amqps", "http", "https":
		return true
	}
	return false
}

// listStart is where the next URL of a list of AMQP URLs begins: a ','
// (Spring's spring.rabbitmq.addresses, the amqp gem) or a ';' (kombu)
// right before amqp:// or amqps://.
var listStart = regexp.MustCompile(`(?i)[,;]amqps?://`)

// SplitList cuts a list of AMQP URLs ("amqp://u:p@h1/v,amqp://u:p@h2/v")
// into its URLs, each keeping the separator before it; anything else,
// a single URL with several hosts ("amqp://u:p@h1,h2/v") included, is one
// piece. It is the one rule: connect dials the pieces URL masks. A
// password that holds ",amqp://" raw therefore splits the URL there: in a
// list it must be percent-encoded (%2C), as every client that takes a
// list of URLs requires.
func SplitList(raw string) []string {
	if !hasAMQPScheme(raw) {
		return []string{raw}
	}
	cuts := listStart.FindAllStringIndex(raw, -1)
	if len(cuts) == 0 {
		return []string{raw}
	}
	out := make([]string, 0, len(cuts)+1)
	from := 0
	for _, c := range cuts {
		out = append(out, raw[from:c[0]])
		from = c[0]
	}
	return append(out, raw[from:])
}

func hasAMQPScheme(s string) bool {
	l := strings.ToLower(s[:min(len(s), 8)])
	return strings.HasPrefix(l, "amqp://") || strings.HasPrefix(l, "amqps://")
}

// URL redacts one URL given whole (a flag or environment value), before
// any parse: everything between the first ':' of the userinfo and the
// last '@' is the password, whatever it holds (a raw space, '/', '#',
// '?'), so a URL that does not parse cannot leak it either; so is the
// value of a secret query parameter up to the next name=value parameter
// (querySecrets). Where the two readings overlap (an '@' in a query
// password), the union is masked. Other secrets are masked as String does.
// A list of AMQP URLs (SplitList) is masked one URL at a time.
func URL(raw string) string {
	if parts := SplitList(raw); len(parts) > 1 {
		for i, p := range parts {
			sep := ""
			if i > 0 {
				sep, p = p[:1], p[1:]
			}
			parts[i] = sep + oneURL(p)
		}
		return strings.Join(parts, "")
	}
	return oneURL(raw)
}

func oneURL(raw string) string {
	i := strings.Index(raw, "://")
	if i <= 0 || !isScheme(raw[:i]) {
		return String(DSN(raw))
	}
	spans := querySecrets(raw, i+3)
	if at := strings.LastIndex(raw, "@"); at >= i+3 {
		info := raw[i+3 : at]
		if user, _, ok := strings.Cut(info, ":"); ok {
			spans = append(spans, [2]int{i + 3 + len(user) + 1, at})
		} else if info != "" && !isUserOnlyScheme(raw[:i+3]) {
			spans = append(spans, [2]int{i + 3, at})
		}
	}
	return String(maskSpans(raw, spans))
}

// maskSpans replaces each of the byte ranges of s (merged where they
// touch or overlap) with Mask.
func maskSpans(s string, spans [][2]int) string {
	if len(spans) == 0 {
		return s
	}
	slices.SortFunc(spans, func(a, b [2]int) int { return a[0] - b[0] })
	var b strings.Builder
	pos := 0
	for k := 0; k < len(spans); {
		from, to := spans[k][0], spans[k][1]
		for k++; k < len(spans) && spans[k][0] <= to; k++ {
			to = max(to, spans[k][1])
		}
		b.WriteString(s[pos:from])
		b.WriteString(Mask)
		pos = to
	}
	b.WriteString(s[pos:])
	return b.String()
}

// querySecrets finds, by position, the value of every secret parameter in
// the query of a URL given whole (redis+sentinel://h/m?sentinel_password=...),
// the query starting at the first '?' after from: a value runs up to the
// next '&' that starts a name=value parameter, whatever it holds - a raw
// space, '#', '@' or '&' - where String, which cannot know where a URL ends
// in free text, stops at the space.
func querySecrets(u string, from int) [][2]int {
	q := strings.IndexByte(u[from:], '?')
	if q < 0 {
		return nil
	}
	pos := from + q + 1
	params := strings.Split(u[pos:], "&")
	var spans [][2]int
	for k := 0; k < len(params); k++ {
		name, _, ok := strings.Cut(params[k], "=")
		if !ok || !isSecretParamName(name) {
			pos += len(params[k]) + 1
			continue
		}
		vstart := pos + len(name) + 1
		pos += len(params[k]) + 1
		// The value runs on over the pieces that are no name=value.
		for k+1 < len(params) && !isParam(params[k+1]) {
			k++
			pos += len(params[k]) + 1
		}
		spans = append(spans, [2]int{vstart, min(pos-1, len(u))})
	}
	return spans
}

// isParam reports whether a query piece is name=value with a plain name.
func isParam(p string) bool {
	name, _, ok := strings.Cut(p, "=")
	if !ok || name == "" {
		return false
	}
	for i := 0; i < len(name); i++ {
		if !isNameByte(name[i]) && name[i] != '-' && name[i] != '.' {
			return false
		}
	}
	return true
}

// isSecretParamName reports whether a query parameter holds a secret.
func isSecretParamName(name string) bool {
	name = strings.ToLower(strings.TrimSpace(name))
	for _, n := range secretNames {
		if strings.HasSuffix(name, n) {
			return true
		}
	}
	return slices.Contains(secretQueryNames, name)
}

// DSN masks the secrets of a key=value connection string (libpq's
// "host=db user=app password=..."), by position: a quoted value up to its
// closing quote, an unquoted one up to the next " key=" - so a password
// typed with a raw space ("password=p ss host=db") is masked whole, not
// cut at the space the parser would stop at.
func DSN(raw string) string {
	var b strings.Builder
	rest := raw
	for {
		k, vStart, ok := nextSecretKey(rest)
		if !ok {
			b.WriteString(rest)
			return b.String()
		}
		end := dsnValueEnd(rest, vStart)
		b.WriteString(rest[:vStart])
		b.WriteString(Mask)
		rest = rest[end:]
		_ = k
	}
}

// nextSecretKey finds the next secret's name followed by '=' in s (at a
// word start) and returns where its value starts.
func nextSecretKey(s string) (name string, valueStart int, ok bool) {
	lower := strings.ToLower(s)
	best := -1
	var bestName string
	for _, n := range secretNames {
		for from := 0; ; {
			i := strings.Index(lower[from:], n)
			if i < 0 {
				break
			}
			i += from
			from = i + len(n)
			if i > 0 && isNameByte(lower[i-1]) {
				continue
			}
			j := i + len(n)
			for j < len(s) && isSpace(s[j]) {
				j++
			}
			if j < len(s) && s[j] == '=' && (best < 0 || i < best) {
				best, bestName = i, n
			}
			break
		}
	}
	if best < 0 {
		return "", 0, false
	}
	j := best + len(bestName)
	for j < len(s) && isSpace(s[j]) {
		j++
	}
	j++ // '='
	for j < len(s) && isSpace(s[j]) {
		j++
	}
	return bestName, j, true
}

// dsnValueEnd is where the value at s[i] ends: after its closing quote, or
// before the next blank-separated "key=" (or the end).
func dsnValueEnd(s string, i int) int {
	if i < len(s) && (s[i] == '\'' || s[i] == '"') {
		q := s[i]
		for j := i + 1; j < len(s); j++ {
			if s[j] == '\\' {
				j++
				continue
			}
			if s[j] == q {
				return j + 1
			}
		}
		return len(s)
	}
	for j := i; j < len(s); j++ {
		if !isSpace(s[j]) {
			continue
		}
		k := j
		for k < len(s) && isSpace(s[k]) {
			k++
		}
		m := k
		for m < len(s) && isNameByte(s[m]) {
			m++
		}
		n := m
		for n < len(s) && isSpace(s[n]) {
			n++
		}
		if m > k && n < len(s) && s[n] == '=' {
			return j
		}
	}
	return len(s)
}

// InError redacts an error text that may quote the raw URL it failed on
// (as url.Parse does: parse "amqp://u:p/w@h": invalid port): every
// occurrence of raw, plain or quoted, becomes its redacted form first.
func InError(msg, raw string) string {
	if raw != "" {
		red := URL(raw)
		msg = strings.ReplaceAll(msg, raw, red)
		if q := strconv.Quote(raw); len(q) > 2 {
			msg = strings.ReplaceAll(msg, q[1:len(q)-1], red)
		}
		// A parser that stopped inside the password quotes what it read
		// so far (parse "amqp://u:Zq/": invalid port): every piece of the
		// password between the characters that stop parsers goes too.
		for _, pw := range passwords(raw) {
			for _, piece := range strings.FieldsFunc(pw, func(r rune) bool { return strings.ContainsRune("/#?@: \t%", r) }) {
				if len(piece) >= 3 {
					msg = strings.ReplaceAll(msg, piece, Mask)
				}
			}
		}
	}
	return String(msg)
}

// passwords are what URL masks in a URL given whole: of each URL of a
// list, the userinfo after its first ':' up to its last '@'.
func passwords(raw string) []string {
	parts := SplitList(raw)
	for i := range parts {
		if i > 0 {
			parts[i] = parts[i][1:]
		}
		parts[i] = password(parts[i])
	}
	return parts
}

// password is what URL masks in a URL given whole: the userinfo after its
// first ':' up to the last '@' ("" when there is none).
func password(raw string) string {
	i := strings.Index(raw, "://")
	at := strings.LastIndex(raw, "@")
	if i <= 0 || at < i+3 {
		return ""
	}
	_, pw, ok := strings.Cut(raw[i+3:at], ":")
	if !ok {
		if isUserOnlyScheme(raw[:i+3]) {
			return ""
		}
		return raw[i+3 : at]
	}
	return pw
}

func isScheme(s string) bool {
	if s == "" || !(s[0] >= 'a' && s[0] <= 'z' || s[0] >= 'A' && s[0] <= 'Z') {
		return false
	}
	for _, c := range s {
		if !(c >= 'a' && c <= 'z' || c >= 'A' && c <= 'Z' || c >= '0' && c <= '9' || c == '+' || c == '.' || c == '-') {
			return false
		}
	}
	return true
}

// Writer redacts what is written through it, a block of whole lines at a
// time, so a large output streams instead of being held whole. A secret
// never spans lines in what it is used for (JSON: strings hold no raw
// newline). Close writes the last, unterminated line.
type Writer struct {
	w   io.Writer
	buf []byte
}

// NewWriter returns a redacting writer to w.
func NewWriter(w io.Writer) *Writer { return &Writer{w: w} }

const writerBlock = 256 << 10

func (rw *Writer) Write(p []byte) (int, error) {
	rw.buf = append(rw.buf, p...)
	if len(rw.buf) < writerBlock {
		return len(p), nil
	}
	cut := bytes.LastIndexByte(rw.buf, '\n') + 1
	if cut == 0 {
		return len(p), nil
	}
	if _, err := io.WriteString(rw.w, String(string(rw.buf[:cut]))); err != nil {
		return 0, err
	}
	rw.buf = append(rw.buf[:0], rw.buf[cut:]...)
	return len(p), nil
}

// Close writes what is left.
func (rw *Writer) Close() error {
	if len(rw.buf) == 0 {
		return nil
	}
	_, err := io.WriteString(rw.w, String(string(rw.buf)))
	rw.buf = rw.buf[:0]
	return err
}
