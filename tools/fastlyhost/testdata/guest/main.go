// Command guest is a Compute service that exercises each host call the
// fastlyhost tests check, one path per behaviour.
package main

import (
	"context"
	"crypto/sha256"
	"errors"
	"fmt"
	"io"
	"net"
	"os"
	"strings"
	"time"

	"github.com/fastly/compute-sdk-go/compute"
	"github.com/fastly/compute-sdk-go/configstore"
	"github.com/fastly/compute-sdk-go/fsthttp"
	"github.com/fastly/compute-sdk-go/geo"
	"github.com/fastly/compute-sdk-go/kvstore"
	"github.com/fastly/compute-sdk-go/rtlog"
	"github.com/fastly/compute-sdk-go/secretstore"
)

func main() {
	fsthttp.ServeFunc(func(ctx context.Context, w fsthttp.ResponseWriter, r *fsthttp.Request) {
		q := r.URL.Query()
		route := r.URL.Path
		if strings.HasPrefix(route, "/proxy/") {
			route = "/proxy" // the whole path travels to the origin
		}
		switch route {
		case "/headers":
			// Many and long headers exercise multi-value paging and the
			// buffer-too-small retry both ways.
			n := 0
			for _, k := range r.Header.Keys() {
				n += len(r.Header.Values(k))
			}
			w.Header().Set("X-Long", r.Header.Get("X-Long"))
			for i := 0; i < 100; i++ {
				w.Header().Add("X-Many", fmt.Sprintf("value-%03d", i))
			}
			fmt.Fprintf(w, "%d values; host %s; uri %s; method %s; long %d", n, r.Host, r.URL.String(), r.Method, len(r.Header.Get("X-Long")))
		case "/stream":
			w.WriteHeader(fsthttp.StatusOK)
			for i := 0; i < 3; i++ {
				fmt.Fprintf(w, "chunk %d\n", i)
				time.Sleep(300 * time.Millisecond)
			}
		case "/proxy":
			backend := "origin"
			if b := q.Get("backend"); b != "" {
				backend = b
			}
			resp, err := r.Send(ctx, backend)
			if err != nil {
				fsthttp.Error(w, err.Error(), fsthttp.StatusBadGateway)
				return
			}
			w.Header().Reset(resp.Header)
			w.WriteHeader(resp.StatusCode)
			io.Copy(w, resp.Body)
		case "/nobackend":
			req, _ := fsthttp.NewRequest("GET", "http://x/", nil)
			_, err := req.Send(ctx, "nope")
			fmt.Fprint(w, errors.Is(err, fsthttp.ErrBackendNotFound))
		case "/refused":
			req, _ := fsthttp.NewRequest("GET", "http://x/", nil)
			_, err := req.Send(ctx, "closed")
			fmt.Fprintf(w, "error: %v", err != nil)
		case "/config":
			s, err := configstore.Open(q.Get("store"))
			if err != nil {
				fmt.Fprintf(w, "open: %v", err)
				return
			}
			v, err := s.Get(q.Get("key"))
			fmt.Fprintf(w, "%s|%v", v, err)
		case "/kv":
			s, err := kvstore.Open(q.Get("store"))
			if err != nil {
				fmt.Fprintf(w, "open: %v", err)
				return
			}
			e, err := s.Lookup(q.Get("key"))
			if err != nil {
				fmt.Fprintf(w, "lookup: %v", err)
				return
			}
			fmt.Fprintf(w, "%s|%s", e.String(), e.Meta())
		case "/secret":
			v, err := secretstore.Plaintext(q.Get("store"), q.Get("key"))
			fmt.Fprintf(w, "%s|%v", v, err)
		case "/geo":
			host, _, _ := net.SplitHostPort(r.RemoteAddr)
			if host == "" {
				host = r.RemoteAddr
			}
			g, err := geo.Lookup(net.ParseIP(host))
			if err != nil {
				fmt.Fprintf(w, "geo: %v", err)
				return
			}
			fmt.Fprintf(w, "%s %s %s", host, g.CountryCode, g.City)
		case "/log":
			name, msg := r.URL.Query().Get("name"), r.URL.Query().Get("msg")
			if name == "" {
				name, msg = "events", "hello from the guest"
			}
			_, err := rtlog.Open(name).Write([]byte(msg))
			fmt.Fprintf(w, "logged %v", err)
		case "/vcpu":
			d, err := compute.GetVCPUTime()
			fmt.Fprintf(w, "%v %v", d >= 0, err)
		case "/upload":
			h := sha256.New()
			n, err := io.Copy(h, r.Body)
			fmt.Fprintf(w, "%d %x %v", n, h.Sum(nil), err)
		case "/panic":
			panic("the guest gave up")
		case "/loop":
			for {
			}
		case "/oom":
			var keep [][]byte
			for {
				keep = append(keep, make([]byte, 16<<20))
			}
		case "/exit":
			os.Exit(0)
		default:
			w.Header().Set("Content-Type", "text/plain")
			w.WriteHeader(fsthttp.StatusTeapot)
			fmt.Fprint(w, strings.Repeat("x", 10))
		}
	})
}
