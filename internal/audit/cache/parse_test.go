package cache

import (
	"strings"
	"testing"
)

func TestPattern(t *testing.T) {
	p, err := ParsePattern("job:status:{key}")
	if err != nil {
		t.Fatal(err)
	}
	if p.Match() != "job:status:*" || p.Key("42") != "job:status:42" {
		t.Errorf("match %q key %q", p.Match(), p.Key("42"))
	}
	for key, want := range map[string]string{"job:status:42": "42", "job:status:a:b": "a:b", "job:status:": "", "job:x:1": ""} {
		if got, _ := p.ID(key); got != want {
			t.Errorf("ID(%q) = %q, want %q", key, got, want)
		}
	}
	p, _ = ParsePattern("t[1]*:{key}:v?")
	if p.Match() != `t\[1\]\*:*:v\?` {
		t.Errorf("escaped match %q", p.Match())
	}
	if id, ok := p.ID("t[1]*:abc:v?"); !ok || id != "abc" {
		t.Errorf("ID with metacharacters: %q %v", id, ok)
	}
	for _, bad := range []string{"job:status", "{key}:{key}", ""} {
		if _, err := ParsePattern(bad); err == nil {
			t.Errorf("ParsePattern(%q) accepted", bad)
		}
	}
}

func FuzzPattern(f *testing.F) {
	for _, s := range []string{"job:status:{key}", "{key}", "a*{key}?b", `\{key}[`} {
		f.Add(s, "42")
	}
	f.Fuzz(func(t *testing.T, pattern, id string) {
		p, err := ParsePattern(pattern)
		if err != nil || id == "" {
			return
		}
		got, ok := p.ID(p.Key(id))
		if !ok || got != id {
			t.Fatalf("pattern %q: ID(Key(%q)) = %q, %v", pattern, id, got, ok)
		}
		if !globMatch(p.Match(), p.Key(id)) {
			t.Fatalf("pattern %q: MATCH %q does not match %q", pattern, p.Match(), p.Key(id))
		}
	})
}

// globMatch is Redis's stringmatchlen for the subset Match produces:
// literal bytes, \-escapes and *.
func globMatch(glob, s string) bool {
	if glob == "" {
		return s == ""
	}
	switch glob[0] {
	case '*':
		for i := 0; i <= len(s); i++ {
			if globMatch(glob[1:], s[i:]) {
				return true
			}
		}
		return false
	case '\\':
		if len(glob) > 1 {
			glob = glob[1:]
		}
	}
	return s != "" && s[0] == glob[0] && globMatch(glob[1:], s[1:])
}

func TestDecoder(t *testing.T) {
	for _, c := range []struct {
		spec, raw, want, err string
	}{
		{spec: "string", raw: "SUCCEEDED", want: "SUCCEEDED"},
		{spec: "json:status", raw: `{"status":"SUCCEEDED","at":1}`, want: "SUCCEEDED"},
		{spec: "json:$.data.state", raw: `{"data":{"state":"done"}}`, want: "done"},
		{spec: "json:.steps.1.s", raw: `{"steps":[{"s":"a"},{"s":"b"}]}`, want: "b"},
		{spec: "json:code", raw: `{"code":2}`, want: "2"},
		{spec: "json:ok", raw: `{"ok":true}`, want: "true"},
		{spec: "json:status", raw: `SUCCEEDED`, err: "not JSON"},
		{spec: "json:status", raw: `{"state":"x"}`, err: "no status in the JSON"},
		{spec: "json:a.b", raw: `{"a":"x"}`, err: "a is not an object"},
		{spec: "json:status", raw: `{"status":null}`, err: "status is null"},
		{spec: "json:status", raw: `{"status":{"v":1}}`, err: `status is not a string but {"v":1}`},
		{spec: "json:status", raw: `{"status":"a"} {}`, err: "data after the value"},
		{spec: "hash:status", raw: "FAILED", want: "FAILED"},
	} {
		d, err := ParseDecoder(c.spec)
		if err != nil {
			t.Fatalf("%s: %v", c.spec, err)
		}
		got, err := d.Decode(c.raw)
		if c.err != "" {
			if err == nil || !strings.Contains(err.Error(), c.err) {
				t.Errorf("%s %s: %q, %v; want error %q", c.spec, c.raw, got, err, c.err)
			}
			continue
		}
		if err != nil || got != c.want {
			t.Errorf("%s %s: %q, %v; want %q", c.spec, c.raw, got, err, c.want)
		}
	}
	for _, bad := range []string{"", "json", "json:", "json:a..b", "hash", "hash:", "string:x", "yaml:status"} {
		if _, err := ParseDecoder(bad); err == nil {
			t.Errorf("ParseDecoder(%q) accepted", bad)
		}
	}
}

func FuzzDecode(f *testing.F) {
	for _, s := range []string{`{"status":"SUCCEEDED"}`, `[1,2]`, `"x"`, `{"status":{"a":[]}}`, "\xff"} {
		f.Add("json:status", s)
	}
	f.Add("json:a.0.b", `{"a":[{"b":"x"}]}`)
	f.Fuzz(func(t *testing.T, spec, raw string) {
		d, err := ParseDecoder(spec)
		if err != nil {
			return
		}
		if d.Kind != "json" && d.String() != spec {
			t.Fatalf("ParseDecoder(%q).String() = %q", spec, d.String())
		}
		_, _ = d.Decode(raw) // must not panic
	})
}

func TestReadLiveKeysRefusesWhatIsNotText(t *testing.T) {
	keys, err := ReadLiveKeys(strings.NewReader("# live\norder-1\n\n  order-2  \n"))
	if err != nil || strings.Join(keys, ",") != "order-1,order-2" {
		t.Fatalf("keys %v, err %v", keys, err)
	}
	for name, in := range map[string]string{
		"invalid UTF-8": "order-1\n\xff\xfe\n",
		"NUL bytes":     "order-1\x00\x00\n",
		"a long line":   strings.Repeat("k", 2<<20),
	} {
		if _, err := ReadLiveKeys(strings.NewReader(in)); err == nil {
			t.Errorf("%s: accepted", name)
		}
	}
}
