package edge

import (
	"errors"
	"runtime"
	"strings"
	"testing"
	"time"
)

func TestLoadSandboxLimits(t *testing.T) {
	def := SandboxLimits{100, time.Minute}
	tests := []struct {
		name    string
		config  Config
		want    SandboxLimits
		problem string // in the one problem expected, or "" for none
	}{
		{"defaults", mapConfig{}, def, ""},
		{"set", mapConfig{KeySandboxRequests: "1", KeySandboxLifetime: "5"}, SandboxLimits{1, 5 * time.Second}, ""},
		{"the largest", mapConfig{KeySandboxRequests: "10000", KeySandboxLifetime: "3600"},
			SandboxLimits{10000, time.Hour}, ""},
		{"zero requests", mapConfig{KeySandboxRequests: "0"}, def, `sandbox_requests: "0" must be a whole number of requests from 1 to 10000; using 100`},
		{"too many requests", mapConfig{KeySandboxRequests: "10001"}, def, "sandbox_requests: \"10001\""},
		{"not a number", mapConfig{KeySandboxLifetime: "1m"}, def, `sandbox_lifetime: "1m" must be a whole number of seconds from 1 to 3600; using 60`},
		{"negative", mapConfig{KeySandboxLifetime: "-1"}, def, "sandbox_lifetime: \"-1\""},
		{"a fraction", mapConfig{KeySandboxLifetime: "1.5"}, def, "sandbox_lifetime: \"1.5\" must be a whole number of seconds"},
		{"the old name", mapConfig{"sandbox_seconds": "5"}, def, "sandbox_seconds was renamed sandbox_lifetime, in seconds"},
		{"the store timeout's old name", mapConfig{"store_timeout_ms": "250"}, def, "store_timeout_ms was renamed store_timeout, in seconds: set store_timeout instead"},
		{"an old name beside its new one", mapConfig{"store_timeout_ms": "250", KeyStoreTimeout: "0.25"}, def, ""},
		{"store not linked", failingConfig{ErrStoreNotLinked}, def, ""},
		{"store failing", failingConfig{errors.New("boom")}, def, "sandbox_requests: boom"},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			got, problems := LoadSandboxLimits(tc.config, def)
			if got != tc.want {
				t.Fatalf("limits %+v, want %+v", got, tc.want)
			}
			switch {
			case tc.problem == "" && len(problems) != 0:
				t.Fatalf("problems %v, want none", problems)
			case tc.problem != "" && (len(problems) == 0 || !strings.Contains(problems[0].Error(), tc.problem)):
				t.Fatalf("problems %v, want one saying %q", problems, tc.problem)
			}
		})
	}
}

// The caller's defaults apply where the config says nothing or is wrong.
func TestLoadSandboxLimitsDefaults(t *testing.T) {
	def := SandboxLimits{1, time.Second}
	got, problems := LoadSandboxLimits(mapConfig{KeySandboxLifetime: "x"}, def)
	if got != def || len(problems) != 1 || !strings.Contains(problems[0].Error(), "using 1") {
		t.Fatalf("%+v %v, want %+v and one problem using 1", got, problems, def)
	}
}

// Each build has its own default number of requests (the settings table's
// TinyGoDefault for TinyGo); the lifetime is one.
func TestDefaultSandboxLimits(t *testing.T) {
	want := SandboxLimits{100, time.Minute}
	if runtime.Compiler == "tinygo" {
		want.Requests = 20
	}
	if got := DefaultSandboxLimits(); got != want {
		t.Fatalf("%s build: %+v, want %+v", runtime.Compiler, got, want)
	}
}
