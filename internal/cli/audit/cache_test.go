package audit

import (
	"slices"
	"testing"

	"github.com/dupctl/dupctl/internal/cli/cmdutil"
	"github.com/dupctl/dupctl/internal/platform/iostreams"
)

func TestCacheFlags(t *testing.T) {
	ios, stdin, _, _ := iostreams.Test()
	stdin.WriteString("# live\n42\njob:status:43\n\n")
	var got *CacheOptions
	cmd := NewCmdCache(cmdutil.NewFactory(ios), func(o *CacheOptions) error { got = o; return nil })
	cmd.SetArgs([]string{"--cache-pattern", "job:status:{key}", "--table", "jobs", "--value", "json:data.state",
		"--live-keys", "-", "--batch", "500"})
	if err := cmd.Execute(); err != nil {
		t.Fatal(err)
	}
	o := got.Audit
	if o.Pattern.Match() != "job:status:*" || o.Decoder.String() != "json:data.state" || o.Batch != 500 ||
		!slices.Equal(o.LiveKeys, []string{"42", "job:status:43"}) || o.LiveSource != "--live-keys -" {
		t.Errorf("options %+v", o)
	}
}
