package connect

import (
	"errors"
	"strings"

	"github.com/jackc/pgx/v5/pgconn"
)

// PGKind is what a PostgreSQL server error means for a read-only command:
// the few SQLSTATEs dupctl meets in a careful read-only session, grouped by
// what the user should do about them.
type PGKind uint8

const (
	// PGNone: err is not an error the server sent.
	PGNone PGKind = iota
	// PGStatementTimeout: 57014 query_canceled, the statement_timeout
	// (or a cancel) stopped the statement.
	PGStatementTimeout
	// PGLockTimeout: 55P03 lock_not_available, the lock_timeout ran out
	// waiting for a lock (DDL holding the table).
	PGLockTimeout
	// PGPermission: 42501 insufficient_privilege.
	PGPermission
	// PGReadOnly: 25006 read_only_sql_transaction, the statement tried to
	// write in a read-only transaction.
	PGReadOnly
	// PGBadQuery: the query itself is wrong - class 42 (syntax error,
	// undefined table or column) other than 42501, or class 22 (data
	// exception: a bad cast, division by zero).
	PGBadQuery
	// PGOther: any other server error.
	PGOther
)

// PGErrorKind classifies an error from pgx by its SQLSTATE, through any
// wrapping. It is the one copy of that mapping: commands choose their
// hint and exit code from the kind.
func PGErrorKind(err error) PGKind {
	var pe *pgconn.PgError
	if !errors.As(err, &pe) {
		return PGNone
	}
	switch code := pe.Code; {
	case code == "57014":
		return PGStatementTimeout
	case code == "55P03":
		return PGLockTimeout
	case code == "42501":
		return PGPermission
	case code == "25006":
		return PGReadOnly
	case strings.HasPrefix(code, "42"), strings.HasPrefix(code, "22"):
		return PGBadQuery
	}
	return PGOther
}
