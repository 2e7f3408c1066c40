// Command waitingroom is an edge waiting room for Fastly Compute. It holds
// the visitors an origin cannot take in a fair, numbered line served from
// the edge, and lets them through in order at the rate the origin can
// handle. This file is the only place that knows the Fastly SDK: it wires
// the platform's stores and backends into the edge package.
//
// # TinyGo rules for every package of this module
//
// Users build this module with TinyGo (0.33 and later) as well as Go, and
// TinyGo differs in ways no Go build shows, so the whole edge module keeps
// to these (shared/DESIGN.md section 5 has the rest):
//
//   - A package-level variable holds a constant, a literal, or a sentinel
//     from errors.New with a literal message; nothing computed by calling
//     functions. TinyGo evaluates package initializers at compile time,
//     and 0.33 evaluated hex.EncodeToString(sha1.Sum(...)) to 40 NUL
//     bytes. Compute such values inside a function, at first use, and test
//     the value under `tinygo test` (store.TestScriptSHA).
//     tools/edgerules enforces this.
//   - No panic on any input: recover does not work on wasm.
//   - No net/http, text/template or html/template; no API newer than the
//     Go 1.23 standard library.
package main

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"io"
	"log"
	"net"
	"net/netip"
	"os"
	"time"

	"github.com/edgequeue/waitingroom/edge"
	"github.com/edgequeue/waitingroom/store"
	"github.com/fastly/compute-sdk-go/acl"
	"github.com/fastly/compute-sdk-go/configstore"
	"github.com/fastly/compute-sdk-go/erl"
	"github.com/fastly/compute-sdk-go/fsthttp"
	"github.com/fastly/compute-sdk-go/geo"
	"github.com/fastly/compute-sdk-go/kvstore"
	"github.com/fastly/compute-sdk-go/rtlog"
	"github.com/fastly/compute-sdk-go/secretstore"
)

// The backends fastly.toml defines.
const (
	originBackend  = "origin"
	upstashBackend = "upstash"
)

func main() {
	// What the sandbox keeps between the requests it serves: nothing
	// about a visitor (edge.Kept).
	kept := &edge.Kept{}
	fsthttp.ServeMany(func(ctx context.Context, w fsthttp.ResponseWriter, r *fsthttp.Request) {
		svc := &edge.Service{
			Config:    &config{},
			Templates: &kvTemplates{},
			Secrets:   secrets{},
			Origin:    origin{},
			Upstash:   upstash{},
			Limits:    limits{},
			Geo:       geolocation{},
			ACLs:      acls{},
			Bots:      bots{r},
			// The upstash backend knows the database's host, so the
			// config store need not repeat it.
			UpstashViaBackend: true,
			// Viceroy and the project's local host both say "localhost";
			// Fastly's POPs name the cache node.
			Local:        os.Getenv("FASTLY_HOSTNAME") == "localhost",
			Now:          time.Now(),
			Logf:         log.Printf,
			LogEndpoints: openLogEndpoint,
			POP:          os.Getenv("FASTLY_POP"),
			Cache:        popCache{},
			Kept:         kept,
		}
		svc.ServeHTTP(ctx, w, r)
	}, sandboxOptions())
}

// logEndpoint is a Fastly real-time log endpoint. Opening one cannot fail
// by itself: an unknown or reserved name fails each Write.
type logEndpoint struct{ e *rtlog.Endpoint }

func openLogEndpoint(name string) edge.LogEndpoint { return logEndpoint{rtlog.Open(name)} }

func (l logEndpoint) Write(line []byte) error {
	_, err := l.e.Write(line)
	return err
}

// config reads the config store, opening it on first use.
type config struct{ store *configstore.Store }

func (c *config) Get(key string) (string, error) {
	if c.store == nil {
		s, err := configstore.Open(edge.ConfigStore)
		if errors.Is(err, configstore.ErrStoreNotFound) {
			return "", fmt.Errorf("config store %s: %w", edge.ConfigStore, edge.ErrStoreNotLinked)
		}
		if err != nil {
			return "", fmt.Errorf("config store %s: %w", edge.ConfigStore, err)
		}
		c.store = s
	}
	v, err := c.store.Get(key)
	if errors.Is(err, configstore.ErrKeyNotFound) {
		return "", edge.ErrNotFound
	}
	return v, err
}

// maxTemplateBytes stops a huge KV value from being read at all; the
// template parser refuses anything this large anyway.
const maxTemplateBytes = 256<<10 + 1

// kvTemplates reads templates from the KV store, opening it on first use.
type kvTemplates struct{ store *kvstore.Store }

func (t *kvTemplates) Get(name string) (string, error) {
	if t.store == nil {
		s, err := kvstore.Open(edge.TemplateStore)
		if err != nil {
			return "", fmt.Errorf("kv store %s: %w", edge.TemplateStore, err)
		}
		t.store = s
	}
	e, err := t.store.Lookup(name)
	if errors.Is(err, kvstore.ErrKeyNotFound) {
		return "", edge.ErrNotFound
	}
	if err != nil {
		return "", err
	}
	b, err := io.ReadAll(io.LimitReader(e, maxTemplateBytes))
	return string(b), err
}

// secrets reads the secret store.
type secrets struct{}

func (secrets) Get(name string) ([]byte, error) {
	b, err := secretstore.Plaintext(edge.SecretStore, name)
	switch {
	case errors.Is(err, secretstore.ErrSecretNotFound):
		return nil, edge.ErrNotFound
	case errors.Is(err, secretstore.ErrSecretStoreNotFound):
		return nil, fmt.Errorf("secret store %s: %w", edge.SecretStore, edge.ErrStoreNotLinked)
	}
	return b, err
}

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

// limits is Fastly's Edge Rate Limiting: counters and penalty boxes shared
// by the POP's instances.
type limits struct{}

func (limits) Count(counter, client string) (int, error) {
	rc := erl.OpenRateCounter(counter)
	if err := rc.Increment(client, 1); err != nil {
		return 0, fmt.Errorf("rate counter %s: %w", counter, err)
	}
	n, err := rc.LookupCount(client, erl.CounterDuration60s)
	if err != nil {
		return 0, fmt.Errorf("rate counter %s: %w", counter, err)
	}
	return int(n), nil
}

func (limits) Penalize(box, client string, d time.Duration) error {
	// The platform counts penalties in whole minutes, one to sixty.
	d = min(max(d.Truncate(time.Minute), time.Minute), time.Hour)
	if err := erl.OpenPenaltyBox(box).Add(client, d); err != nil {
		return fmt.Errorf("penalty box %s: %w", box, err)
	}
	return nil
}

func (limits) Penalized(box, client string) (bool, error) {
	in, err := erl.OpenPenaltyBox(box).Has(client)
	if err != nil {
		return false, fmt.Errorf("penalty box %s: %w", box, err)
	}
	return in, nil
}

// geolocation is Fastly's geolocation of client addresses.
type geolocation struct{}

func (geolocation) Country(ip netip.Addr) (string, error) {
	// An address the platform has no record of reads as an empty record
	// (the SDK turns the host's None into one), so its country is "".
	g, err := geo.Lookup(net.IP(ip.AsSlice()))
	if err != nil {
		return "", err
	}
	return g.CountryCode, nil
}

// acls looks addresses up in the service's Fastly ACLs.
type acls struct{}

func (acls) Lookup(name string, ip netip.Addr) (string, error) {
	h, err := acl.Open(name)
	if errors.Is(err, acl.ErrNotFound) {
		return "", fmt.Errorf("acl %s: %w", name, edge.ErrNotFound)
	}
	if err != nil {
		return "", err
	}
	e, err := h.Lookup(net.IP(ip.AsSlice()))
	if errors.Is(err, acl.ErrNoContent) { // no entry matches ip
		return "", nil
	}
	return e.Action, err
}

// bots is Fastly's bot detection of the visitor's request.
type bots struct{ r *fsthttp.Request }

func (b bots) Verified() (bool, error) {
	// The SDK fills what it can and returns the first error among the
	// details (a bot's name the platform did not give...): the verdict
	// stands when all three flags were read and set.
	d, err := b.r.BotDetection()
	if d != nil && d.Analyzed && d.Detected && d.Verified {
		return true, nil
	}
	return false, err
}
