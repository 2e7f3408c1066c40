// Command page is the floor of a queue page (package floor): it answers
// every request with a fixed page of the size its query's bytes asks
// (the benchmark asks the size of the service's queue page), and does
// nothing else.
package main

import (
	"context"
	"strconv"

	"github.com/edgequeue/waitingroom/floor"
	"github.com/fastly/compute-sdk-go/fsthttp"
)

// maxPage bounds the page: a larger size asked is refused.
const maxPage = 1 << 20

// filler is the page's text, repeated to its size.
const filler = "<p>You are in line.</p>\n"

// page is the fixed page, made at a sandbox's first request of its size
// (a package variable holds no computed value at start: TinyGo's rule).
var page []byte

func main() {
	floor.Serve(func(_ context.Context, w fsthttp.ResponseWriter, r *fsthttp.Request) {
		n, err := strconv.Atoi(r.URL.Query().Get("bytes"))
		if err != nil || n < 0 || n > maxPage {
			w.WriteHeader(fsthttp.StatusBadRequest)
			w.Write([]byte("ask for ?bytes=N, N from 0 to " + strconv.Itoa(maxPage) + "\n"))
			return
		}
		if len(page) != n {
			page = make([]byte, n)
			for i := 0; i < n; {
				i += copy(page[i:], filler)
			}
		}
		w.Header().Set("Content-Type", "text/html; charset=utf-8")
		w.Header().Set("Cache-Control", "no-store")
		w.WriteHeader(fsthttp.StatusOK)
		w.Write(page)
	})
}
