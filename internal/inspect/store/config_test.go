package store_test

import (
	"testing"

	"github.com/dupctl/dupctl/internal/inspect/store"
	"github.com/dupctl/dupctl/internal/platform/config"
)

// The job's idempotency table and columns fill what no flag set; asking
// for discovery in a schema takes none of them.
func TestConfigureTakesTheJob(t *testing.T) {
	j := &config.Job{Idempotency: config.Idempotency{Table: "jobs", KeyColumn: "k", StatusColumn: "s", BusinessKeyColumn: "order_id"}}
	o := store.Defaults()
	o.Configure(j, nil)
	if o.Table != "jobs" || o.KeyColumns != "k" || o.StatusColumn != "s" || o.BusinessColumns != "order_id" ||
		o.StuckAfter != store.DefaultStuckAfter {
		t.Errorf("from the job: %+v", o)
	}
	o = store.Options{Table: "mine"}
	o.Configure(j, func(field string) bool { return field == "Table" })
	if o.Table != "mine" || o.KeyColumns != "k" {
		t.Errorf("a flag wins: %+v", o)
	}
	o = store.Options{Schema: "billing"}
	o.Configure(j, func(field string) bool { return field == "Schema" })
	if o.Table != "" || o.KeyColumns != "" {
		t.Errorf("discovery: %+v", o)
	}
}
