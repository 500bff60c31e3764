// Package buildinfo says which dupctl this is. Release builds set the
// variables with -ldflags "-X ..."; a go install or go run build falls back
// to what the Go toolchain recorded in the binary.
package buildinfo

import (
	"runtime"
	"runtime/debug"
	"strings"
)

// Set by the linker in release builds (see goreleaser.yaml).
var (
	Version = ""
	Commit  = ""
	Date    = ""
)

// Info is the identity of this build.
type Info struct {
	Version   string `json:"version"`
	Commit    string `json:"commit"`
	Date      string `json:"date"`
	GoVersion string `json:"go_version"`
	Platform  string `json:"platform"`
}

// Get returns the build's identity, preferring linker values, then the
// module and VCS information the Go toolchain embedded, then "unknown".
func Get() Info {
	info := Info{
		Version:   Version,
		Commit:    Commit,
		Date:      Date,
		GoVersion: runtime.Version(),
		Platform:  runtime.GOOS + "/" + runtime.GOARCH,
	}
	if bi, ok := debug.ReadBuildInfo(); ok {
		if info.Version == "" && bi.Main.Version != "" && bi.Main.Version != "(devel)" {
			// go install module@v0.1.0 embeds "v0.1.0"; a release build
			// says "0.1.0" (goreleaser's .Version): print one form.
			info.Version = strings.TrimPrefix(bi.Main.Version, "v")
		}
		for _, s := range bi.Settings {
			switch s.Key {
			case "vcs.revision":
				if info.Commit == "" {
					info.Commit = s.Value
				}
			case "vcs.time":
				if info.Date == "" {
					info.Date = s.Value
				}
			case "vcs.modified":
				if s.Value == "true" && info.Commit != "" && Commit == "" {
					info.Commit += "-dirty"
				}
			}
		}
	}
	if info.Version == "" {
		info.Version = "(devel)"
	}
	if info.Commit == "" {
		info.Commit = "unknown"
	}
	if info.Date == "" {
		info.Date = "unknown"
	}
	return info
}
