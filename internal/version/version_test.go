package version_test

import (
	"runtime"
	"strings"
	"testing"

	"github.com/platform-payments/payments/internal/version"
)

// Under go test the module is "(devel)" and no VCS settings are stamped: still a line.
func TestGet(t *testing.T) {
	info := version.Get()
	if info.Version == "" || info.Go == "" {
		t.Fatalf("Get() = %+v: want a version and a Go version", info)
	}
	if !strings.HasSuffix(info.String(), " "+info.Go) {
		t.Errorf("String() = %q: want it to end with the Go version", info.String())
	}
}

func TestString(t *testing.T) {
	for _, tt := range []struct {
		info version.Info
		want string
	}{
		{version.Info{Version: "(devel)", Go: "go1.24.2"}, "(devel) revision unknown go1.24.2"},
		{version.Info{Version: "v1.2.0", Revision: "abc123", Time: "2026-11-23T20:00:00Z", Modified: true, Go: runtime.Version()},
			"v1.2.0 revision abc123 2026-11-23T20:00:00Z (modified) " + runtime.Version()},
	} {
		if got := tt.info.String(); got != tt.want {
			t.Errorf("String() = %q, want %q", got, tt.want)
		}
	}
}
