package connect

import (
	"context"
	"errors"
	"strings"
	"testing"
	"time"

	"github.com/dupctl/dupctl/internal/platform/problem"
)

// TestNoPieceOfAPasswordInAnyError: passwords holding the characters that
// end a URL's password early (@ / # ? % space ':' and non-ASCII), in every
// position, for every system and both PostgreSQL forms; the servers are a
// closed port, so every call fails. No error text may hold any piece of
// the password (issue 27: "p@ss/w#rd?x y" printed 12 of its 13 characters).
// The pieces are three-character tokens that occur nowhere else. AMQP
// URLs also come as lists of addresses, the password in any of them.
func TestNoPieceOfAPasswordInAnyError(t *testing.T) {
	tokens := []string{"Qa7", "Zk2", "Wv3"}
	seps := []string{"@", "/", "#", "?", "%", " ", "é", ":", "%2"}
	// Each separator between, before and after the pieces, and pairs of
	// them as in the "p@ss/w#rd?x y".
	passwords := []string{tokens[0] + "@" + tokens[1] + "/w#" + tokens[2] + "?x y"}
	for i, a := range seps {
		b := seps[(i+3)%len(seps)]
		passwords = append(passwords, tokens[0]+a+tokens[1]+b+tokens[2], a+tokens[0]+b+tokens[1]+tokens[2], tokens[0]+tokens[1]+tokens[2]+a+b)
	}
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
	defer cancel()
	check := func(raw string, err error) {
		t.Helper()
		if err == nil {
			t.Errorf("%q: no error from a closed port", raw)
			return
		}
		texts := []string{err.Error()}
		var in *problem.Input
		if errors.As(err, &in) {
			texts = append(texts, in.Render(nil))
		}
		for _, text := range texts {
			for _, tok := range tokens {
				if strings.Contains(text, tok) {
					t.Errorf("%q: the error holds %q, a piece of the password: %s", raw, tok, text)
					return
				}
			}
		}
	}
	for _, pw := range passwords {
		for _, raw := range []string{"redis://u:" + pw + "@127.0.0.1:1/0", "redis://:" + pw + "@127.0.0.1:1/0",
			"redis+sentinel://u:" + pw + "@127.0.0.1:1,127.0.0.1:2/mymaster/0", "rediss+sentinel://:" + pw + "@127.0.0.1:1/mymaster",
			"redis+sentinel://127.0.0.1:1/mymaster?sentinel_password=" + pw, "redis+sentinel://127.0.0.1:1/m?sentinel_password=" + pw +
				"&sentinel_username=s"} {
			_, err := Redis(ctx, raw)
			check(raw, err)
		}
		for _, raw := range []string{"postgres://u:" + pw + "@127.0.0.1:1/x", "host=127.0.0.1 port=1 user=u password=" + pw + " dbname=x",
			"host=127.0.0.1 port=1 user=u password='" + strings.ReplaceAll(pw, "'", `\'`) + "' dbname=x"} {
			_, err := Postgres(ctx, raw, PostgresOptions{})
			check(raw, err)
			_, err = PostgresConn(ctx, raw)
			check(raw, err)
		}
		// One URL, then the lists of addresses (ParseAMQP): a password
		// in any of them, in each spelling.
		for _, raw := range []string{"amqp://u:" + pw + "@127.0.0.1:1/", "amqp://u:" + pw + "@127.0.0.1:1,127.0.0.1:2/",
			"amqp://u:" + pw + "@[::1]:1,[::1]:2/",
			"amqp://u:okay@127.0.0.1:1/,amqp://u:" + pw + "@127.0.0.1:2/", "amqp://u:" + pw + "@127.0.0.1:1/;amqps://v:" + pw + "@127.0.0.1:2/"} {
			_, err := AMQP(ctx, raw)
			check(raw, err)
		}
	}
}
