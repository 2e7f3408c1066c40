// Package e2e runs the artifact users deploy, bin/main.wasm (or $WASM), in
// the local Compute host, and drives it over real HTTP with a real Redis
// behind the Upstash stand-in and a real origin.
package e2e

import (
	"bytes"
	"context"
	"crypto/sha256"
	"encoding/base64"
	"fmt"
	"io"
	"net/http"
	"net/url"
	"path/filepath"
	"regexp"
	"sort"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/edgequeue/waitingroom/queue"
	"github.com/edgequeue/waitingroom/tools/devstack"
	"github.com/edgequeue/waitingroom/tools/fastlyhost"
	"github.com/edgequeue/waitingroom/tools/upstashdev"
)

const (
	adminPassword = "dev-admin-password"
	room          = `{"paths":["/"],"bypass_paths":["/static/"],"new_users_per_minute":0.01,"burst":1,"refresh":5,"queue_timeout":300}`
	// storeTimeout is short in the fault test, to see the busy page come
	// quickly; loadTimeout keeps 32 concurrent instances on 2 cores from
	// timing out on a healthy store.
	storeTimeout = 400 * time.Millisecond
	loadTimeout  = 5 * time.Second
)

func wasmPath() string { return devstack.ServiceWasm(filepath.Join("..", "..", "..")) }

type env struct {
	t     testing.TB
	stack *devstack.Stack
	logs  *devstack.LogBuffer
	keys  *queue.KeySet
}

func start(t testing.TB, timeout time.Duration) *env {
	return startRoom(t, timeout, room)
}

// startRoom starts the stack with room as the shop room's definition.
func startRoom(t testing.TB, timeout time.Duration, room string) *env {
	t.Helper()
	return startStack(t, timeout, room, nil)
}

// startStack starts the stack with room as the shop room's definition and
// the store timeout, then lets adjust (if not nil) change the manifest
// further. The env's keys are nil when adjust broke the key set.
func startStack(t testing.TB, timeout time.Duration, room string, adjust func(*fastlyhost.Manifest), pops ...string) *env {
	t.Helper()
	return startStackWith(t, timeout, room, adjust, func(o *devstack.Options) { o.POPs = pops })
}

// startStackWith is startStack with set changing the stack's options
// (the wasm it runs, the POPs...) before it starts.
func startStackWith(t testing.TB, timeout time.Duration, room string, adjust func(*fastlyhost.Manifest), set func(*devstack.Options)) *env {
	t.Helper()
	logs := &devstack.LogBuffer{}
	o := devstack.ForTest(logs, 20*time.Second)
	set(&o)
	o.RecordOrigin = true
	o.Adjust = func(m *fastlyhost.Manifest) {
		devstack.SetRooms(m, timeout, [2]string{"shop", room})
		if adjust != nil {
			adjust(m)
		}
	}
	st, err := devstack.Start(context.Background(), o)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(st.Close)
	keys, err := st.SigningKeys()
	if err != nil && adjust == nil {
		t.Fatal(err)
	}
	return &env{t: t, stack: st, logs: logs, keys: keys}
}

var client = &http.Client{
	Transport:     &http.Transport{MaxIdleConnsPerHost: 64},
	CheckRedirect: func(*http.Request, []*http.Request) error { return http.ErrUseLastResponse },
	Timeout:       60 * time.Second,
}

// visitor is one browser: it keeps the room's cookie.
type visitor struct {
	e      *env
	cookie string
	pop    string // the URL of the POP the visitor reaches; empty: the first
}

type answer struct {
	status int
	header http.Header
	body   string
}

// do sends one request as a browser would: when the room answers a
// visitor without a pass with its arrival redirect (307 to the same URL,
// marked, with the arrival cookie), it follows it once with the cookie, to
// the URL without the mark (the marked URL's own answers are
// cookies_test.go's). do1 sends exactly one.
func (v *visitor) do(method, path string, body io.Reader, header ...string) answer {
	v.e.t.Helper()
	var replay []byte
	if body != nil {
		b, err := io.ReadAll(body)
		if err != nil {
			v.e.t.Fatal(err)
		}
		replay = b
	}
	reader := func() io.Reader {
		if replay == nil {
			return nil
		}
		return bytes.NewReader(replay)
	}
	a := v.do1(method, path, reader(), header...)
	if a.status == http.StatusTemporaryRedirect && devstack.Unmarked(a.header.Get("Location")) == path {
		a = v.do1(method, path, reader(), header...)
	}
	return a
}

func (v *visitor) do1(method, path string, body io.Reader, header ...string) answer {
	v.e.t.Helper()
	base := v.e.stack.HostURL
	if v.pop != "" {
		base = v.pop
	}
	req, err := http.NewRequest(method, base+path, body)
	if err != nil {
		v.e.t.Fatal(err)
	}
	for i := 0; i+1 < len(header); i += 2 {
		req.Header.Set(header[i], header[i+1])
	}
	if v.cookie != "" {
		req.Header.Add("Cookie", "wr_shop="+v.cookie)
	}
	resp, err := client.Do(req)
	if err != nil {
		v.e.t.Fatal(err)
	}
	defer resp.Body.Close()
	b, err := io.ReadAll(resp.Body)
	if err != nil {
		v.e.t.Fatal(err)
	}
	for _, c := range resp.Cookies() {
		if c.Name == "wr_shop" {
			v.cookie = c.Value
		}
	}
	return answer{resp.StatusCode, resp.Header, string(b)}
}

func (v *visitor) get(path string, header ...string) answer {
	return v.do(http.MethodGet, path, nil, header...)
}

type place = devstack.Place

// poll asks for the visitor's place as JSON; a zero place means admitted.
func (v *visitor) poll() place {
	v.e.t.Helper()
	a := v.get("/", "Accept", "application/json")
	p, err := devstack.ReadPlace(a.body)
	if err != nil {
		v.e.t.Fatalf("poll: %d %q: %v", a.status, a.body, err)
	}
	return p
}

// tickets are the numbers of the ticket passes the visitors hold.
func (e *env) tickets(visitors []*visitor) []int64 {
	e.t.Helper()
	tickets := make([]int64, len(visitors))
	for i, v := range visitors {
		p, err := e.keys.Verify("shop", v.cookie, time.Now())
		if err != nil || p.Kind != queue.Ticket {
			e.t.Fatalf("visitor %d holds no ticket: %v", i, err)
		}
		tickets[i] = p.Number
	}
	return tickets
}

func (e *env) restCalls() int {
	n := 0
	for _, c := range e.stack.Upstash.Stats().Requests {
		n += c
	}
	e.stack.Upstash.ResetStats()
	return n
}

func (e *env) admin(method, path string, form url.Values, password string) answer {
	e.t.Helper()
	v := &visitor{e: e}
	var body io.Reader
	header := []string{}
	if form != nil {
		body = strings.NewReader(form.Encode())
		header = append(header, "Content-Type", "application/x-www-form-urlencoded")
	}
	if password != "" {
		header = append(header, "Authorization", "Basic "+base64.StdEncoding.EncodeToString([]byte("op:"+password)))
	}
	return v.do(method, "/_wr/admin"+path, body, header...)
}

var csrfField = regexp.MustCompile(`name="csrf" value="([^"]+)"`)

func (e *env) admit(n int) {
	e.t.Helper()
	page := e.admin(http.MethodGet, "", nil, adminPassword)
	m := csrfField.FindStringSubmatch(page.body)
	if m == nil {
		e.t.Fatalf("no CSRF token on the admin panel: %d %s", page.status, page.body)
	}
	a := e.admin(http.MethodPost, "/admit", url.Values{"room": {"shop"}, "n": {fmt.Sprint(n)}, "csrf": {m[1]}}, adminPassword)
	if a.status != http.StatusSeeOther {
		e.t.Fatalf("admit %d: %d %s", n, a.status, a.body)
	}
}

func TestVisitorJourney(t *testing.T) {
	e := start(t, loadTimeout)
	first := &visitor{e: e}
	if a := first.get("/"); !strings.Contains(a.body, "You reached the origin") {
		t.Fatalf("the first visitor should take the burst: %d %s", a.status, a.body)
	}
	v := &visitor{e: e}
	a := v.get("/product")
	if a.status != 200 || !strings.Contains(a.body, "You are in line") || !strings.Contains(a.body, `data-refresh="2"`) || a.header.Get("Refresh") != "" {
		t.Fatalf("queue page: %d %v %s", a.status, a.header, a.body)
	}
	if !strings.Contains(a.body, `<dd id="wr-position">1</dd>`) {
		t.Fatalf("queue page does not show place 1: %s", a.body)
	}
	if p := v.poll(); p.Ticket != 2 || p.Ahead != 0 {
		t.Fatalf("poll: %+v", p)
	}
	e.admit(1)
	if a = v.get("/product"); !strings.Contains(a.body, "You reached the origin") {
		t.Fatalf("after admit 1: %d %s", a.status, a.body)
	}
	e.restCalls()
	for i := 0; i < 20; i++ {
		if a = v.get(fmt.Sprintf("/page/%d", i)); !strings.Contains(a.body, "You reached the origin") {
			t.Fatalf("session request %d: %s", i, a.body)
		}
	}
	if n := e.restCalls(); n != 0 {
		t.Fatalf("an admitted visitor's 20 requests made %d store calls, want 0", n)
	}
}

func TestThousandVisitorsInTicketOrder(t *testing.T) {
	// The longest claim window: on a loaded machine a round of 1,000
	// polls outlasts the default 30 s, and a called visitor who polls
	// after the window rightly loses the place (rejoining at the back);
	// this test is about order, not about the window.
	// Every visitor here comes from 127.0.0.1: the per-client join limit
	// is off, or it would refuse the 31st.
	e := startRoom(t, loadTimeout, strings.Replace(room, `"queue_timeout":300`, `"queue_timeout":300,"claim_window":3600,"joins_per_ip_per_minute":0`, 1))
	(&visitor{e: e}).get("/") // takes the burst
	const n = 1000
	visitors := make([]*visitor, n)
	var wg sync.WaitGroup
	sem := make(chan struct{}, 32)
	for i := range visitors {
		visitors[i] = &visitor{e: e}
		wg.Add(1)
		go func(v *visitor) {
			defer wg.Done()
			sem <- struct{}{}
			defer func() { <-sem }()
			// A join whose store call outlived loadTimeout (a loaded
			// machine) answers busy, and the visitor retries, as the page
			// does; the ticket is the arrival's either way.
			a := v.get("/", "Accept", "application/json")
			for tries := 1; a.status == http.StatusServiceUnavailable && tries < 20; tries++ {
				a = v.get("/", "Accept", "application/json")
			}
			if a.status != 200 {
				t.Errorf("join: %d %s", a.status, a.body)
			}
		}(visitors[i])
	}
	wg.Wait()
	tickets := e.tickets(visitors)
	sorted := append([]int64(nil), tickets...)
	sort.Slice(sorted, func(a, b int) bool { return sorted[a] < sorted[b] })
	for i, tk := range sorted {
		if tk != int64(i+2) {
			t.Fatalf("tickets are not 2..%d, distinct and gapless: sorted[%d] = %d", n+1, i, tk)
		}
	}
	round := make([]int, n)
	seen := make([][]string, n) // each visitor's polls, to explain an inversion
	var seenMu sync.Mutex
	for r := 1; r <= n; r++ {
		e.admit(200)
		left := 0
		for i, v := range visitors {
			if round[i] != 0 {
				continue
			}
			wg.Add(1)
			go func(i int, v *visitor) {
				defer wg.Done()
				sem <- struct{}{}
				defer func() { <-sem }()
				// A poll whose store call outlived loadTimeout (a loaded
				// machine) answers busy, and the visitor retries, as
				// the page does: order is the point here, not latency.
				p := v.poll()
				for tries := 1; p.Status == "busy" && tries < 20; tries++ {
					p = v.poll()
				}
				seenMu.Lock()
				seen[i] = append(seen[i], fmt.Sprintf("round %d: %s, ticket %d, %d ahead", r, p.Status, p.Ticket, p.Ahead))
				seenMu.Unlock()
				if p.Status == "admitted" {
					round[i] = r
				}
			}(i, v)
			left++
		}
		wg.Wait()
		if left == 0 {
			break
		}
	}
	byTicket := map[int64]int{}
	for i, tk := range tickets {
		byTicket[tk] = round[i]
	}
	for tk := int64(3); tk <= n+1; tk++ {
		if byTicket[tk] < byTicket[tk-1] || byTicket[tk] == 0 {
			for i, tt := range tickets {
				if tt == tk-1 || tt == tk {
					t.Logf("ticket %d saw %v", tt, seen[i])
				}
			}
			t.Fatalf("ticket %d admitted in round %d, ticket %d in round %d", tk, byTicket[tk], tk-1, byTicket[tk-1])
		}
	}
	if byTicket[n+1] != n/200 {
		t.Fatalf("the last ticket went in in round %d, want %d (200 per round)", byTicket[n+1], n/200)
	}
}

func TestRefusedCookiesGoToTheBack(t *testing.T) {
	e := start(t, loadTimeout)
	(&visitor{e: e}).get("/")
	honest := &visitor{e: e}
	honest.get("/") // ticket 2
	now := time.Now()
	expired, _ := e.keys.Sign(queue.Pass{Kind: queue.Ticket, Room: "shop", Number: 1, IssuedAt: now.Add(-time.Hour), Expires: now.Add(-time.Minute)})
	foreign, _ := e.keys.Sign(queue.Pass{Kind: queue.Session, Room: "other", SessionID: "x", IssuedAt: now, Expires: now.Add(time.Hour)})
	tampered := []byte(honest.cookie)
	tampered[len(tampered)-5] ^= 1
	next := int64(3)
	for name, cookie := range map[string]string{"tampered": string(tampered), "expired": expired, "foreign room": foreign, "garbage": "%%%;;"} {
		v := &visitor{e: e, cookie: cookie}
		p := v.poll()
		if p.Ticket < next || p.Status != "waiting" {
			t.Fatalf("%s cookie: %+v, want a fresh ticket at the back", name, p)
		}
		next = p.Ticket + 1
	}
	if p := honest.poll(); p.Ticket != 2 {
		t.Fatalf("the honest visitor lost their place: %+v", p)
	}
}

func TestAdminRefusals(t *testing.T) {
	e := start(t, loadTimeout)
	if a := e.admin(http.MethodGet, "", nil, "wrong"); a.status != http.StatusUnauthorized {
		t.Fatalf("wrong password: %d", a.status)
	}
	if a := e.admin(http.MethodPost, "/admit", url.Values{"room": {"shop"}, "n": {"5"}}, adminPassword); a.status != http.StatusForbidden {
		t.Fatalf("no CSRF token: %d %s", a.status, a.body)
	}
}

func TestUpstashFaultsHoldVisitorsAndLoseNothing(t *testing.T) {
	e := start(t, storeTimeout)
	(&visitor{e: e}).get("/")
	v := &visitor{e: e}
	if p := v.poll(); p.Ticket != 2 {
		t.Fatalf("setup: %+v", p)
	}
	for _, f := range []upstashdev.Faults{{Drop: true}, {Status: 500}, {LatencyMS: 5000}} {
		e.stack.Upstash.SetFaults(f)
		began := time.Now()
		a := v.get("/")
		took := time.Since(began)
		if a.status != http.StatusServiceUnavailable || a.header.Get("Retry-After") == "" || !strings.Contains(a.body, "We are busy, retrying") {
			t.Fatalf("fault %+v: %d %v %s", f, a.status, a.header, a.body)
		}
		// Within the store timeout plus the instance's own start-up.
		if took > storeTimeout+3*time.Second {
			t.Fatalf("fault %+v: the busy page took %v with a %v store timeout", f, took, storeTimeout)
		}
	}
	e.stack.Upstash.SetFaults(upstashdev.Faults{})
	// The POP's failed snapshot fill is still cached, but a poll that
	// began after it asks the store itself.
	if p := v.poll(); p.Ticket != 2 {
		t.Fatalf("after the outage: %+v, want ticket 2 still", p)
	}
	if p := (&visitor{e: e}).poll(); p.Ticket != 3 {
		t.Fatalf("a newcomer after the outage got %+v, want ticket 3", p)
	}
	if !strings.Contains(e.logs.String(), "busy (poll failed)") {
		t.Fatal("no log line says why visitors were held")
	}
}

func TestBodiesStatusAndHeadersPassThrough(t *testing.T) {
	e := start(t, loadTimeout)
	v := &visitor{e: e}
	v.get("/")                                                   // admitted by the burst
	big := bytes.Repeat([]byte("edge waiting room "), 1_000_000) // 18 MB
	sum := sha256.Sum256(big)
	a := v.do(http.MethodPost, "/upload", bytes.NewReader(big))
	if want := fmt.Sprintf("%d %x", len(big), sum); a.body != want {
		t.Fatalf("upload: %q, want %q", a.body, want)
	}
	a = v.get("/download?mb=64")
	want := make([]byte, 1<<20)
	for i := range want {
		want[i] = byte(i)
	}
	wantSum := sha256.Sum256(bytes.Repeat(want, 64))
	if got := sha256.Sum256([]byte(a.body)); got != wantSum {
		t.Fatalf("download: %d bytes, checksum differs", len(a.body))
	}
	for _, code := range []int{201, 404, 418, 503} {
		a = v.get(fmt.Sprintf("/status/%d", code))
		if a.status != code || a.header.Get("X-Demo") != "kept" || a.header.Get("Cache-Control") != "max-age=30" ||
			!strings.Contains(strings.Join(a.header.Values("Set-Cookie"), ";"), "demo=1") {
			t.Fatalf("status %d: got %d %v", code, a.status, a.header)
		}
	}
}
