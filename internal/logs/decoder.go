package logs

import (
	"bytes"
	"errors"
	"path/filepath"

	"github.com/dupctl/dupctl/internal/logs/internal/infer"
)

// decoder reads the lines of one chunk of a source in the source's
// format. It holds what a wrapper splits across lines (a CRI partial, a
// Docker entry without its newline) until the line is whole.
type decoder struct {
	spec formatSpec
	// workerOf names the worker of a line that carries no consumer field:
	// its thread or pid, qualified by the file when several files are read
	// (every pod's main thread is "main"), or the file itself.
	source   string
	qualify  bool
	partial  []byte
	inPieces bool
	// header is a two-line record's first line, held for its second.
	header []byte
}

var (
	errPartial      = errors.New("partial line")
	errContinuation = errors.New("continuation line")
)

// read decodes line l into events, calling add for each one (most
// formats: one; an OTLP batch: one per record). errPartial means the line
// continues on the next.
func (d *decoder) read(x *extractor, l []byte, add func() *Event) error {
	if d.spec.prefix != infer.PrefixNone {
		return d.prefixed(x, l, add)
	}
	if d.spec.twoLine {
		return d.twoLine(x, l, add)
	}
	switch d.spec.format {
	case FormatOTLP:
		err := x.otlp(l, add)
		if err != nil && jsonFamily(l) == FormatJSON {
			// A plain JSON line among OTLP ones.
			return d.payload(x, l, FormatJSON, nil, add)
		}
		return err
	case FormatDocker, FormatCRI, FormatJournald:
		payload, fb, err := d.unwrap(l)
		if err != nil {
			return err
		}
		if (d.spec.inner == FormatText || d.spec.inner == FormatLogfmt) && isContinuation(payload) {
			return errContinuation // a stack trace's line, wrapped
		}
		return d.payload(x, payload, d.spec.inner, fb, add)
	}
	return d.payload(x, l, d.spec.format, nil, add)
}

// prefixed decodes a line behind a shipper's prefix: the prefix's fields
// (its instance, a syslog tag's pid, RFC 5424's structured data), then the
// rest in whatever format it has.
func (d *decoder) prefixed(x *extractor, l []byte, add func() *Event) error {
	p, rest, ok := infer.SplitPrefix(d.spec.prefix, l)
	if !ok {
		p, rest = infer.Prefix{}, l // a line of its own among prefixed ones: read as it is
	}
	x.begin()
	x.prefix = p
	f := lineFormat(rest)
	switch {
	case f == FormatJSON || f == FormatCLEF || f == FormatGELF || f == FormatLogfmt:
	case f == FormatText && !(p.Kind == infer.PrefixSyslog3164 || p.Kind == infer.PrefixSyslog5424):
	default:
		f = formatMessage // a syslog message, or a sentence with no layout of its own
	}
	err := d.decode(x, rest, f, nil, add)
	x.prefix = infer.Prefix{}
	return err
}

// formatMessage is a line that is a message and nothing else.
const formatMessage = numFormats

// twoLine joins a two-line record: the header (time, logger, method) is
// held until the "LEVEL: message" line after it. A message line with no
// header before it (the first line of a chunk) is read without a time.
func (d *decoder) twoLine(x *extractor, l []byte, add func() *Event) error {
	if julHeader(l) && !levelLine(l) {
		d.header = l
		return errContinuation // it belongs to the line after it: counted with the continuation lines
	}
	var c consoleLine
	lv, msg, ok := bytes.Cut(l, []byte(": "))
	if _, isLv := isLevel(lv); !ok || !isLv {
		d.header = nil
		return d.payload(x, l, FormatText, nil, add)
	}
	c.level, c.msg, c.layout = lv, msg, layoutTwoLine
	if h := d.header; h != nil {
		n := infer.ClockLen(h)
		if n == 0 {
			n = timestampLen(h)
		}
		c.time = h[:n]
		for _, w := range bytes.Fields(h[n:]) {
			c.slot(slotWord, w) // the logger's class, its method
		}
	}
	d.header = nil
	x.begin()
	local := x.console(&c)
	d.worker(x, local)
	x.clock = d.fillFor(x)
	x.finish(add())
	x.clock = nil
	return nil
}

// payload decodes one line of an inner format, with a wrapper's fields
// as fallbacks.
func (d *decoder) payload(x *extractor, l []byte, f Format, fb *wrapperFields, add func() *Event) error {
	x.begin()
	return d.decode(x, l, f, fb, add)
}

// decode reads line l of format f into the current line's fields.
func (d *decoder) decode(x *extractor, l []byte, f Format, fb *wrapperFields, add func() *Event) error {
	var local []byte
	switch f {
	case FormatOTLP:
		return x.otlp(l, add)
	case FormatLogfmt:
		forEachLogfmt(l, func(k, v []byte) bool {
			if k != nil {
				x.emitText(k, v)
			}
			return true
		})
		if x.has(Message) {
			x.sentenceFields(x.val[Message])
		}
	case formatMessage:
		x.sentenceFields(l)
		x.emit([]byte("message"), l)
	case FormatText:
		var c consoleLine
		var ok bool
		if fb != nil && d.spec.layout == layoutMessage {
			// A bare message inside a wrapper, whole: "Error processing
			// message ..." is a sentence, not a level and a message.
			c = consoleLine{msg: l}
		} else if c, ok = parseConsole(l); !ok {
			return errNotConsole
		}
		local = x.console(&c)
	default: // the JSON family
		x.gelf = f == FormatGELF
		err := x.jsonObject(l)
		x.gelf = false
		if err != nil {
			return err
		}
		x.renderTemplate(l)
	}
	if fb != nil {
		fb.apply(x)
	}
	d.worker(x, local)
	x.clock = d.fillFor(x)
	x.finish(add())
	x.clock = nil
	return nil
}

// fillFor is what completes this source's times that leave out their year
// or date (nil: such times are not read).
func (d *decoder) fillFor(x *extractor) *clockFill {
	if x.m.learned == nil {
		return nil
	}
	return x.m.learned.fills[d.source]
}

var errNotConsole = errors.New("not a line of the console layout this file is written in")

// console offers a console line's parts; it returns the process-local
// worker identity (thread or pid) for the caller to qualify.
func (x *extractor) console(c *consoleLine) []byte {
	if c.time != nil {
		x.emit([]byte("timestamp"), c.time)
	}
	if c.level != nil {
		x.emit([]byte("level"), c.level)
	}
	if x.m.learned != nil {
		for i := 0; i < c.nslots; i++ {
			if len(c.slots[i].val) > 0 {
				x.emit([]byte(c.slotName(i)), c.slots[i].val)
			}
		}
	}
	if c.ctx != nil {
		_, _ = x.object(c.ctx, 0, 1) // zap's fields, after the message
	}
	for _, kv := range c.kv {
		if k := string(kv[0]); k != "pid" && k != "tid" {
			x.emitText(kv[0], kv[1]) // pid and tid are the line's worker (returned)
		}
	}
	x.sentenceFields(c.msg)
	x.emit([]byte("message"), c.msg)
	if c.pod != nil {
		x.fallback(Consumer, c.pod, unitAuto)
	}
	if x.m.learned != nil && x.m.learned.worker {
		return nil // the layout inference said which slot is who (emitted above)
	}
	switch {
	case c.thread != nil:
		return c.thread
	case c.pid != nil:
		return c.pid
	}
	return nil
}

// worker fills the consumer of a line that names none: the thread or pid
// of a console line, qualified by the file when several are read, or the
// file alone for a text or logfmt line with neither.
func (d *decoder) worker(x *extractor, local []byte) {
	x.prefixFields()
	if x.m.learned != nil {
		x.emit([]byte(infer.File), []byte(filepath.Base(d.source)))
		if x.m.learned.worker {
			return // which field names the worker is the learned mapping's
		}
	}
	if x.has(Consumer) || (d.spec.format != FormatText && d.spec.format != FormatLogfmt &&
		d.spec.inner != FormatText && d.spec.inner != FormatLogfmt) {
		return
	}
	base := filepath.Base(d.source)
	if pod := podFromPath(d.source); pod != "" {
		base = pod
		if local == nil || !d.qualify {
			x.fallback(Consumer, []byte(pod), unitAuto)
			return
		}
	}
	switch {
	case local != nil && d.qualify:
		x.fallback(Consumer, append(append(bytes.Clone(local), '@'), base...), unitAuto)
	case local != nil:
		x.fallback(Consumer, local, unitAuto)
	case d.qualify:
		x.fallback(Consumer, []byte(base), unitAuto)
	}
}

// continuation reports whether l belongs to the event above it (a stack
// trace under a console line).
func (d *decoder) continuation(l []byte) bool {
	f := d.spec.format
	if f.wraps() {
		return false
	}
	return (f == FormatText || f == FormatLogfmt) && isContinuation(l)
}
