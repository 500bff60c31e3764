package logs

import (
	"bytes"
	"encoding/json"
)

// renderTemplate renders a Serilog message template (CLEF's @mt, written
// without @m by CompactJsonFormatter) with the line's properties:
// "Payment {OrderId} charged" becomes "Payment ORD-1 charged", so the
// vocabulary reads the sentence a person would. {Name:format}, {@Name}
// and {$Name} render as the bare value; {{ and }} are braces
// (github.com/serilog/serilog/wiki/Formatting-Output, message templates).
func (x *extractor) renderTemplate(line []byte) {
	if !x.fromTemplate || !x.has(Message) {
		return
	}
	x.fromTemplate = false
	tmpl := x.val[Message]
	if bytes.IndexByte(tmpl, '{') < 0 {
		return
	}
	var props map[string]json.RawMessage
	if json.Unmarshal(line, &props) != nil {
		return
	}
	out := make([]byte, 0, len(tmpl)+32)
	for i := 0; i < len(tmpl); i++ {
		c := tmpl[i]
		switch {
		case c == '{' && i+1 < len(tmpl) && tmpl[i+1] == '{', c == '}' && i+1 < len(tmpl) && tmpl[i+1] == '}':
			out = append(out, c)
			i++
		case c == '{':
			end := bytes.IndexByte(tmpl[i:], '}')
			if end < 0 {
				out = append(out, tmpl[i:]...)
				i = len(tmpl)
				continue
			}
			name := tmpl[i+1 : i+end]
			name = bytes.TrimLeft(name, "@$")
			if j := bytes.IndexAny(name, ":,"); j >= 0 {
				name = name[:j]
			}
			raw, ok := props[string(name)]
			switch {
			case !ok:
				out = append(out, tmpl[i:i+end+1]...)
			case len(raw) > 0 && raw[0] == '"':
				var s string
				_ = json.Unmarshal(raw, &s)
				out = append(out, s...)
			default:
				out = append(out, raw...)
			}
			i += end
		default:
			out = append(out, c)
		}
	}
	x.val[Message] = out
}
