package store

import (
	"context"
	"fmt"
	"slices"
	"strings"

	"github.com/dupctl/dupctl/internal/idemtable"
	"github.com/dupctl/dupctl/internal/platform/english"
	"github.com/jackc/pgx/v5"
)

// Partitioning is how a declaratively partitioned table (or a partition)
// splits its rows, and whether a key always lands in one partition.
type Partitioning struct {
	// Key is the table's own partition key (pg_get_partkeydef), e.g.
	// "RANGE (created_at)"; "" when the table is a partition, not partitioned.
	Key      string   `json:"key"`
	Strategy string   `json:"strategy"` // range, list, hash
	Columns  []string `json:"columns"`  // the columns the partition key reads
	// SubKeys are the partition keys of partitions that are partitioned
	// themselves, one entry per level and key.
	SubKeys []SubPartitioning `json:"sub_partitioning"`
	// Partitions counts the leaf partitions, the tables that hold rows.
	Partitions int `json:"partitions"`
	// Leaves are the first leaf partitions with their bounds.
	Leaves []Partition `json:"leaves"`
	// ByKey: every partition key at every level reads only key columns,
	// so the same key always lands in the same partition.
	ByKey bool `json:"by_key"`
	// Outside lists the partition key columns that are not key columns.
	Outside []string `json:"outside_columns"`
	// PartitionOf is the parent when the table is itself a partition: its
	// rows are only one partition's.
	PartitionOf string `json:"partition_of"`

	names map[uint32]string // every table of the tree by oid, for row details
	oids  []uint32          // every table of the tree, for its size
}

// SubPartitioning is one partition key used below the top level.
type SubPartitioning struct {
	Level   int      `json:"level"` // 1: partitions of the table
	Key     string   `json:"key"`
	Columns []string `json:"columns"`
	Tables  int      `json:"tables"` // partitioned partitions with this key
}

// Partition is one leaf and its bound (FOR VALUES ..., DEFAULT).
type Partition struct {
	Name  string `json:"name"`
	Bound string `json:"bound"`
}

// leafSamples is how many leaves the result and the evidence list.
const leafSamples = 3

// splitsKeys reports whether the table is partitioned with a key that is
// not (a function of) the idempotency key: a unique index then holds per
// partition only.
func (p *Partitioning) splitsKeys() bool { return p != nil && p.Key != "" && !p.ByKey }

// treeNode is one table of a partition tree.
type treeNode struct {
	oid      uint32
	level    int
	name     string
	kind     string
	bound    string
	estimate int64
	key      string
	strategy string
	columns  []string
}

// loadPartitioning reads the partition tree under the table (pg_inherits,
// pg_partitioned_table) and judges it against the key columns. It leaves
// in.part nil for a plain table.
func (in *inspector) loadPartitioning(ctx context.Context) error {
	if !in.o.runs(CheckCatalog) && !in.o.runs(CheckDuplicates) {
		return nil
	}
	var parent string
	err := in.q.QueryRow(ctx, `SELECT coalesce((SELECT i.inhparent::regclass::text FROM pg_catalog.pg_inherits i
  JOIN pg_catalog.pg_class c ON c.oid = i.inhrelid WHERE i.inhrelid = $1 AND c.relispartition), '')`, in.t.OID).Scan(&parent)
	if err != nil {
		return fmt.Errorf("read the parent of %s: %w", in.t.Name, err)
	}
	nodes, err := partitionTree(ctx, in.q, in.t.OID)
	if err != nil {
		return fmt.Errorf("read the partitions of %s: %w", in.t.Name, err)
	}
	if parent == "" && (len(nodes) == 0 || nodes[0].kind != "p") {
		return nil
	}
	keyNames := make([]string, len(in.key))
	for i, c := range in.key {
		keyNames[i] = c.Name
	}
	p := judgePartitions(nodes, keyNames)
	p.PartitionOf = parent
	in.part = p
	in.res.Partitioning = p
	var estimate int64
	for _, n := range nodes {
		if n.kind == "r" && n.estimate > 0 {
			estimate += n.estimate
		}
	}
	if p.Key != "" && in.res.RowsEstimate <= 0 {
		in.res.RowsEstimate = estimate
	}
	return nil
}

// partitionTree lists the table and every table below it, level by level.
// The columns a partition key reads are its plain columns (partattrs) and
// the columns its expressions read, which PostgreSQL records in pg_depend
// as internal dependencies of the table on its own columns.
func partitionTree(ctx context.Context, q Querier, oid uint32) ([]treeNode, error) {
	rows, err := q.Query(ctx, `WITH RECURSIVE tree(relid, level) AS (
  SELECT $1::oid, 0
  UNION ALL SELECT i.inhrelid, t.level + 1 FROM pg_catalog.pg_inherits i JOIN tree t ON i.inhparent = t.relid
)
SELECT c.oid, t.level, c.relname, c.relkind::text, coalesce(pg_catalog.pg_get_expr(c.relpartbound, c.oid), ''),
  c.reltuples::bigint, coalesce(pg_catalog.pg_get_partkeydef(c.oid), ''), coalesce(pt.partstrat::text, ''),
  ARRAY(SELECT a.attname::text FROM pg_catalog.pg_attribute a
    WHERE a.attrelid = c.oid AND a.attnum > 0 AND pt.partrelid IS NOT NULL
      AND (a.attnum = ANY(pt.partattrs::int2[]) OR EXISTS (SELECT 1 FROM pg_catalog.pg_depend d
        WHERE d.classid = 'pg_catalog.pg_class'::regclass AND d.objid = c.oid AND d.objsubid = a.attnum
          AND d.refclassid = 'pg_catalog.pg_class'::regclass AND d.refobjid = c.oid AND d.refobjsubid = 0 AND d.deptype = 'i'))
    ORDER BY a.attnum)
FROM tree t JOIN pg_catalog.pg_class c ON c.oid = t.relid
LEFT JOIN pg_catalog.pg_partitioned_table pt ON pt.partrelid = c.oid
ORDER BY t.level, c.relname`, oid)
	if err != nil {
		return nil, err
	}
	return pgx.CollectRows(rows, func(row pgx.CollectableRow) (treeNode, error) {
		var n treeNode
		err := row.Scan(&n.oid, &n.level, &n.name, &n.kind, &n.bound, &n.estimate, &n.key, &n.strategy, &n.columns)
		return n, err
	})
}

var strategies = map[string]string{"r": "range", "l": "list", "h": "hash"}

// judgePartitions sums a tree up: its key, the keys below it, its leaves,
// and whether every key reads only the idempotency key's columns.
func judgePartitions(nodes []treeNode, key []string) *Partitioning {
	p := &Partitioning{Columns: []string{}, SubKeys: []SubPartitioning{}, Leaves: []Partition{}, Outside: []string{},
		ByKey: true, names: map[uint32]string{}}
	outside := func(cols []string) {
		for _, c := range cols {
			if !slices.Contains(key, c) {
				p.ByKey = false
				if !slices.Contains(p.Outside, c) {
					p.Outside = append(p.Outside, c)
				}
			}
		}
	}
	for i, n := range nodes {
		p.names[n.oid] = n.name
		p.oids = append(p.oids, n.oid)
		switch {
		case i == 0 && n.kind == "p":
			p.Key, p.Strategy, p.Columns = n.key, strategies[n.strategy], n.columns
			outside(n.columns)
		case i == 0:
		case n.kind == "p":
			outside(n.columns)
			j := slices.IndexFunc(p.SubKeys, func(s SubPartitioning) bool { return s.Level == n.level && s.Key == n.key })
			if j < 0 {
				p.SubKeys = append(p.SubKeys, SubPartitioning{Level: n.level, Key: n.key, Columns: n.columns})
				j = len(p.SubKeys) - 1
			}
			p.SubKeys[j].Tables++
		default:
			p.Partitions++
			if len(p.Leaves) < leafSamples {
				p.Leaves = append(p.Leaves, Partition{Name: n.name, Bound: n.bound})
			}
		}
	}
	if p.Key == "" {
		p.ByKey = false // a partition, judged through its parent
	}
	return p
}

// Describe is the partitioning in one line: "RANGE (created_at), 3
// partitions; level 1: HASH (idempotency_key) in 2".
func (p *Partitioning) Describe() string {
	if p.Key == "" {
		return "a partition of " + p.PartitionOf + ": only its own rows are read (inspect the partitioned table)"
	}
	s := fmt.Sprintf("%s, %d %s", p.Key, p.Partitions, english.Plural(p.Partitions, "partition", "partitions"))
	for _, sk := range p.SubKeys {
		s += fmt.Sprintf("; level %d: %s in %d", sk.Level, sk.Key, sk.Tables)
	}
	if p.PartitionOf != "" {
		s += "; itself a partition of " + p.PartitionOf
	}
	return s
}

// partitionName is the leaf a row's tableoid names, for row details.
func (p *Partitioning) partitionName(oid uint32) string {
	if n, ok := p.names[oid]; ok {
		return n
	}
	return fmt.Sprintf("oid %d", oid)
}

// suppressedByPartitioning reports whether a gapped index's only gap is
// partition key columns beside the key: the per-partition finding says it
// with the fix that works on a partitioned table, so the generic too-wide
// finding would be a second report of one cause.
func (in *inspector) suppressedByPartitioning(ix Index) bool {
	if !in.part.splitsKeys() || !slices.Equal(ix.Gaps, []string{gapExtra}) {
		return false
	}
	for _, c := range ix.ExtraColumns {
		if !slices.Contains(in.part.Outside, c) {
			return false
		}
	}
	return true
}

// partitionFindings reports a partitioned table whose partition key is
// not a function of the idempotency key: a unique index on a partitioned
// table must include the partition key, so it holds only within one
// partition, and a key written again in another partition (a retry after
// the month turned, a status that moves the row) is a second row.
func (in *inspector) partitionFindings(context.Context) error {
	if in.part == nil || in.part.Key == "" {
		return nil
	}
	in.rep.Check(RulePerPartition.Code)
	p := in.part
	if !p.splitsKeys() {
		return nil
	}
	keyText := "(" + strings.Join(displayNames(in.key), ", ") + ")"
	outside := strings.Join(displayStrings(p.Outside), ", ")
	var perPartition []Index
	for _, ix := range in.res.Indexes {
		if ix.Coverage != CoverUnrelated && ix.Coverage != CoverInvalid && len(ix.ExtraColumns) > 0 {
			perPartition = append(perPartition, ix)
		}
	}
	msg := fmt.Sprintf("partitioned by %s, outside the key %s: no unique index on the key alone is possible here, "+
		"so nothing stops a key from landing in two partitions", p.Key, keyText)
	if len(perPartition) > 0 {
		ix := perPartition[0]
		msg = fmt.Sprintf("partitioned by %s: %s (%s) is unique only within one partition; "+
			"the same key written with a %s of another partition is a second row",
			p.Key, idemtable.DisplayIdent(ix.Name), strings.Join(ix.Columns, ", "), outside)
	}
	ev := []string{"partitioning: " + p.Describe() + leafText(p)}
	ev = append(ev, fmt.Sprintf("a unique index on %s alone is refused: it must include the partition key column(s) %s", keyText, outside))
	if d := in.res.Duplicates; d != nil && d.AcrossPartitions != nil {
		ev = append(ev, acrossText(*d.AcrossPartitions, d.acrossSamples))
	}
	in.rep.Add(RulePerPartition.New(in.subject(), msg, ev...))
	return nil
}

func leafText(p *Partitioning) string {
	if len(p.Leaves) == 0 {
		return ""
	}
	parts := make([]string, len(p.Leaves))
	for i, l := range p.Leaves {
		parts[i] = l.Name + " " + l.Bound
	}
	s := " (" + strings.Join(parts, "; ")
	if p.Partitions > len(p.Leaves) {
		s += fmt.Sprintf("; %d more", p.Partitions-len(p.Leaves))
	}
	return s + ")"
}

func acrossText(n int64, samples []Group) string {
	if n == 0 {
		return "keys in more than one partition today: none"
	}
	parts := make([]string, len(samples))
	for i, s := range samples {
		parts[i] = fmt.Sprintf("%s in %s", quoteKey(s.Key), s.Detail)
	}
	return fmt.Sprintf("keys in more than one partition today: %d (%s)", n, strings.Join(parts, "; "))
}
