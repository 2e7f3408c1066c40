// Command backendguest is a Compute service that exercises the backend
// host calls (fastly_backend.*, register_dynamic_backend, the sends without
// a cache) for the fastlyhost tests, one path per behaviour.
package main

import (
	"context"
	"fmt"
	"io"
	"runtime"
	"strconv"
	"unsafe"

	"github.com/fastly/compute-sdk-go/fsthttp"
)

//go:wasmimport fastly_http_req register_dynamic_backend
func registerDynamicBackend(name *byte, nameLen uint32, target *byte, targetLen uint32, mask uint32, config *[27]uint32) uint32

//go:wasmimport fastly_backend get_connect_timeout_ms
func getConnectTimeout(name *byte, nameLen uint32, out *uint32) uint32

//go:wasmimport fastly_backend get_ssl_min_version
func getSSLMinVersion(name *byte, nameLen uint32, out *uint32) uint32

//go:wasmimport fastly_backend get_tcp_keepalive_enable
func getTCPKeepaliveEnable(name *byte, nameLen uint32, out *uint32) uint32

//go:wasmimport fastly_backend is_dynamic
func isDynamic(name *byte, nameLen uint32, out *uint32) uint32

//go:wasmimport fastly_http_req new
func reqNew(out *uint32) uint32

//go:wasmimport fastly_http_req uri_set
func reqURISet(h uint32, uri *byte, uriLen uint32) uint32

//go:wasmimport fastly_http_body new
func bodyNew(out *uint32) uint32

//go:wasmimport fastly_http_req send_v3
func sendV3(req, body uint32, backend *byte, backendLen uint32, detail *[8]uint32, resp, respBody *uint32) uint32

//go:wasmimport fastly_http_req send_async_v2
func sendAsyncV2(req, body uint32, backend *byte, backendLen uint32, streaming uint32, pending *uint32) uint32

//go:wasmimport fastly_http_req pending_req_wait_v2
func pendingWait(pending uint32, detail *[8]uint32, resp, respBody *uint32) uint32

//go:wasmimport fastly_http_resp status_get
func respStatus(resp uint32, status *uint16) uint32

//go:wasmimport fastly_http_body read
func bodyRead(body uint32, buf *byte, bufLen uint32, n *uint32) uint32

func ptr(s string) (*byte, uint32) { return unsafe.StringData(s), uint32(len(s)) }

func main() {
	fsthttp.ServeFunc(func(ctx context.Context, w fsthttp.ResponseWriter, r *fsthttp.Request) {
		q := r.URL.Query()
		name := q.Get("name")
		switch r.URL.Path {
		case "/backend":
			// What BackendFromName learns, then the calls it forgives.
			b, err := fsthttp.BackendFromName(name)
			if err != nil {
				fmt.Fprintf(w, "error: %v", err)
				return
			}
			health, err := b.Health()
			fmt.Fprintf(w, "target=%s dynamic=%v ssl=%v override=%q health=%v/%v", b.Target(), b.IsDynamic(), b.IsSSL(), b.HostOverride(), health, err)
			n, l := ptr(name)
			var v uint32
			fmt.Fprintf(w, " connect=%d", getConnectTimeout(n, l, &v))
			fmt.Fprintf(w, " sslmin=%d", getSSLMinVersion(n, l, &v))
			st := getTCPKeepaliveEnable(n, l, &v)
			fmt.Fprintf(w, " keepalive=%d/%d", st, v)
		case "/is_dynamic":
			// The raw status, which BackendFromName hides behind exists.
			n, l := ptr(name)
			var v uint32
			fmt.Fprintf(w, "%d", isDynamic(n, l, &v))
		case "/register":
			// The raw status of a registration with the mask and host
			// override given.
			mask, _ := strconv.ParseUint(q.Get("mask"), 0, 32)
			var config [27]uint32
			override := q.Get("override")
			if override != "" {
				config[0] = uint32(uintptr(unsafe.Pointer(unsafe.StringData(override))))
				config[1] = uint32(len(override))
			}
			n, l := ptr(name)
			t, tl := ptr(q.Get("target"))
			st := registerDynamicBackend(n, l, t, tl, uint32(mask), &config)
			runtime.KeepAlive(override) // config points into it
			fmt.Fprintf(w, "%d", st)
		case "/dynamic":
			// Register with the SDK, then send to it.
			opts := fsthttp.NewBackendOptions()
			if q.Has("ssl") {
				opts.UseSSL(true)
			}
			if h := q.Get("override"); h != "" {
				opts.HostOverride(h)
			}
			b, err := fsthttp.RegisterDynamicBackend(name, q.Get("target"), opts)
			if err != nil {
				fmt.Fprintf(w, "register: %v", err)
				return
			}
			if q.Has("twice") {
				_, err := fsthttp.RegisterDynamicBackend(name, q.Get("target"), opts)
				fmt.Fprintf(w, "again: %v; ", err)
			}
			fmt.Fprintf(w, "target=%s dynamic=%v ssl=%v; ", b.Target(), b.IsDynamic(), b.IsSSL())
			send(ctx, w, name, q.Get("url"))
		case "/send":
			send(ctx, w, name, q.Get("url"))
		case "/send_v3", "/send_async_v2":
			var req, body, resp, respBody uint32
			var detail [8]uint32
			u, ul := ptr(q.Get("url"))
			reqNew(&req)
			reqURISet(req, u, ul)
			bodyNew(&body)
			n, l := ptr(name)
			var st uint32
			if r.URL.Path == "/send_v3" {
				st = sendV3(req, body, n, l, &detail, &resp, &respBody)
			} else {
				var pending uint32
				if st = sendAsyncV2(req, body, n, l, 0, &pending); st == 0 {
					st = pendingWait(pending, &detail, &resp, &respBody)
				}
			}
			if st != 0 {
				fmt.Fprintf(w, "status %d", st)
				return
			}
			var code uint16
			respStatus(resp, &code)
			buf := make([]byte, 4096)
			var got uint32
			bodyRead(respBody, &buf[0], uint32(len(buf)), &got)
			fmt.Fprintf(w, "%d %s", code, buf[:got])
		}
	})
}

func send(ctx context.Context, w fsthttp.ResponseWriter, backend, url string) {
	req, err := fsthttp.NewRequest("GET", url, nil)
	if err != nil {
		fmt.Fprintf(w, "request: %v", err)
		return
	}
	req.CacheOptions.Pass = true
	resp, err := req.Send(ctx, backend)
	if err != nil {
		fmt.Fprintf(w, "send: %v", err)
		return
	}
	b, _ := io.ReadAll(resp.Body)
	fmt.Fprintf(w, "%d %s", resp.StatusCode, b)
}
