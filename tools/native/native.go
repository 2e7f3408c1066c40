// Package native provides the waiting room's platform interfaces over plain
// Go and net/http, so the edge code runs natively in tests against real
// local services: a real origin over HTTP, the Upstash stand-in over HTTP,
// and in-memory config, KV and secret stores.
package native

import (
	"bytes"
	"context"
	"io"
	"net/http"
	"net/url"

	"github.com/edgequeue/waitingroom/edge"
	"github.com/edgequeue/waitingroom/store"
	"github.com/fastly/compute-sdk-go/fsthttp"
)

// Upstash is a store.Transport over net/http.
type Upstash struct {
	Client *http.Client
}

// RoundTrip implements store.Transport.
func (u Upstash) RoundTrip(ctx context.Context, sr store.Request) (store.Response, error) {
	req, err := httpRequest(ctx, sr)
	if err != nil {
		return store.Response{}, err
	}
	resp, err := client(u.Client).Do(req)
	if err != nil {
		return store.Response{}, err
	}
	defer resp.Body.Close()
	body, err := io.ReadAll(io.LimitReader(resp.Body, 1<<20))
	return store.Response{Status: resp.StatusCode, Body: body}, err
}

func client(c *http.Client) *http.Client {
	if c == nil {
		return http.DefaultClient
	}
	return c
}

// Origin forwards requests to Base over net/http, streaming both bodies, as
// a Fastly backend would.
type Origin struct {
	Base   *url.URL
	Client *http.Client
}

// Send implements edge.Origin.
func (o Origin) Send(ctx context.Context, r *fsthttp.Request) (*fsthttp.Response, error) {
	u := *o.Base
	u.Path, u.RawQuery = r.URL.Path, r.URL.RawQuery
	var body io.Reader
	if r.Body != nil {
		body = r.Body
	}
	req, err := http.NewRequestWithContext(ctx, r.Method, u.String(), body)
	if err != nil {
		return nil, err
	}
	for _, k := range r.Header.Keys() {
		for _, v := range r.Header.Values(k) {
			req.Header.Add(k, v)
		}
	}
	req.Host = r.Host
	c := client(o.Client)
	noRedirect := *c
	noRedirect.CheckRedirect = func(*http.Request, []*http.Request) error { return http.ErrUseLastResponse }
	resp, err := noRedirect.Do(req)
	if err != nil {
		return nil, err
	}
	h := fsthttp.Header{}
	for k, vs := range resp.Header {
		for _, v := range vs {
			h.Add(k, v)
		}
	}
	return &fsthttp.Response{StatusCode: resp.StatusCode, Header: h, Body: resp.Body}, nil
}

// Map is an in-memory config store, KV store of templates, or secret store.
type Map map[string]string

// Get implements edge.Config and edge.Templates.
func (m Map) Get(key string) (string, error) {
	v, ok := m[key]
	if !ok {
		return "", edge.ErrNotFound
	}
	return v, nil
}

// Secrets is an in-memory secret store.
type Secrets map[string]string

// Get implements edge.Secrets.
func (s Secrets) Get(name string) ([]byte, error) {
	v, ok := s[name]
	if !ok {
		return nil, edge.ErrNotFound
	}
	return []byte(v), nil
}

// InProcess is a store.Transport that hands each request straight to an
// http.Handler (the Upstash stand-in) without a socket: the simulator's
// millions of calls then cost the script, not the loopback.
type InProcess struct {
	Handler http.Handler
}

// RoundTrip implements store.Transport.
func (t InProcess) RoundTrip(ctx context.Context, sr store.Request) (store.Response, error) {
	req, err := httpRequest(ctx, sr)
	if err != nil {
		return store.Response{}, err
	}
	w := &recorder{header: http.Header{}, status: http.StatusOK}
	t.Handler.ServeHTTP(w, req)
	return store.Response{Status: w.status, Body: w.body.Bytes()}, nil
}

// recorder is the least of an http.ResponseWriter.
type recorder struct {
	header http.Header
	status int
	body   bytes.Buffer
}

func (r *recorder) Header() http.Header         { return r.header }
func (r *recorder) WriteHeader(code int)        { r.status = code }
func (r *recorder) Write(p []byte) (int, error) { return r.body.Write(p) }

// httpRequest is the HTTP request that carries a store request.
func httpRequest(ctx context.Context, sr store.Request) (*http.Request, error) {
	req, err := http.NewRequestWithContext(ctx, http.MethodPost, sr.URL, bytes.NewReader(sr.Body))
	if err != nil {
		return nil, err
	}
	for k, v := range sr.Header {
		req.Header.Set(k, v)
	}
	return req, nil
}
