// Package infer learns how a stranger's log is written from a sample of its
// lines: the shipper's prefix and the line's layout, what each field holds
// (the worker, a thread, a logger, a business key, a context value), and
// which message template records which step of the worker flow. It is pure:
// functions over sampled lines and records, no I/O, no clock. The reader
// (internal/logs) runs it on a sample before the scan and consumes its
// result on every line; the functions that run per line (SplitPrefix) stay
// allocation-free.
package infer

import (
	"bytes"
)

// PrefixKind is the shipper (or transport) that put its own prefix before
// each line of the application's log.
type PrefixKind uint8

// The prefixes read. Each carries the name of the instance that wrote the
// line, so it is the best evidence of a worker there is.
const (
	PrefixNone       PrefixKind = iota
	PrefixKubectl               // kubectl logs --prefix: "[pod/NAME/CONTAINER] "
	PrefixCompose               // docker compose logs: "service-1  | "
	PrefixSyslog3164            // RFC 3164 (BSD syslog, rsyslog's traditional file format): "Mmm dd hh:mm:ss host tag[pid]: "
	PrefixSyslog5424            // RFC 5424: "<pri>1 time host app procid msgid [sd] "
	numPrefixes
)

var prefixNames = [numPrefixes]string{"", "kubectl", "compose", "syslog-3164", "syslog-5424"}

func (k PrefixKind) String() string {
	if k < numPrefixes {
		return prefixNames[k]
	}
	return "unknown"
}

// Prefix is what a shipper's prefix says of its line. Its slices point into
// the line.
type Prefix struct {
	Kind PrefixKind
	// Instance is the name of what wrote the line: the pod, the compose
	// service, the syslog host.
	Instance []byte
	// App, PID: the syslog tag's program and process id (5424: APP-NAME,
	// PROCID); Container: kubectl's container.
	App, PID, Container []byte
	// Time is the prefix's own timestamp (syslog), as written.
	Time []byte
	// MsgID and SD are RFC 5424's MSGID and STRUCTURED-DATA ("-" left out).
	MsgID, SD []byte
}

// SplitPrefix takes the prefix of kind k off a line: the prefix's fields and
// the rest of the line (the application's own line). ok is false when the
// line does not start with such a prefix.
func SplitPrefix(k PrefixKind, l []byte) (p Prefix, rest []byte, ok bool) {
	switch k {
	case PrefixKubectl:
		return splitKubectl(l)
	case PrefixCompose:
		return splitCompose(l)
	case PrefixSyslog3164:
		return split3164(l)
	case PrefixSyslog5424:
		return split5424(l)
	}
	return Prefix{}, l, false
}

// DetectPrefix is the prefix most of the sample lines start with, and how
// many do; PrefixNone when fewer than half do.
func DetectPrefix(lines [][]byte) (PrefixKind, int) {
	var votes [numPrefixes]int
	for _, l := range lines {
		for k := PrefixKubectl; k < numPrefixes; k++ {
			if _, _, ok := SplitPrefix(k, l); ok {
				votes[k]++
				break
			}
		}
	}
	best := PrefixNone
	for k := PrefixKubectl; k < numPrefixes; k++ {
		if votes[k] > votes[best] {
			best = k
		}
	}
	if best == PrefixNone || votes[best]*2 <= len(lines) {
		return PrefixNone, 0
	}
	if best == PrefixCompose && !composeAligned(lines) {
		return PrefixNone, 0
	}
	return best, votes[best]
}

// splitKubectl: "[pod/NAME/CONTAINER] line" (kubectl logs --prefix; also
// "[NAME/CONTAINER]" as older kubectl and stern write it).
func splitKubectl(l []byte) (Prefix, []byte, bool) {
	if len(l) < 4 || l[0] != '[' {
		return Prefix{}, l, false
	}
	end := bytes.IndexByte(l, ']')
	if end < 0 || end+1 < len(l) && l[end+1] != ' ' {
		return Prefix{}, l, false
	}
	inside := l[1:end]
	if bytes.IndexByte(inside, ' ') >= 0 {
		return Prefix{}, l, false
	}
	parts := bytes.Split(inside, []byte("/"))
	var name, container []byte
	switch {
	case len(parts) == 3 && bytes.Equal(parts[0], []byte("pod")):
		name, container = parts[1], parts[2]
	case len(parts) == 2 && len(parts[0]) > 0 && !bytes.Equal(parts[0], []byte("pod")):
		name, container = parts[0], parts[1]
	default:
		return Prefix{}, l, false
	}
	if !isName(name) || !isName(container) {
		return Prefix{}, l, false
	}
	rest := l[end+1:]
	if len(rest) > 0 {
		rest = rest[1:]
	}
	return Prefix{Kind: PrefixKubectl, Instance: name, Container: container}, rest, true
}

// splitCompose: "service-1  | line": a name, blanks that pad it to the
// longest service's name, "| ".
func splitCompose(l []byte) (Prefix, []byte, bool) {
	i := bytes.Index(l, []byte(" | "))
	if i <= 0 || i > 96 {
		if bytes.HasSuffix(l, []byte(" |")) && len(l) > 2 { // an empty line of the service
			i = len(l) - 2
		} else {
			return Prefix{}, l, false
		}
	}
	name := bytes.TrimRight(l[:i], " ")
	if !isName(name) {
		return Prefix{}, l, false
	}
	rest := l[min(i+3, len(l)):]
	return Prefix{Kind: PrefixCompose, Instance: name}, rest, true
}

// composeAligned: compose pads every service's name to one width, so the
// bar stands in one column on most lines - a sentence with " | " in it
// does not.
func composeAligned(lines [][]byte) bool {
	col := map[int]int{}
	n := 0
	for _, l := range lines {
		if i := bytes.Index(l, []byte(" | ")); i > 0 {
			col[i]++
			n++
		}
	}
	best := 0
	for _, c := range col {
		best = max(best, c)
	}
	return n > 0 && best*4 >= n*3
}

// isName: a host, pod, container or service name (letters, digits, - _ .),
// with a letter.
func isName(b []byte) bool {
	if len(b) == 0 || len(b) > 253 {
		return false
	}
	letter := false
	for _, c := range b {
		switch {
		case c >= 'a' && c <= 'z' || c >= 'A' && c <= 'Z':
			letter = true
		case c >= '0' && c <= '9' || c == '-' || c == '_' || c == '.':
		default:
			return false
		}
	}
	return letter
}

// split3164: "[<pri>]Mmm dd hh:mm:ss host tag[pid]: msg" (RFC 3164 4.1; the
// year is not written). A tag without [pid] ends at the colon.
func split3164(l []byte) (Prefix, []byte, bool) {
	s := skipPRI(l)
	n := syslogTimeLen(s)
	if n == 0 || n >= len(s) || s[n] != ' ' {
		return Prefix{}, l, false
	}
	p := Prefix{Kind: PrefixSyslog3164, Time: s[:n]}
	s = s[n+1:]
	host, s, ok := bytes.Cut(s, []byte(" "))
	if !ok || !isName(host) && !isIP(host) {
		return Prefix{}, l, false
	}
	p.Instance = host
	tagEnd := bytes.IndexByte(s, ':')
	if tagEnd <= 0 || tagEnd > 64 || bytes.IndexByte(s[:tagEnd], ' ') >= 0 {
		return Prefix{}, l, false
	}
	tag := s[:tagEnd]
	if i := bytes.IndexByte(tag, '['); i > 0 && tag[len(tag)-1] == ']' {
		p.App, p.PID = tag[:i], tag[i+1:len(tag)-1]
	} else {
		p.App = tag
	}
	rest := s[tagEnd+1:]
	if len(rest) > 0 && rest[0] == ' ' {
		rest = rest[1:]
	}
	return p, rest, true
}

// skipPRI skips a "<pri>" at the start of a line (what a relay writes; a
// file usually drops it).
func skipPRI(l []byte) []byte {
	if len(l) < 3 || l[0] != '<' {
		return l
	}
	for i := 1; i < len(l) && i <= 4; i++ {
		if l[i] == '>' && i > 1 {
			return l[i+1:]
		}
		if l[i] < '0' || l[i] > '9' {
			return l
		}
	}
	return l
}

// syslogTimeLen is the length of "Mmm dd hh:mm:ss" (dd padded with a blank)
// at the start of s, or 0.
func syslogTimeLen(s []byte) int {
	if len(s) < 15 || !isMonth(s[:3]) || s[3] != ' ' {
		return 0
	}
	d := s[4:6]
	if !(d[0] == ' ' || isDigit(d[0])) || !isDigit(d[1]) || s[6] != ' ' {
		return 0
	}
	c := s[7:15]
	if !isDigit(c[0]) || !isDigit(c[1]) || c[2] != ':' || !isDigit(c[3]) || !isDigit(c[4]) || c[5] != ':' || !isDigit(c[6]) ||
		!isDigit(c[7]) {
		return 0
	}
	return 15
}

func isDigit(c byte) bool { return c >= '0' && c <= '9' }

func isMonth(b []byte) bool {
	return monthIndex(b) > 0
}

// monthIndex is 1..12 for an English month abbreviation, else 0.
func monthIndex(b []byte) int {
	if len(b) != 3 {
		return 0
	}
	for i, m := range [...]string{"Jan", "Feb", "Mar", "Apr", "May", "Jun", "Jul", "Aug", "Sep", "Oct", "Nov", "Dec"} {
		if string(b) == m {
			return i + 1
		}
	}
	return 0
}

func isIP(b []byte) bool {
	if len(b) == 0 {
		return false
	}
	for _, c := range b {
		if !(isDigit(c) || c == '.' || c == ':' || c >= 'a' && c <= 'f' || c >= 'A' && c <= 'F') {
			return false
		}
	}
	return true
}

// split5424: "<pri>1 TIMESTAMP HOSTNAME APP-NAME PROCID MSGID SD [MSG]"
// (RFC 5424 6; "-" for a value not given; SD is "-" or one or more
// [id param="value" ...] elements; MSG may start with a UTF-8 BOM).
func split5424(l []byte) (Prefix, []byte, bool) {
	if len(l) < 4 || l[0] != '<' {
		return Prefix{}, l, false
	}
	s := skipPRI(l)
	if len(s) == len(l) || len(s) < 2 || s[0] < '1' || s[0] > '9' || s[1] != ' ' {
		return Prefix{}, l, false
	}
	s = s[2:]
	var f [5][]byte
	for i := range f {
		var ok bool
		f[i], s, ok = bytes.Cut(s, []byte(" "))
		if !ok || len(f[i]) == 0 {
			return Prefix{}, l, false
		}
	}
	p := Prefix{Kind: PrefixSyslog5424}
	nilv := func(b []byte) []byte {
		if len(b) == 1 && b[0] == '-' {
			return nil
		}
		return b
	}
	p.Time, p.Instance, p.App, p.PID, p.MsgID = nilv(f[0]), nilv(f[1]), nilv(f[2]), nilv(f[3]), nilv(f[4])
	sd, rest, ok := cutSD(s)
	if !ok {
		return Prefix{}, l, false
	}
	p.SD = sd
	rest = bytes.TrimPrefix(rest, []byte("\xef\xbb\xbf"))
	return p, rest, true
}

// cutSD cuts RFC 5424's STRUCTURED-DATA off s: "-" or [..][..], values
// quoted with \" \\ \] escapes.
func cutSD(s []byte) (sd, rest []byte, ok bool) {
	if len(s) == 0 {
		return nil, nil, false
	}
	if s[0] == '-' {
		if len(s) == 1 {
			return nil, nil, true
		}
		if s[1] == ' ' {
			return nil, s[2:], true
		}
		return nil, nil, false
	}
	i := 0
	for i < len(s) && s[i] == '[' {
		inQuote := false
		j := i + 1
		for ; j < len(s); j++ {
			c := s[j]
			if c == '\\' && inQuote {
				j++
				continue
			}
			if c == '"' {
				inQuote = !inQuote
			}
			if c == ']' && !inQuote {
				break
			}
		}
		if j >= len(s) {
			return nil, nil, false
		}
		i = j + 1
	}
	if i == 0 {
		return nil, nil, false
	}
	sd = s[:i]
	if i < len(s) {
		if s[i] != ' ' {
			return nil, nil, false
		}
		i++
	}
	return sd, s[i:], true
}

// SDParams calls fn for each param of RFC 5424 structured data, with its
// element's id: [id k="v" k2="v2"][id2 ...]. Escapes (\" \\ \]) are kept
// in the value as written.
func SDParams(sd []byte, fn func(id, k, v []byte)) {
	for len(sd) > 0 && sd[0] == '[' {
		i := 1
		for i < len(sd) && sd[i] != ' ' && sd[i] != ']' {
			i++
		}
		id := sd[1:i]
		for i < len(sd) && sd[i] == ' ' {
			i++
			k0 := i
			for i < len(sd) && sd[i] != '=' && sd[i] != ']' {
				i++
			}
			if i+1 >= len(sd) || sd[i] != '=' || sd[i+1] != '"' {
				return
			}
			k := sd[k0:i]
			i += 2
			v0 := i
			for i < len(sd) && sd[i] != '"' {
				if sd[i] == '\\' {
					i++
				}
				i++
			}
			if i >= len(sd) {
				return
			}
			fn(id, k, sd[v0:i])
			i++
		}
		if i >= len(sd) || sd[i] != ']' {
			return
		}
		sd = sd[i+1:]
	}
}
