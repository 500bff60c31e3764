package inspect

import (
	"slices"
	"testing"
	"time"

	"github.com/dupctl/dupctl/internal/cli/cmdutil"
	"github.com/dupctl/dupctl/internal/inspect/store"
	"github.com/dupctl/dupctl/internal/platform/iostreams"
)

func TestStoreFlags(t *testing.T) {
	ios, _, _, _ := iostreams.Test()
	var got *StoreOptions
	cmd := NewCmdStore(cmdutil.NewFactory(ios), func(o *StoreOptions) error { got = o; return nil })
	cmd.SetArgs([]string{"--table", `billing."Payments"`, "--key-column", "tenant_id,idempotency_key", "--status", "succeeded=done",
		"--status", "pending=queued", "--checks", "catalog,stuck", "--stuck-after", "30m", "--lock-timeout", "500ms"})
	if err := cmd.Execute(); err != nil {
		t.Fatal(err)
	}
	o := got.Store
	if o.Table != `billing."Payments"` || o.KeyColumns != "tenant_id,idempotency_key" || o.StuckAfter != 30*time.Minute ||
		!slices.Equal(o.Checks, []string{store.CheckCatalog, store.CheckStuck}) {
		t.Errorf("options %+v", o)
	}
	if r, ok := o.Statuses.RoleOf("QUEUED"); !ok || r != store.Pending {
		t.Errorf("--status pending=queued: %v %v", r, ok)
	}
	pg := got.Postgres.ReadOnly()
	if !pg.ReadOnly || pg.LockTimeout != 500*time.Millisecond || pg.StatementTimeout != time.Minute {
		t.Errorf("session %+v", pg)
	}
}
