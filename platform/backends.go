package platform

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"io"

	"github.com/edgequeue/waitingroom/edge"
	"github.com/edgequeue/waitingroom/store"
	"github.com/fastly/compute-sdk-go/fsthttp"
)

// origin sends the visitor's own request, body streaming, to the origin.
type origin struct{}

func (origin) Send(ctx context.Context, r *fsthttp.Request) (*fsthttp.Response, error) {
	resp, err := r.Send(ctx, originBackend)
	return resp, backendError(originBackend, err)
}

// dnsNXDomain is the DNS answer "no such name" (RFC 1035 RCODE 3).
const dnsNXDomain = 3

// backendError marks a send that failed because the backend's host name
// does not exist, so the edge can name the backend to fix instead of
// calling it an outage. Other errors pass unchanged.
func backendError(backend string, err error) error {
	var se fsthttp.SendError
	if err != nil && errors.As(err, &se) && se.Cause() == fsthttp.SendErrorDNSError && se.DNSErrorRCode() == dnsNXDomain {
		return fmt.Errorf("backend %s: %w (%v)", backend, edge.ErrBackendUnresolvable, err)
	}
	return err
}

// maxStoreAnswer bounds what is read of an Upstash answer: one byte more
// than the store accepts, so that a longer one is refused, not cut.
const maxStoreAnswer = store.MaxAnswer + 1

// upstash carries store requests through the upstash backend.
type upstash struct{}

// storeBody is a store call's body. Being a ReadCloser, the SDK sends it as
// it is; its WriteTo (bytes.Reader's) lets the SDK's io.Copy hand the host
// the body in one write instead of allocating a 32 KiB buffer for every
// store call, garbage that a reused TinyGo sandbox has to collect.
type storeBody struct{ *bytes.Reader }

// Close implements io.Closer: there is nothing to release.
func (storeBody) Close() error { return nil }

func (upstash) RoundTrip(ctx context.Context, sr store.Request) (store.Response, error) {
	req, err := fsthttp.NewRequest(fsthttp.MethodPost, sr.URL, storeBody{bytes.NewReader(sr.Body)})
	if err != nil {
		return store.Response{}, err
	}
	for k, v := range sr.Header {
		req.Header.Set(k, v)
	}
	req.CacheOptions.Pass = true
	resp, err := req.Send(ctx, upstashBackend)
	if err != nil {
		return store.Response{}, backendError(upstashBackend, err)
	}
	defer resp.Body.Close()
	body, err := io.ReadAll(io.LimitReader(resp.Body, maxStoreAnswer))
	if err != nil {
		return store.Response{}, err
	}
	return store.Response{Status: resp.StatusCode, Body: body}, nil
}
