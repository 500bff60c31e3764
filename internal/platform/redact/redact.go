// Package redact removes secrets from anything dupctl prints: passwords in
// connection URLs (redis, rediss, postgres, postgresql, amqp, amqps and any
// other scheme://user:pass@host form), secret query parameters, and
// key=value DSN fields such as password=... in libpq connection strings.
//
// Every message, error and renderer goes through String, so a URL given on
// the command line or echoed back by a driver error never leaks its password.
package redact

import (
	"net/url"
	"regexp"
	"strings"
)

// Mask replaces every secret.
const Mask = "xxxxx"

// userinfo matches scheme://user:password@ and scheme://:password@ and
// scheme://token@ (a lone userinfo is a password for Redis: redis://secret@host).
// The password may contain anything RFC 3986 allows in userinfo (so never a
// quote, backslash or space, which lets the same pattern run over JSON and
// XML output) plus a raw '@'; the last '@' before the host ends it, as in
// net/url.
var userinfo = regexp.MustCompile(`(?i)\b([a-z][a-z0-9+.-]*://)([^\s/?#@:"'\\<>]*:)?([^\s/?#"'\\<>]*)@`)

// secretParam matches key=value DSN fields and parameters that hold
// credentials. A bare "token=" is left alone except as a URL query
// parameter: lock owner tokens are evidence dupctl must show, not secrets.
var secretParam = regexp.MustCompile(`(?i)(\b(?:password|passwd|pwd|sslpassword|secret|client_secret|access_token|auth_token|authtoken|apikey|api_key)|[?&](?:token|key|sig|signature|auth))(\s*=\s*)('(?:[^'\\]|\\.)*'|"(?:[^"\\]|\\.)*"|[^\s&;,'"]+)`)

// String returns s with every secret it can recognise masked.
func String(s string) string {
	if !strings.ContainsAny(s, "@=") {
		return s
	}
	s = userinfo.ReplaceAllStringFunc(s, maskUserinfo)
	s = secretParam.ReplaceAllString(s, "${1}${2}"+Mask)
	return s
}

func maskUserinfo(m string) string {
	sub := userinfo.FindStringSubmatch(m)
	scheme, user, rest := sub[1], sub[2], sub[3]
	if user == "" {
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

// URL redacts one URL. It parses when it can, so the result is the
// canonical form with the password replaced; otherwise it falls back to
// String.
func URL(raw string) string {
	u, err := url.Parse(raw)
	if err != nil || u.Scheme == "" {
		return String(raw)
	}
	return String(u.Redacted())
}
