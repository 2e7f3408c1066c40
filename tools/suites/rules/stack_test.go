package rules

import (
	"context"
	"fmt"
	"io"
	"net"
	"net/http"
	"net/http/httptest"
	"net/url"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/edgequeue/waitingroom/tools/devstack"
	"github.com/edgequeue/waitingroom/tools/fastlyhost"
)

// storeTimeout keeps a loaded machine's store calls from answering busy.
const storeTimeout = 5 * time.Second

// bypassHeader is edge.BypassHeader, spelled out: the origin's contract.
const bypassHeader = "Waiting-Room-Bypass"

// env is the real stack around the wasm under test ($WASM, else
// bin/main.wasm), with the repository's fastly.toml (its geolocation
// table and ACL), and the demo origin behind a recorder.
type env struct {
	t      *testing.T
	stack  *devstack.Stack
	origin *origin
	logs   *devstack.LogBuffer

	mu      sync.Mutex
	clients map[string]*http.Client
	n       int // requests sent, to tell them apart at the origin
}

// start runs the stack with config's keys in the config store: the rooms
// (index and definitions) and any other keys; nil keeps devconfig.json's
// keys as they are. adjust, when not nil, changes the manifest further.
func start(t *testing.T, config map[string]string, adjust func(*fastlyhost.Manifest)) *env {
	t.Helper()
	o := &origin{demo: devstack.DemoOrigin()}
	srv := httptest.NewServer(o)
	t.Cleanup(srv.Close)
	originURL, err := url.Parse(srv.URL + "/")
	if err != nil {
		t.Fatal(err)
	}
	logs := &devstack.LogBuffer{}
	opts := devstack.ForTest(logs, 30*time.Second)
	opts.Adjust = func(m *fastlyhost.Manifest) {
		m.Backends["origin"] = fastlyhost.Backend{URL: originURL}
		if config != nil {
			cfg := m.ConfigStores[devstack.ConfigStore]
			for k := range cfg {
				if k == "rooms" || k == "bypass" || strings.HasPrefix(k, "room.") {
					delete(cfg, k)
				}
			}
			for k, v := range config {
				cfg[k] = v
			}
			cfg["store_timeout"] = fmt.Sprint(storeTimeout.Seconds())
		}
		if adjust != nil {
			adjust(m)
		}
	}
	st, err := devstack.Start(context.Background(), opts)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(st.Close)
	return &env{t: t, stack: st, origin: o, logs: logs, clients: map[string]*http.Client{}}
}

// request is one request a test sends.
type request struct {
	from   string   // the client's address: 127.x.y.z ("" is 127.0.0.1)
	method string   // "" is GET
	host   string   // the Host header; "" is the stack's
	path   string   // path (and query)
	header []string // name, value, ...
}

// answer is what came back, and what the origin saw of the request.
type answer struct {
	status int
	header http.Header
	body   string
	// atOrigin holds the headers the origin received, when the request
	// reached it.
	atOrigin http.Header
}

func (a answer) String() string {
	body := a.body
	if len(body) > 200 {
		body = body[:200] + "…"
	}
	return fmt.Sprintf("%d %q", a.status, body)
}

// room is the room whose line the answer sends the visitor to: the room
// whose cookie an arrival redirect sets, or "" for any other answer.
func (a answer) room() string {
	if a.status != http.StatusTemporaryRedirect {
		return ""
	}
	for _, c := range (&http.Response{Header: a.header}).Cookies() {
		if name, ok := strings.CutPrefix(c.Name, "wr_"); ok && c.Value != "" {
			return name
		}
	}
	return ""
}

// send sends r, each on its own connection from its address, and reads
// the answer. A marker in the query tells the origin's copy apart.
func (e *env) send(r request) answer {
	e.t.Helper()
	e.mu.Lock()
	e.n++
	marker := fmt.Sprintf("rules-test=%d", e.n)
	e.mu.Unlock()
	sep := "?"
	if strings.Contains(r.path, "?") {
		sep = "&"
	}
	method := r.method
	if method == "" {
		method = http.MethodGet
	}
	req, err := http.NewRequest(method, e.stack.HostURL+r.path+sep+marker, nil)
	if err != nil {
		e.t.Fatal(err)
	}
	if r.host != "" {
		req.Host = r.host
	}
	req.Header.Set("User-Agent", "Mozilla/5.0 (rules suite)")
	for i := 0; i+1 < len(r.header); i += 2 {
		req.Header.Add(r.header[i], r.header[i+1])
	}
	resp, err := e.client(r.from).Do(req)
	if err != nil {
		e.t.Fatalf("%s %s from %s: %v", method, r.path, r.from, err)
	}
	defer resp.Body.Close()
	b, err := io.ReadAll(resp.Body)
	if err != nil {
		e.t.Fatal(err)
	}
	return answer{status: resp.StatusCode, header: resp.Header, body: string(b), atOrigin: e.origin.saw(marker)}
}

// client returns the HTTP client that connects from address ip; it
// follows no redirect.
func (e *env) client(ip string) *http.Client {
	e.mu.Lock()
	defer e.mu.Unlock()
	if c, ok := e.clients[ip]; ok {
		return c
	}
	d := &net.Dialer{Timeout: 30 * time.Second}
	if ip != "" {
		d.LocalAddr = &net.TCPAddr{IP: net.ParseIP(ip)}
	}
	c := &http.Client{
		Transport:     &http.Transport{DialContext: d.DialContext, DisableKeepAlives: true},
		CheckRedirect: func(*http.Request, []*http.Request) error { return http.ErrUseLastResponse },
		Timeout:       90 * time.Second,
	}
	e.clients[ip] = c
	return c
}

// logged reports whether a log line holds s.
func (e *env) logged(s string) bool { return strings.Contains(e.logs.String(), s) }

// origin is the protected site: devstack's demo origin behind a recorder
// of the headers of every request that reaches it.
type origin struct {
	demo http.Handler
	mu   sync.Mutex
	seen map[string]http.Header // by the request's marker
}

func (o *origin) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	o.mu.Lock()
	if o.seen == nil {
		o.seen = map[string]http.Header{}
	}
	for _, kv := range strings.Split(r.URL.RawQuery, "&") {
		if strings.HasPrefix(kv, "rules-test=") {
			o.seen[kv] = r.Header.Clone()
		}
	}
	o.mu.Unlock()
	o.demo.ServeHTTP(w, r)
}

// saw returns the headers of the request marked marker, or nil when it
// did not reach the origin.
func (o *origin) saw(marker string) http.Header {
	o.mu.Lock()
	defer o.mu.Unlock()
	return o.seen[marker]
}

// checkBypassed fails the test unless the answer is the origin's and the
// origin got exactly one Waiting-Room-Bypass, naming rule.
func checkBypassed(t *testing.T, what string, a answer, rule string) {
	t.Helper()
	if a.atOrigin == nil || a.status != http.StatusOK {
		t.Errorf("%s: %s, not at the origin; want bypass %q", what, a, rule)
		return
	}
	if got := a.atOrigin.Values(bypassHeader); len(got) != 1 || got[0] != rule {
		t.Errorf("%s: the origin got %s: %q, want %q", what, bypassHeader, got, rule)
	}
}

// checkHeld fails the test unless the answer keeps the request from the
// origin (an arrival redirect, a queue page, a closed page).
func checkHeld(t *testing.T, what string, a answer) {
	t.Helper()
	if a.atOrigin != nil {
		t.Errorf("%s: reached the origin (%s: %q), want it held by the room", what, bypassHeader, a.atOrigin.Values(bypassHeader))
	}
}
