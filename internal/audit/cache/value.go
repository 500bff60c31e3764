package cache

import (
	"bytes"
	"encoding/json"
	"fmt"
	"github.com/dupctl/dupctl/internal/platform/problem"
	"github.com/dupctl/dupctl/internal/platform/text"
	"strconv"
	"strings"
)

// Decoder reads the status out of a cache value, as --value says:
//
//	string        the whole string value is the status (SET job:status:1 SUCCEEDED)
//	json:PATH     the value is JSON; PATH (a.b.0.c) selects the status
//	hash:FIELD    the key is a hash; FIELD holds the status (HSET job:1 status SUCCEEDED)
type Decoder struct {
	Kind  string   // string, json, hash
	Path  []string // json path segments
	Field string   // hash field
}

// ParseDecoder reads --value.
func ParseDecoder(s string) (Decoder, error) {
	kind, arg, _ := strings.Cut(s, ":")
	switch kind {
	case "string":
		if arg != "" {
			break
		}
		return Decoder{Kind: "string"}, nil
	case "json":
		arg = strings.TrimPrefix(strings.TrimPrefix(arg, "$"), ".")
		if arg == "" {
			break
		}
		path := strings.Split(arg, ".")
		for _, seg := range path {
			if seg == "" {
				return Decoder{}, problem.Inputf("Decoder", "empty segment in the JSON path").WithValue(s)
			}
		}
		return Decoder{Kind: "json", Path: path}, nil
	case "hash":
		if arg == "" {
			break
		}
		return Decoder{Kind: "hash", Field: arg}, nil
	}
	return Decoder{}, problem.Inputf("Decoder", "want string, json:PATH (e.g. json:status or json:data.state) or hash:FIELD").WithValue(s)
}

func (d Decoder) String() string {
	switch d.Kind {
	case "json":
		return "json:" + strings.Join(d.Path, ".")
	case "hash":
		return "hash:" + d.Field
	}
	return "string"
}

// Decode reads the status from a raw value (the string, or the hash
// field's value).
func (d Decoder) Decode(raw string) (string, error) {
	if d.Kind != "json" {
		return raw, nil
	}
	dec := json.NewDecoder(strings.NewReader(raw))
	dec.UseNumber()
	var v any
	if err := dec.Decode(&v); err != nil {
		return "", fmt.Errorf("not JSON: %v", err)
	}
	if dec.More() {
		return "", fmt.Errorf("not JSON: data after the value")
	}
	for i, seg := range d.Path {
		at := strings.Join(d.Path[:i+1], ".")
		switch cur := v.(type) {
		case map[string]any:
			next, ok := cur[seg]
			if !ok {
				return "", fmt.Errorf("no %s in the JSON", at)
			}
			v = next
		case []any:
			n, err := strconv.Atoi(seg)
			if err != nil || n < 0 || n >= len(cur) {
				return "", fmt.Errorf("no %s in the JSON (an array of %d)", at, len(cur))
			}
			v = cur[n]
		default:
			return "", fmt.Errorf("no %s in the JSON (%s is not an object)", at, strings.Join(d.Path[:i], "."))
		}
	}
	switch x := v.(type) {
	case string:
		return x, nil
	case json.Number:
		return x.String(), nil
	case bool:
		return strconv.FormatBool(x), nil
	case nil:
		return "", fmt.Errorf("%s is null", strings.Join(d.Path, "."))
	}
	var b bytes.Buffer
	_ = json.NewEncoder(&b).Encode(v)
	return "", fmt.Errorf("%s is not a string but %s", strings.Join(d.Path, "."), strings.TrimSpace(text.Clip(b.String(), 43, "...")))
}
