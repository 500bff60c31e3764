package logs

import (
	"bytes"

	"github.com/dupctl/dupctl/internal/logs/internal/infer"
)

// The console layouts the common logging libraries write by default, read
// by one tokenizer rather than a pattern each (the separators and the
// order of the prefix fields vary, the idea does not: a time, a level,
// some of pid, thread and logger, then the message). Shapes, as the
// libraries document them:
//
//	Spring Boot 3.x
//	    2025-05-10T01:34:33.608Z  INFO 88909 --- [myapp] [           main] o.s.b.d.f.logexample.MyApplication       : Starting ...
//	    (docs.spring.io/spring-boot/reference/features/logging.html, "Log Format")
//	Spring Boot 2.x  2019-03-05 10:57:51.112  INFO 45469 --- [           main] org.apache.catalina.core.StandardEngine  : Starting ...
//	logback default  09:07:50.215 [main] INFO  c.e.PaymentListener - message   (%d{HH:mm:ss.SSS} [%thread] %-5level %logger{36} - %msg%n)
//	log4j2           2026-12-02 09:07:50.215 [main] INFO  c.e.PaymentListener - message
//	Python logging   INFO:root:message   (basicConfig's BASIC_FORMAT "%(levelname)s:%(name)s:%(message)s")
//	                 2026-12-02 09:07:50,215 - payments - INFO - message   ("%(asctime)s - %(name)s - %(levelname)s - %(message)s")
//	Ruby Logger      I, [2026-12-02T09:07:50.215123 #1234]  INFO -- : message   (Logger::Formatter)
//	Sidekiq          2026-12-02T09:07:50.215Z pid=1234 tid=oxhc6h4vc class=PaymentJob jid=1b2c3d INFO: start
//	Go log           2026/12/02 09:07:50 message
//	kubectl --prefix [pod/payments-7d9f8b6c4-x2k9p/app] <any of the above>

// consoleLine is one console line taken apart. Its slices point into the
// line.
type consoleLine struct {
	time, level, pid, thread, logger, pod []byte
	kv                                    [][2][]byte // key=value in the prefix (Sidekiq's pid= tid= jid=)
	msg                                   []byte
	layout                                string
	// slots are the prefix's fields as they stand, by kind and order
	// (brackets, bare words, numbers): what a file's layout inference
	// decides the meaning of (internal/infer), where thread, logger and
	// pid above are the built-in guess by position.
	slots  [maxSlots]slotTok
	nslots int
	// ctx is a JSON object after the message (zap's console encoder).
	ctx []byte
}

// slotTok is one field of a console line's prefix.
type slotTok struct {
	kind byte // slotBracket, slotWord, slotDigits
	val  []byte
}

const (
	maxSlots    = 8
	slotBracket = 'b'
	slotWord    = 'w'
	slotDigits  = 'd'
)

// slot records a prefix field.
func (c *consoleLine) slot(kind byte, v []byte) {
	if c.nslots < maxSlots {
		c.slots[c.nslots] = slotTok{kind: kind, val: v}
		c.nslots++
	}
}

// slotNames names a line's slots by kind and order ("@bracket.0",
// "@word.1", "@digits.0"), the names the layout inference gives them.
func (c *consoleLine) slotName(i int) string {
	n := 0
	for j := 0; j < i; j++ {
		if c.slots[j].kind == c.slots[i].kind {
			n++
		}
	}
	return slotPrefix(c.slots[i].kind) + string(rune('0'+n))
}

func slotPrefix(kind byte) string {
	switch kind {
	case slotBracket:
		return "@bracket."
	case slotDigits:
		return "@digits."
	}
	return "@word."
}

// levelWords are the level names the logging libraries write, zerolog's
// console abbreviations (TRC DBG INF WRN ERR FTL PNC) and java.util.logging's
// (SEVERE, CONFIG, FINE, FINER, FINEST) included.
var levelWords = []string{"TRACE", "DEBUG", "INFO", "NOTICE", "WARN", "WARNING", "ERROR", "ERR", "FATAL", "CRITICAL", "CRIT", "SEVERE",
	"FINE", "FINER", "FINEST", "CONFIG", "PANIC", "TRC", "DBG", "INF", "WRN", "FTL", "PNC"}

// isLevel reports whether t is a level word (any case; [INFO] and INFO:
// too) and returns the bare word.
func isLevel(t []byte) ([]byte, bool) {
	t = bytes.TrimSuffix(t, []byte(":"))
	if len(t) > 2 && t[0] == '[' && t[len(t)-1] == ']' {
		t = bytes.TrimSpace(t[1 : len(t)-1])
	}
	if len(t) < 3 || len(t) > 8 {
		return nil, false
	}
	for _, w := range levelWords {
		if bytes.EqualFold(t, []byte(w)) {
			return t, true
		}
	}
	return nil, false
}

// parseConsole takes a console line apart; false when it is not one (no
// time or level where a layout puts them).
func parseConsole(l []byte) (consoleLine, bool) {
	var c consoleLine
	i := 0
	if bytes.HasPrefix(l, []byte("[pod/")) {
		end := bytes.Index(l, []byte("] "))
		if end < 0 {
			return c, false
		}
		c.pod, _, _ = bytes.Cut(l[5:end], []byte("/"))
		i = end + 2
	}
	rest := l[i:]
	if ok := c.ruby(rest); ok {
		return c, true
	}
	if ok := c.pythonBasic(rest); ok {
		return c, true
	}
	n := timestampLen(rest)
	if n == 0 {
		n = infer.ClockLen(rest) // java.util.logging's, Kitchen (zerolog's console), a time of day alone
	}
	if n > 0 {
		c.time = bytes.Trim(rest[:n], "[]")
		rest = rest[n:]
	}
	if bytes.Count(rest, []byte("\t")) >= 2 {
		if ok := c.tabs(rest); ok {
			return c, true
		}
	}
	var buf [10]token // on the stack: this runs once per line
	toks := appendTokens(buf[:0], rest, len(buf))
	lvl := -1
	for k, t := range toks {
		if k >= 8 {
			break
		}
		if _, ok := isLevel(t.b); ok {
			lvl = k
			break
		}
	}
	switch {
	case lvl >= 0:
		c.afterLevel(rest, toks, lvl)
	case n > 0:
		c.noLevel(rest, toks)
	default:
		return c, false
	}
	c.layout = c.guessLayout(rest)
	return c, true
}

type token struct {
	b        []byte
	from, to int // in the text tokens was given
}

// tokens splits the first max space-separated tokens of s, keeping a
// bracketed token ([           main]) whole.
func appendTokens(out []token, s []byte, max int) []token {
	i := 0
	for len(out) < max {
		for i < len(s) && (s[i] == ' ' || s[i] == '\t') {
			i++
		}
		if i >= len(s) {
			break
		}
		j := i
		if s[i] == '[' {
			if k := bytes.IndexByte(s[i:], ']'); k > 0 {
				j = i + k + 1
				// [app] stays one token even when followed by more text: Ruby's "#1234]".
				for j < len(s) && s[j] != ' ' && s[j] != '\t' {
					j++
				}
			}
		}
		for j < len(s) && s[j] != ' ' && s[j] != '\t' {
			j++
		}
		out = append(out, token{b: s[i:j], from: i, to: j})
		i = j
	}
	return out
}

// afterLevel reads a layout with a level: the message starts after the
// first separator that follows the level (" : ", " - ", a token ending in
// ':' such as "INFO:" or "payments:"); pid, thread and logger are what
// stands between.
func (c *consoleLine) afterLevel(rest []byte, toks []token, lvl int) {
	for k := 0; k < lvl; k++ {
		c.prefixToken(toks[k].b, false)
	}
	lv := toks[lvl].b
	c.level, _ = isLevel(lv)
	before, kvBefore := c.nslots, len(c.kv)
	if bytes.HasSuffix(lv, []byte(":")) {
		c.msg = bytes.TrimLeft(rest[toks[lvl].to:], " ")
		return
	}
	dashes := false
	brackets := 0
	for k := lvl + 1; k < len(toks); k++ {
		t := toks[k].b
		switch {
		case isSeparator(t):
			c.msg = bytes.TrimLeft(rest[toks[k].to:], " ")
			return
		case bytes.Equal(t, []byte("---")):
			dashes = true
		case c.pid == nil && !dashes && isDigits(t):
			c.pid = t
			c.slot(slotDigits, t)
		case t[0] == '[' && t[len(t)-1] == ']':
			inside := bytes.TrimSpace(t[1 : len(t)-1])
			if isCorrelation(inside) {
				continue // a trace, not a thread
			}
			c.slot(slotBracket, inside)
			brackets++
			// Spring Boot 3: [app] [thread] [trace-span], the app only
			// with spring.application.name, the trace with tracing on;
			// 2: [thread].
			if brackets <= 2 {
				c.thread = inside
			}
		case bytes.HasSuffix(t, []byte(":")) && len(t) > 1:
			c.logger = t[:len(t)-1]
			c.slot(slotWord, c.logger)
			c.msg = bytes.TrimLeft(rest[toks[k].to:], " ")
			return
		case bytes.IndexByte(t, '=') > 0:
			c.kv = append(c.kv, kvOf(t))
		default:
			c.logger = t
			c.slot(slotWord, t)
		}
	}
	// No separator among the first tokens: the message is what follows
	// the level, its plain prefix fields and the brackets right after it
	// (Python's "%(levelname)s [%(name)s] %(message)s").
	last := lvl
	c.nslots = before
	// The key=value tokens seen after the level are then the message's own
	// (zerolog's console: "INF charge succeeded amount_cents=1 order=o-1"):
	// the message's fields are read from the message, once. Kept here too,
	// each would be offered twice, and a learning that judges a field by how
	// many of its values differ (a lock's key against a host) would see every
	// value repeated.
	c.kv = c.kv[:kvBefore]
	for k := lvl + 1; k < len(toks) && k <= lvl+1 && isDigits(toks[k].b); k++ {
		last = k
		c.slot(slotDigits, toks[k].b)
	}
	for k := last + 1; k < len(toks) && isBracketed(toks[k].b); k++ {
		last = k
		c.slot(slotBracket, bytes.TrimSpace(toks[k].b[1:len(toks[k].b)-1]))
	}
	c.logger = nil
	c.msg = bytes.TrimLeft(rest[toks[last].to:], " ")
}

func isBracketed(t []byte) bool { return len(t) >= 2 && t[0] == '[' && t[len(t)-1] == ']' }

// tabs reads a tab-separated layout (zap's console encoder: time, level,
// logger, caller, message, then the fields as a JSON object): the last
// column that is not a JSON object is the message; the columns between
// the level and it are prefix fields.
func (c *consoleLine) tabs(rest []byte) bool {
	var cols [12][]byte
	n := 0
	for s := bytes.TrimLeft(rest, " \t"); n < len(cols); {
		col, more, found := bytes.Cut(s, []byte("\t"))
		cols[n] = bytes.TrimSpace(col)
		n++
		if !found {
			break
		}
		if n == len(cols) {
			cols[n-1] = bytes.TrimSpace(s) // the rest, tabs and all
			break
		}
		s = more
	}
	if n < 3 {
		return false
	}
	lv, ok := isLevel(cols[0])
	if !ok {
		return false
	}
	last := n - 1
	if len(cols[last]) > 0 && cols[last][0] == '{' {
		c.ctx = cols[last]
		last--
	}
	if last < 1 {
		return false
	}
	c.level, c.msg = lv, cols[last]
	for k := 1; k < last; k++ {
		if len(cols[k]) > 0 {
			c.slot(slotWord, cols[k])
		}
	}
	if last > 1 {
		c.logger = cols[1]
	}
	c.layout = "tab-separated"
	return true
}

// noLevel reads a layout without a level (Go's log, syslog): after the
// time, bracketed and key=value prefix tokens, then the message; a
// syslog tag ("app[1234]:") ends the prefix.
func (c *consoleLine) noLevel(rest []byte, toks []token) {
	from := 0
	for k, t := range toks {
		if k < 3 && bytes.HasSuffix(t.b, []byte(":")) && len(t.b) > 1 && bytes.IndexByte(t.b, '=') < 0 {
			if j := bytes.IndexByte(t.b, '['); j > 0 {
				c.pid = bytes.TrimSuffix(t.b[j+1:], []byte("]:"))
				c.slot(slotWord, t.b[:j])
				c.slot(slotDigits, c.pid)
			}
			from = t.to
			break
		}
		if t.b[0] == '[' || bytes.IndexByte(t.b, '=') > 0 && k < 6 && isPrefixKV(t.b) {
			c.prefixToken(t.b, true)
			from = t.to
			continue
		}
		break
	}
	c.msg = bytes.TrimLeft(rest[from:], " ")
}

// prefixToken records a token that stands before the level.
func (c *consoleLine) prefixToken(t []byte, noLevel bool) {
	switch {
	case t[0] == '[' && t[len(t)-1] == ']':
		inside := bytes.TrimSpace(t[1 : len(t)-1])
		if c.thread == nil {
			c.thread = inside
		}
		c.slot(slotBracket, inside)
	case bytes.IndexByte(t, '=') > 0:
		kv := kvOf(t)
		c.kv = append(c.kv, kv)
		// Sidekiq's process and thread: the line's worker, not fields.
		switch string(kv[0]) {
		case "tid":
			c.thread = kv[1]
		case "pid":
			c.pid = kv[1]
		}
	case isSeparator(t):
	case !noLevel && c.logger == nil && !isDigits(t):
		c.logger = t // Python's "%(asctime)s - %(name)s - %(levelname)s"
		c.slot(slotWord, t)
	case isDigits(t):
		c.slot(slotDigits, t)
	}
}

// isCorrelation reports whether a bracket holds Spring Boot's correlation
// id (CorrelationIdFormatter: [traceId-spanId], W3C hex ids joined by
// dashes) rather than a name.
func isCorrelation(b []byte) bool {
	parts, run := 1, 0 // one pass, no split: every bracket of every line comes here
	for _, c := range b {
		switch {
		case c == '-':
			if run < 16 {
				return false
			}
			parts, run = parts+1, 0
		case c >= '0' && c <= '9' || c >= 'a' && c <= 'f' || c >= 'A' && c <= 'F':
			run++
		default:
			return false
		}
	}
	return parts >= 2 && run >= 16
}

// isPrefixKV: Sidekiq's and Rails' prefix keys.
func isPrefixKV(t []byte) bool {
	k, _, _ := bytes.Cut(t, []byte("="))
	switch string(k) {
	case "pid", "tid", "class", "jid", "elapsed", "bid", "queue":
		return true
	}
	return false
}

func kvOf(t []byte) [2][]byte {
	k, v, _ := bytes.Cut(t, []byte("="))
	return [2][]byte{k, bytes.Trim(v, `"`)}
}

func isSeparator(t []byte) bool {
	return len(t) == 1 && (t[0] == ':' || t[0] == '-' || t[0] == '|') || bytes.Equal(t, []byte("--")) || bytes.Equal(t, []byte("-->"))
}

func isDigits(t []byte) bool {
	if len(t) == 0 {
		return false
	}
	for _, c := range t {
		if c < '0' || c > '9' {
			return false
		}
	}
	return true
}

// ruby reads Ruby's Logger::Formatter: "I, [time #pid]  INFO -- prog: msg".
func (c *consoleLine) ruby(l []byte) bool {
	if len(l) < 6 || l[1] != ',' || l[2] != ' ' || l[3] != '[' || bytes.IndexByte([]byte("DIWEFAU"), l[0]) < 0 {
		return false
	}
	end := bytes.IndexByte(l, ']')
	if end < 0 {
		return false
	}
	ts, pid, _ := bytes.Cut(l[4:end], []byte(" #"))
	rest := bytes.TrimLeft(l[end+1:], " ")
	lvl, after, ok := bytes.Cut(rest, []byte(" -- "))
	if !ok {
		return false
	}
	prog, msg, ok := bytes.Cut(after, []byte(": "))
	if !ok {
		prog, msg = nil, bytes.TrimPrefix(after, []byte(":"))
	}
	c.time, c.pid, c.level, c.logger, c.msg = ts, pid, bytes.TrimSpace(lvl), bytes.TrimSpace(prog), bytes.TrimLeft(msg, " ")
	c.layout = "ruby-logger"
	return true
}

// pythonBasic reads logging.basicConfig's default "LEVEL:name:message".
func (c *consoleLine) pythonBasic(l []byte) bool {
	lv, rest, ok := bytes.Cut(l, []byte(":"))
	if !ok {
		return false
	}
	if _, isLv := isLevel(lv); !isLv || !bytes.Equal(bytes.ToUpper(lv), lv) {
		return false
	}
	name, msg, ok := bytes.Cut(rest, []byte(":"))
	if !ok || bytes.IndexByte(name, ' ') >= 0 {
		return false
	}
	c.level, c.logger, c.msg, c.layout = lv, name, msg, "python-logging"
	return true
}

// guessLayout names the layout for the report.
func (c *consoleLine) guessLayout(rest []byte) string {
	switch {
	case bytes.Contains(rest, []byte(" --- ")):
		return "spring-boot"
	case len(c.kv) > 0 && isPrefixKV(c.kv[0][0]) && c.level != nil:
		return "sidekiq"
	case c.level == nil && c.pid != nil:
		return "syslog"
	case c.level == nil:
		return "go-log"
	case c.thread != nil:
		return "logback/log4j2"
	case c.logger != nil:
		return "python-logging"
	}
	return "console"
}

// consoleLayout names the layout most sample lines show.
func consoleLayout(lines [][]byte) string {
	count := map[string]int{}
	best := ""
	for _, l := range lines {
		if c, ok := parseConsole(l); ok {
			count[c.layout]++
			if best == "" || count[c.layout] > count[best] {
				best = c.layout
			}
		}
	}
	return best
}

// timestampLen is the length of a timestamp at the start of s (0: none):
// ISO 8601 with T or a space (fraction with . or ,, optional zone), Go's
// 2006/01/02 15:04:05, a time of day alone (logback's HH:mm:ss.SSS),
// syslog's "Dec  2 09:07:50", each optionally in brackets. It runs at the
// start of every console line and stays one switch over the layouts, over
// the size limits on purpose: BenchmarkTimestampLen measures it.
func timestampLen(s []byte) int {
	if len(s) > 0 && s[0] == '[' {
		if end := bytes.IndexByte(s, ']'); end > 0 {
			if n := timestampLen(s[1:end]); n == end-1 {
				return end + 1
			}
		}
		return 0
	}
	digit := func(i int) bool { return i < len(s) && s[i] >= '0' && s[i] <= '9' }
	digits := func(i, n int) bool {
		for k := 0; k < n; k++ {
			if !digit(i + k) {
				return false
			}
		}
		return true
	}
	clock := func(i int) int { // HH:MM:SS[.,frac] from i; returns the end
		if !digits(i, 2) || i+8 > len(s) || s[i+2] != ':' || !digits(i+3, 2) || s[i+5] != ':' || !digits(i+6, 2) {
			return -1
		}
		j := i + 8
		if j < len(s) && (s[j] == '.' || s[j] == ',') && digit(j+1) {
			j++
			for digit(j) {
				j++
			}
		}
		return j
	}
	zone := func(j int) int {
		switch {
		case j < len(s) && (s[j] == 'Z' || s[j] == 'z'):
			return j + 1
		case j < len(s) && (s[j] == '+' || s[j] == '-') && digits(j+1, 2):
			k := j + 3
			if k < len(s) && s[k] == ':' {
				k++
			}
			if digits(k, 2) {
				return k + 2
			}
			return j + 3
		case j+1 < len(s) && s[j] == ' ' && (s[j+1] == '+' || s[j+1] == '-') && digits(j+2, 4):
			return j + 6 // 2026-12-02 09:07:50,215 +0000
		}
		return j
	}
	switch {
	case digits(0, 4) && len(s) > 10 && (s[4] == '-' || s[4] == '/') && digits(5, 2) && s[7] == s[4] && digits(8, 2) &&
		(s[10] == 'T' || s[10] == ' ' || s[10] == 't'):
		if j := clock(11); j > 0 {
			return zone(j)
		}
	case digits(0, 2) && len(s) > 2 && s[2] == ':':
		if j := clock(0); j > 0 {
			return j
		}
	case len(s) > 15 && isMonth(s[:3]) && s[3] == ' ':
		k := 4
		if s[k] == ' ' {
			k++
		}
		for digit(k) {
			k++
		}
		if k < len(s) && s[k] == ' ' {
			if j := clock(k + 1); j > 0 {
				return j
			}
		}
	}
	return 0
}

func isMonth(b []byte) bool {
	switch string(b) {
	case "Jan", "Feb", "Mar", "Apr", "May", "Jun", "Jul", "Aug", "Sep", "Oct", "Nov", "Dec":
		return true
	}
	return false
}

// isContinuation reports whether a line belongs to the event above it in
// a console log: a stack trace's frames and causes, a Python traceback, a
// Ruby backtrace.
func isContinuation(l []byte) bool {
	if len(l) == 0 {
		return false
	}
	if l[0] == ' ' || l[0] == '\t' {
		return true
	}
	for _, p := range []string{"Caused by:", "Traceback (most recent call last):", "... ", "Suppressed:"} {
		if bytes.HasPrefix(l, []byte(p)) {
			return true
		}
	}
	// An exception's first line: java.lang.IllegalStateException: ...,
	// a Python exception: ValueError: ..., or any class a package names
	// (org.springframework...HttpServerErrorException$ServiceUnavailable: 503).
	head, _, _ := bytes.Cut(l, []byte(": "))
	if bytes.IndexByte(head, ' ') < 0 &&
		(bytes.HasSuffix(head, []byte("Exception")) || bytes.HasSuffix(head, []byte("Error")) || isJavaClass(head)) {
		return len(head) < len(l) || isJavaClass(head)
	}
	// A Ruby backtrace frame, unindented: /app/jobs/charge_job.rb:88:in `perform'.
	if path, rest, ok := bytes.Cut(l, []byte(":")); ok && bytes.IndexByte(path, ' ') < 0 {
		n := 0
		for n < len(rest) && rest[n] >= '0' && rest[n] <= '9' {
			n++
		}
		return n > 0 && bytes.HasPrefix(rest[n:], []byte(":in "))
	}
	return false
}

// isJavaClass reports whether s is a qualified Java class name: lower-case
// package segments, then a capitalised class ($Inner allowed).
func isJavaClass(s []byte) bool {
	pkg, class, ok := cutLast(s, '.')
	if !ok || len(class) == 0 || class[0] < 'A' || class[0] > 'Z' || len(pkg) == 0 {
		return false
	}
	for _, seg := range bytes.Split(pkg, []byte(".")) {
		if len(seg) == 0 || seg[0] < 'a' || seg[0] > 'z' {
			return false
		}
	}
	return bytes.IndexFunc(s, func(r rune) bool {
		return !(r >= 'a' && r <= 'z' || r >= 'A' && r <= 'Z' || r >= '0' && r <= '9' || r == '.' || r == '_' || r == '$')
	}) < 0
}

func cutLast(s []byte, c byte) (before, after []byte, ok bool) {
	if i := bytes.LastIndexByte(s, c); i >= 0 {
		return s[:i], s[i+1:], true
	}
	return s, nil, false
}
