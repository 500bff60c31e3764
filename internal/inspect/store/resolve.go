package store

import (
	"context"
	"fmt"
	"slices"
	"strings"

	"github.com/dupctl/dupctl/internal/idemtable"
	"github.com/jackc/pgx/v5"
)

// Names that mark the columns the checks need when no option names them,
// normalised (idemtable.NormName); the key, status and time columns' are
// idemtable.KeyNames, StatusNames and TimeNames.
var (
	attemptNames = []string{"attempt", "attempts", "attemptcount", "attemptnumber", "retrycount", "retries", "tries", "trycount",
		"receivecount", "deliverycount", "redeliverycount", "failurecount", "failures", "errorcount"}
	// succeededAtNames are timestamps only a success sets.
	succeededAtNames = []string{"succeededat", "successat", "succeededon", "successfulat", "succeededtime"}
	// responseCodeNames hold an HTTP-like result code: 2xx means success.
	responseCodeNames = []string{"responsecode", "statuscode", "httpstatus", "responsestatus", "httpstatuscode"}
	// historySuffixes name the status history table of a table t: t_history, ...
	historySuffixes  = []string{"_history", "_status_history", "_audit", "_transitions", "_events", "_log"}
	historyTimeNames = []string{"changedat", "transitionedat", "occurredat", "recordedat", "createdat", "insertedat", "at", "ts",
		"timestamp", "updatedat"}
	historyOrderNames = []string{"id", "seq", "sequence", "historyid", "eventid", "version"}
)

// volatileNames are columns whose value differs between two attempts of
// one operation: a unique index that includes one allows a duplicate per
// attempt.
var volatileNames = []string{"attempt", "attempts", "attemptcount", "attemptnumber", "retrycount", "retries", "tries",
	"status", "state", "id", "uuid", "jobid", "messageid", "deliverytag", "requestid", "runid", "executionid", "traceid",
	"createdat", "updatedat", "startedat", "lockedat", "insertedat", "timestamp", "ts", "lockedby", "locktoken", "workerid", "consumerid",
	"instanceid"}

func isVolatile(name string) bool { return slices.Contains(volatileNames, idemtable.NormName(name)) }

// Candidate is a table discovery found: it has a key-like column beside a
// status-like one.
type Candidate struct {
	Name   Name   `json:"-"`
	Table  string `json:"table"`
	Key    string `json:"key_column"`
	Status string `json:"status_column"`
}

// Discover lists likely idempotency tables the session may read: a column
// named like idempotency_key, dedup_key or message_id beside one named like
// status or state. schema limits the search ("" for all user schemas).
func Discover(ctx context.Context, q Querier, schema string) ([]Candidate, error) {
	rows, err := q.Query(ctx, `SELECT n.nspname, c.relname, k.attname, s.attname
FROM pg_catalog.pg_class c
JOIN pg_catalog.pg_namespace n ON n.oid = c.relnamespace
JOIN LATERAL (SELECT a.attname FROM pg_catalog.pg_attribute a
  WHERE a.attrelid = c.oid AND a.attnum > 0 AND NOT a.attisdropped
    AND replace(lower(a.attname), '_', '') = ANY($1)
  ORDER BY array_position($1, replace(lower(a.attname), '_', '')) LIMIT 1) k ON true
JOIN LATERAL (SELECT a.attname FROM pg_catalog.pg_attribute a
  WHERE a.attrelid = c.oid AND a.attnum > 0 AND NOT a.attisdropped
    AND replace(lower(a.attname), '_', '') = ANY($2)
  ORDER BY array_position($2, replace(lower(a.attname), '_', '')) LIMIT 1) s ON true
WHERE c.relkind IN ('r','p') AND NOT c.relispartition
  AND n.nspname NOT IN ('pg_catalog', 'information_schema') AND n.nspname NOT LIKE 'pg\_toast%' AND n.nspname NOT LIKE 'pg\_temp%'
  AND ($3 = '' OR n.nspname = $3)
  AND pg_catalog.has_table_privilege(c.oid, 'SELECT')
ORDER BY 1, 2`, idemtable.KeyNames, idemtable.StatusNames, schema)
	if err != nil {
		return nil, fmt.Errorf("discover idempotency tables: %w", err)
	}
	cands, err := pgx.CollectRows(rows, func(row pgx.CollectableRow) (Candidate, error) {
		var c Candidate
		err := row.Scan(&c.Name.Schema, &c.Name.Name, &c.Key, &c.Status)
		c.Table = c.Name.String()
		return c, err
	})
	if err != nil {
		return nil, fmt.Errorf("discover idempotency tables: %w", err)
	}
	// payments_history beside payments is the history of a table, not a
	// second idempotency table: the overwritten check reads it.
	all := slices.Clone(cands)
	return slices.DeleteFunc(cands, func(c Candidate) bool {
		return slices.ContainsFunc(all, func(o Candidate) bool {
			return o.Name.Schema == c.Name.Schema && slices.Contains(historySuffixes, strings.TrimPrefix(c.Name.Name, o.Name.Name))
		})
	}), nil
}
