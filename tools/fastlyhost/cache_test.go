package fastlyhost

import (
	"context"
	"fmt"
	"io"
	"log"
	"net/http"
	"net/http/httptest"
	"net/url"
	"os"
	"path/filepath"
	"strings"
	"sync/atomic"
	"testing"
	"time"
)

// cacheBuilds are testdata/cacheguest built with Go and with TinyGo.
var cacheBuilds = []struct {
	name  string
	build func(t *testing.T) []byte
}{
	{"Go", func(t *testing.T) []byte { return mustBuildGuest(t, "cacheguest") }},
	{"TinyGo", func(t *testing.T) []byte { return buildTinyGoGuest(t, "cacheguest") }},
}

// holdOrigin is the backend cacheguest fetches /hold from: each fetch is
// counted, announced on entered, and answered "filled" once release is
// closed.
type holdOrigin struct {
	fills   atomic.Int32
	entered chan struct{}
	release chan struct{}
}

// cachePOP is one host (one POP) running cacheguest, with its cache, its
// origin and its clock.
type cachePOP struct {
	url    string
	cache  *cacheStore
	origin *holdOrigin
	clock  *testClock
	logs   *syncBuffer
}

func startCachePOP(t *testing.T, wasm []byte, pop string) *cachePOP {
	t.Helper()
	o := &holdOrigin{entered: make(chan struct{}, 100), release: make(chan struct{})}
	origin := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		o.fills.Add(1)
		o.entered <- struct{}{}
		<-o.release
		io.WriteString(w, "filled")
	}))
	t.Cleanup(origin.Close)
	t.Cleanup(func() {
		select {
		case <-o.release:
		default:
			close(o.release)
		}
	})
	u, _ := url.Parse(origin.URL)
	clock := newTestClock()
	logs := &syncBuffer{}
	h, err := New(context.Background(), wasm, &Manifest{Backends: map[string]Backend{"origin": {URL: u}}}, Options{
		Log: log.New(logs, "", 0), LogEndpoints: logs, CacheDir: filepath.Join(os.TempDir(), "fastlyhost-test-cache"),
		Timeout: 30 * time.Second, Clock: clock.Now, POP: pop,
	})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { h.Close(context.Background()) })
	srv := httptest.NewServer(h)
	t.Cleanup(srv.Close)
	return &cachePOP{url: srv.URL, cache: cacheOf(h), origin: o, clock: clock, logs: logs}
}

// waiters returns a channel that hears the number of transactions waiting
// on key whenever it changes.
func (p *cachePOP) waiters(key string) <-chan int {
	ch := make(chan int, 100)
	p.cache.mu.Lock()
	p.cache.waiting = func(k string, n int) {
		if k == key {
			ch <- n
		}
	}
	p.cache.mu.Unlock()
	return ch
}

func (p *cachePOP) get(t *testing.T, query string) string {
	t.Helper()
	got, err := erlGet(p.url + "/?" + query)
	if err != nil {
		t.Errorf("%s: %q, %v", query, got, err)
	}
	return got
}

// cacheSteps go through the cache calls request after request (instance
// after instance), the host's clock moved by advance before each.
var cacheSteps = []struct {
	advance time.Duration
	query   string
	want    string
}{
	{0, "op=pop", "FRA|<nil>"},
	{0, "op=lookup&key=a", "notfound|cache: object not found"},
	{0, "op=insert&key=a&value=hello&ttl=10s&swr=5s&meta=m&length=5&sk=one", "inserted|<nil>"},
	// A lookup that finds the object is a hit, and counts itself.
	{0, "op=lookup&key=a", `found body="hello"/<nil> len=5 ttl=10s age=0s swr=5s hits=1 meta="m" stale=false usable=true|<nil>`},
	{4 * time.Second, "op=lookup&key=a", `found body="hello"/<nil> len=5 ttl=10s age=4s swr=5s hits=2 meta="m" stale=false usable=true|<nil>`},
	// Ranges are inclusive; to alone counts from the end; an invalid one
	// gives the whole body.
	{0, "op=lookup&key=a&from=1&to=3", `found body="ell"/<nil> len=5 ttl=10s age=4s swr=5s hits=3 meta="m" stale=false usable=true|<nil>`},
	{0, "op=lookup&key=a&to=2", `found body="lo"/<nil> len=5 ttl=10s age=4s swr=5s hits=4 meta="m" stale=false usable=true|<nil>`},
	{0, "op=lookup&key=a&from=7", `found body="hello"/<nil> len=5 ttl=10s age=4s swr=5s hits=5 meta="m" stale=false usable=true|<nil>`},
	// One body at a time per found object.
	{0, "op=bodies&key=a", "cache: invalid operation hello|<nil>"},
	// Past its max age, within stale-while-revalidate: stale but usable,
	// and a transaction gets it with the obligation to freshen it.
	{7 * time.Second, "op=lookup&key=a", `found body="hello"/<nil> len=5 ttl=10s age=11s swr=5s hits=7 meta="m" stale=true usable=true|<nil>`},
	{0, "op=tx&key=a&then=update&ttl=1m&meta=n", `must=true mustinsert=false found body="hello"/<nil> len=5 ttl=10s age=11s swr=5s hits=8 meta="m" stale=true usable=true|<nil>`},
	{0, "op=lookup&key=a", `found body="hello"/<nil> len=5 ttl=1m0s age=0s swr=0s hits=1 meta="n" stale=false usable=true|<nil>`},
	// Past max age and stale-while-revalidate: gone.
	{time.Minute, "op=lookup&key=a", "notfound|cache: object not found"},
	// A transaction on a missing key must insert; its stream-back handle
	// reads what it writes.
	{0, "op=tx&key=b&then=insert&value=v1&ttl=1m", `must=true mustinsert=true notfound then found body="v1"/<nil> len=0 ttl=1m0s age=0s swr=0s hits=0 meta="" stale=false usable=true|<nil>`},
	{0, "op=tx&key=b&then=close", `must=false mustinsert=false found body="v1"/<nil> len=2 ttl=1m0s age=0s swr=0s hits=1 meta="" stale=false usable=true|<nil>`},
	// Cancelling gives the obligation up: the next transaction has it.
	{0, "op=tx&key=c&then=cancel", "must=true mustinsert=true notfound|<nil>"},
	{0, "op=tx&key=c&then=cancel", "must=true mustinsert=true notfound|<nil>"},
	{0, "op=tx&key=c&then=update", "must=true mustinsert=true notfound|cache: invalid operation"},
	// GetOrSet fills once per TTL.
	{0, "op=getorset&key=d&value=x&ttl=1m", "x|<nil>"},
	{59 * time.Second, "op=getorset&key=d&value=y&ttl=1m", "x|<nil>"},
	{time.Second, "op=getorset&key=d&value=y&ttl=1m", "y|<nil>"},
	// simple.Purge drops it by the surrogate key GetOrSet gave it.
	{0, "op=purge&key=d", "purged|<nil>"},
	{0, "op=lookup&key=d", "notfound|cache: object not found"},
	// An object whose body is not the declared length is dropped.
	{0, "op=insert&key=e&value=abc&ttl=1m&length=5", "inserted|<nil>"},
	{0, "op=lookup&key=e", "notfound|cache: object not found"},
	// Bad input.
	{0, "op=lookup&key=" + strings.Repeat("k", 4097), "notfound|cache: invalid argument"},
	{0, "op=insert&key=f&value=v&ttl=1m&sk=a%01b", "inserted|cache: invalid argument"},
}

// TestCacheThroughTheSDK runs cacheSteps against cacheguest built with Go
// and with TinyGo, and checks the log names each bad input.
func TestCacheThroughTheSDK(t *testing.T) {
	for _, b := range cacheBuilds {
		t.Run(b.name, func(t *testing.T) {
			p := startCachePOP(t, b.build(t), "FRA")
			for i, step := range cacheSteps {
				p.clock.Advance(step.advance)
				if got := p.get(t, step.query); got != step.want {
					t.Fatalf("step %d (%.80s):\n got %q\nwant %q", i, step.query, got, step.want)
				}
			}
			for _, want := range []string{
				"fastly_cache.lookup: a key of 4097 bytes: the platform takes up to 4096: Inval",
				`fastly_cache.insert: surrogate key "a\x01b" has a character other than visible ASCII: Inval`,
				"fastly_http_body.close: cache: the object has 3 bytes, not the 5 declared",
				"fastly_cache.get_body: the object's previous body is still open: Badf",
				"fastly_cache.transaction_update: the transaction has no found object to update: Badf",
			} {
				if !strings.Contains(p.logs.String(), want) {
					t.Errorf("no log line with %q in\n%s", want, p.logs)
				}
			}
		})
	}
}

// TestCacheCollapsing sends concurrent GetOrSets for one key while the
// first to fill is held at its origin until all the others wait for it:
// the fill runs once, and every request gets its value.
func TestCacheCollapsing(t *testing.T) {
	const requests = 6
	for _, b := range cacheBuilds {
		t.Run(b.name, func(t *testing.T) {
			p := startCachePOP(t, b.build(t), "FRA")
			waiting := p.waiters("k")
			answers := make(chan string, requests)
			for range requests {
				go func() {
					got, err := erlGet(p.url + "/?op=getorset&key=k&hold=1&ttl=1m")
					answers <- fmt.Sprint(got, err)
				}()
			}
			// The first fill enters the origin; a second would mean no
			// collapsing, and fails here rather than hanging.
			for entered, n := 0, 0; n < requests-1; {
				select {
				case n = <-waiting:
				case <-p.origin.entered:
					if entered++; entered > 1 {
						t.Fatalf("a second fill started, with %d requests waiting", n)
					}
				}
			}
			close(p.origin.release)
			for range requests {
				if got := <-answers; got != "filled|<nil><nil>" {
					t.Errorf("answer %q, want the one fill's value", got)
				}
			}
			if n := p.origin.fills.Load(); n != 1 {
				t.Errorf("%d fills, want 1", n)
			}
		})
	}
}

// TestCacheObligationPassesOn holds a transaction with the obligation at
// its origin while a second waits on the key; what the first does next
// decides what the second gets. The second wakes when the first inserts,
// maybe before its body is whole: the length the second sees is the one
// declared.
func TestCacheObligationPassesOn(t *testing.T) {
	tests := []struct {
		then, first, second string
	}{
		{"cancel", "must=true mustinsert=true notfound|<nil>",
			`must=true mustinsert=true notfound then found body="second"/<nil> len=0 ttl=1m0s age=0s swr=0s hits=0 meta="" stale=false usable=true|<nil>`},
		{"close", "must=true mustinsert=true notfound|<nil>",
			`must=true mustinsert=true notfound then found body="second"/<nil> len=0 ttl=1m0s age=0s swr=0s hits=0 meta="" stale=false usable=true|<nil>`},
		{"insert", `must=true mustinsert=true notfound then found body="filled"/<nil> len=6 ttl=1m0s age=0s swr=0s hits=0 meta="" stale=false usable=true|<nil>`,
			// Without the obligation, its insert is refused.
			`must=false mustinsert=false found body="filled"/<nil> len=6 ttl=1m0s age=0s swr=0s hits=1 meta="" stale=false usable=true|cache: invalid operation`},
	}
	for _, b := range cacheBuilds {
		t.Run(b.name, func(t *testing.T) {
			wasm := b.build(t)
			for _, tc := range tests {
				t.Run(tc.then, func(t *testing.T) {
					p := startCachePOP(t, wasm, "FRA")
					waiting := p.waiters("k")
					first := make(chan string, 1)
					go func() { first <- p.get(t, "op=tx&key=k&hold=1&ttl=1m&length=6&then="+tc.then) }()
					<-p.origin.entered
					second := make(chan string, 1)
					go func() { second <- p.get(t, "op=tx&key=k&value=second&ttl=1m&then=insert") }()
					select {
					case <-waiting:
					case got := <-second:
						t.Fatalf("the second transaction did not wait for the first: %q", got)
					}
					close(p.origin.release)
					if got := <-first; got != tc.first {
						t.Errorf("first:\n got %q\nwant %q", got, tc.first)
					}
					if got := <-second; got != tc.second {
						t.Errorf("second:\n got %q\nwant %q", got, tc.second)
					}
				})
			}
		})
	}
}

// TestCachePerPOP checks that each host is its own POP: what one caches
// the other does not see.
func TestCachePerPOP(t *testing.T) {
	wasm := mustBuildGuest(t, "cacheguest")
	fra, lhr := startCachePOP(t, wasm, "FRA"), startCachePOP(t, wasm, "LHR")
	if got := fra.get(t, "op=getorset&key=k&value=fra&ttl=1m"); got != "fra|<nil>" {
		t.Fatalf("FRA: %q", got)
	}
	if got := lhr.get(t, "op=getorset&key=k&value=lhr&ttl=1m"); got != "lhr|<nil>" {
		t.Errorf("LHR saw FRA's object: %q", got)
	}
	if got := lhr.get(t, "op=pop"); got != "LHR|<nil>" {
		t.Errorf("LHR's FASTLY_POP: %q", got)
	}
}

// TestCacheStoreBounds checks the memory bounds: an object over the entry
// bound is refused, or dropped when its body outgrows it, and past the
// total bound the oldest objects go first.
func TestCacheStoreBounds(t *testing.T) {
	clock := newTestClock()
	c := newCacheStore(clock.Now, 10, 6)
	add := func(key, body string, declared int64) error {
		o, err := c.insert(key, cacheWrite{maxAge: time.Hour, length: declared}, nil)
		if err != nil {
			return err
		}
		if _, err := o.body.Write([]byte(body)); err != nil {
			return err
		}
		return o.body.finish()
	}
	steps := []struct {
		key, body string
		declared  int64
		wantErr   bool
		present   string // the keys present after the step
	}{
		{"a", "aaaa", -1, false, "a"},
		{"b", "bbbb", 4, false, "ab"},
		{"c", "cccc", -1, false, "bc"},
		{"d", "ddddddd", 7, true, "bc"},
		{"e", "eeeeeee", -1, true, "bc"},
		{"b", "bb", -1, false, "bc"},
		{"f", "ffffff", -1, false, "bf"},
	}
	for i, s := range steps {
		if err := add(s.key, s.body, s.declared); (err != nil) != s.wantErr {
			t.Fatalf("step %d: %s: error %v, want one: %v", i, s.key, err, s.wantErr)
		}
		var present string
		for _, k := range "abcdef" {
			if o, _ := c.lookup(string(k)); o != nil {
				present += string(k)
			}
		}
		if present != s.present {
			t.Errorf("step %d: present %q, want %q", i, present, s.present)
		}
		if c.bytes > c.maxBytes {
			t.Errorf("step %d: %d bytes held, over the bound %d", i, c.bytes, c.maxBytes)
		}
	}
	c.mu.Lock()
	defer c.mu.Unlock()
	if len(c.keys) != 2 || c.order.Len() != 2 || c.bytes != 8 {
		t.Errorf("%d keys, %d objects, %d bytes, want 2, 2, 8", len(c.keys), c.order.Len(), c.bytes)
	}
}
