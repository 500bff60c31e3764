package logs

import (
	"bytes"
	"encoding/json"
	"errors"
	"path/filepath"
	"strings"
)

// The wrappers put another format's line inside their own: Docker's
// json-file driver ({"log":"<line>\n","stream":"stdout","time":"..."};
// docs.docker.com/engine/logging/drivers/json-file), the CRI log files
// Kubernetes keeps under /var/log/pods ("2026-12-02T09:07:50.215123456Z
// stdout F <line>", P for a part of a longer line; kubernetes' CRI logging
// design, pkg/kubelet/kuberuntime/logs), and journald's JSON export
// (journalctl -o json: MESSAGE, __REALTIME_TIMESTAMP in microseconds,
// _HOSTNAME, _PID, and a service's own FIELDS; systemd.journal-fields(7)).

// wrapperFields are what a wrapper knows of its line: used where the
// line itself says nothing.
type wrapperFields struct {
	time     []byte
	timeUnit unit
	host     []byte
	extra    [][2][]byte // journald's own fields (ORDER_ID=...)
}

func (w *wrapperFields) apply(x *extractor) {
	for _, kv := range w.extra {
		if !x.has(fieldAt(x, kv[0])) {
			x.emit(kv[0], kv[1])
		}
	}
	x.fallback(Timestamp, w.time, w.timeUnit)
	x.fallback(Consumer, w.host, unitAuto)
}

// fieldAt is the field a path maps to (NumFields when none), so a
// wrapper's field never displaces the line's own.
func fieldAt(x *extractor, path []byte) Field {
	if s, ok := x.m.lookup(path); ok {
		return s.field
	}
	return NumFields
}

// isCRILine: "<RFC 3339 time> stdout|stderr P|F <line>".
func isCRILine(l []byte) bool {
	_, _, _, ok := splitCRI(l)
	return ok
}

func splitCRI(l []byte) (ts []byte, tag byte, payload []byte, ok bool) {
	ts, rest, found := bytes.Cut(l, []byte(" "))
	if !found || len(ts) < 20 || ts[4] != '-' || ts[10] != 'T' {
		return nil, 0, nil, false
	}
	stream, rest, found := bytes.Cut(rest, []byte(" "))
	if !found || !(bytes.Equal(stream, []byte("stdout")) || bytes.Equal(stream, []byte("stderr"))) {
		return nil, 0, nil, false
	}
	if len(rest) < 1 || (rest[0] != 'F' && rest[0] != 'P') || (len(rest) > 1 && rest[1] != ' ') {
		return nil, 0, nil, false
	}
	if len(rest) > 2 {
		payload = rest[2:]
	}
	return ts, rest[0], payload, true
}

type dockerLine struct {
	Log    string `json:"log"`
	Stream string `json:"stream"`
	Time   string `json:"time"`
}

// wrappedPayload is a wrapper line's payload, for detecting its format.
func wrappedPayload(f Format, l []byte) []byte {
	switch f {
	case FormatCRI:
		_, _, p, ok := splitCRI(l)
		if ok {
			return p
		}
	case FormatDocker:
		var d dockerLine
		if json.Unmarshal(l, &d) == nil {
			return []byte(strings.TrimRight(d.Log, "\n"))
		}
	case FormatJournald:
		var j map[string]json.RawMessage
		if json.Unmarshal(l, &j) == nil {
			var m string
			if json.Unmarshal(j["MESSAGE"], &m) == nil {
				return []byte(m)
			}
		}
	}
	return nil
}

var errWrapper = errors.New("not a line of the wrapper this file is written in")

// unwrap takes a wrapper line apart. A line split in parts (CRI's P, a
// Docker entry without its newline) is held until its last part:
// errPartial until then.
func (d *decoder) unwrap(l []byte) ([]byte, *wrapperFields, error) {
	fb := &wrapperFields{timeUnit: unitAuto}
	var payload []byte
	whole := true
	switch d.spec.format {
	case FormatCRI:
		ts, tag, p, ok := splitCRI(l)
		if !ok {
			return nil, nil, errWrapper
		}
		fb.time, payload, whole = ts, p, tag == 'F'
	case FormatDocker:
		var dl dockerLine
		if err := json.Unmarshal(l, &dl); err != nil || (dl.Stream == "" && dl.Time == "") {
			return nil, nil, errWrapper
		}
		whole = strings.HasSuffix(dl.Log, "\n")
		fb.time, payload = []byte(dl.Time), []byte(strings.TrimRight(dl.Log, "\r\n"))
	case FormatJournald:
		p, err := journald(l, fb)
		if err != nil {
			return nil, nil, err
		}
		payload = p
	}
	if !whole {
		d.partial = append(d.partial, payload...)
		d.inPieces = true
		return nil, nil, errPartial
	}
	if d.inPieces {
		payload = append(d.partial, payload...)
		d.partial, d.inPieces = nil, false
	}
	return payload, fb, nil
}

// journald reads one journal entry: its MESSAGE is the line, its time,
// host and pid and a service's own fields are fallbacks.
func journald(l []byte, fb *wrapperFields) ([]byte, error) {
	var j map[string]json.RawMessage
	if err := json.Unmarshal(l, &j); err != nil {
		return nil, errWrapper
	}
	var msg string
	if err := json.Unmarshal(j["MESSAGE"], &msg); err != nil {
		return nil, errors.New("journal entry without a text MESSAGE")
	}
	str := func(k string) []byte {
		var s string
		if json.Unmarshal(j[k], &s) != nil {
			return nil
		}
		return []byte(s)
	}
	fb.time, fb.timeUnit = str("__REALTIME_TIMESTAMP"), unitUs
	fb.host = str("_HOSTNAME")
	if pid := str("_PID"); pid != nil && fb.host != nil {
		fb.host = append(append(fb.host, '/'), pid...)
	}
	for k := range j {
		if k == "MESSAGE" || strings.HasPrefix(k, "_") || k == "PRIORITY" || strings.HasPrefix(k, "SYSLOG_") || k == "CODE_FILE" ||
			k == "CODE_LINE" || k == "CODE_FUNC" {
			continue
		}
		if v := str(k); v != nil {
			fb.extra = append(fb.extra, [2][]byte{[]byte(k), v})
		}
	}
	return []byte(msg), nil
}

// podFromPath is the pod a Kubernetes log file belongs to, from its path:
// /var/log/pods/<namespace>_<pod>_<uid>/<container>/0.log or
// /var/log/containers/<pod>_<namespace>_<container>-<id>.log ("" when the
// path is neither).
func podFromPath(p string) string {
	p = filepath.ToSlash(p)
	if i := strings.Index(p, "/pods/"); i >= 0 {
		dir, _, _ := strings.Cut(p[i+6:], "/")
		if parts := strings.Split(dir, "_"); len(parts) == 3 {
			return parts[1]
		}
	}
	if i := strings.Index(p, "/containers/"); i >= 0 {
		name := strings.TrimSuffix(p[i+12:], ".log")
		if parts := strings.SplitN(name, "_", 3); len(parts) == 3 {
			return parts[0]
		}
	}
	return ""
}
