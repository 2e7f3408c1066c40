// Command runguest is a WASI command for `fastlyhost run`: it prints its
// arguments, the FASTLY_* environment it was given and the downstream
// request it sees, then exits with the code its first argument names.
package main

import (
	"context"
	"fmt"
	"os"
	"strconv"

	"github.com/fastly/compute-sdk-go/fsthttp"
)

func main() {
	fmt.Printf("args %q\n", os.Args[1:])
	for _, k := range []string{"FASTLY_HOSTNAME", "FASTLY_POP", "FASTLY_REGION", "FASTLY_SERVICE_VERSION", "FASTLY_IS_STAGING", "FASTLY_TRACE_ID"} {
		fmt.Printf("%s=%s\n", k, os.Getenv(k))
	}
	fsthttp.ServeFunc(func(ctx context.Context, w fsthttp.ResponseWriter, r *fsthttp.Request) {
		fmt.Printf("downstream %s %s from %s\n", r.Method, r.URL, r.RemoteAddr)
		fmt.Fprintln(w, "this response goes nowhere")
	})
	fmt.Fprintln(os.Stderr, "to stderr")
	code := 0
	if len(os.Args) > 1 {
		code, _ = strconv.Atoi(os.Args[1])
	}
	os.Exit(code)
}
