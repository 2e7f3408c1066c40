package platform

// The platform's answers to the edge package's ports, one type a port:
// the config, KV and secret stores, the origin and Upstash backends,
// geolocation, ACLs, bot detection, Edge Rate Limiting, the POP's cache
// and the real-time log endpoints.

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"io"
	"net"
	"net/netip"
	"time"

	"github.com/edgequeue/waitingroom/edge"
	"github.com/edgequeue/waitingroom/store"
	"github.com/fastly/compute-sdk-go/acl"
	"github.com/fastly/compute-sdk-go/cache/core"
	"github.com/fastly/compute-sdk-go/cache/simple"
	"github.com/fastly/compute-sdk-go/configstore"
	"github.com/fastly/compute-sdk-go/erl"
	"github.com/fastly/compute-sdk-go/fsthttp"
	"github.com/fastly/compute-sdk-go/geo"
	"github.com/fastly/compute-sdk-go/kvstore"
	"github.com/fastly/compute-sdk-go/rtlog"
	"github.com/fastly/compute-sdk-go/secretstore"
)

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

// upstash carries store requests through an Upstash backend: backend,
// or the upstash backend when it is "".
type upstash struct{ backend string }

// storeBody is a store call's body. Being a ReadCloser, the SDK sends it as
// it is; its WriteTo (bytes.Reader's) lets the SDK's io.Copy hand the host
// the body in one write instead of allocating a 32 KiB buffer for every
// store call, garbage that a reused TinyGo sandbox has to collect.
type storeBody struct{ *bytes.Reader }

// Close implements io.Closer: there is nothing to release.
func (storeBody) Close() error { return nil }

func (u upstash) RoundTrip(ctx context.Context, sr store.Request) (store.Response, error) {
	req, err := fsthttp.NewRequest(fsthttp.MethodPost, sr.URL, storeBody{bytes.NewReader(sr.Body)})
	if err != nil {
		return store.Response{}, err
	}
	for k, v := range sr.Header {
		req.Header.Set(k, v)
	}
	req.CacheOptions.Pass = true
	backend := u.backend
	if backend == "" {
		backend = upstashBackend
	}
	resp, err := req.Send(ctx, backend)
	if err != nil {
		return store.Response{}, backendError(backend, err)
	}
	defer resp.Body.Close()
	body, err := io.ReadAll(io.LimitReader(resp.Body, maxStoreAnswer))
	if err != nil {
		return store.Response{}, err
	}
	return store.Response{Status: resp.StatusCode, Body: body}, nil
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

func (geolocation) AS(ip netip.Addr) (int, error) {
	g, err := geo.Lookup(net.IP(ip.AsSlice()))
	if err != nil {
		return 0, err
	}
	return g.AsNumber, nil
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

// bots is Fastly's bot detection of the visitors' requests.
type bots struct{}

func (bots) Verified(r *fsthttp.Request) (bool, error) {
	// The SDK fills what it can and returns the first error among the
	// details (a bot's name the platform did not give...): the verdict
	// stands when all three flags were read and set.
	d, err := r.BotDetection()
	if d != nil && d.Analyzed && d.Detected && d.Verified {
		return true, nil
	}
	return false, err
}

func (bots) Bad(r *fsthttp.Request) (bool, error) {
	// Unlike Verified, every detail must be read: a bot whose
	// verification could not be read is not called bad.
	d, err := r.BotDetection()
	if err != nil || d == nil {
		return false, err
	}
	return d.Analyzed && d.Detected && !d.Verified && d.Category != fsthttp.BotCategoryAccessibility, nil
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

func (limits) Counted(counter, client string) (int, error) {
	n, err := erl.OpenRateCounter(counter).LookupCount(client, erl.CounterDuration60s)
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

// maxCacheValue bounds what is read back from the cache: a snapshot is a
// line of numbers, so more than this is not one of ours.
const maxCacheValue = 4096

// popCache is Fastly's cache in the POP serving the request. Its
// transactions collapse concurrent misses of a key into one fill, which
// is what makes a snapshot cost one store call per POP.
type popCache struct{}

func (popCache) Purge(key string) error {
	return simple.Purge([]byte(key), simple.PurgeOptions{Scope: simple.PurgeScopeGlobal})
}

func (popCache) Get(key string) ([]byte, error) {
	body, err := simple.Get([]byte(key))
	if errors.Is(err, core.ErrNotFound) {
		return nil, nil
	}
	if err != nil {
		return nil, err
	}
	return readCached(key, body)
}

func (popCache) Set(key string, value []byte, ttl time.Duration) error {
	w, err := core.Insert([]byte(key), core.WriteOptions{TTL: ttl,
		SurrogateKeys: []string{simple.SurrogateKeyForCacheKey([]byte(key), simple.PurgeScopePOP),
			simple.SurrogateKeyForCacheKey([]byte(key), simple.PurgeScopeGlobal)}})
	if err != nil {
		return err
	}
	if _, err := w.Write(value); err != nil {
		w.Abandon()
		return err
	}
	return w.Close()
}

func (popCache) GetOrSet(key string, fill func() ([]byte, time.Duration, error)) ([]byte, error) {
	body, err := simple.GetOrSet([]byte(key), func() (simple.CacheEntry, error) {
		b, ttl, err := fill()
		if err != nil {
			return simple.CacheEntry{}, err
		}
		return simple.CacheEntry{Body: bytes.NewReader(b), TTL: ttl}, nil
	})
	if err != nil {
		return nil, err
	}
	return readCached(key, body)
}

// readCached reads and closes the body of key's cached value.
func readCached(key string, body io.ReadCloser) ([]byte, error) {
	defer body.Close()
	b, err := io.ReadAll(io.LimitReader(body, maxCacheValue+1))
	if err == nil && len(b) > maxCacheValue {
		err = fmt.Errorf("cache value %q is over %d bytes", key, maxCacheValue)
	}
	return b, err
}

// logEndpoint is a Fastly real-time log endpoint. Opening one cannot fail
// by itself: an unknown or reserved name fails each Write.
type logEndpoint struct{ e *rtlog.Endpoint }

func openLogEndpoint(name string) edge.LogEndpoint { return logEndpoint{rtlog.Open(name)} }

func (l logEndpoint) Write(line []byte) error {
	_, err := l.e.Write(line)
	return err
}
