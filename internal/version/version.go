// Package version says which build of paymentsd is running, from the build information
// the Go toolchain records in the binary (runtime/debug.ReadBuildInfo): for
// `paymentsd version` and for anything else that reports it, such as a health answer.
package version

import (
	"fmt"
	"runtime"
	"runtime/debug"
)

// Info is what a build says of itself. Under `go run` or `go test` the module version is
// "(devel)" and the VCS fields are empty: the toolchain stamps them only into a binary
// built by `go build` or `go install` inside a repository.
type Info struct {
	Version  string `json:"version"`            // the module's version, "(devel)" for a local build
	Revision string `json:"revision,omitempty"` // the VCS commit, empty when unknown
	Time     string `json:"time,omitempty"`     // the commit's time (RFC 3339), empty when unknown
	Modified bool   `json:"modified,omitempty"` // the working tree had uncommitted changes
	Go       string `json:"go"`                 // the Go version that built it
}

// Get returns the running binary's build information; without any (a binary built
// without module support) Version is "unknown".
func Get() Info {
	info := Info{Version: "unknown", Go: runtime.Version()}
	bi, ok := debug.ReadBuildInfo()
	if !ok {
		return info
	}
	if bi.Main.Version != "" {
		info.Version = bi.Main.Version
	}
	if bi.GoVersion != "" {
		info.Go = bi.GoVersion
	}
	for _, s := range bi.Settings {
		switch s.Key {
		case "vcs.revision":
			info.Revision = s.Value
		case "vcs.time":
			info.Time = s.Value
		case "vcs.modified":
			info.Modified = s.Value == "true"
		}
	}
	return info
}

// String is the one line `paymentsd version` prints, e.g.
// "v1.2.0 revision 3f0c9a1e… (modified) go1.24.2", or "(devel) revision unknown go1.24.2".
func (i Info) String() string {
	rev := "unknown"
	if i.Revision != "" {
		rev = i.Revision
		if i.Time != "" {
			rev += " " + i.Time
		}
		if i.Modified {
			rev += " (modified)"
		}
	}
	return fmt.Sprintf("%s revision %s %s", i.Version, rev, i.Go)
}
