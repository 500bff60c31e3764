package logs

import (
	"bytes"
	"errors"
	"path/filepath"
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
}

var (
	errPartial      = errors.New("partial line")
	errContinuation = errors.New("continuation line")
)

// read decodes line l into events, calling add for each one (most
// formats: one; an OTLP batch: one per record). errPartial means the line
// continues on the next.
func (d *decoder) read(x *extractor, l []byte, add func() *Event) error {
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

// payload decodes one line of an inner format, with a wrapper's fields
// as fallbacks.
func (d *decoder) payload(x *extractor, l []byte, f Format, fb *wrapperFields, add func() *Event) error {
	x.begin()
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
	x.finish(add())
	return nil
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
