// Command servemany is a Compute service that serves several requests from
// one instance with fsthttp.ServeMany, for the sandbox tests. Each answer
// tells which sandbox and request served it and what the request carried;
// the instance says on stdout when it ends.
package main

import (
	"context"
	"fmt"
	"io"
	"os"
	"time"

	"github.com/fastly/compute-sdk-go/fsthttp"
)

func main() {
	opts := &fsthttp.ServeManyOptions{NextTimeout: 10 * time.Second}
	fsthttp.ServeMany(func(ctx context.Context, w fsthttp.ResponseWriter, r *fsthttp.Request) {
		q := r.URL.Query()
		// The options apply from the next wait on.
		if t, err := time.ParseDuration(q.Get("next_timeout")); err == nil {
			opts.NextTimeout = t
		}
		if q.Get("stop") != "" {
			opts.Continue = func() bool { return false }
		}
		meta, err := r.FastlyMeta()
		if err != nil {
			fsthttp.Error(w, err.Error(), fsthttp.StatusInternalServerError)
			return
		}
		body, err := io.ReadAll(r.Body)
		if err != nil {
			fsthttp.Error(w, err.Error(), fsthttp.StatusInternalServerError)
			return
		}
		w.Header().Set("Sandbox-ID", meta.SandboxID)
		w.Header().Set("Request-ID", meta.RequestID)
		w.Header().Set("Sandbox-Requests", fmt.Sprint(meta.SandboxRequests))
		fmt.Fprintf(w, "%s %s", r.URL.Path, body)
	}, opts)
	fmt.Printf("sandbox %s done\n", os.Getenv("FASTLY_TRACE_ID"))
}
