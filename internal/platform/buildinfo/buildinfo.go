// Package buildinfo says which dupctl this is. Release builds set the
// variables with -ldflags "-X ..."; a go build or go install from a git
// checkout falls back to what the Go toolchain recorded in the binary.
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

// NotRecorded is the commit and date of a build that recorded neither:
// built with -buildvcs=false (some machines set it in GOFLAGS), by go run,
// or outside a git checkout.
const NotRecorded = "unknown"

// Info is the identity of this build.
type Info struct {
	Version   string `json:"version"`
	Commit    string `json:"commit"`
	Date      string `json:"date"`
	GoVersion string `json:"go_version"`
	Platform  string `json:"platform"`
	// Modified: the checkout it was built from had uncommitted changes.
	Modified bool `json:"modified,omitempty"`
}

// Recorded reports whether the build knows its commit.
func (i Info) Recorded() bool { return i.Commit != NotRecorded }

// Get returns the build's identity, preferring linker values, then the
// module and VCS information the Go toolchain embedded, then "unknown".
func Get() Info {
	bi, _ := debug.ReadBuildInfo()
	return resolve(linked{Version, Commit, Date}, bi)
}

type linked struct{ version, commit, date string }

func resolve(l linked, bi *debug.BuildInfo) Info {
	info := Info{
		Version:   l.version,
		Commit:    l.commit,
		Date:      l.date,
		GoVersion: runtime.Version(),
		Platform:  runtime.GOOS + "/" + runtime.GOARCH,
	}
	if bi != nil {
		fromToolchain(&info, l, bi)
	}
	if info.Version == "" {
		info.Version = "(devel)"
	}
	if info.Commit == "" {
		info.Commit = NotRecorded
	}
	if info.Date == "" {
		info.Date = NotRecorded
	}
	return info
}

func fromToolchain(info *Info, l linked, bi *debug.BuildInfo) {
	if info.Version == "" && bi.Main.Version != "" && bi.Main.Version != "(devel)" {
		// go install module@v0.1.0 embeds "v0.1.0"; a release build
		// says "0.1.0" (goreleaser's .Version): print one form. A
		// build of a modified checkout ends in "+dirty": the Modified
		// flag says so once.
		info.Version = strings.TrimSuffix(strings.TrimPrefix(bi.Main.Version, "v"), "+dirty")
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
			// A release build's commit came from the linker and is
			// clean by construction; only the toolchain's own stamp
			// can say the tree was modified.
			info.Modified = s.Value == "true" && l.commit == ""
		}
	}
}
