package judge

import "testing"

// TestWrappedString reads the token inside each serializer's bytes, as
// the serializers wrote them (appdata_test.go checks the Java and pickle
// encoders against ObjectOutputStream and CPython), and nothing else.
func TestWrappedString(t *testing.T) {
	const u = "8d0c5a1e-3b2a-4c1d-9e8f-0a1b2c3d4e5f"
	for name, v := range map[string]string{
		"java TC_STRING":            "\xac\xed\x00\x05t\x00$" + u,
		"pickle 5":                  "\x80\x05\x95(\x00\x00\x00\x00\x00\x00\x00\x8c$" + u + "\x94.",
		"pickle 2 BINUNICODE":       "\x80\x02X$\x00\x00\x00" + u + "q\x00.",
		"cachelib ! + pickle":       "!\x80\x05\x95(\x00\x00\x00\x00\x00\x00\x00\x8c$" + u + "\x94.",
		"rails entry, no version":   "\x00\x11\x02\x00\x00\x40\x1f\xa0\x28\xda\x41\xff\xff\xff\xff" + u,
		"rails entry with version":  "\x00\x11\x02\x00\x00\x40\x1f\xa0\x28\xda\x41\x02\x00\x00\x00v1" + u,
		"php serialize() of string": `s:36:"` + u + `";`,
	} {
		if got, ok := wrappedString(v); !ok || got != u {
			t.Errorf("%s: %q, %v; want %q", name, got, ok, u)
		}
	}
	for name, v := range map[string]string{
		"java Long":           "\xac\xed\x00\x05sr\x00\x0ejava.lang.Long;\x8b\xe4\x90\xcc\x8f#\xdf\x02\x00\x01J\x00\x05valuexr",
		"java short length":   "\xac\xed\x00\x05t\x00\x05abc",
		"pickled dict":        "\x80\x05\x95\x0c\x00\x00\x00\x00\x00\x00\x00}\x94\x8c\x01a\x94\x8c\x01b\x94s.",
		"rails entry, object": "\x00\x11\x01\x00\x00\x40\x1f\xa0\x28\xda\x41\xff\xff\xff\xff\x04\bi\x06",
		"php wrong length":    `s:3:"` + u + `";`,
		"php array":           `a:1:{i:0;s:1:"x";}`,
		"plain":               u,
	} {
		if got, ok := wrappedString(v); ok {
			t.Errorf("%s: read %q", name, got)
		}
	}
}

// TestJSONOwner: a small JSON object of scalar fields under a lock word is
// the owner it records (redis-promise-lock's {"lockedSince": <time>}); a
// record with nested or many fields stays a document.
func TestJSONOwner(t *testing.T) {
	if got, ok := wrappedString(`{"lockedSince":"2026-12-07T15:03:33.984Z"}`); !ok || got != "2026-12-07T15:03:33.984Z" {
		t.Errorf("lockedSince: %q %v", got, ok)
	}
	if got, ok := wrappedString(`{"owner":"8d0c5a1e-3b2a-4c1d-9e8f-0a1b2c3d4e5f","at":"2026-12-07T15:03:33Z"}`); !ok ||
		got != "2026-12-07T15:03:33Z|8d0c5a1e-3b2a-4c1d-9e8f-0a1b2c3d4e5f" {
		t.Errorf("owner and time: %q %v", got, ok)
	}
	for _, v := range []string{`{"user":{"id":1}}`, `{"a":1,"b":2,"c":3,"d":4,"e":5}`, `{}`, `{"list":[1,2]}`,
		`{"enabled":true,"timeout_s":300}`, `{"user":"alice-0","etag":"cfcd208495d56"}`} {
		if got, ok := wrappedString(v); ok {
			t.Errorf("%s: read %q", v, got)
		}
	}
}
