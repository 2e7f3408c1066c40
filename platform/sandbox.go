package platform

import (
	"log"
	"time"

	"github.com/edgequeue/waitingroom/edge"
	"github.com/fastly/compute-sdk-go/fsthttp"
)

// nextRequestWait is how long a sandbox waits for another request before it
// ends: long enough to catch a busy POP's next visitor, short enough that an
// idle sandbox goes.
const nextRequestWait = time.Second

// sandboxOptions reads the sandbox's limits from the config store, once,
// when the sandbox starts (edge.LoadSandboxLimits).
func sandboxOptions() *fsthttp.ServeManyOptions {
	limits, problems := edge.LoadSandboxLimits(&config{}, edge.DefaultSandboxLimits())
	for _, p := range problems {
		log.Printf("config: %v", p)
	}
	return &fsthttp.ServeManyOptions{NextTimeout: nextRequestWait, MaxRequests: limits.Requests, MaxLifetime: limits.Lifetime}
}
