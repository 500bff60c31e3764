// Package deploy holds what dupctl ships to put next to a service: the
// Prometheus alert rules for `dupctl watch` (printed by --print-rules)
// and the Grafana dashboard.
package deploy

import _ "embed"

// PrometheusRules is prometheus/dupctl-rules.yml.
//
//go:embed prometheus/dupctl-rules.yml
var PrometheusRules []byte

// GrafanaDashboard is grafana/dupctl.json.
//
//go:embed grafana/dupctl.json
var GrafanaDashboard []byte
