package buildinfo

import (
	"runtime/debug"
	"testing"
)

func stamped(version string, settings ...string) *debug.BuildInfo {
	bi := &debug.BuildInfo{Main: debug.Module{Path: "github.com/dupctl/dupctl", Version: version}}
	for i := 0; i+1 < len(settings); i += 2 {
		bi.Settings = append(bi.Settings, debug.BuildSetting{Key: settings[i], Value: settings[i+1]})
	}
	return bi
}

func TestResolve(t *testing.T) {
	const rev = "598d1ca1f2d2bf09f46a58af7594448ef342f805"
	tests := []struct {
		name string
		l    linked
		bi   *debug.BuildInfo
		want Info
	}{
		{
			name: "go build from a clean checkout",
			bi:   stamped("v0.0.0-20261204235410-598d1ca1f2d2", "vcs.revision", rev, "vcs.time", "2026-12-04T23:54:10Z", "vcs.modified", "false"),
			want: Info{Version: "0.0.0-20261204235410-598d1ca1f2d2", Commit: rev, Date: "2026-12-04T23:54:10Z"},
		},
		{
			name: "go build from a modified checkout",
			bi: stamped("v0.0.0-20261204235410-598d1ca1f2d2+dirty",
				"vcs.revision", rev, "vcs.time", "2026-12-04T23:54:10Z", "vcs.modified", "true"),
			want: Info{Version: "0.0.0-20261204235410-598d1ca1f2d2", Commit: rev, Date: "2026-12-04T23:54:10Z", Modified: true},
		},
		{
			name: "-buildvcs=false: nothing recorded",
			bi:   stamped("(devel)"),
			want: Info{Version: "(devel)", Commit: NotRecorded, Date: NotRecorded},
		},
		{
			name: "release ldflags win over the stamp, and are never modified",
			l:    linked{"0.4.0", rev, "2026-12-01T00:00:00Z"},
			bi:   stamped("(devel)", "vcs.revision", "ffff", "vcs.time", "2026-12-02T00:00:00Z", "vcs.modified", "true"),
			want: Info{Version: "0.4.0", Commit: rev, Date: "2026-12-01T00:00:00Z"},
		},
		{
			name: "go install module@version",
			bi:   stamped("v0.4.0"),
			want: Info{Version: "0.4.0", Commit: NotRecorded, Date: NotRecorded},
		},
		{name: "no build info at all", want: Info{Version: "(devel)", Commit: NotRecorded, Date: NotRecorded}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got := resolve(tt.l, tt.bi)
			got.GoVersion, got.Platform = "", ""
			if got != tt.want {
				t.Errorf("resolve() = %+v, want %+v", got, tt.want)
			}
			if got.Recorded() != (tt.want.Commit != NotRecorded) {
				t.Errorf("Recorded() = %v with commit %q", got.Recorded(), got.Commit)
			}
		})
	}
}
