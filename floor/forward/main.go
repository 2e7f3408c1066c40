// Command forward is the floor of an admitted request (package floor): it
// sends the visitor's request to the origin backend, its body streaming,
// and streams the answer back with the origin's headers, as the service's
// forward does, and does nothing else.
package main

import (
	"context"
	"io"

	"github.com/edgequeue/waitingroom/floor"
	"github.com/fastly/compute-sdk-go/fsthttp"
)

// originBackend is the service's origin backend (fastly.toml).
const originBackend = "origin"

func main() {
	floor.Serve(func(ctx context.Context, w fsthttp.ResponseWriter, r *fsthttp.Request) {
		resp, err := r.Send(ctx, originBackend)
		if err != nil {
			w.WriteHeader(fsthttp.StatusBadGateway)
			io.WriteString(w, "the origin did not answer: "+err.Error()+"\n")
			return
		}
		defer resp.Body.Close()
		w.Header().Reset(resp.Header)
		w.WriteHeader(resp.StatusCode)
		io.Copy(w, resp.Body)
	})
}
