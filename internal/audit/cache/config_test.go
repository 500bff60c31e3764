package cache_test

import (
	"errors"
	"testing"

	auditcache "github.com/dupctl/dupctl/internal/audit/cache"
	"github.com/dupctl/dupctl/internal/platform/config"
	"github.com/dupctl/dupctl/internal/platform/problem"
)

// The job's cache pattern, table and columns fill what no flag set; a
// pattern that does not parse is bad input about {Pattern}.
func TestConfigureTakesTheJob(t *testing.T) {
	j := &config.Job{CachePattern: "job:status:{key}", Idempotency: config.Idempotency{Table: "jobs", KeyColumn: "k", StatusColumn: "s"}}
	o := auditcache.Defaults()
	if err := o.Configure(j, nil); err != nil || o.Pattern.Prefix != "job:status:" || o.Table != "jobs" || o.KeyColumn != "k" ||
		o.StatusColumn != "s" || o.AssumeLive {
		t.Errorf("from the job: %v %+v", err, o)
	}
	o = auditcache.Options{Table: "mine"}
	if err := o.Configure(j, func(field string) bool { return field == "Table" || field == "Pattern" }); err != nil ||
		o.Table != "mine" || o.Pattern.Raw != "" || o.KeyColumn != "k" {
		t.Errorf("flags win: %v %+v", err, o)
	}
	var in *problem.Input
	if err := o.Configure(&config.Job{CachePattern: "job:status"}, nil); !errors.As(err, &in) || in.Field != "Pattern" {
		t.Errorf("a bad pattern: %v", err)
	}
}
