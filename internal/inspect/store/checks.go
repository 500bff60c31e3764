package store

import (
	"context"
	"fmt"
	"github.com/dupctl/dupctl/internal/idemtable"
	"github.com/dupctl/dupctl/internal/platform/english"
	"slices"
	"strings"
	"time"

	"github.com/dupctl/dupctl/internal/platform/findings"
	"github.com/jackc/pgx/v5"
)

// loadCatalog reads the unique indexes and classifies each against the key.
func (in *inspector) loadCatalog(ctx context.Context) error {
	ixs, err := loadIndexes(ctx, in.q, in.t, in.version)
	if err != nil {
		return err
	}
	covered := false
	for i := range ixs {
		classify(&ixs[i], in.t, in.key)
		covered = covered || ixs[i].Coverage == CoverFull || ixs[i].Coverage == CoverNarrower
	}
	// Rows a gapped index leaves out matter only when nothing else covers
	// the key; counting them is a scan, so only then.
	for i := range ixs {
		ix := &ixs[i]
		if covered || ix.Coverage != CoverGaps || !(ix.hasGap(gapPartial) || ix.hasGap(gapExpression)) {
			continue
		}
		n, err := uncoveredRows(ctx, in.q, in.t, ix)
		if err != nil {
			return err
		}
		ix.UncoveredRows = &n
	}
	in.res.Indexes = ixs
	in.res.Coverage = coverageLine(ixs)
	if !covered {
		for _, ix := range ixs {
			if in.suppressedByPartitioning(ix) {
				in.res.Coverage = "unique only within one partition: " + ix.Kind + " " + idemtable.DisplayIdent(ix.Name) +
					" (" + strings.Join(ix.Columns, ", ") + ")"
				break
			}
		}
	}
	return nil
}

// coverageLine is the one-line verdict: which index makes the key unique,
// or what is wrong.
func coverageLine(ixs []Index) string {
	byCoverage := func(c Coverage) []string {
		var names []string
		for _, ix := range ixs {
			if ix.Coverage == c {
				names = append(names, ix.Kind+" "+idemtable.DisplayIdent(ix.Name)+" ("+strings.Join(ix.Columns, ", ")+")")
			}
		}
		return names
	}
	if f := byCoverage(CoverFull); len(f) > 0 {
		return "unique: " + f[0]
	}
	if f := byCoverage(CoverNarrower); len(f) > 0 {
		return "unique on part of the key: " + f[0]
	}
	var gaps []string
	for _, ix := range ixs {
		if ix.Coverage == CoverGaps {
			gaps = append(gaps, idemtable.DisplayIdent(ix.Name)+" ("+strings.Join(ix.Gaps, ", ")+")")
		}
	}
	if len(gaps) > 0 {
		return "not fully unique: " + strings.Join(gaps, "; ")
	}
	if f := byCoverage(CoverInvalid); len(f) > 0 {
		return "only an INVALID index: " + f[0]
	}
	return "not unique: no unique index or constraint on the key"
}

// profileRow is one status group of the profile scan.
type profileRow struct {
	status   *string
	rows     int64
	nullKeys int64
	old      int64 // older than now - stuck-after
	evidence int64 // rows with evidence of a success
}

// evidenceCol is a current-row sign that the effect succeeded.
type evidenceCol struct {
	label string // "succeeded_at is set"
	pred  string // SQL predicate
	col   Column // shown in samples
}

// successEvidence lists the current-row columns that prove a success:
// a succeeded_at-like timestamp, a 2xx response code, and the columns named
// with --success-evidence.
func (in *inspector) successEvidence() ([]evidenceCol, error) {
	var out []evidenceCol
	set := func(c Column) evidenceCol {
		return evidenceCol{label: idemtable.DisplayIdent(c.Name) + " is set", pred: c.SQL() + " IS NOT NULL", col: c}
	}
	if c, ok := in.t.ColumnByNames(succeededAtNames, idemtable.IsTimestamp); ok {
		out = append(out, set(c))
	}
	if c, ok := in.t.ColumnByNames(responseCodeNames, func(c Column) bool { return c.IsNumber() || c.IsText() }); ok {
		pred := c.SQL() + " BETWEEN 200 AND 299"
		if c.IsText() {
			pred = c.SQL() + " ~ '^2[0-9][0-9]$'"
		}
		out = append(out, evidenceCol{label: idemtable.DisplayIdent(c.Name) + " is 2xx", pred: pred, col: c})
	}
	if in.o.EvidenceColumns != "" {
		cols, err := in.t.ResolveColumns("EvidenceColumns", in.o.EvidenceColumns)
		if err != nil {
			return nil, err
		}
		for _, c := range cols {
			if !slices.ContainsFunc(out, func(e evidenceCol) bool { return e.label == idemtable.DisplayIdent(c.Name)+" is set" }) {
				out = append(out, set(c))
			}
		}
	}
	return out, nil
}

// profile is one scan of the table grouped by status: rows per status,
// NULL keys, rows older than --stuck-after, rows with success evidence.
// It feeds the nullable, stuck, statuses, overwritten and attempts checks.
func (in *inspector) profile(ctx context.Context) error {
	if !in.o.runs(CheckCatalog) && !in.o.runs(CheckStuck) && !in.o.runs(CheckStatuses) &&
		!in.o.runs(CheckOverwritten) && !in.o.runs(CheckAttempts) {
		return nil
	}
	ev, err := in.successEvidence()
	if err != nil {
		return err
	}
	in.evidence = ev
	statusSel, group := "NULL::text", ""
	if in.status != nil {
		statusSel, group = in.status.SQL()+"::text", " GROUP BY 1 ORDER BY 2 DESC, 1"
	}
	oldSel := "0::bigint"
	args := []any{}
	if len(in.times) > 0 {
		oldSel = "count(*) FILTER (WHERE " + coalesceExpr(in.times) + " < $1)"
		args = append(args, in.o.Now.Add(-in.o.StuckAfter))
	}
	evSel := "0::bigint"
	if len(ev) > 0 {
		preds := make([]string, len(ev))
		for i, e := range ev {
			preds[i] = "(" + e.pred + ")"
		}
		evSel = "count(*) FILTER (WHERE " + strings.Join(preds, " OR ") + ")"
	}
	sql := "SELECT " + statusSel + ", count(*), count(*) FILTER (WHERE " + anyNull(in.key) + "), " + oldSel + ", " + evSel +
		" FROM " + in.t.Name.SQL() + group
	rows, err := in.q.Query(ctx, sql, args...)
	if err != nil {
		return fmt.Errorf("profile %s: %w", in.t.Name, err)
	}
	prof, err := pgx.CollectRows(rows, func(row pgx.CollectableRow) (profileRow, error) {
		var p profileRow
		err := row.Scan(&p.status, &p.rows, &p.nullKeys, &p.old, &p.evidence)
		return p, err
	})
	if err != nil {
		return fmt.Errorf("profile %s: %w", in.t.Name, err)
	}
	var total int64
	for _, p := range prof {
		total += p.rows
		if in.status != nil && p.rows > 0 {
			sc := StatusCount{Value: p.status, Rows: p.rows}
			if p.status != nil {
				if r, ok := in.o.Statuses.RoleOf(*p.status); ok {
					sc.Role = string(r)
				}
			}
			in.res.Statuses = append(in.res.Statuses, sc)
		}
	}
	in.prof = prof
	in.res.Rows = &total
	return nil
}

// roleRows sums the profile over the statuses of the given roles.
func (in *inspector) roleRows(get func(profileRow) int64, roles ...Role) int64 {
	var n int64
	for _, p := range in.prof {
		if p.status == nil {
			continue
		}
		if r, ok := in.o.Statuses.RoleOf(*p.status); ok && slices.Contains(roles, r) {
			n += get(p)
		}
	}
	return n
}

// catalogFindings reports the key's coverage and nullable key columns.
func (in *inspector) catalogFindings(context.Context) error {
	in.rep.Check(RuleNoUnique.Code, RuleInvalidIndex.Code, RulePartial.Code, RuleExpression.Code, RuleTooWide.Code,
		RuleDeferrable.Code, RuleNullable.Code)
	if len(in.key) > 1 {
		in.rep.Check(RuleNarrower.Code)
	}
	ixs := in.res.Indexes
	var full, narrower []Index
	relevant := false
	for _, ix := range ixs {
		switch ix.Coverage {
		case CoverFull:
			full = append(full, ix)
		case CoverNarrower:
			narrower = append(narrower, ix)
		}
		relevant = relevant || ix.Coverage != CoverUnrelated
	}
	covered := len(full)+len(narrower) > 0
	keyText := "(" + strings.Join(displayNames(in.key), ", ") + ")"
	for _, ix := range ixs {
		switch {
		case ix.Coverage == CoverInvalid:
			f := RuleInvalidIndex.New(in.subject(), fmt.Sprintf("unique index %s on %s is INVALID: "+
				"duplicates may already exist and ON CONFLICT cannot use it", idemtable.DisplayIdent(ix.Name), keyText),
				ix.Definition, "pg_index.indisvalid = false")
			if covered {
				f.Severity = findings.Warn
				f.Message += fmt.Sprintf(" (the key is also covered by %s)", idemtable.DisplayIdent(append(full, narrower...)[0].Name))
			}
			in.rep.Add(f)
		case ix.Coverage == CoverGaps && !covered && !in.suppressedByPartitioning(ix):
			in.rep.Add(in.gapFindings(ix, keyText)...)
		}
	}
	if !relevant {
		ev := []string{"unique indexes on the table: " + indexList(ixs)}
		in.rep.Add(RuleNoUnique.New(in.subject(), "no unique index or constraint on "+keyText, ev...))
	}
	if len(full) == 0 && len(narrower) > 0 && len(in.key) > 1 {
		ix := narrower[0]
		in.rep.Add(RuleNarrower.New(in.subject(), fmt.Sprintf("%s %s is unique on (%s), part of the key %s: two scopes cannot share a key",
			ix.Kind, idemtable.DisplayIdent(ix.Name), strings.Join(ix.Columns, ", "), keyText), ix.Definition))
	}
	in.nullableFindings(append(full, narrower...))
	return nil
}

// gapFindings explains each way a gapped index lets a duplicate through.
func (in *inspector) gapFindings(ix Index, keyText string) []findings.Finding {
	var out []findings.Finding
	name := idemtable.DisplayIdent(ix.Name)
	uncovered := "not counted"
	if ix.UncoveredRows != nil {
		uncovered = fmt.Sprint(*ix.UncoveredRows)
	}
	if ix.hasGap(gapPartial) {
		out = append(out, RulePartial.New(in.subject(), fmt.Sprintf("%s covers %s only WHERE %s: %s rows are outside it today", name, keyText,
			ix.Predicate, uncovered),
			ix.Definition, "rows outside the predicate or with a NULL expression: "+uncovered))
	}
	if ix.hasGap(gapExpression) {
		out = append(out, RuleExpression.New(in.subject(), fmt.Sprintf("%s is unique on %s, not on %s: ON CONFLICT %s cannot use it", name,
			strings.Join(ix.Columns, ", "), keyText, keyText),
			ix.Definition, "rows outside the predicate or with a NULL expression: "+uncovered))
	}
	if ix.hasGap(gapExtra) {
		var volatile []string
		for _, c := range ix.ExtraColumns {
			if isVolatile(c) {
				volatile = append(volatile, idemtable.DisplayIdent(c))
			}
		}
		f := RuleTooWide.New(in.subject(), fmt.Sprintf("%s is unique on (%s): one row per %s is allowed for each key", name,
			strings.Join(ix.Columns, ", "), strings.Join(displayStrings(ix.ExtraColumns), ", ")), ix.Definition)
		switch {
		case len(volatile) > 0:
			f.Evidence = append(f.Evidence, strings.Join(volatile, ", ")+" changes between attempts")
		case in.res.KeySource != "flag":
			// The key was guessed: the extra column may be a scope
			// (tenant) that belongs to the key.
			f.Severity = findings.Warn
			f.Message += fmt.Sprintf("; if %s is part of the key's scope, rerun with {KeyColumns} %s",
				strings.Join(displayStrings(ix.ExtraColumns), ", "), strings.Join(ix.Columns, ","))
		}
		out = append(out, f)
	}
	if ix.hasGap(gapDeferrable) {
		out = append(out, RuleDeferrable.New(in.subject(), fmt.Sprintf("%s on %s is DEFERRABLE: checked at commit, after the side effect, "+
			"and no ON CONFLICT arbiter", name, keyText), ix.Definition))
	}
	return out
}

func (in *inspector) nullableFindings(covering []Index) {
	for _, ix := range covering {
		if ix.NullsNotDistinct {
			return
		}
	}
	var nullable []string
	for _, c := range in.key {
		if !c.NotNull {
			nullable = append(nullable, idemtable.DisplayIdent(c.Name))
		}
	}
	if len(nullable) == 0 {
		return
	}
	var ev []string
	if in.prof != nil {
		var n int64
		for _, p := range in.prof {
			n += p.nullKeys
		}
		ev = append(ev, fmt.Sprintf("rows with a NULL key today: %d", n))
	}
	in.rep.Add(RuleNullable.New(in.subject(), strings.Join(nullable, ", ")+" may be NULL, and NULL keys are never "+
		"duplicates of each other", ev...))
}

func displayNames(cols []Column) []string {
	out := make([]string, len(cols))
	for i, c := range cols {
		out[i] = idemtable.DisplayIdent(c.Name)
	}
	return out
}

func displayStrings(names []string) []string {
	out := make([]string, len(names))
	for i, n := range names {
		out[i] = idemtable.DisplayIdent(n)
	}
	return out
}

func indexList(ixs []Index) string {
	if len(ixs) == 0 {
		return "none"
	}
	var parts []string
	for _, ix := range ixs {
		parts = append(parts, idemtable.DisplayIdent(ix.Name)+" ("+strings.Join(ix.Columns, ", ")+")")
	}
	return strings.Join(parts, ", ")
}

// duplicates is the GROUP BY key HAVING count(*) > 1 a person would write,
// streamed: totals, the largest groups, then what their rows say.
func (in *inspector) duplicates(ctx context.Context) error {
	in.rep.Check(RuleDuplicates.Code)
	cols := in.key
	// On a partitioned table the same scan tells whether a key's rows sit
	// in more than one partition: min <> max of tableoid is a hash
	// aggregate, where count(DISTINCT) would sort.
	partitioned := in.part != nil && in.part.Key != ""
	spread := "0::oid, 0::oid"
	if partitioned {
		spread = "min(tableoid), max(tableoid)"
	}
	sql := "SELECT " + eachText(cols) + ", " + textExpr(cols) + ", count(*), " + spread + " FROM " + in.t.Name.SQL() +
		" WHERE " + allNotNull(cols) + " GROUP BY " + colList(cols) + " HAVING count(*) > 1"
	dest := make([]any, len(cols)+4)
	parts := make([]string, len(cols))
	var g Group
	var lo, hi uint32
	for i := range parts {
		dest[i] = &parts[i]
	}
	dest[len(cols)], dest[len(cols)+1], dest[len(cols)+2], dest[len(cols)+3] = &g.Key, &g.Rows, &lo, &hi
	across := &topN{n: in.o.Samples}
	res, err := in.collectGroups(ctx, "duplicate check", sql, nil, dest, func() Group {
		if lo != hi {
			detail := in.part.partitionName(lo) + " and " + in.part.partitionName(hi)
			across.add(Group{Key: g.Key, Rows: g.Rows, Detail: detail})
		}
		return Group{Key: g.Key, Rows: g.Rows, parts: slices.Clone(parts)}
	})
	if err != nil {
		return err
	}
	if partitioned {
		res.AcrossPartitions, res.acrossSamples = &across.groups, across.result().Samples
	}
	in.res.Duplicates = res
	if res.Groups == 0 {
		return nil
	}
	cheap, size, err := in.cheapKeyLookup(ctx)
	if err != nil {
		return err
	}
	if cheap {
		if err := in.describeRows(ctx, res.Samples); err != nil {
			return err
		}
	} else {
		in.skip(CheckDuplicates+" (rows)", fmt.Sprintf("the statuses and times of the duplicate rows were not read: "+
			"no index on the key, and a second scan of %d MB would double the check", size>>20))
	}
	ev := res.evidence(func(s Group) string {
		e := fmt.Sprintf("key %s: %d rows", quoteKey(s.Key), s.Rows)
		if strings.Trim(s.Detail, "; ") != "" {
			e += ": " + s.Detail
		}
		return e
	})
	msg := fmt.Sprintf("%d %s more than one row (%d rows, %d extra)",
		res.Groups, english.Plural(res.Groups, "key has", "keys have"), res.Rows, res.Rows-res.Groups)
	if res.AcrossPartitions != nil && *res.AcrossPartitions > 0 {
		msg += fmt.Sprintf("; %d of them in more than one partition", *res.AcrossPartitions)
	}
	in.rep.Add(RuleDuplicates.New(in.subject(), msg, ev...))
	return nil
}

// collectGroups streams a grouping query (one row per group, scanned into
// dest and turned into a Group) into the totals and the largest groups.
func (in *inspector) collectGroups(ctx context.Context, what, sql string, args, dest []any, group func() Group) (*Groups, error) {
	rows, err := in.q.Query(ctx, sql, args...)
	if err != nil {
		return nil, fmt.Errorf("%s on %s: %w", what, in.t.Name, err)
	}
	top := &topN{n: in.o.Samples}
	if _, err := pgx.ForEachRow(rows, dest, func() error { top.add(group()); return nil }); err != nil {
		return nil, fmt.Errorf("%s on %s: %w", what, in.t.Name, err)
	}
	return top.result(), nil
}

// detailBytesLimit is the table size up to which the duplicate rows are
// read back without an index on the key: a second scan is cheap there.
const detailBytesLimit = 100 << 20

// cheapKeyLookup reports whether reading rows by key is cheap: the table
// is small, or a valid index leads with the key columns. It returns the
// table's size for the message when it is not.
func (in *inspector) cheapKeyLookup(ctx context.Context) (bool, int64, error) {
	nums := make([]int16, len(in.key))
	for i, c := range in.key {
		nums[i] = c.Num
	}
	var indexed bool
	var size int64
	// A partitioned table has no storage of its own: its size is its
	// partitions'.
	tables := []uint32{in.t.OID}
	if in.part != nil && in.part.Key != "" {
		tables = in.part.oids
	}
	err := in.q.QueryRow(ctx, `SELECT (SELECT coalesce(sum(pg_catalog.pg_relation_size(r)), 0)::bigint FROM unnest($4::oid[]) r),
  EXISTS (SELECT 1 FROM pg_catalog.pg_index
WHERE indrelid = $1 AND indisvalid AND indnkeyatts >= $2
  AND (indkey::int2[])[0:$2 - 1] @> $3::int2[] AND (indkey::int2[])[0:$2 - 1] <@ $3::int2[])`,
		in.t.OID, len(nums), nums, tables).Scan(&size, &indexed)
	if err != nil {
		return false, 0, fmt.Errorf("look for an index on the key of %s: %w", in.t.Name, err)
	}
	return indexed || size <= detailBytesLimit, size, nil
}

// describeRows fills each sample group's Detail with its rows' statuses
// and times: one query for all samples, by key (an index can serve it).
func (in *inspector) describeRows(ctx context.Context, groups []Group) error {
	statusSel, timeSel, timeName, order := "NULL::text", "NULL::timestamptz", "", ""
	if in.status != nil {
		statusSel = "coalesce(" + in.status.SQL() + "::text, 'NULL')"
	}
	if len(in.times) > 0 {
		tc := in.times[len(in.times)-1] // created_at-like: detected last
		timeSel, timeName, order = tc.SQL()+"::timestamptz", idemtable.DisplayIdent(tc.Name), ", "+tc.SQL()
	}
	sql := "SELECT " + textExpr(in.key) + ", " + statusSel + ", " + timeSel + ", tableoid FROM " + in.t.Name.SQL() +
		" WHERE " + keyIn(in.key, 1) + " ORDER BY 1" + order
	rows, err := in.q.Query(ctx, sql, keyArgs(groups, len(in.key))...)
	if err != nil {
		return fmt.Errorf("read duplicate rows of %s: %w", in.t.Name, err)
	}
	details := map[string][]string{}
	var key string
	var status *string
	var at *time.Time
	var table uint32
	partitioned := in.part != nil && in.part.Key != ""
	_, err = pgx.ForEachRow(rows, []any{&key, &status, &at, &table}, func() error {
		var parts []string
		if status != nil {
			parts = append(parts, *status)
		}
		if at != nil {
			parts = append(parts, timeName+" "+at.UTC().Format(time.RFC3339))
		}
		if partitioned {
			parts = append(parts, "in "+in.part.partitionName(table))
		}
		if len(details[key]) < 10 {
			details[key] = append(details[key], strings.Join(parts, " "))
		}
		return nil
	})
	if err != nil {
		return fmt.Errorf("read duplicate rows of %s: %w", in.t.Name, err)
	}
	for i := range groups {
		groups[i].Detail = strings.Join(details[groups[i].Key], "; ")
	}
	return nil
}

// normalized finds keys that differ only by case or surrounding spaces:
// grouped by the exact key first, then by lower(btrim()) of its text
// columns, so both passes are hash aggregates.
func (in *inspector) normalized(ctx context.Context) error {
	if !in.requires(CheckNormalized, need(slices.ContainsFunc(in.key, Column.IsText), "the key has no text column")) {
		return nil
	}
	in.rep.Check(RuleNormalized.Code)
	var inner, outer []string
	for i, c := range in.key {
		n := fmt.Sprintf("n%d", i)
		e := c.SQL()
		if c.IsText() {
			e = "lower(btrim(" + e + "))"
		}
		inner = append(inner, e+" AS "+n)
		outer = append(outer, n)
	}
	norm := outer[0] + "::text"
	if len(outer) > 1 {
		norm = "ROW(" + strings.Join(outer, ", ") + ")::text"
	}
	sql := "SELECT " + norm + ", count(*), sum(n)::bigint, min(k), max(k) FROM (SELECT " + strings.Join(inner, ", ") + ", " +
		textExpr(in.key) + " AS k, count(*) AS n FROM " + in.t.Name.SQL() + " WHERE " + allNotNull(in.key) +
		" GROUP BY " + colList(in.key) + ") g GROUP BY " + strings.Join(outer, ", ") + " HAVING count(*) > 1"
	var key, lo, hi string
	var variants, n int64
	res, err := in.collectGroups(ctx, "normalised duplicate check", sql, nil, []any{&key, &variants, &n, &lo, &hi}, func() Group {
		return Group{Key: key, Rows: n, Detail: fmt.Sprintf("%d spellings, e.g. %s and %s", variants, quoteKey(lo), quoteKey(hi))}
	})
	if err != nil {
		return err
	}
	in.res.NormalizedDuplicates = res
	if res.Groups == 0 {
		return nil
	}
	ev := res.evidence(func(s Group) string { return fmt.Sprintf("%s: %d rows, %s", quoteKey(s.Key), s.Rows, s.Detail) })
	in.rep.Add(RuleNormalized.New(in.subject(), fmt.Sprintf("%d %s written in several ways (case or spaces) across %d rows",
		res.Groups, english.Plural(res.Groups, "key is", "keys are"), res.Rows), ev...))
	return nil
}

// multipleSucceeded finds business keys with SUCCEEDED rows under more
// than one idempotency key.
func (in *inspector) multipleSucceeded(ctx context.Context) error {
	succ := in.o.Statuses.Values(Succeeded)
	if !in.requires(CheckBusiness, need(len(in.business) > 0, "no {BusinessColumns}: "+
		"which column holds the business key (order_id) is not guessed"),
		in.needStatus(), need(len(succ) > 0, noSucceeded)) {
		return nil
	}
	in.rep.Check(RuleMultipleSucceeded.Code)
	// min(key) <> max(key) is "more than one distinct key" as a hash
	// aggregate; count(DISTINCT) would sort.
	key := textExpr(in.key)
	sql := "SELECT " + textExpr(in.business) + ", count(*), min(" + key + "), max(" + key + ") FROM " + in.t.Name.SQL() +
		" WHERE " + statusIn(in.status, 1) + " AND " + allNotNull(in.business) + " AND " + allNotNull(in.key) +
		" GROUP BY " + colList(in.business) + " HAVING min(" + key + ") <> max(" + key + ")"
	var biz, lo, hi string
	var n int64
	res, err := in.collectGroups(ctx, "business key check", sql, []any{succ}, []any{&biz, &n, &lo, &hi}, func() Group {
		return Group{Key: biz, Rows: n, Detail: fmt.Sprintf("under keys such as %s and %s", quoteKey(lo), quoteKey(hi))}
	})
	if err != nil {
		return err
	}
	in.res.MultipleSucceeded = res
	if res.Groups == 0 {
		return nil
	}
	ev := res.evidence(func(s Group) string {
		return fmt.Sprintf("%s %s: %d successes, %s", strings.Join(displayNames(in.business), ","), quoteKey(s.Key), s.Rows, s.Detail)
	})
	in.rep.Add(RuleMultipleSucceeded.New(in.subject(), fmt.Sprintf("%d business %s succeeded under several idempotency keys (%d successes)",
		res.Groups, english.Plural(res.Groups, "key", "keys"), res.Rows), ev...))
	return nil
}

// stuck reports PROCESSING rows whose last sign of life is older than
// --stuck-after.
func (in *inspector) stuck(ctx context.Context) error {
	proc := in.o.Statuses.Values(Processing)
	if !in.requires(CheckStuck, in.needStatus(),
		need(len(in.times) > 0, "no timestamp column (updated_at, locked_at, started_at, ...): name one with {TimeColumns}"),
		need(len(proc) > 0, "no processing status value ({Statuses} processing=...)")) {
		return nil
	}
	in.rep.Check(RuleStuck.Code)
	since := coalesceExpr(in.times)
	res := &Stuck{After: english.Duration(in.o.StuckAfter), Since: strings.Join(in.res.TimeColumns, ", "), Samples: []StuckRow{}}
	in.res.Stuck = res
	res.Rows = in.roleRows(func(p profileRow) int64 { return p.old }, Processing)
	if res.Rows == 0 {
		return nil
	}
	attemptSel := "NULL::text"
	if in.attempt != nil {
		attemptSel = in.attempt.SQL() + "::text"
	}
	sql := "SELECT " + textExpr(in.key) + ", " + in.status.SQL() + "::text, " + since + "::timestamptz, " + attemptSel +
		" FROM " + in.t.Name.SQL() + " WHERE " + statusIn(in.status, 1) + " AND " + since + " < $2 ORDER BY 3, 1 LIMIT $3"
	rows, err := in.q.Query(ctx, sql, proc, in.o.Now.Add(-in.o.StuckAfter), in.o.Samples)
	if err != nil {
		return fmt.Errorf("stuck check on %s: %w", in.t.Name, err)
	}
	var r StuckRow
	_, err = pgx.ForEachRow(rows, []any{&r.Key, &r.Status, &r.Since, &r.Attempt}, func() error {
		r.Age = english.Duration(in.o.Now.Sub(r.Since))
		res.Samples = append(res.Samples, r)
		return nil
	})
	if err != nil {
		return fmt.Errorf("stuck check on %s: %w", in.t.Name, err)
	}
	ev := make([]string, 0, len(res.Samples))
	for _, s := range res.Samples {
		e := fmt.Sprintf("key %s: %s since %s (%s ago)", quoteKey(s.Key), s.Status, s.Since.UTC().Format(time.RFC3339), s.Age)
		if s.Attempt != nil {
			e += ", " + idemtable.DisplayIdent(in.attempt.Name) + " " + *s.Attempt
		}
		ev = append(ev, e)
	}
	in.rep.Add(RuleStuck.New(in.subject(), fmt.Sprintf("%d %s in PROCESSING with no sign of life (%s) for more than %s",
		res.Rows, english.Plural(res.Rows, "row is", "rows are"), res.Since, res.After), ev...))
	return nil
}

// unknownStatuses reports status values outside the expected set.
func (in *inspector) unknownStatuses(context.Context) error {
	if !in.requires(CheckStatuses, in.needStatus()) {
		return nil
	}
	in.rep.Check(RuleUnknownStatus.Code)
	var ev []string
	var n int64
	for _, s := range in.res.Statuses {
		if s.Role == "" {
			n += s.Rows
			ev = append(ev, fmt.Sprintf("%s: %d %s", s.Display(), s.Rows, english.Plural(s.Rows, "row", "rows")))
		}
	}
	if n > 0 {
		in.rep.Add(RuleUnknownStatus.New(in.subject(), fmt.Sprintf("%d %s a status outside %s", n, english.Plural(n, "row has", "rows have"),
			in.o.Statuses.Describe()), ev...))
	}
	return nil
}

// failedNoAttempts reports FAILED rows in a table with neither an attempt
// counter nor RETRYABLE rows.
func (in *inspector) failedNoAttempts(context.Context) error {
	if !in.requires(CheckAttempts, in.needStatus()) {
		return nil
	}
	in.rep.Check(RuleFailedNoAttempts.Code)
	rowsOf := func(p profileRow) int64 { return p.rows }
	failed := in.roleRows(rowsOf, Failed)
	if failed == 0 || in.attempt != nil || in.roleRows(rowsOf, Retryable) > 0 {
		return nil
	}
	in.rep.Add(RuleFailedNoAttempts.New(in.subject(), fmt.Sprintf("%d FAILED %s, no attempt column and no RETRYABLE rows: "+
		"a temporary error ends the job for good", failed, english.Plural(failed, "row", "rows")),
		"attempt columns looked for: attempt, attempts, attempt_count, retry_count, retries, tries, receive_count, "+
			"delivery_count (or {AttemptColumn})"))
	return nil
}

// quoteKey shows a key so that case and spaces are visible.
func quoteKey(s string) string { return fmt.Sprintf("%q", s) }
