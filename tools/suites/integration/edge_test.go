package integration

import (
	"bytes"
	"crypto/sha256"
	"encoding/base64"
	"encoding/hex"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"net/url"
	"regexp"
	"strings"
	"testing"
	"time"

	"github.com/edgequeue/waitingroom/edge"
	"github.com/edgequeue/waitingroom/queue"
	"github.com/edgequeue/waitingroom/store"
	"github.com/edgequeue/waitingroom/tools/devstack"
	"github.com/edgequeue/waitingroom/tools/native"
	"github.com/edgequeue/waitingroom/tools/redistest"
	"github.com/edgequeue/waitingroom/tools/upstashdev"
	"github.com/fastly/compute-sdk-go/fsthttp"
	"github.com/fastly/compute-sdk-go/fsttest"
)

var (
	testKey     = base64.StdEncoding.EncodeToString(bytes.Repeat([]byte{7}, 32))
	otherKey    = base64.StdEncoding.EncodeToString(bytes.Repeat([]byte{9}, 32))
	testKeySet  = "k1:" + testKey
	adminPass   = "correct horse battery staple"
	shopRoom    = `{"hosts":["shop.test"],"paths":["/"],"bypass_paths":["/static/"],"new_users_per_minute":60,"burst":1,"refresh":10}`
	eventRoom   = `{"paths":["/event/"],"new_users_per_minute":1,"burst":1,"cookie_name":"ev"}`
	cookieShop  = "wr_shop"
	passPattern = regexp.MustCompile(`^wr_shop=([^;]+); Path=/; Max-Age=(\d+); HttpOnly; Secure; SameSite=Lax$`)
)

// env is a waiting room service wired to a real Redis behind the Upstash
// stand-in and to a real HTTP origin.
type env struct {
	t         *testing.T
	upstash   *upstashdev.Server
	config    native.Map
	templates native.Map
	secrets   native.Secrets
	origin    *url.URL
	now       time.Time
	logs      []string
	// databases are the REST URLs of the Upstash databases beyond the
	// first (upstash_databases), reached as the backends upstash_1...
	databases []string
}

func newEnv(t *testing.T) *env {
	t.Helper()
	srv, upstashURL := redistest.Upstash(t)
	origin := httptest.NewServer(http.HandlerFunc(originHandler))
	t.Cleanup(origin.Close)
	u, _ := url.Parse(origin.URL)
	return &env{
		t: t, upstash: srv, origin: u, now: t0,
		config: native.Map{
			edge.KeyRooms: "shop, event", edge.KeyUpstashURL: upstashURL,
			edge.KeyRoomPrefix + "shop": shopRoom, edge.KeyRoomPrefix + "event": eventRoom,
		},
		templates: native.Map{},
		secrets: native.Secrets{
			edge.SecretSigningKeys: testKeySet, edge.SecretUpstashToken: redistest.Token, edge.SecretAdminPassword: adminPass,
		},
	}
}

// originHandler is the protected site: it says what it saw, streams large
// answers, hashes what it was sent, and sends the edge the commands asked
// of it (/command?c=…).
func originHandler(w http.ResponseWriter, r *http.Request) {
	switch {
	case r.URL.Path == "/download":
		w.Header().Set("Content-Type", "application/octet-stream")
		chunk := bytes.Repeat([]byte("0123456789abcdef"), 4096)
		for i := 0; i < 128; i++ { // 8 MiB
			w.Write(chunk)
		}
	case r.URL.Path == "/upload":
		h := sha256.New()
		n, _ := io.Copy(h, r.Body)
		fmt.Fprintf(w, "%d %x", n, h.Sum(nil))
	case r.URL.Path == "/command":
		// The origin's commands to the edge, as its answer's header.
		w.Header().Set(queue.CommandHeader, r.URL.Query().Get("c"))
		io.WriteString(w, "commanded")
	case r.URL.Path == "/teapot":
		w.Header().Add("Set-Cookie", "a=1; Path=/")
		w.Header().Add("Set-Cookie", "b=2; Path=/")
		w.Header().Set("Cache-Control", "max-age=60")
		w.Header().Set("X-Origin", "yes")
		w.WriteHeader(http.StatusTeapot)
		io.WriteString(w, "short and stout")
	default:
		fmt.Fprintf(w, "origin saw %s %s%s", r.Method, r.Host, r.URL.RequestURI())
	}
}

type reqOpt func(*fsthttp.Request)

func withCookie(v string) reqOpt { return func(r *fsthttp.Request) { r.Header.Add("Cookie", v) } }

// withSetCookie sends cookie v (name=value) as a browser does after a
// Set-Cookie: in place of any value of that name the request carried.
func withSetCookie(v string) reqOpt {
	name := v[:strings.IndexByte(v, '=')+1]
	return func(r *fsthttp.Request) {
		var kept []string
		for _, h := range r.Header.Values("Cookie") {
			for _, c := range strings.Split(h, ";") {
				if c = strings.TrimSpace(c); c != "" && !strings.HasPrefix(c, name) {
					kept = append(kept, c)
				}
			}
		}
		r.Header.Set("Cookie", strings.Join(append(kept, v), "; "))
	}
}
func withHeader(k, v string) reqOpt {
	return func(r *fsthttp.Request) { r.Header.Set(k, v) }
}

// do serves one request as a browser sees it: a visitor without a pass is
// sent back at once with an arrival cookie (307 to the same URL), which a
// browser follows with the cookie; do follows it once and returns the
// second answer. do1 serves exactly one request.
func (e *env) do(method, target string, body io.Reader, opts ...reqOpt) *fsttest.ResponseRecorder {
	e.t.Helper()
	var sent []byte
	if body != nil {
		b, err := io.ReadAll(body)
		if err != nil {
			e.t.Fatal(err)
		}
		sent = b
	}
	w := e.do1(method, target, bytes.NewReader(sent), opts...)
	cookie := w.HeaderMap.Get("Set-Cookie")
	if u, err := url.Parse(target); err == nil && w.Code == http.StatusTemporaryRedirect && cookie != "" && devstack.Unmarked(w.HeaderMap.Get("Location")) == u.RequestURI() {
		w = e.do1(method, target, bytes.NewReader(sent), append(opts, withSetCookie(strings.SplitN(cookie, ";", 2)[0]))...)
	}
	return w
}

func (e *env) do1(method, target string, body io.Reader, opts ...reqOpt) *fsttest.ResponseRecorder {
	e.t.Helper()
	r, err := fsthttp.NewRequest(method, target, body)
	if err != nil {
		e.t.Fatal(err)
	}
	for _, o := range opts {
		o(r)
	}
	w := fsttest.NewRecorder()
	svc := &edge.Handler{
		Config: e.config, Templates: e.templates, Secrets: e.secrets,
		Origin:  native.Origin{Base: e.origin},
		Upstash: native.Upstash{},
		Now:     func() time.Time { return e.now },
		Logf:    func(f string, a ...any) { e.logs = append(e.logs, fmt.Sprintf(f, a...)) },
	}
	if len(e.databases) > 0 {
		svc.UpstashDatabase = func(j int) store.Transport {
			if j > len(e.databases) {
				return nil
			}
			return backend{e.databases[j-1]}
		}
	}
	svc.ServeHTTP(ctx, w, r)
	return w
}

// idle lets d pass in a room that others keep busy: a store call every few
// seconds, as a room with visitors has. The line's clock runs only while
// calls come (a silence is an outage or an empty room, and costs nobody
// their place), so a test that waits for something to expire must keep
// the room busy.
func (e *env) idle(room string, d time.Duration) {
	e.t.Helper()
	st := &store.Upstash{URL: e.config[edge.KeyUpstashURL], Token: redistest.Token, Transport: native.Upstash{}}
	for end := e.now.Add(d); e.now.Before(end); {
		e.now = e.now.Add(min(4*time.Second, end.Sub(e.now)))
		if _, err := st.Stats(ctx, room, store.Policy{}, e.now); err != nil {
			e.t.Fatal(err)
		}
	}
	e.upstash.ResetStats()
}

func (e *env) get(target string, opts ...reqOpt) *fsttest.ResponseRecorder {
	return e.do(http.MethodGet, target, nil, opts...)
}

// pass returns the room pass a response sets, or "".
func pass(t *testing.T, w *fsttest.ResponseRecorder) string {
	t.Helper()
	for _, c := range w.HeaderMap.Values("Set-Cookie") {
		if m := passPattern.FindStringSubmatch(c); m != nil {
			return m[1]
		}
	}
	return ""
}

// place reads the JSON queue answer.
type place struct {
	Status   string `json:"status"`
	Ticket   int64  `json:"ticket"`
	Position int64  `json:"position"`
	Ahead    int64  `json:"ahead"`
	Serving  int64  `json:"now_serving"`
	Wait     *int64 `json:"estimated_wait_seconds"`
	Paused   bool   `json:"paused"`
}

func decodePlace(t *testing.T, w *fsttest.ResponseRecorder) place {
	t.Helper()
	var p place
	if err := json.Unmarshal(w.Body.Bytes(), &p); err != nil {
		t.Fatalf("queue JSON: %v: %s", err, w.Body)
	}
	return p
}

func (e *env) storeCalls() int {
	n := 0
	for _, v := range e.upstash.Stats().Requests {
		n += v
	}
	e.upstash.ResetStats()
	return n
}

// shop is served over TLS: a protected room redirects plain HTTP to https.
const shop = "https://shop.test"

func TestVisitorJourney(t *testing.T) {
	e := newEnv(t)
	// The first visitor finds a quiet room: the burst lets them straight in.
	w := e.get(shop + "/product/1")
	if w.Code != 200 || !strings.Contains(w.Body.String(), "origin saw GET shop.test/product/1") {
		t.Fatalf("first visitor: %d %s", w.Code, w.Body)
	}
	first := pass(t, w)
	if first == "" {
		t.Fatalf("first visitor got no session pass: %v", w.HeaderMap)
	}
	if cc := w.HeaderMap.Get("Cache-Control"); cc != "private, no-store" {
		t.Fatalf("an admitting answer must not be cached: Cache-Control %q", cc)
	}

	// The second waits, with a place, a wait estimate and a ticket.
	w = e.get(shop+"/product/1", withHeader("Accept", "text/html"))
	if w.Code != 200 || !strings.Contains(w.Body.String(), "You are in line") {
		t.Fatalf("second visitor: %d %s", w.Code, w.Body)
	}
	// Place 1 is at the front, so the page polls fast (queue.FastPoll):
	// its script does, or without scripting its <noscript> refresh; no
	// Refresh header, which would reload it with scripting on too.
	if body := w.Body.String(); !strings.Contains(body, `data-refresh="2"`) || !strings.Contains(body, `<noscript><meta http-equiv="refresh" content="2"></noscript>`) ||
		w.HeaderMap.Get("Refresh") != "" || w.HeaderMap.Get("Cache-Control") != "no-store" {
		t.Fatalf("queue page headers: %v", w.HeaderMap)
	}
	ticket := pass(t, w)
	if ticket == "" {
		t.Fatal("no ticket pass")
	}
	// The room calls 60 a minute: the next visitor waits a second.
	for _, want := range []string{`<dd id="wr-position">1</dd>`, "#2", "less than a minute"} {
		if !strings.Contains(w.Body.String(), want) {
			t.Errorf("queue page lacks %q", want)
		}
	}

	// Polling keeps the place; JSON gives the same facts.
	w = e.get(shop+"/product/1", withCookie(cookieShop+"="+ticket), withHeader("Accept", "application/json"))
	p := decodePlace(t, w)
	if p.Status != "waiting" || p.Ticket != 2 || p.Position != 1 || p.Ahead != 0 || p.Serving != 1 || p.Wait == nil || *p.Wait != 1 {
		t.Fatalf("poll: %+v", p)
	}
	ticket = pass(t, w)

	// A second later the rate has called ticket 2.
	e.now = e.now.Add(time.Second)
	w = e.get(shop+"/product/1", withCookie(cookieShop+"="+ticket))
	if !strings.Contains(w.Body.String(), "origin saw") {
		t.Fatalf("called visitor not forwarded: %d %s", w.Code, w.Body)
	}
	session := pass(t, w)
	if session == "" {
		t.Fatal("called visitor got no session")
	}

	// Sessions need no store call inside their heartbeat (30 s here), and
	// bypass paths and other hosts need none at all.
	e.storeCalls()
	for i := 0; i < 5; i++ {
		e.now = e.now.Add(5 * time.Second)
		if w = e.get(shop+"/cart", withCookie(cookieShop+"="+session)); !strings.Contains(w.Body.String(), "origin saw") {
			t.Fatalf("session request %d not forwarded: %s", i, w.Body)
		}
	}
	e.get(shop + "/static/app.css")
	e.get("http://other.test/")
	if n := e.storeCalls(); n != 0 {
		t.Fatalf("sessions, bypass and unprotected hosts made %d store calls, want 0", n)
	}
}

// callKind is a kind of request and the store calls it may make.
type callKind struct {
	kind string
	run  func() *fsttest.ResponseRecorder
	want int
}

// TestStoreCallsPerRequestKind measures what the closing note reports.
func TestStoreCallsPerRequestKind(t *testing.T) {
	e := newEnv(t)
	e.get(shop + "/") // takes the burst
	e.storeCalls()
	var ticket, session string
	kinds := []callKind{
		{"join (new visitor back with the arrival pass, waits)", func() *fsttest.ResponseRecorder { w := e.get(shop + "/"); ticket = pass(t, w); return w }, 1},
		{"poll (waiting visitor)", func() *fsttest.ResponseRecorder {
			w := e.get(shop+"/", withCookie(cookieShop+"="+ticket))
			ticket = pass(t, w)
			return w
		}, 1},
		{"poll that is called (ticket becomes a session)", func() *fsttest.ResponseRecorder {
			e.now = e.now.Add(time.Second)
			w := e.get(shop+"/", withCookie(cookieShop+"="+ticket))
			session = pass(t, w)
			return w
		}, 1},
		{"admitted (valid session)", func() *fsttest.ResponseRecorder { return e.get(shop+"/", withCookie(cookieShop+"="+session)) }, 0},
		{"admitted, heartbeat due (session renewed)", func() *fsttest.ResponseRecorder {
			e.now = e.now.Add(40 * time.Second)
			w := e.get(shop+"/", withCookie(cookieShop+"="+session))
			if session = pass(t, w); session == "" {
				t.Error("a session past its heartbeat was not renewed")
			}
			return w
		}, 1},
		{"admitted again within the heartbeat", func() *fsttest.ResponseRecorder { return e.get(shop+"/", withCookie(cookieShop+"="+session)) }, 0},
		{"back after the session lapsed, pass still valid (a newcomer: arrival pass)", func() *fsttest.ResponseRecorder {
			e.idle("shop", 100*time.Second)
			w := e.do1(http.MethodGet, shop+"/", nil, withCookie(cookieShop+"="+session))
			if w.Code != http.StatusTemporaryRedirect || pass(t, w) == "" {
				t.Errorf("a visitor back after their session lapsed: %d %s, want 307 with an arrival pass", w.Code, w.Body)
			}
			session = pass(t, w)
			return w
		}, 1},
		{"its arrival pass joins (called at once: the room has no cap, and a second's rate)", func() *fsttest.ResponseRecorder {
			e.now = e.now.Add(time.Second)
			w := e.do1(http.MethodGet, shop+"/", nil, withCookie(cookieShop+"="+session))
			if !strings.Contains(w.Body.String(), "origin saw") {
				t.Errorf("a newcomer in a room with places free: %d %s, want the origin", w.Code, w.Body)
			}
			return w
		}, 1},
		{"new visitor's first request (arrival pass, no place)", func() *fsttest.ResponseRecorder { return e.do1(http.MethodGet, shop+"/", nil) }, 0},
		{"bypass path", func() *fsttest.ResponseRecorder { return e.get(shop + "/static/x.js") }, 0},
	}
	for _, k := range kinds {
		k.run()
		got := e.storeCalls()
		t.Logf("store calls for %-48s %d", k.kind+":", got)
		if got != k.want {
			t.Errorf("%s: %d store calls, want %d", k.kind, got, k.want)
		}
	}
}

// forge builds a token with any header and claims, signed with key (HS256)
// or unsigned.
func forge(header, claims map[string]any, key []byte) string {
	enc := func(v any) string {
		b, _ := json.Marshal(v)
		return base64.RawURLEncoding.EncodeToString(b)
	}
	signing := enc(header) + "." + enc(claims)
	if key == nil {
		return signing + "."
	}
	return signing + "." + hmacSHA256(key, signing)
}

func TestRefusedPassesGoToTheBack(t *testing.T) {
	e := newEnv(t)
	key, _ := base64.StdEncoding.DecodeString(testKey)
	other, _ := base64.StdEncoding.DecodeString(otherKey)
	// Fill the line: ticket 1 (admitted by the burst), then 2 and 3 waiting.
	e.get(shop + "/")
	w := e.get(shop + "/")
	valid := pass(t, w)
	e.get(shop + "/")

	now := e.now.Unix()
	// Passes are bound to the client's User-Agent (none here) by default.
	bind := queue.Binding(queue.BindUserAgent, "", nil)
	good := map[string]any{"knd": "ticket", "tkt": 2, "ep": epochOf(t, valid), "bnd": bind, "aud": []string{"shop"}, "iat": now, "exp": now + 600}
	with := func(k string, v any) map[string]any {
		c := map[string]any{}
		for kk, vv := range good {
			c[kk] = vv
		}
		if v == nil {
			delete(c, k)
		} else {
			c[k] = v
		}
		return c
	}
	hs := map[string]any{"alg": "HS256", "typ": "JWT", "kid": "k1"}
	tampered := []byte(valid)
	tampered[len(valid)/2] ^= 1
	cases := []struct{ name, cookie string }{
		{"garbage", cookieShop + "=not-a-token"},
		{"tampered signature", cookieShop + "=" + valid[:len(valid)-3] + "AAA"},
		{"tampered payload", cookieShop + "=" + string(tampered)},
		{"alg none", cookieShop + "=" + forge(map[string]any{"alg": "none", "kid": "k1"}, good, nil)},
		{"alg RS256", cookieShop + "=" + forge(map[string]any{"alg": "RS256", "kid": "k1"}, good, key)},
		{"unknown kid", cookieShop + "=" + forge(map[string]any{"alg": "HS256", "kid": "k9"}, good, key)},
		{"no kid", cookieShop + "=" + forge(map[string]any{"alg": "HS256"}, good, key)},
		{"wrong key", cookieShop + "=" + forge(hs, good, other)},
		{"expired", cookieShop + "=" + forge(hs, with("exp", now-60), key)},
		{"no expiry", cookieShop + "=" + forge(hs, with("exp", nil), key)},
		{"issued in the future", cookieShop + "=" + forge(hs, with("iat", now+3600), key)},
		{"other room", cookieShop + "=" + forge(hs, with("aud", []string{"event"}), key)},
		{"unknown kind", cookieShop + "=" + forge(hs, with("knd", "vip"), key)},
		{"session without id", cookieShop + "=" + forge(hs, with("knd", "session"), key)},
		{"ticket zero", cookieShop + "=" + forge(hs, with("tkt", 0), key)},
		{"earlier line", cookieShop + "=" + forge(hs, with("ep", 12345), key)},
		{"bound to another browser", cookieShop + "=" + forge(hs, with("bnd", queue.Binding(queue.BindUserAgent, "curl/8", nil)), key)},
		{"not bound", cookieShop + "=" + forge(hs, with("bnd", nil), key)},
		{"cookie without value", cookieShop + "="},
		{"header of junk", ";;;=;=;" + strings.Repeat("x", 5000) + ";" + cookieShop},
	}
	next := int64(4)
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			w := e.get(shop+"/", withCookie(c.cookie), withHeader("Accept", "application/json"))
			if w.Code != 200 {
				t.Fatalf("status %d: %s", w.Code, w.Body)
			}
			p := decodePlace(t, w)
			if p.Ticket != next {
				t.Fatalf("got ticket %d, want a fresh ticket %d at the back", p.Ticket, next)
			}
			next++
		})
	}
	// The genuine forged-with-the-right-key ticket is accepted: the cases
	// above fail for their one defect, not for how they were made.
	w = e.get(shop+"/", withCookie(cookieShop+"="+forge(hs, good, key)), withHeader("Accept", "application/json"))
	if p := decodePlace(t, w); p.Ticket != 2 {
		t.Fatalf("a well-formed ticket 2 was not honoured: %+v", p)
	}
}

func TestCookieHeadersOfAllShapes(t *testing.T) {
	e := newEnv(t)
	e.get(shop + "/")
	valid := pass(t, e.get(shop+"/")) // ticket 2
	e.get(shop + "/")                 // ticket 3
	worse := pass(t, e.get(shop+"/")) // ticket 4
	cases := []struct {
		name    string
		cookies []string
	}{
		{"among many", []string{"a=1; b=2; " + cookieShop + "=" + valid + "; c=3"}},
		{"odd spacing", []string{"a=1;" + cookieShop + " =   " + valid + "  ;b"}},
		{"quoted", []string{cookieShop + `="` + valid + `"`}},
		{"duplicate with garbage first", []string{cookieShop + "=junk; " + cookieShop + "=" + valid}},
		{"duplicates keep the better place", []string{cookieShop + "=" + worse + "; " + cookieShop + "=" + valid}},
		{"split over two headers", []string{"a=1", cookieShop + "=" + valid}},
		{"similar names", []string{"x" + cookieShop + "=junk; " + cookieShop + "x=junk; " + cookieShop + "=" + valid}},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			var opts []reqOpt
			for _, h := range c.cookies {
				opts = append(opts, withCookie(h))
			}
			opts = append(opts, withHeader("Accept", "application/json"))
			if p := decodePlace(t, e.get(shop+"/", opts...)); p.Ticket != 2 {
				t.Fatalf("got ticket %d, want the visitor's ticket 2", p.Ticket)
			}
		})
	}
}

func TestStoreOutageHoldsVisitorsAndKeepsPlaces(t *testing.T) {
	e := newEnv(t)
	e.get(shop + "/")
	ticket := pass(t, e.get(shop+"/")) // ticket 2, waiting
	// A short timeout while the store fails, so the slow store's calls
	// time out soon; only then, so that a loaded machine's healthy calls
	// are not cut short by it.
	e.config[edge.KeyStoreTimeout] = "0.3"
	for _, f := range []upstashdev.Faults{{Status: 503}, {Drop: true}, {LatencyMS: 2000}} {
		e.upstash.SetFaults(f)
		for _, accept := range []string{"text/html", "application/json"} {
			w := e.get(shop+"/", withCookie(cookieShop+"="+ticket), withHeader("Accept", accept))
			if w.Code != http.StatusServiceUnavailable || w.HeaderMap.Get("Retry-After") != "5" {
				t.Fatalf("fault %+v: %d Retry-After %q, want 503 with Retry-After", f, w.Code, w.HeaderMap.Get("Retry-After"))
			}
			if pass(t, w) != "" {
				t.Fatalf("fault %+v: the busy answer replaced the visitor's pass", f)
			}
			if accept == "text/html" && !strings.Contains(w.Body.String(), "We are busy, retrying") {
				t.Fatalf("busy page: %s", w.Body)
			}
		}
		// New visitors are held too.
		if w := e.get(shop + "/"); w.Code != http.StatusServiceUnavailable {
			t.Fatalf("fault %+v: a new visitor got %d", f, w.Code)
		}
	}
	if !logged(e.logs, "busy (poll failed)") || !logged(e.logs, "busy (join failed)") {
		t.Fatalf("no log line says why: %q", e.logs)
	}
	e.upstash.SetFaults(upstashdev.Faults{})
	delete(e.config, edge.KeyStoreTimeout)
	p := decodePlace(t, e.get(shop+"/", withCookie(cookieShop+"="+ticket), withHeader("Accept", "application/json")))
	if p.Ticket != 2 {
		t.Fatalf("after the outage the visitor holds ticket %d, want their ticket 2", p.Ticket)
	}
	if p := decodePlace(t, e.get(shop+"/", withHeader("Accept", "application/json"))); p.Ticket != 3 {
		t.Fatalf("a newcomer after the outage got ticket %d, want 3: no tickets were lost or invented", p.Ticket)
	}
}

// TestABrownoutCostsOneSlowRequestPerHeartbeat: an admitted visitor whose
// renewal fails (a slow or failing store) is let through with a pass
// marked unrenewed, which admits without asking the store until the next
// heartbeat, so only one request per heartbeat waits on the store.
func TestABrownoutCostsOneSlowRequestPerHeartbeat(t *testing.T) {
	e := newEnv(t)
	e.config[edge.KeyStoreTimeout] = "0.3"
	session := pass(t, e.get(shop+"/")) // admitted by the burst
	keys, err := queue.ParseKeySet(testKeySet)
	if err != nil {
		t.Fatal(err)
	}
	// The stand-in answers 503 without counting the request: the edge's
	// log line for each failed renewal counts the attempts instead.
	failed := func() int {
		n := 0
		for _, l := range e.logs {
			if strings.Contains(l, "session, renewal failed") {
				n++
			}
		}
		return n
	}
	e.upstash.SetFaults(upstashdev.Faults{Status: 503})
	for beat := 1; beat <= 3; beat++ {
		e.now = e.now.Add(31 * time.Second) // past the 30 s heartbeat
		w := e.get(shop+"/", withCookie(cookieShop+"="+session))
		if !strings.Contains(w.Body.String(), "origin saw") {
			t.Fatalf("heartbeat %d: the admitted visitor was not let through: %d %s", beat, w.Code, w.Body)
		}
		if n := failed(); n != beat {
			t.Fatalf("heartbeat %d: %d failed renewals so far, want %d", beat, n, beat)
		}
		next := pass(t, w)
		p, err := keys.Verify("shop", next, e.now)
		if err != nil || !p.Unrenewed || p.SessionID == "" {
			t.Fatalf("heartbeat %d: the pass after a failed renewal: %+v, %v; want an unrenewed session pass", beat, p, err)
		}
		session = next
		for i := 0; i < 5; i++ {
			e.now = e.now.Add(5 * time.Second)
			if w := e.get(shop+"/cart", withCookie(cookieShop+"="+session)); !strings.Contains(w.Body.String(), "origin saw") {
				t.Fatalf("heartbeat %d, request %d: %d %s", beat, i, w.Code, w.Body)
			}
		}
		if n := failed(); n != beat {
			t.Fatalf("heartbeat %d: %d renewals tried within the heartbeat, want none", beat, n-beat)
		}
		e.now = e.now.Add(-25 * time.Second) // the next beat is 31 s after this one's
	}
	// The store is back: the next renewal is a real one.
	e.upstash.SetFaults(upstashdev.Faults{})
	e.now = e.now.Add(31 * time.Second)
	e.storeCalls()
	w := e.get(shop+"/", withCookie(cookieShop+"="+session))
	if n := e.storeCalls(); n != 1 {
		t.Fatalf("after the brownout: %d store calls, want the renewal's 1", n)
	}
	if p, err := keys.Verify("shop", pass(t, w), e.now); err != nil || p.Unrenewed {
		t.Fatalf("after the brownout: %+v, %v; want a renewed session pass", p, err)
	}
}

func logged(logs []string, s string) bool {
	for _, l := range logs {
		if strings.Contains(l, s) {
			return true
		}
	}
	return false
}

func TestBadConfiguration(t *testing.T) {
	cases := []struct {
		name      string
		change    func(e *env)
		target    string
		wantCode  int
		wantBody  string
		wantLog   string
		forwarded bool
	}{
		{"broken room fails closed for unclaimed paths", func(e *env) { e.config[edge.KeyRoomPrefix+"event"] = `{"paths":` },
			"http://any.test/event/1", 503, "Temporarily unavailable", `room "event"`, false},
		{"broken room leaves valid rooms working", func(e *env) {
			e.config[edge.KeyRoomPrefix+"event"] = `{"paths":["/event/"],"burst":-1,"new_users_per_minute":1}`
		},
			shop + "/", 200, "origin saw", "burst: must be between", true},
		{"unknown field is named", func(e *env) {
			e.config[edge.KeyRoomPrefix+"event"] = `{"paths":["/e/"],"new_users_per_minute":1,"rate":5}`
		},
			"http://any.test/e/", 503, "Temporarily unavailable", `unknown field "rate"`, false},
		{"room missing from the store", func(e *env) { e.config[edge.KeyRooms] = "shop,ghost" },
			"http://any.test/x", 503, "Temporarily unavailable", `room "ghost"`, false},
		{"no rooms at all forwards everything", func(e *env) { delete(e.config, edge.KeyRooms) },
			shop + "/", 200, "origin saw", "", true},
		{"no signing keys", func(e *env) { delete(e.secrets, edge.SecretSigningKeys) },
			shop + "/", 503, "not configured yet", "signing_keys", false},
		{"short signing key", func(e *env) { e.secrets[edge.SecretSigningKeys] = "k1:c2hvcnQ=" },
			shop + "/", 503, "not configured yet", "need at least 32", false},
		{"no upstash url", func(e *env) { delete(e.config, edge.KeyUpstashURL) },
			shop + "/", 503, "not configured yet", "upstash_url", false},
		{"bad store timeout falls back", func(e *env) { e.config[edge.KeyStoreTimeout] = "soon" },
			shop + "/", 200, "origin saw", "store_timeout", true},
		{"wrong upstash token is busy, not an error page", func(e *env) { e.secrets[edge.SecretUpstashToken] = "nope" },
			shop + "/", 503, "We are busy", "refused credentials", false},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			e := newEnv(t)
			c.change(e)
			w := e.get(c.target)
			if w.Code != c.wantCode || !strings.Contains(w.Body.String(), c.wantBody) {
				t.Fatalf("got %d %s; want %d with %q", w.Code, w.Body, c.wantCode, c.wantBody)
			}
			if c.wantLog != "" && !logged(e.logs, c.wantLog) {
				t.Fatalf("no log line mentions %q: %q", c.wantLog, e.logs)
			}
		})
	}
}

func TestTemplatesFromTheKVStore(t *testing.T) {
	e := newEnv(t)
	e.get(shop + "/")
	e.templates["queue.html"] = `<p>Custom: {{ position }} for {{room}}</p>`
	if w := e.get(shop + "/"); w.Body.String() != `<p>Custom: 1 for shop</p>` {
		t.Fatalf("override: %s", w.Body)
	}
	e.templates["queue.html"] = `<p>{{nonsense}}</p>`
	w := e.get(shop + "/")
	if !strings.Contains(w.Body.String(), "You are in line") || !logged(e.logs, "unknown name {{nonsense}}") {
		t.Fatalf("a broken override should fall back to the default and be logged: %s %q", w.Body, e.logs)
	}
	e.config[edge.KeyRoomPrefix+"shop"] = strings.Replace(shopRoom, `"burst":1`, `"burst":1,"template":"shop.html"`, 1)
	w = e.get(shop + "/")
	if !strings.Contains(w.Body.String(), "You are in line") || !logged(e.logs, "template shop.html: not in the KV store") {
		t.Fatalf("a missing named template should fall back and be logged: %s", w.Body)
	}
}

func TestForwardingStreamsAndPreserves(t *testing.T) {
	e := newEnv(t)
	session := pass(t, e.get(shop+"/"))
	c := withCookie(cookieShop + "=" + session)

	big := bytes.Repeat([]byte("waiting room "), 700_000) // 9.1 MB
	sum := sha256.Sum256(big)
	w := e.do(http.MethodPost, shop+"/upload", bytes.NewReader(big), c)
	if want := fmt.Sprintf("%d %s", len(big), hex.EncodeToString(sum[:])); w.Body.String() != want {
		t.Fatalf("upload: origin saw %q, want %q", w.Body, want)
	}
	w = e.get(shop+"/download", c)
	if w.Body.Len() != 8<<20 {
		t.Fatalf("download: %d bytes, want 8 MiB", w.Body.Len())
	}
	w = e.get(shop+"/teapot", c)
	if w.Code != http.StatusTeapot || w.Body.String() != "short and stout" || w.HeaderMap.Get("X-Origin") != "yes" ||
		w.HeaderMap.Get("Cache-Control") != "max-age=60" || len(w.HeaderMap.Values("Set-Cookie")) != 2 {
		t.Fatalf("teapot: %d %v %s", w.Code, w.HeaderMap, w.Body)
	}
	if w = e.get(shop+"/q?x=1&y=2", c); w.Body.String() != "origin saw GET shop.test/q?x=1&y=2" {
		t.Fatalf("query: %s", w.Body)
	}
	// An admitting answer keeps the origin's cookies beside the pass.
	e.now = e.now.Add(time.Hour)
	w = e.get(shop + "/teapot")
	if n := len(w.HeaderMap.Values("Set-Cookie")); n != 3 || pass(t, w) == "" {
		t.Fatalf("admitting answer Set-Cookie: %v", w.HeaderMap.Values("Set-Cookie"))
	}
}

func TestOriginDown(t *testing.T) {
	e := newEnv(t)
	e.origin, _ = url.Parse("http://127.0.0.1:1")
	w := e.get("http://other.test/")
	if w.Code != http.StatusBadGateway || !logged(e.logs, `origin: "GET" "/"`) {
		t.Fatalf("origin down: %d %s %q", w.Code, w.Body, e.logs)
	}
}

func TestPausedRoomSaysSo(t *testing.T) {
	e := newEnv(t)
	e.get(shop + "/")
	form := url.Values{"room": {"shop"}, "csrf": {csrfFrom(t, e)}}
	if w := e.admin(http.MethodPost, "/pause", form.Encode(), adminPass); w.Code != http.StatusSeeOther {
		t.Fatalf("pause: %d %s", w.Code, w.Body)
	}
	e.now = e.now.Add(time.Hour)
	p := decodePlace(t, e.get(shop+"/", withHeader("Accept", "application/json")))
	if !p.Paused || p.Wait != nil {
		t.Fatalf("paused room: %+v, want paused with no estimate", p)
	}
	if w := e.get(shop + "/"); !strings.Contains(w.Body.String(), "Entry is paused") || !strings.Contains(w.Body.String(), "unknown while entry is paused") {
		t.Fatalf("paused page: %s", w.Body)
	}
}
