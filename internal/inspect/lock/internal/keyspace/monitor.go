package keyspace

import (
	"context"
	"errors"
	"fmt"
	"strconv"
	"strings"
	"time"
)

// Watching the commands themselves (inspect lock --learn): MONITOR
// streams every command the server runs, from every client and from
// inside scripts, so how a key is written and released can be seen
// instead of guessed - at the price of the server's throughput while it
// runs (Redis copies each command to the monitor), which is why it is
// for staging and asked for explicitly. It adds no read to the scan: it
// runs before it, on a connection of its own.

// Command is one command MONITOR reported on the node's database: its
// arguments (the name first, as sent) and whether a script ran it.
type Command struct {
	Args []string
	Lua  bool
	// Client is the client's address (or "lua"): a script's commands
	// follow the EVAL/EVALSHA of the client that ran it.
	Client string
}

// ErrMonitorRefused is MONITOR refused to the ACL user.
var ErrMonitorRefused = errors.New("MONITOR refused")

// Monitor runs MONITOR on the node for d and calls fn with each command
// on the node's database, in order. A refusal (NOPERM, a server that
// disables MONITOR) wraps ErrMonitorRefused.
func (n *Node) Monitor(ctx context.Context, d time.Duration, fn func(Command)) error {
	rc, err := dialRaw(ctx, n)
	if errors.Is(err, errNoRaw) {
		return fmt.Errorf("MONITOR on %s: the connection's credentials come from a provider dupctl cannot reuse", n.Name)
	}
	if err != nil {
		return err
	}
	defer rc.close()
	db := 0
	if o := options(n.Conn); o != nil {
		db = o.DB
	}
	rc.write("MONITOR")
	if err := rc.w.Flush(); err != nil {
		return fmt.Errorf("MONITOR on %s: %w", n.Name, err)
	}
	kind, text, err := rc.reply()
	switch {
	case err != nil:
		return fmt.Errorf("MONITOR on %s: %w", n.Name, err)
	case kind == replyError:
		return fmt.Errorf("%w on %s: %s", ErrMonitorRefused, n.Name, text)
	}
	end := time.Now().Add(d)
	if err := rc.c.SetReadDeadline(end); err != nil {
		return err
	}
	for {
		kind, text, err := rc.reply()
		if err != nil {
			if time.Now().After(end) || ctx.Err() != nil {
				return ctx.Err() // the time asked for is up
			}
			return fmt.Errorf("MONITOR on %s: %w", n.Name, err)
		}
		if kind != replyStatus {
			continue
		}
		if c, at, ok := ParseMonitorLine(text); ok && at == db {
			fn(c)
		}
	}
}

// ParseMonitorLine reads one line of MONITOR's output:
//
//	1765120000.123456 [0 127.0.0.1:53412] "SET" "lock:x" "tok" "NX" "PX" "30000"
//	1765120000.123500 [0 lua] "get" "lock:x"
//
// returning the command and its database.
func ParseMonitorLine(s string) (Command, int, bool) {
	open := strings.IndexByte(s, '[')
	closing := strings.IndexByte(s, ']')
	if open < 0 || closing < open {
		return Command{}, 0, false
	}
	dbText, client, _ := strings.Cut(s[open+1:closing], " ")
	db, err := strconv.Atoi(dbText)
	if err != nil {
		return Command{}, 0, false
	}
	c := Command{Client: client, Lua: client == "lua"}
	rest := s[closing+1:]
	for {
		i := strings.IndexByte(rest, '"')
		if i < 0 {
			break
		}
		arg, n, ok := unquoteMonitorArg(rest[i+1:])
		if !ok {
			return Command{}, 0, false
		}
		c.Args = append(c.Args, arg)
		rest = rest[i+1+n:]
	}
	return c, db, len(c.Args) > 0
}

// unquoteMonitorArg reads one argument up to its closing quote (sdscatrepr:
// \\ \" \n \r \t \a \b and \xHH escapes) and returns how many bytes of s
// it took, the quote included.
func unquoteMonitorArg(s string) (string, int, bool) {
	var b strings.Builder
	for i := 0; i < len(s); i++ {
		c := s[i]
		switch {
		case c == '"':
			return b.String(), i + 1, true
		case c != '\\' || i+1 == len(s):
			b.WriteByte(c)
			continue
		}
		i++
		switch s[i] {
		case 'n':
			b.WriteByte('\n')
		case 'r':
			b.WriteByte('\r')
		case 't':
			b.WriteByte('\t')
		case 'a':
			b.WriteByte('\a')
		case 'b':
			b.WriteByte('\b')
		case 'x':
			if i+2 < len(s) {
				if v, err := strconv.ParseUint(s[i+1:i+3], 16, 8); err == nil {
					b.WriteByte(byte(v))
					i += 2
					continue
				}
			}
			b.WriteByte('x')
		default:
			b.WriteByte(s[i])
		}
	}
	return "", 0, false
}
