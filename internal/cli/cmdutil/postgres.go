package cmdutil

import (
	"time"

	"github.com/dupctl/dupctl/internal/platform/connect"
	"github.com/spf13/pflag"
)

// PostgresFlags are the session limits of a command that reads a
// production database: it never waits long on a lock (a migration queued
// behind it would block everyone) and never runs a statement forever.
type PostgresFlags struct {
	StatementTimeout time.Duration
	LockTimeout      time.Duration
}

// Register adds --statement-timeout and --lock-timeout.
func (p *PostgresFlags) Register(fs *pflag.FlagSet) {
	fs.DurationVar(&p.StatementTimeout, "statement-timeout", time.Minute,
		"cancel any one query that runs longer (PostgreSQL statement_timeout)")
	fs.DurationVar(&p.LockTimeout, "lock-timeout", 2*time.Second, "give up on a table lock after this long (PostgreSQL lock_timeout)")
}

// ReadOnly is the read-only session these flags describe.
func (p *PostgresFlags) ReadOnly() connect.PostgresOptions {
	return connect.PostgresOptions{ReadOnly: true, StatementTimeout: p.StatementTimeout, LockTimeout: p.LockTimeout, MaxConns: 2}
}
