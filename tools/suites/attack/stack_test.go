package attack

import (
	"bufio"
	"bytes"
	"context"
	"encoding/base64"
	"encoding/json"
	"fmt"
	"io"
	"net"
	"net/http"
	"net/http/httptest"
	"net/url"
	"regexp"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/edgequeue/waitingroom/queue"
	"github.com/edgequeue/waitingroom/tools/devstack"
	"github.com/edgequeue/waitingroom/tools/fastlyhost"
)

// The stack's fixed parts.
const (
	adminPassword = "dev-admin-password" // fastly.toml's [local_server] value
	adminPath     = "/_wr/admin"
	leavePath     = "/_wr/leave"
	// storeTimeout keeps a loaded machine's store calls from answering busy.
	storeTimeout = 5 * time.Second
	// reached is what the demo origin's pages say.
	reached = devstack.OriginReached
	// inLine is what the queue page says.
	inLine = "You are in line"
)

// room is one room of a stack: its name and its definition.
type room struct{ name, def string }

// shop is a stack of the one room "shop".
func shop(def string) []room { return []room{{"shop", def}} }

// env is the real stack around the wasm under test ($WASM, else
// bin/main.wasm), with the demo origin behind a recorder.
type env struct {
	t      testing.TB
	stack  *devstack.Stack
	origin *origin
	logs   *devstack.LogBuffer
	keys   *queue.KeySet
	host   string // host:port of the local host
	pool   *clients
}

// clients holds one HTTP client per client address.
type clients struct {
	mu sync.Mutex
	by map[string]*http.Client
}

// on returns the stack as seen by t, a subtest of the one that started it.
func (e *env) on(t testing.TB) *env {
	c := *e
	c.t = t
	return &c
}

// start runs the stack with rooms (matched in the order given) and lets
// adjust (if not nil) change the manifest further.
func start(t testing.TB, rooms []room, adjust func(*fastlyhost.Manifest)) *env {
	t.Helper()
	o := newOrigin()
	srv := httptest.NewUnstartedServer(o)
	srv.Config.ConnState = o.connState
	srv.Start()
	t.Cleanup(srv.Close)
	originURL, err := url.Parse(srv.URL + "/")
	if err != nil {
		t.Fatal(err)
	}
	logs := &devstack.LogBuffer{}
	o2 := devstack.ForTest(logs, 30*time.Second)
	o2.Adjust = func(m *fastlyhost.Manifest) {
		m.Backends["origin"] = fastlyhost.Backend{URL: originURL}
		defs := make([][2]string, 0, len(rooms))
		for _, r := range rooms {
			defs = append(defs, [2]string{r.name, r.def})
		}
		devstack.SetRooms(m, storeTimeout, defs...)
		if adjust != nil {
			adjust(m)
		}
	}
	st, err := devstack.Start(context.Background(), o2)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(st.Close)
	keys, err := st.SigningKeys()
	if err != nil {
		t.Fatal(err)
	}
	return &env{t: t, stack: st, origin: o, logs: logs, keys: keys,
		host: strings.TrimPrefix(st.HostURL, "http://"), pool: &clients{by: map[string]*http.Client{}}}
}

// client returns the HTTP client that connects from address ip ("" is
// 127.0.0.1): the local host reports the TCP peer as the client's address.
func (e *env) client(ip string) *http.Client {
	e.pool.mu.Lock()
	defer e.pool.mu.Unlock()
	if c, ok := e.pool.by[ip]; ok {
		return c
	}
	c := &http.Client{
		Transport:     &http.Transport{DialContext: dialFrom(ip), MaxIdleConnsPerHost: 16},
		CheckRedirect: func(*http.Request, []*http.Request) error { return http.ErrUseLastResponse },
		Timeout:       90 * time.Second,
	}
	e.pool.by[ip] = c
	return c
}

func dialFrom(ip string) func(ctx context.Context, network, addr string) (net.Conn, error) {
	d := &net.Dialer{Timeout: 30 * time.Second}
	if ip != "" {
		d.LocalAddr = &net.TCPAddr{IP: net.ParseIP(ip)}
	}
	return d.DialContext
}

// upstashCalls returns the REST requests the Upstash stand-in served since
// the last call, and starts counting again.
func (e *env) upstashCalls() int {
	n := 0
	for _, c := range e.stack.Upstash.Stats().Requests {
		n += c
	}
	e.stack.Upstash.ResetStats()
	return n
}

// answer is a response, read whole.
type answer struct {
	status int
	header http.Header
	body   string
}

func (a answer) String() string {
	body := a.body
	if len(body) > 300 {
		body = body[:300] + "…"
	}
	return fmt.Sprintf("%d %q", a.status, body)
}

// atOrigin reports whether the answer is a page of the origin's.
func (a answer) atOrigin() bool { return strings.Contains(a.body, reached) }

// queued reports whether the answer sends the visitor to the line: a
// queue page, or an arrival redirect that sets the room's cookie.
func (a answer) queued() bool {
	if a.status == http.StatusTemporaryRedirect {
		for _, c := range readSetCookies(a.header) {
			if strings.HasPrefix(c.Name, "wr_") && c.Value != "" {
				return true
			}
		}
	}
	return strings.Contains(a.body, inLine)
}

func readSetCookies(h http.Header) []*http.Cookie {
	return (&http.Response{Header: h}).Cookies()
}

// visitor is one browser: where it connects from, what it calls itself,
// and the rooms' cookies it keeps.
type visitor struct {
	e       *env
	ip      string // client address; "" is 127.0.0.1
	ua      string // User-Agent; "" is a browser's
	host    string // Host header; "" is the stack's
	cookies map[string]string
}

const browserUA = "Mozilla/5.0 (X11; Linux x86_64) attack-suite"

func (e *env) visitor() *visitor { return &visitor{e: e} }

// copyTo gives a copy of v's cookies to a browser at ip calling itself ua.
func (v *visitor) copyTo(ip, ua string) *visitor {
	c := &visitor{e: v.e, ip: ip, ua: ua, host: v.host, cookies: map[string]string{}}
	for k, val := range v.cookies {
		c.cookies[k] = val
	}
	return c
}

// do sends one request and keeps the cookies the answer sets; it follows
// no redirect.
func (v *visitor) do(method, path string, body io.Reader, header ...string) answer {
	v.e.t.Helper()
	a, err := v.send(method, path, body, header...)
	if err != nil {
		v.e.t.Fatal(err)
	}
	return a
}

// send is do for goroutines other than the test's: it returns the error.
func (v *visitor) send(method, path string, body io.Reader, header ...string) (answer, error) {
	req, err := http.NewRequest(method, v.e.stack.HostURL+path, body)
	if err != nil {
		return answer{}, err
	}
	if v.host != "" {
		req.Host = v.host
	}
	req.Header.Set("User-Agent", browserUA)
	if v.ua != "" {
		req.Header.Set("User-Agent", v.ua)
	}
	for i := 0; i+1 < len(header); i += 2 {
		req.Header.Set(header[i], header[i+1])
	}
	for name, value := range v.cookies {
		req.AddCookie(&http.Cookie{Name: name, Value: value})
	}
	resp, err := v.e.client(v.ip).Do(req)
	if err != nil {
		return answer{}, fmt.Errorf("%s %s: %w", method, path, err)
	}
	a, err := readAnswer(resp)
	if err != nil {
		return answer{}, fmt.Errorf("%s %s: %w", method, path, err)
	}
	v.keep(a.header)
	return a, nil
}

func (v *visitor) keep(h http.Header) {
	for _, c := range readSetCookies(h) {
		if !strings.HasPrefix(c.Name, "wr_") {
			continue
		}
		if v.cookies == nil {
			v.cookies = map[string]string{}
		}
		if c.Value == "" || c.MaxAge < 0 {
			delete(v.cookies, c.Name)
		} else {
			v.cookies[c.Name] = c.Value
		}
	}
}

func readAnswer(resp *http.Response) (answer, error) {
	defer resp.Body.Close()
	b, err := io.ReadAll(resp.Body)
	return answer{resp.StatusCode, resp.Header, string(b)}, err
}

// get is a browser's GET: it follows a redirect back to the same URL (the
// room's arrival step) with the cookie it set, as a browser does.
func (v *visitor) get(path string, header ...string) answer {
	v.e.t.Helper()
	a, err := v.fetch(path, header...)
	if err != nil {
		v.e.t.Fatal(err)
	}
	return a
}

// fetch is get for goroutines other than the test's.
func (v *visitor) fetch(path string, header ...string) (answer, error) {
	a, err := v.send(http.MethodGet, path, nil, header...)
	for hops := 0; err == nil && hops < 2 && sameURLRedirect(a, path); hops++ {
		a, err = v.send(http.MethodGet, path, nil, header...)
	}
	return a, err
}

// sameURLRedirect reports whether a sends the browser back to path.
func sameURLRedirect(a answer, path string) bool {
	if a.status != http.StatusTemporaryRedirect && a.status != http.StatusFound && a.status != http.StatusSeeOther {
		return false
	}
	return devstack.Unmarked(a.header.Get("Location")) == path
}

// place is the queue's answer to a JSON poll.
type place = devstack.Place

// poll asks for the visitor's place as JSON; "admitted" when it reached the
// origin instead.
func (v *visitor) poll() place {
	v.e.t.Helper()
	a := v.get("/", "Accept", "application/json")
	p, err := devstack.ReadPlace(a.body)
	if err != nil {
		v.e.t.Fatalf("poll: %s: %v", a, err)
	}
	return p
}

// enter makes v take a place at the origin, or fails the test.
func (v *visitor) enter(path string) {
	v.e.t.Helper()
	if a := v.get(path); !a.atOrigin() {
		v.e.t.Fatalf("setup: the visitor did not get in at %s: %s", path, a)
	}
}

// leave sends the departure beacon as the room's own page does.
func (v *visitor) leave(header ...string) answer {
	return v.do(http.MethodPost, leavePath, nil, header...)
}

// claimsOf reads the claims of a pass without checking its signature.
func claimsOf(t testing.TB, token string) map[string]any {
	t.Helper()
	parts := strings.Split(token, ".")
	if len(parts) != 3 {
		t.Fatalf("the room's cookie %q is not a signed token", token)
	}
	raw, err := base64.RawURLEncoding.DecodeString(parts[1])
	if err != nil {
		t.Fatalf("the room's cookie %q: %v", token, err)
	}
	claims := map[string]any{}
	if err := json.Unmarshal(raw, &claims); err != nil {
		t.Fatalf("the room's cookie %q: %v", token, err)
	}
	return claims
}

// raw sends one request exactly as given, on its own connection from ip,
// so that the target reaches the host byte for byte (Go would clean it).
func (e *env) raw(ip, method, target, host string, header ...string) answer {
	e.t.Helper()
	conn, err := dialFrom(ip)(context.Background(), "tcp", e.host)
	if err != nil {
		e.t.Fatal(err)
	}
	defer conn.Close()
	conn.SetDeadline(time.Now().Add(90 * time.Second))
	if host == "" {
		host = e.host
	}
	var b bytes.Buffer
	fmt.Fprintf(&b, "%s %s HTTP/1.1\r\nHost: %s\r\nUser-Agent: %s\r\n", method, target, host, browserUA)
	for i := 0; i+1 < len(header); i += 2 {
		fmt.Fprintf(&b, "%s: %s\r\n", header[i], header[i+1])
	}
	b.WriteString("Connection: close\r\n\r\n")
	if _, err := conn.Write(b.Bytes()); err != nil {
		e.t.Fatal(err)
	}
	resp, err := http.ReadResponse(bufio.NewReader(conn), nil)
	if err != nil {
		e.t.Fatalf("%s %q: %v", method, target, err)
	}
	a, err := readAnswer(resp)
	if err != nil {
		e.t.Fatalf("%s %q: %v", method, target, err)
	}
	return a
}

// adminAs requests the admin panel from ip with password.
func (e *env) adminAs(ip, method, path string, form url.Values, password string) answer {
	e.t.Helper()
	var body io.Reader
	header := []string{"Authorization", "Basic " + base64.StdEncoding.EncodeToString([]byte("op:"+password))}
	if form != nil {
		body = strings.NewReader(form.Encode())
		header = append(header, "Content-Type", "application/x-www-form-urlencoded")
	}
	return (&visitor{e: e, ip: ip}).do(method, adminPath+path, body, header...)
}

var csrfField = regexp.MustCompile(`name="csrf" value="([^"]+)"`)

// control runs an admin action ("admit" with n, "pause", …) on a room.
func (e *env) control(roomName, action string, n int) {
	e.t.Helper()
	page := e.adminAs("", http.MethodGet, "", nil, adminPassword)
	m := csrfField.FindStringSubmatch(page.body)
	if m == nil {
		e.t.Fatalf("no CSRF token on the admin panel: %s", page)
	}
	form := url.Values{"room": {roomName}, "csrf": {m[1]}, "n": {strconv.Itoa(n)}}
	if a := e.adminAs("", http.MethodPost, "/"+action, form, adminPassword); a.status != http.StatusSeeOther {
		e.t.Fatalf("admin %s: %s", action, a)
	}
}

// line is a room's row on the admin panel.
type line struct{ waiting, admitted, issued, active, called int }

var roomRow = regexp.MustCompile(`<td>([a-z0-9_-]+)</td><td>\w+</td><td>(\d+)</td><td>(\d+)</td><td>(\d+)</td><td>(\d+)</td><td>(\d+)</td>`)

// line reads a room's counts from the admin panel.
func (e *env) line(roomName string) line {
	e.t.Helper()
	page := e.adminAs("", http.MethodGet, "", nil, adminPassword)
	for _, m := range roomRow.FindAllStringSubmatch(page.body, -1) {
		if m[1] != roomName {
			continue
		}
		var n [5]int
		for i := range n {
			n[i], _ = strconv.Atoi(m[i+2])
		}
		return line{waiting: n[0], admitted: n[1], issued: n[2], active: n[3], called: n[4]}
	}
	e.t.Fatalf("no row for room %s on the admin panel: %s", roomName, page)
	return line{}
}

// origin is the protected site: devstack's demo origin behind a recorder
// that sees every request that reaches it, as it arrived. A path holding
// "/unreachable" gets its connection closed without an answer, as a site
// that is down does.
type origin struct {
	demo http.Handler

	mu       sync.Mutex
	seen     []seen
	attempts int // requests begun, including ones the server refused to parse
}

// seen is one request the origin received.
type seen struct {
	target string
	header http.Header
}

func newOrigin() *origin { return &origin{demo: devstack.DemoOrigin()} }

func (o *origin) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	o.mu.Lock()
	o.seen = append(o.seen, seen{r.RequestURI, r.Header.Clone()})
	o.mu.Unlock()
	if strings.Contains(r.URL.Path, "/unreachable") {
		if hj, ok := w.(http.Hijacker); ok {
			if c, _, err := hj.Hijack(); err == nil {
				c.Close()
				return
			}
		}
		panic(http.ErrAbortHandler)
	}
	o.demo.ServeHTTP(w, r)
}

// connState counts requests begun: a connection turns active when a
// request's first byte is read, before the server parses it.
func (o *origin) connState(_ net.Conn, s http.ConnState) {
	if s == http.StateActive {
		o.mu.Lock()
		o.attempts++
		o.mu.Unlock()
	}
}

// reached returns how many requests reached the origin so far, counting
// any the origin's server refused before its handler.
func (o *origin) reached() int {
	o.mu.Lock()
	defer o.mu.Unlock()
	return max(o.attempts, len(o.seen))
}

// find returns the requests whose target holds s.
func (o *origin) find(s string) []seen {
	o.mu.Lock()
	defer o.mu.Unlock()
	var out []seen
	for _, r := range o.seen {
		if strings.Contains(r.target, s) {
			out = append(out, r)
		}
	}
	return out
}

// clientIP returns the nth address of the loopback network 127.x.y.0/24,
// for a test that needs clients the room tells apart.
func clientIP(x, y, n int) string { return fmt.Sprintf("127.%d.%d.%d", x, y, n) }

// parallel runs f(i) for i in [0, n), at most width at a time.
func parallel(n, width int, f func(i int)) {
	var wg sync.WaitGroup
	sem := make(chan struct{}, width)
	for i := 0; i < n; i++ {
		wg.Add(1)
		sem <- struct{}{}
		go func(i int) {
			defer wg.Done()
			defer func() { <-sem }()
			f(i)
		}(i)
	}
	wg.Wait()
}
