package edge

import (
	"errors"
	"runtime"
	"time"

	"github.com/edgequeue/waitingroom/settings"
)

// The config store keys that bound a reusable sandbox, read once when it
// starts (their defaults and ranges are package settings').
const (
	KeySandboxRequests = settings.KeySandboxRequests
	KeySandboxLifetime = settings.KeySandboxLifetime
)

// SandboxLimits bound the requests one sandbox serves (fsthttp.ServeMany):
// how many, and for how long after it started. Fastly may end a sandbox
// sooner.
type SandboxLimits struct {
	Requests int
	Lifetime time.Duration
}

// DefaultSandboxLimits are the limits of a sandbox whose config store sets
// none, in the build running (the TinyGo build's differ: see the table).
func DefaultSandboxLimits() SandboxLimits {
	requests := settings.Get(settings.Store[:], KeySandboxRequests)
	n := requests.Default
	if runtime.Compiler == "tinygo" {
		n = requests.TinyGoDefault
	}
	return SandboxLimits{Requests: int(n), Lifetime: settings.Seconds(settings.Get(settings.Store[:], KeySandboxLifetime).Default)}
}

// LoadSandboxLimits reads the sandbox limits from c, with def where c has
// none. A bad value falls back to def's, with a problem naming the key for
// the log; an unlinked store gives def quietly, as every request says what
// is missing.
func LoadSandboxLimits(c Config, def SandboxLimits) (SandboxLimits, []error) {
	rd := &settings.Reader{Source: c, NotFound: ErrNotFound}
	l := SandboxLimits{
		Requests: int(rd.NumberOr(KeySandboxRequests, float64(def.Requests))),
		Lifetime: settings.Seconds(rd.NumberOr(KeySandboxLifetime, def.Lifetime.Seconds())),
	}
	// Settings set under a name they had before are said here, once a
	// sandbox, rather than read again on every request.
	rd.OldNames()
	if errors.Is(rd.Failed, ErrStoreNotLinked) {
		return def, nil
	}
	return l, rd.Problems
}
