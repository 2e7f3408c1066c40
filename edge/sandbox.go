package edge

import (
	"errors"
	"fmt"
	"strconv"
	"time"
)

// The config store keys that bound a reusable sandbox, read once when it
// starts, and their defaults and ranges.
const (
	KeySandboxRequests = "sandbox_requests"
	KeySandboxSeconds  = "sandbox_seconds"

	// DefaultSandboxRequests suits the Go build, for which a reused
	// sandbox is much cheaper than a fresh one; main picks the default
	// of its build (BENCHMARKS.md, "Reusable sandboxes").
	DefaultSandboxRequests = 100
	DefaultSandboxLifetime = 60 * time.Second
	// MaxSandboxRequests and MaxSandboxSeconds keep a sandbox from living
	// so long that a leak in it would matter; 1 request means none is
	// reused.
	MaxSandboxRequests = 10000
	MaxSandboxSeconds  = 3600
)

// SandboxLimits bound the requests one sandbox serves (fsthttp.ServeMany):
// how many, and for how long after it started. Fastly may end a sandbox
// sooner.
type SandboxLimits struct {
	Requests int
	Lifetime time.Duration
}

// LoadSandboxLimits reads the sandbox limits from c, with def where c has
// none. A bad value falls back to def's, with a problem naming the key for
// the log; an unlinked store gives def quietly, as every request says what
// is missing.
func LoadSandboxLimits(c Config, def SandboxLimits) (SandboxLimits, []error) {
	var l SandboxLimits
	var problems []error
	read := func(key string, max, def int, unit string) int {
		v, err := c.Get(key)
		switch {
		case errors.Is(err, ErrNotFound), errors.Is(err, ErrStoreNotLinked):
			return def
		case err != nil:
			problems = append(problems, fmt.Errorf("%s: %v; using %d", key, err, def))
			return def
		}
		n, err := strconv.Atoi(v)
		if err != nil || n < 1 || n > max {
			problems = append(problems, fmt.Errorf("%s: %q must be a whole number of %s from 1 to %d; using %d", key, v, unit, max, def))
			return def
		}
		return n
	}
	l.Requests = read(KeySandboxRequests, MaxSandboxRequests, def.Requests, "requests")
	l.Lifetime = time.Duration(read(KeySandboxSeconds, MaxSandboxSeconds, int(def.Lifetime/time.Second), "seconds")) * time.Second
	return l, problems
}
