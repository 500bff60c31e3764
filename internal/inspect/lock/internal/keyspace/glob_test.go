package keyspace

import (
	"strings"
	"testing"
)

func TestGlob(t *testing.T) {
	for _, c := range []struct {
		pattern, s string
		want       bool
	}{
		{"*", "", true},
		{"*", "anything", true},
		{"lock:*", "lock:order:1", true},
		{"lock:*", "xlock:order:1", false},
		{"*lock*", "job-lock:default:x", true},
		{"*[lL][oO][cC][kK]*", "myLock", true},
		{"*[lL][oO][cC][kK]*", "cache:user:1", false},
		{"h?llo", "hello", true},
		{"h?llo", "hllo", false},
		{"h[^e]llo", "hallo", true},
		{"h[^e]llo", "hello", false},
		{"h[a-b]llo", "hbllo", true},
		{"h[b-a]llo", "hallo", true}, // reversed range, as Redis allows
		{`h\*llo`, "h*llo", true},
		{`h\*llo`, "hello", false},
		{"asynq:{*}:unique:*", "asynq:{default}:unique:email:", true},
		{"a*b*c", "aXbYbZc", true},
		{"a*b*c", "aXbYbZ", false},
		{"**a", "bba", true},
		{"[abc", "a", true}, // unterminated class runs to the end
		{"x[]y", "xay", false},
	} {
		g, err := CompileGlob(c.pattern)
		if err != nil {
			t.Fatalf("%q: %v", c.pattern, err)
		}
		if got := g.Match(c.s); got != c.want {
			t.Errorf("Glob(%q).Match(%q) = %v, want %v", c.pattern, c.s, got, c.want)
		}
	}
	if _, err := CompileGlob(""); err == nil {
		t.Error("empty pattern compiled")
	}
}

// FuzzGlob: any pattern compiles and matching never panics; a pattern made
// only of escaped bytes matches exactly its text; "*" + p + "*" matches
// whatever contains a match of p for literal p.
func FuzzGlob(f *testing.F) {
	for _, s := range []string{"lock:*", "*[lL][oO][cC][kK]*", `a\*b`, "[^a-", "x[]y", "**?*"} {
		f.Add(s, "lock:order:1")
	}
	f.Fuzz(func(t *testing.T, pattern, s string) {
		g, err := CompileGlob(pattern)
		if pattern == "" {
			if err == nil {
				t.Fatal("empty pattern compiled")
			}
			return
		}
		if err != nil {
			t.Fatal(err)
		}
		_ = g.Match(s)
		var esc strings.Builder
		for i := 0; i < len(s); i++ {
			esc.WriteByte('\\')
			esc.WriteByte(s[i])
		}
		if s != "" {
			lit, _ := CompileGlob(esc.String())
			if !lit.Match(s) || !lit.Literal() {
				t.Fatalf("escaped %q does not match itself", s)
			}
			if lit.Match(s+"x") || lit.Match(s[1:]) {
				t.Fatalf("escaped %q matches other strings", s)
			}
			around, _ := CompileGlob("*" + esc.String() + "*")
			if !around.Match("pre" + s + "post") {
				t.Fatalf("*%q* does not match a string containing it", s)
			}
		}
	})
}
