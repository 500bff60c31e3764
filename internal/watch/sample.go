package watch

import (
	"cmp"
	"slices"

	"github.com/dupctl/dupctl/internal/platform/findings"
)

// Sample is what one run of a check found, in the terms of the metrics:
// each check fills the parts it knows. Label values are templates, queue
// and table names and finding codes - never a business key or a lock key.
type Sample struct {
	// Report is the capability's own report: its findings are counted by
	// code and severity (dupctl_findings).
	Report       *findings.Report
	LockFamilies []LockFamily
	DLQ          []DLQGroup
	Tables       []TableState
	Cache        []CacheClass
}

// AddReport adds a report's findings to the sample's: a check that runs a
// capability on several queues or jobs counts all their findings.
func (s *Sample) AddReport(rep *findings.Report) {
	if s.Report == nil {
		s.Report = rep
		return
	}
	s.Report.Add(rep.Findings...)
}

// LockFamily is one lock family of a scan, named by its template; its
// Certainty is confirmed, likely or possible (a lock's shape that nothing
// confirms: alerts leave those out, dashboards may not).
type LockFamily struct {
	Template, Certainty          string
	Keys, NoTTL                  int64
	OutliersAbove, OutliersBelow int64
}

// DLQGroup is the messages of a dead-letter queue that died in one queue
// for one reason.
type DLQGroup struct {
	DLQ, Queue, Reason string
	Messages           int64
}

// TableState is an idempotency table's stuck reservations and duplicated
// keys.
type TableState struct {
	Table                    string
	StuckRows, DuplicateKeys int64
}

// CacheClass is a kind of cache entry that disagrees with its table.
type CacheClass struct {
	Table, Code string
	Entries     int64
}

// apply sets the check's gauges from a successful run: the gauges a check
// owns show its last run, so a family or queue gone since is gone here.
func (m *metrics) apply(check string, s *Sample) {
	m.applyFindings(check, s.Report)
	if s.LockFamilies != nil {
		m.applyLocks(s.LockFamilies)
	}
	if s.DLQ != nil {
		m.dlqMessages.Reset()
		m.bounds.forget("dlq_messages")
		for _, g := range s.DLQ {
			m.dlqMessages.WithLabelValues(g.DLQ, m.bounds.value("dlq_messages", g.Queue), g.Reason).Add(float64(g.Messages))
		}
	}
	if s.Tables != nil {
		m.storeStuck.Reset()
		m.storeDuplicates.Reset()
		m.bounds.forget("store")
		for _, t := range s.Tables {
			name := m.bounds.value("store", t.Table)
			m.storeStuck.WithLabelValues(name).Add(float64(t.StuckRows))
			m.storeDuplicates.WithLabelValues(name).Add(float64(t.DuplicateKeys))
		}
	}
	if s.Cache != nil {
		m.cacheStale.Reset()
		m.bounds.forget("cache")
		for _, c := range s.Cache {
			m.cacheStale.WithLabelValues(m.bounds.value("cache", c.Table), c.Code).Add(float64(c.Entries))
		}
	}
}

// applyFindings replaces the check's finding counts with this run's.
func (m *metrics) applyFindings(check string, rep *findings.Report) {
	m.findings.DeletePartialMatch(map[string]string{"check": check})
	if rep == nil {
		return
	}
	for _, f := range rep.Findings {
		m.findings.WithLabelValues(check, f.Code, f.Severity.String()).Inc()
	}
}

// applyLocks sets the lock gauges, the families with most keys without a
// TTL, then most keys, first: past the label bound the rest add up under
// Other.
func (m *metrics) applyLocks(fams []LockFamily) {
	fams = slices.Clone(fams)
	slices.SortStableFunc(fams, func(a, b LockFamily) int {
		return cmp.Or(cmp.Compare(b.NoTTL, a.NoTTL), cmp.Compare(b.Keys, a.Keys), cmp.Compare(a.Template, b.Template))
	})
	m.lockKeys.Reset()
	m.lockNoTTL.Reset()
	m.lockOutliers.Reset()
	m.bounds.forget("lock")
	m.lockFamilies.Set(float64(len(fams)))
	for _, f := range fams {
		name := m.bounds.value("lock", f.Template)
		m.lockKeys.WithLabelValues(name, f.Certainty).Add(float64(f.Keys))
		m.lockNoTTL.WithLabelValues(name, f.Certainty).Add(float64(f.NoTTL))
		m.lockOutliers.WithLabelValues(name, f.Certainty, "above").Add(float64(f.OutliersAbove))
		m.lockOutliers.WithLabelValues(name, f.Certainty, "below").Add(float64(f.OutliersBelow))
	}
}
