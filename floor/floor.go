// Package floor holds the floors of the benchmark of make bench-host
// (BENCHMARKS.md, "The floor of a request"): two bare guests, built by
// tools/build-wasm with the service's compilers, target and flags, that do
// the least a request of each kind could cost, so the service's own
// requests can be measured against them. The service imports none of
// this; the packages are in the edge module so that its rules (TinyGo's,
// tools/edgerules) and its go.mod (the SDK's version) hold for them too.
//
//   - floor/forward forwards the request to the origin backend, its body
//     streamed both ways: the least an admitted request costs.
//   - floor/page answers a fixed page of the size the request asks: the
//     least a queue page costs.
package floor

import (
	"strconv"
	"time"

	"github.com/fastly/compute-sdk-go/configstore"
	"github.com/fastly/compute-sdk-go/fsthttp"
)

// The service's config store and its key for how many requests a sandbox
// serves (edge.ConfigStore, edge.KeySandboxRequests): the benchmark sets
// it to run fresh or reused sandboxes, for the floors as for the service.
const (
	configStore     = "waiting_room_config"
	sandboxRequests = "sandbox_requests"
)

// nextRequestWait is the service's wait for a sandbox's next request
// (platform's nextRequestWait).
const nextRequestWait = time.Second

// Serve serves requests with h as the service does (fsthttp.ServeMany),
// each sandbox serving as many as sandbox_requests says, read once as it
// starts, as the service reads it; 1 (a fresh sandbox for every request)
// when it is not set or not a whole number.
func Serve(h fsthttp.HandlerFunc) {
	fsthttp.ServeMany(h, &fsthttp.ServeManyOptions{NextTimeout: nextRequestWait, MaxRequests: requestsPerSandbox()})
}

func requestsPerSandbox() int {
	s, err := configstore.Open(configStore)
	if err != nil {
		return 1
	}
	v, err := s.Get(sandboxRequests)
	if err != nil {
		return 1
	}
	n, err := strconv.Atoi(v)
	if err != nil || n < 1 {
		return 1
	}
	return n
}
