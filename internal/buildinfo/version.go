package buildinfo

import (
	"runtime"
	"runtime/debug"
	"strings"
)

// Version says which build this is, from what the Go toolchain recorded in the binary: the
// module version ("(devel)" for a build from a checkout, a release tag for go install
// module@version), the VCS revision and its time, whether the tree had uncommitted changes,
// and the Go version. A binary built without VCS information (go run, go test) says so.
func Version() string {
	info, ok := debug.ReadBuildInfo()
	if !ok {
		return "(no build information) " + runtime.Version()
	}
	settings := map[string]string{}
	for _, s := range info.Settings {
		settings[s.Key] = s.Value
	}
	v := info.Main.Version
	if v == "" {
		v = "(devel)"
	}
	parts := []string{v}
	if rev := settings["vcs.revision"]; rev != "" {
		r := "revision " + rev
		if t := settings["vcs.time"]; t != "" {
			r += " of " + t
		}
		if settings["vcs.modified"] == "true" {
			r += " with uncommitted changes"
		}
		parts = append(parts, r)
	} else {
		parts = append(parts, "no VCS revision recorded")
	}
	parts = append(parts, info.GoVersion)
	return strings.Join(parts, ", ")
}
