package redact

import (
	"fmt"
	"strings"
	"testing"
)

func TestString(t *testing.T) {
	tests := []struct {
		in, want string
	}{
		{"redis://:s3cret@localhost:6379/0", "redis://:xxxxx@localhost:6379/0"},
		{"redis://default:s3cret@localhost:6379", "redis://default:xxxxx@localhost:6379"},
		{"redis://s3cret@localhost:6379", "redis://xxxxx@localhost:6379"},
		{"rediss://user:p%40ss@cache.internal:6380", "rediss://user:xxxxx@cache.internal:6380"},
		{"postgres://app:hunter2@db:5432/pay?sslmode=disable", "postgres://app:xxxxx@db:5432/pay?sslmode=disable"},
		{"postgresql://app:hunter2@db/pay", "postgresql://app:xxxxx@db/pay"},
		{"postgres://app@db/pay", "postgres://app@db/pay"},
		{"amqp://guest:guest@127.0.0.1:5672/", "amqp://guest:xxxxx@127.0.0.1:5672/"},
		{"amqps://svc:pa:ss@mq.example:5671/vhost", "amqps://svc:xxxxx@mq.example:5671/vhost"},
		{"dial redis://u:pw@h:1: connection refused", "dial redis://u:xxxxx@h:1: connection refused"},
		{"host=db user=app password=hunter2 dbname=pay", "host=db user=app password=xxxxx dbname=pay"},
		{"host=db password='hun ter2' dbname=pay", "host=db password=xxxxx dbname=pay"},
		{"postgres://db/pay?user=app&password=hunter2&sslmode=require", "postgres://db/pay?user=app&password=xxxxx&sslmode=require"},
		{"https://mgmt:15672/api?token=abc123", "https://mgmt:15672/api?token=xxxxx"},
		{"no secrets here", "no secrets here"},
		{"two: amqp://a:b@h1 redis://:c@h2", "two: amqp://a:xxxxx@h1 redis://:xxxxx@h2"},
		{"user@example.com wrote", "user@example.com wrote"},
		{"SET lock:a NX PX 30s -> OK token=7", "SET lock:a NX PX 30s -> OK token=7"},
		{"dsn: host=db pwd=abc", "dsn: host=db pwd=xxxxx"},
		{"amqp://h/vhost?auth=plain&key=s3cr3t", "amqp://h/vhost?auth=xxxxx&key=xxxxx"},
		// Raw '/', '#', '?', ':' and '@' in a password make the URL
		// unparsable; the password is still masked up to the last '@'.
		{`AMQP URL amqp://guest:Zq/Secret9@127.0.0.1:5672/: parse "amqp://guest:Zq/Secret9@127.0.0.1:5672/": invalid port`,
			`AMQP URL amqp://guest:xxxxx@127.0.0.1:5672/: parse "amqp://guest:xxxxx@127.0.0.1:5672/": invalid port`},
		{"redis://:a#b?c@h:1/0", "redis://:xxxxx@h:1/0"},
		{"postgres://u:p@ss/w:rd@db/x", "postgres://u:xxxxx@db/x"},
		// Sentinel URLs: the master's password in the userinfo, the
		// Sentinels' in a parameter.
		{"redis+sentinel://app:s3cret@127.0.0.1:26379,127.0.0.1:26380/mymaster/2",
			"redis+sentinel://app:xxxxx@127.0.0.1:26379,127.0.0.1:26380/mymaster/2"},
		{"rediss+sentinel://:s3cret@s1,s2/cache?sentinel_username=sen&sentinel_password=hunter2",
			"rediss+sentinel://:xxxxx@s1,s2/cache?sentinel_username=sen&sentinel_password=xxxxx"},
		{"dial redis+sentinel://s1:26379/m?sentinel_password=hunter2 refused",
			"dial redis+sentinel://s1:26379/m?sentinel_password=xxxxx refused"},
		{"sentinel_password=hunter2 master=m", "sentinel_password=xxxxx master=m"},
	}
	for _, tt := range tests {
		got := String(tt.in)
		if got != tt.want {
			t.Errorf("String(%q) = %q, want %q", tt.in, got, tt.want)
		}
	}
}

func TestURL(t *testing.T) {
	for _, raw := range []string{
		"redis://:topsecret@127.0.0.1:6379",
		"rediss://admin:topsecret@127.0.0.1:6380/2",
		"postgres://u:topsecret@127.0.0.1/test",
		"postgresql://u:topsecret@127.0.0.1/test",
		"amqp://u:topsecret@127.0.0.1:5672/%2f",
		"amqps://u:topsecret@127.0.0.1:5671/",
		"redis://topsecret@127.0.0.1:6379",
		"redis+sentinel://u:topsecret@127.0.0.1:26379,127.0.0.1:26380/mymaster/1",
		"rediss+sentinel://topsecret@127.0.0.1/mymaster",
		"redis+sentinel://127.0.0.1:26379/mymaster?sentinel_password=topsecret",
		"redis+sentinel://127.0.0.1:26379/mymaster?sentinel_username=u&sentinel_password=top secret#x&y",
		"redis+sentinel://:topsecret@127.0.0.1:26379/m?sentinel_password=topsecret",
	} {
		got := URL(raw)
		if strings.Contains(got, "topsecret") {
			t.Errorf("URL(%q) = %q leaks the password", raw, got)
		}
		if !strings.Contains(got, "127.0.0.1") {
			t.Errorf("URL(%q) = %q lost the host", raw, got)
		}
	}
}

// TestURLWithRawSpecialCharacters: a URL given whole loses its password
// whatever the password holds, before any parse.
func TestURLWithRawSpecialCharacters(t *testing.T) {
	for _, pw := range []string{"Zq/Secret9", "Zq#Secret9", "Zq?Secret9", "Zq Secret9", "Zq@Secret9", "Zq:Secret9", "Zq%Secret9",
		"Secret9/#?", "Secret9 x"} {
		for _, scheme := range []string{"amqp", "redis", "postgres", "rediss", "redis+sentinel", "rediss+sentinel"} {
			raw := scheme + "://guest:" + pw + "@127.0.0.1:1/x"
			got := URL(raw)
			if strings.Contains(got, "Secret9") || !strings.Contains(got, "127.0.0.1:1") {
				t.Errorf("URL(%q) = %q", raw, got)
			}
			msg := InError(`parse "`+raw+`": invalid port`, raw)
			if strings.Contains(msg, "Secret9") {
				t.Errorf("InError kept the password: %q", msg)
			}
			// a parser that quotes only the part it read before stopping
			if cut := strings.IndexAny(raw[len(scheme)+3:], "/#? "); cut > 0 {
				part := raw[:len(scheme)+3+cut]
				if msg := InError(`parse "`+part+`": invalid port ":Zq" after host`, raw); strings.Contains(msg, "Secret9") {
					t.Errorf("InError kept a piece of the password: %q", msg)
				}
			}
		}
	}
}

// TestURLMasksSentinelPasswordWhole: a Sentinel password given as a
// query parameter is masked up to the next name=value parameter, whatever
// raw characters it holds (String alone would stop at a space or '&').
func TestURLMasksSentinelPasswordWhole(t *testing.T) {
	for _, pw := range []string{"Secret9", "Se cret9", "Se#cret9", "Se&cret9", "Se&cr et9#", "Se?cret9", "Se@cret9"} {
		raw := "redis+sentinel://127.0.0.1:26379,127.0.0.1:26380/mymaster/3?sentinel_password=" + pw + "&sentinel_username=sen"
		got := URL(raw)
		want := "redis+sentinel://127.0.0.1:26379,127.0.0.1:26380/mymaster/3?sentinel_password=" + Mask + "&sentinel_username=sen"
		if strings.Contains(pw, "@") {
			// The '@' may also end a userinfo: both readings are masked.
			want = "redis+sentinel://127.0.0.1:" + Mask + "&sentinel_username=sen"
		}
		if got != want {
			t.Errorf("URL(%q) = %q, want %q", raw, got, want)
		}
	}
}

// FuzzURLNeverLeaks: no password, however odd, survives URL when the URL
// is given whole, nor String when it is embedded without spaces.
func FuzzURLNeverLeaks(f *testing.F) {
	for _, pw := range []string{"hunter22", "Zq/Secret9", "a b c d", "p@ss:w#rd", "\"quoted\"", "%41%42%43%44"} {
		f.Add("amqp", "guest", pw)
		f.Add("redis+sentinel", "app", pw)
	}
	f.Fuzz(func(t *testing.T, scheme, user, pw string) {
		if !isScheme(scheme) || strings.ContainsAny(user, ":@/?# \t\n\r\v\f\"'\\<>") || len(pw) < 6 ||
			strings.Contains("://"+scheme+user+"@127.0.0.1:1/x"+Mask, pw) {
			return
		}
		if listStart.MatchString(pw) {
			return // ",amqp://" starts the next URL of a list (SplitList): FuzzListNeverLeaks
		}
		raw := scheme + "://" + user + ":" + pw + "@127.0.0.1:1/x"
		if got := URL(raw); strings.Contains(got, pw) {
			t.Fatalf("URL(%q) = %q keeps the password", raw, got)
		}
		if got := InError("dial "+raw+": refused", raw); strings.Contains(got, pw) {
			t.Fatalf("InError kept the password: %q", got)
		}
		if strings.ContainsAny(pw, " \t\n\r\v\f\"'\\<>\u0085\u00a0") {
			return // inside free text a space ends a URL: only the whole-URL path can know
		}
		if got := String("error: " + raw + " failed"); strings.Contains(got, pw) {
			t.Fatalf("String(%q) = %q keeps the password", raw, got)
		}
	})
}

func FuzzString(f *testing.F) {
	f.Add("redis://:pw@h")
	f.Add("password=x")
	f.Add("amqp://a:b@c@d")
	f.Add("amqp://a:b@c,amqp://d:e@f;amqps://g@h")
	f.Fuzz(func(t *testing.T, s string) {
		out := String(s)
		// Idempotent: redacting twice changes nothing more.
		if again := String(out); again != out {
			t.Fatalf("not idempotent: %q -> %q -> %q", s, out, again)
		}
	})
}

// FuzzFastPathAgrees: the fast test never lets through a string the
// patterns would change.
func FuzzFastPathAgrees(f *testing.F) {
	for _, s := range []string{"password=x", "redis://:p@h", "a?token=1", "PWD \n= 'x'", "key=payment:42", "x://a@b"} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, s string) {
		slow := secretParam.ReplaceAllString(userinfo.ReplaceAllStringFunc(s, maskUserinfo), "${1}${2}"+Mask)
		if got := String(s); got != slow {
			t.Fatalf("String(%q) = %q, the patterns give %q", s, got, slow)
		}
	})
}

// FuzzURLMasksRawPasswords: a password with any raw characters, in a URL of
// any scheme or a key=value DSN, leaves no trace in the masked form (the
// pieces a parser would cut it into included): issue 27.
func FuzzURLMasksRawPasswords(f *testing.F) {
	for _, p := range []string{"p@ss/w#rd?x y", "a b c", "%2Fq", "é@/é", "::@@"} {
		f.Add(p, 0)
	}
	for _, p := range []string{"p@ss/w#rd?x y", "a&b c#d", "&&x", "q?r=s"} {
		f.Add(p, 3)
		f.Add(p, 4)
	}
	f.Fuzz(func(t *testing.T, pw string, form int) {
		if len(pw) < 3 || strings.ContainsAny(pw, "\n\r\x00'\"\\") || strings.TrimSpace(pw) != pw || listStart.MatchString(pw) {
			t.Skip() // ",amqp://" starts the next URL of a list (SplitList): FuzzListNeverLeaks
		}
		var raw string
		switch form % 6 {
		case 0:
			raw = "postgres://app:" + pw + "@db.internal:5432/pay"
		case 1:
			raw = "redis://:" + pw + "@cache.internal:6379/0"
		case 2:
			raw = "amqp://guest:" + pw + "@mq.internal:5672/"
		case 3:
			raw = "redis+sentinel://app:" + pw + "@s1.internal:26379,s2.internal:26380/mymaster/0"
		case 4:
			if strings.Contains(pw, "&") && strings.Contains(pw, "=") {
				t.Skip() // a raw "&name=" starts another parameter, for every parser
			}
			raw = "redis+sentinel://s1.internal:26379/mymaster?sentinel_username=sen&sentinel_password=" + pw + "&x=1"
		default:
			if strings.Contains(pw, "=") {
				t.Skip() // a raw '=' makes a key=value DSN ambiguous even to libpq
			}
			raw = "host=db.internal user=app password=" + pw + " dbname=pay"
		}
		got := strings.ReplaceAll(URL(raw), Mask, "\x00")
		rest := strings.Replace(raw, pw, "\x00", 1)
		for i := 0; i+3 <= len(pw); i++ {
			piece := pw[i : i+3]
			if strings.Contains(got, piece) && !strings.Contains(rest, piece) {
				t.Fatalf("URL(%q) = %q keeps %q of the password", raw, got, piece)
			}
		}
	})
}

// TestList: a list of AMQP URLs, in the spellings clients take, loses
// every password and keeps every host, whole (URL) and inside free text
// (String). The spellings:
//   - Spring Boot's spring.rabbitmq.addresses, "comma-separated list of
//     addresses", each one [amqp://][user:password@]host[:port][/vhost]
//     (RabbitProperties.Address);
//   - the amqp gem's amqp-failover, "amqp://localhost:5672/,amqp://localhost:5673/";
//   - kombu (Celery), "amqp://broker1.example.com;amqp://broker2.example.com";
//   - several hosts in one URL, as Redis Cluster URLs are written here:
//     amqp://user:password@h1:5672,h2:5673/vhost.
func TestList(t *testing.T) {
	tests := []struct{ in, want string }{
		{"amqp://guest:s3cret1@127.0.0.1:5672,127.0.0.1:5673/vh", "amqp://guest:xxxxx@127.0.0.1:5672,127.0.0.1:5673/vh"},
		{"amqp://guest:s3cret1@[::1]:5672,[::1]:5673/vh", "amqp://guest:xxxxx@[::1]:5672,[::1]:5673/vh"},
		{"amqp://guest:s3[c,ret1@[::1]:5672,127.0.0.1:5673/", "amqp://guest:xxxxx@[::1]:5672,127.0.0.1:5673/"},
		{"amqp://a:s3cret1@h1:5672/v,amqp://b:s3cret2@h2:5673/v", "amqp://a:xxxxx@h1:5672/v,amqp://b:xxxxx@h2:5673/v"},
		{"amqp://a:s3cret1@h1;amqps://b:s3cret2@h2", "amqp://a:xxxxx@h1;amqps://b:xxxxx@h2"},
		{"amqp://h1:5672/,amqp://b:s3cret2@h2/", "amqp://h1:5672/,amqp://b:xxxxx@h2/"},
		{"AMQP://a:s3cret1@h1,AMQP://b:s3cret2@h2", "AMQP://a:xxxxx@h1,AMQP://b:xxxxx@h2"},
		// raw characters in each password: each URL masked on its own
		{"amqp://a:s3/cr#et1@h1/,amqp://b:s3 cr@et2@h2/", "amqp://a:xxxxx@h1/,amqp://b:xxxxx@h2/"},
		// not AMQP: a comma is no list separator
		{"redis://:s3cret1,amqp://x@h1", "redis://:xxxxx@h1"},
	}
	for _, tt := range tests {
		if got := URL(tt.in); got != tt.want {
			t.Errorf("URL(%q) = %q, want %q", tt.in, got, tt.want)
		}
		// In free text a space ends a URL, so only the lists without one.
		if got := String("dial " + tt.in + ": refused"); !strings.Contains(tt.in, " ") && got != "dial "+tt.want+": refused" {
			t.Errorf("String: %q, want %q", got, "dial "+tt.want+": refused")
		}
		if got := InError("dial "+tt.in+": refused", tt.in); strings.Contains(got, "s3") || strings.Contains(got, "et1") ||
			strings.Contains(got, "et2") {
			t.Errorf("InError kept a password: %q", got)
		}
	}
	if got := SplitList("amqp://a:p@h1/v,amqp://b:q@h2/v;amqps://h3"); len(got) != 3 || got[1] != ",amqp://b:q@h2/v" {
		t.Errorf("SplitList: %q", got)
	}
	if got := SplitList("amqp://a:p@h1,h2/v"); len(got) != 1 {
		t.Errorf("SplitList of one URL with two hosts: %q", got)
	}
}

// FuzzListNeverLeaks: two or three AMQP URLs, each with a password of its
// own holding anything a raw password can, joined by ',' or ';': no piece
// of any password survives URL or InError, and every host does.
func FuzzListNeverLeaks(f *testing.F) {
	f.Add("Zq/Secret9", "p@ss:w#rd", "a b c d", 0)
	f.Add("hunter22", "%41%42%43", "::@@", 5)
	f.Fuzz(func(t *testing.T, p1, p2, p3 string, form int) {
		pws := []string{p1, p2, p3}[:2+form&1]
		for _, pw := range pws {
			if len(pw) < 3 || strings.ContainsAny(pw, "\n\r\x00") || listStart.MatchString(pw) || strings.Contains(pw, "127.0.0.") {
				t.Skip()
			}
		}
		sep := []string{",", ";"}[(form>>1)&1]
		var urls []string
		for i, pw := range pws {
			urls = append(urls, fmt.Sprintf("amqp://u%d:%s@127.0.0.%d:567%d/v", i, pw, i+1, i))
		}
		raw := strings.Join(urls, sep)
		got := URL(raw)
		for i := range pws {
			if host := fmt.Sprintf("127.0.0.%d:567%d/v", i+1, i); !strings.Contains(got, host) {
				t.Fatalf("URL(%q) = %q lost %s", raw, got, host)
			}
		}
		msg := strings.ReplaceAll(InError("dial "+raw+": refused", raw), Mask, "\x00")
		masked := strings.ReplaceAll(got, Mask, "\x00")
		rest := raw
		for _, pw := range pws {
			rest = strings.Replace(rest, pw, "\x00", 1)
		}
		for _, pw := range pws {
			for i := 0; i+3 <= len(pw); i++ {
				piece := pw[i : i+3]
				if strings.Contains(rest, piece) {
					continue // also outside every password
				}
				if strings.Contains(masked, piece) || strings.Contains(msg, piece) {
					t.Fatalf("URL(%q) = %q / InError %q keeps %q", raw, got, msg, piece)
				}
			}
		}
	})
}
