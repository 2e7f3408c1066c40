// Fuzz targets for the edge: the config store's settings, and a whole
// request through Handler.ServeHTTP against a store whose every answer the
// fuzzer picks. Each target's body is a check function and its seeds a
// table, so that TinyGo, which compiles Fuzz targets but never runs them,
// runs the seeds too (fuzz_tinygo_test.go). make fuzz fuzzes every target
// for a bounded time.

package edge

import (
	"bytes"
	"context"
	"encoding/binary"
	"encoding/json"
	"fmt"
	"io"
	"net"
	"net/url"
	"strings"
	"testing"
	"time"

	"github.com/edgequeue/waitingroom/match"
	"github.com/edgequeue/waitingroom/queue"
	"github.com/edgequeue/waitingroom/store"
	"github.com/edgequeue/waitingroom/urlnorm"
	"github.com/fastly/compute-sdk-go/fsthttp"
	"github.com/fastly/compute-sdk-go/fsttest"
)

// settingsSeeds are config store values as operators set them, and as the
// issue's fuzzing found they must not: "//" as the admin path made the
// whole site the panel.
var settingsSeeds = []struct{ adminPath, timeout, hsts, index, room, upstash string }{
	{"/ops/", "0.25", "31536000", "a,b", `{"paths":["/"],"new_users_per_minute":5}`, "https://eu1-real-12345.upstash.io"},
	{"//", "0.005", "-1", "a", `{"paths":["/"]}`, ""},
	{"/", "30.001", "x", "A", "{", "not a url"},
	{"/_wr/leave", "", "", "a a", "", "https://<your database>.upstash.io"},
	{"/_wr", "0.05", "63072001", "a,,b\n", `{"paths":["/x"],"max_active_users":1}`, "http://db"},
	{"/a/../b", "1e0", "0", "a", `{"paths":["/"],"max_active_users":1,"extra":1}`, "https://db/"},
	{"/a?x", " 0.1", "00", "", "", ""},
	{"/%2e%2e", "0.1", "", "b", "", ""},
	{"/ops//x", "", "", "", "", ""},
	{"ops", "", "", "", "", ""},
}

// FuzzLoadSettings: no config store panics the loader; the admin path is
// always a real path below "/" in normal form, without the departure
// beacon, so the panel never swallows the site; an admin path not taken
// is reported; the store timeout and HSTS max-age stay in their bounds;
// global bypass rules are taken or refused with a problem naming them;
// and every problem is one log line.
func FuzzLoadSettings(f *testing.F) {
	for _, s := range settingsSeeds {
		f.Add(s.adminPath, s.timeout, s.hsts, s.index, s.room, s.upstash)
	}
	f.Fuzz(checkLoadSettings)
}

func checkLoadSettings(t *testing.T, adminPath, timeout, hsts, index, room, upstash string) {
	config := mapConfig{
		KeyAdminPath: adminPath, KeyStoreTimeout: timeout, KeyHSTSMaxAge: hsts, KeyRooms: index, KeyUpstashURL: upstash,
		KeyRoomPrefix + "a": room, KeyRoomPrefix + "b": `{"paths":["/b/"],"max_active_users":1}`,
		// A room's bypass_* fields are the global rules' too.
		KeyBypass: room,
	}
	s := LoadSettings(config)
	refused := false
	for _, problem := range s.Problems {
		refused = refused || strings.HasPrefix(problem.Error(), KeyBypass+":") || strings.HasPrefix(problem.Error(), KeyBypass+".")
	}
	if (s.Bypass == nil) != refused {
		t.Fatalf("bypass %q: rules %v, problems %q: want rules, or a problem naming the key", room, s.Bypass, s.Problems)
	}
	p := s.AdminPath
	n, err := urlnorm.ParsePath(p)
	if len(p) < 2 || err != nil || n.Escaped != p || strings.HasSuffix(p, "/") || ownPathHeld(p) != "" {
		t.Fatalf("admin_path %q: the panel is at %q, not a real path below / (normal form %q, %v)", adminPath, p, n.Escaped, err)
	}
	if p != strings.TrimSuffix(adminPath, "/") && !mentions(s.Problems, KeyAdminPath) {
		t.Fatalf("admin_path %q: the panel is at %q and no problem says why: %q", adminPath, p, s.Problems)
	}
	if s.StoreTimeout < 50*time.Millisecond || s.StoreTimeout > 30*time.Second {
		t.Fatalf("store_timeout %q: %v", timeout, s.StoreTimeout)
	}
	if s.HSTSMaxAge < 0 || s.HSTSMaxAge > 63072000 {
		t.Fatalf("hsts_max_age %q: %d", hsts, s.HSTSMaxAge)
	}
	for _, problem := range s.Problems {
		if strings.ContainsAny(problem.Error(), "\r\n") {
			t.Fatalf("problem %q spans lines", problem)
		}
	}
	for _, r := range s.Rooms {
		if r == nil {
			t.Fatalf("index %q: a nil room", index)
		}
	}
}

// mentions reports whether one of errs names key.
func mentions(errs []error, key string) bool {
	for _, err := range errs {
		if strings.Contains(err.Error(), key) {
			return true
		}
	}
	return false
}

// The store's replies, as the fuzzer picks them, one per store call.
const (
	replyWaiting      = iota // the script's reply, the ticket waiting
	replyAdmitted            // the script's reply, the ticket called (or the session renewed)
	replyLost                // the script's reply, the place lost
	replyNoScript            // NOSCRIPT: the client sends the script again
	replyBusy                // Redis busy running another script
	replyDown                // Upstash answering 502
	replyUnauthorized        // a wrong token
	replyTimeout             // no answer within the store timeout
	replyShort               // a script reply of the wrong length
	replyGarbage             // bytes the fuzzer chose
	replyKinds
)

// The script's reply as store/upstash.go's run reads it (store/genline's
// table): replyValues values, integers but for the event's draw key at
// replyKey, the outcome at replyOutcome, 1 when a ticket was called or a
// session renewed. These constants, scriptReply and replyAdmits are all
// this file knows of the reply: adapt them when the script's reply changes.
const (
	replyValues  = 25
	replyOutcome = 5
	replyKey     = 20
)

// replyAdmits reports whether body, read as the store reads it, is a
// script reply that admits a visitor.
func replyAdmits(body []byte) bool {
	var a struct {
		Result []json.RawMessage `json:"result"`
	}
	err := json.NewDecoder(bytes.NewReader(body)).Decode(&a)
	return err == nil && len(a.Result) == replyValues && string(a.Result[replyOutcome]) == "1"
}

// cannedUpstash is a store.Transport that answers each call as the
// fuzzer's script says: a kind of reply, then its numbers (varints).
// When the script runs out, every call gets a waiting ticket.
type cannedUpstash struct {
	script []byte
	calls  int
	// admitted is set once a reply that admits someone was served.
	admitted bool
}

func (c *cannedUpstash) RoundTrip(_ context.Context, _ store.Request) (store.Response, error) {
	c.calls++
	resp, err := c.reply()
	if err == nil && replyAdmits(resp.Body) {
		c.admitted = true
	}
	return resp, err
}

func (c *cannedUpstash) reply() (store.Response, error) {
	kind := int(c.byte()) % replyKinds
	switch kind {
	case replyWaiting, replyAdmitted, replyLost:
		return store.Response{Status: 200, Body: c.scriptReply(int64(kind - replyWaiting))}, nil
	case replyNoScript:
		return store.Response{Status: 400, Body: []byte(`{"error":"NOSCRIPT No matching script. Please use EVAL."}`)}, nil
	case replyBusy:
		return store.Response{Status: 400, Body: []byte(`{"error":"BUSY Redis is busy running a script. You can only call SCRIPT KILL or SHUTDOWN NOSCRIPT."}`)}, nil
	case replyDown:
		return store.Response{Status: 502, Body: []byte("<html>Bad Gateway</html>")}, nil
	case replyUnauthorized:
		return store.Response{Status: 401, Body: []byte(`{"error":"Unauthorized"}`)}, nil
	case replyTimeout:
		return store.Response{}, context.DeadlineExceeded
	case replyShort:
		return store.Response{Status: 200, Body: []byte(fmt.Sprintf(`{"result":[%d,%d,%d]}`, c.number(), c.number(), c.number()))}, nil
	}
	n := int(c.byte())
	if n > len(c.script) {
		n = len(c.script)
	}
	body := c.script[:n]
	c.script = c.script[n:]
	return store.Response{Status: 200, Body: body}, nil
}

// scriptReply is Upstash's body for a run of store/line.lua whose reply
// holds outcome, and the script's next numbers everywhere else.
func (c *cannedUpstash) scriptReply(outcome int64) []byte {
	vals := make([]any, replyValues)
	for i := range vals {
		vals[i] = c.number()
	}
	vals[replyOutcome], vals[replyKey] = outcome, ""
	b, _ := json.Marshal(map[string][]any{"result": vals})
	return b
}

func (c *cannedUpstash) byte() byte {
	if len(c.script) == 0 {
		return replyWaiting
	}
	b := c.script[0]
	c.script = c.script[1:]
	return b
}

func (c *cannedUpstash) number() int64 {
	v, n := binary.Varint(c.script)
	if n <= 0 {
		c.script = nil
		return 0
	}
	c.script = c.script[n:]
	return v
}

// fuzzOriginStatus is the origin's answer, a status the edge never writes
// itself: a response with it came from the origin.
const fuzzOriginStatus = fsthttp.StatusNonAuthoritativeInfo

// fuzzOrigin answers every request fuzzOriginStatus, with the commands
// header the fuzzer chose, and keeps what it received.
type fuzzOrigin struct {
	commands string
	seen     []*fsthttp.Request
}

func (o *fuzzOrigin) Send(_ context.Context, r *fsthttp.Request) (*fsthttp.Response, error) {
	o.seen = append(o.seen, r)
	h := fsthttp.NewHeader()
	if o.commands != "" {
		h.Set(queue.CommandHeader, o.commands)
	}
	return &fsthttp.Response{StatusCode: fuzzOriginStatus, Header: h, Body: io.NopCloser(strings.NewReader("origin"))}, nil
}

// fuzzTemplates holds the fuzzer's template under every name, or none.
type fuzzTemplates string

func (t fuzzTemplates) Get(string) (string, error) {
	if t == "" {
		return "", ErrNotFound
	}
	return string(t), nil
}

// fuzzLimits counts n events for every client, and has every client in
// the penalty box when boxed.
type fuzzLimits struct {
	n     int
	boxed bool
}

func (l fuzzLimits) Count(string, string) (int, error)            { return l.n, nil }
func (l fuzzLimits) Counted(string, string) (int, error)          { return l.n, nil }
func (l fuzzLimits) Penalize(string, string, time.Duration) error { return nil }
func (l fuzzLimits) Penalized(box, client string) (bool, error)   { return l.boxed, nil }

// fuzzConfig has a room of every mode, a bypass, an IPv6 host, paths
// that match whatever their case, and a room that asks newcomers for a
// proof of work, limits joins per network and AS, and runs a decoy line.
var fuzzConfig = mapConfig{
	KeyRooms:                  "shop, tickets, ci, closed, open",
	KeyUpstashURL:             "https://eu1-real-12345.upstash.io",
	KeyBypass:                 `{"bypass_extensions":["css"],"bypass_cookies":["staff=yes"]}`,
	KeyRoomPrefix + "shop":    `{"hosts":["shop.example.com","[::1]"],"paths":["/"],"bypass_paths":["/static/"],"bypass_methods":["OPTIONS"],"new_users_per_minute":60}`,
	KeyRoomPrefix + "tickets": `{"hosts":["tickets.test"],"paths":["/tickets/"],"max_active_users":5,"mode":"random","cors_origins":["https://app.test"],"language":"de","leave_beacon":true,"proof_of_work":12,"joins_per_network_per_minute":50,"joins_per_as_per_minute":100,"decoy_ips":["192.0.2.0/24","2001:db8::/32"],"decoy_bad_bots":true}`,
	KeyRoomPrefix + "ci":      `{"hosts":["ci.test"],"paths":["/tickets/"],"bypass_paths":["/tickets/static/"],"case_insensitive_paths":true,"new_users_per_minute":60,"queue_status_code":429}`,
	KeyRoomPrefix + "closed":  `{"hosts":["closed.test"],"paths":["/"],"mode":"reject"}`,
	KeyRoomPrefix + "open":    `{"hosts":["open.test"],"paths":["/"],"mode":"passthrough"}`,
}

// The passes a fuzzed request may carry in the cookie of room shop, beside
// whatever the fuzzer writes in its own Cookie headers.
const (
	passNone = iota
	passTicket
	passSession   // fresh: admitted without a store call
	passLapsed    // older than the heartbeat: renewed first
	passOtherRoom // a session of room tickets, in shop's cookie
	passArrival   // back with an arrival pass: joins
	passKinds
)

// edgeStatuses are the statuses the edge writes itself.
var edgeStatuses = map[int]bool{
	200: true, 202: true, 204: true, 303: true, 307: true, 308: true, 400: true, 401: true,
	403: true, 404: true, 405: true, 429: true, 503: true,
}

type serveSeed struct {
	method         string
	https, local   bool
	host, target   string
	headers, body  string
	pass           uint8
	replies        []byte
	commands, tmpl string
	limit          uint8
}

// serveSeeds are the attacks and the everyday requests.
var serveSeeds = []serveSeed{
	{method: "GET", https: true, host: "shop.example.com", target: "/checkout"},
	{method: "GET", https: true, host: "shop.example.com", target: "/checkout", pass: passTicket, replies: []byte{replyAdmitted, 2, 20, 10, 0, 5, 2, 0, 1, 0}, commands: "revoke, admit=3"},
	{method: "GET", https: true, host: "shop.example.com", target: "/", pass: passSession, commands: "admit=100001"},
	{method: "GET", https: true, host: "shop.example.com", target: "/", pass: passLapsed, replies: []byte{replyTimeout, replyTimeout}},
	{method: "GET", https: true, host: "SHOP.example.com.:443", target: "/static/../checkout", replies: []byte{replyNoScript, replyWaiting}},
	{method: "GET", https: true, host: "shop.example.com", target: "/static/%2e%2e/checkout"},
	{method: "GET", https: true, host: "shop.example.com", target: "/static/..%2fcheckout"},
	{method: "GET", https: true, host: "shop.example.com", target: "/static%2f..%2fcheckout"},
	{method: "GET", https: true, host: "shop.example.com", target: "/static/..;/checkout"},
	{method: "GET", https: true, host: "shop.example.com", target: "/static/x.css?v=1%0A"},
	{method: "GET", https: true, host: "tickets.test", target: "/./tickets/buy", replies: []byte{replyBusy}},
	{method: "GET", https: true, host: "ci.test", target: "/TICKETS/buy", headers: "Accept: application/json", replies: []byte{replyLost}},
	{method: "GET", https: false, host: "shop.example.com", target: "/checkout?a=b"},
	{method: "GET", https: false, local: true, host: "[::1]:7676", target: "/x", replies: []byte{replyGarbage, 5, '{', '"', 'r', '"', ':'}},
	{method: "GET", https: true, host: "closed.test", target: "/"},
	{method: "GET", https: true, host: "open.test", target: "/", replies: []byte{replyDown, replyUnauthorized, replyShort}},
	{method: "POST", https: true, host: "shop.example.com", target: "/_wr/leave", pass: passSession, headers: "Sec-Fetch-Site: cross-site\nOrigin: https://evil.test"},
	{method: "POST", https: true, host: "shop.example.com", target: "/_wr/leave", pass: passSession, headers: "Sec-Fetch-Site: same-origin"},
	{method: "GET", https: true, host: "shop.example.com", target: "/_wr/leave"},
	{method: "GET", https: true, host: "shop.example.com", target: "/_wr/admin", headers: "Authorization: Basic YWRtaW46YS1wYXNzd29yZC1vZi0yNC1sZXR0ZXJz"},
	{method: "POST", https: true, host: "shop.example.com", target: "/_wr/admin/", headers: "Authorization: Basic YWRtaW46YS1wYXNzd29yZC1vZi0yNC1sZXR0ZXJz\nContent-Type: application/x-www-form-urlencoded", body: "room=shop&action=admit&n=5&csrf=x"},
	{method: "GET", https: true, host: "shop.example.com", target: "/_wr/admin", headers: "Authorization: Basic d3Jvbmc6d3Jvbmc=", limit: 200},
	{method: "GET", https: true, host: "shop.example.com", target: "/checkout", headers: "Waiting-Room-Fail-Open: store-unavailable\nwaiting-room-command: admit=5\nCookie: wr_shop=a.b.c; wr_shop=\"x\""},
	{method: "GET", https: true, host: "shop.example.com", target: "/checkout", tmpl: "<p>{{room}} {{ticket}}</p>"},
	{method: "GET", https: true, host: "shop.example.com", target: "/checkout", pass: passOtherRoom, tmpl: "{{nope}}", limit: 40},
	{method: "GET", https: true, host: "evil.test", target: "/anything"},
	{method: "OPTIONS", https: true, host: "shop.example.com", target: "*"},
	{method: "GET", https: true, host: "shop.example.com", target: "/a%00b"},
	{method: "OPTIONS", https: true, host: "tickets.test", target: "/tickets/a", headers: "Origin: https://app.test\nAccess-Control-Request-Method: POST\nAccess-Control-Request-Headers: waiting-room-pass, x-a"},
	{method: "OPTIONS", https: true, host: "tickets.test", target: "/tickets/a", headers: "Origin: https://evil.test\nAccess-Control-Request-Method: GET"},
	{method: "GET", https: true, host: "tickets.test", target: "/tickets/a", headers: "Origin: https://app.test\nAccept: application/json\nWaiting-Room-Pass: wr_tickets=a.b.c", replies: []byte{replyWaiting}},
	{method: "GET", https: true, host: "shop.example.com", target: "/checkout", pass: passTicket, headers: "Accept: application/json\nWaiting-Room-Poll: 1", replies: []byte{replyAdmitted, 2, 20, 10, 0, 5, 2, 0, 1, 0}},
	{method: "GET", https: true, host: "shop.example.com", target: "/checkout", pass: passTicket, headers: "Accept-Language: de-AT;q=0.9, ja;q=1, *;q=0\nAccept-Language: x", replies: []byte{replyWaiting}},
	{method: "POST", https: true, host: "shop.example.com", target: "/_wr/heartbeat", pass: passLapsed, replies: []byte{replyAdmitted}},
	{method: "GET", https: true, host: "shop.example.com", target: "/_wr/heartbeat.js?v=0", headers: "If-None-Match: \"x\""},
	{method: "\r", https: true, host: "0", target: "/_wr/admin"},
	{method: "\n", https: true, host: "shop.example.com", target: "/_wr/api/rooms", headers: "Authorization: Bearer x"},
	{method: "GET", https: true, host: "shop.example.com", target: "/checkout?a=1&_wr_arrival=s44we8.AAAAAAAAAAAAAAAAAAAAAA"},
	{method: "POST", https: true, host: "shop.example.com", target: "/checkout?%5Fwr_arrival=1&b", pass: passSession, body: "x=1"},
	{method: "GET", https: true, host: "shop.example.com", target: "/static/x.css?_wr_arrival=1"},
}

// FuzzServeHTTP: a whole request through the service, the request and the
// store's every answer picked by the fuzzer (script replies that admit or
// not, NOSCRIPT, BUSY, outages, wrong tokens, timeouts, short and garbage
// replies), and the origin's commands header too. No request panics; the
// status is the origin's (when it was asked) or one the edge writes; the
// origin gets at most one request, in normal form, without the reserved
// headers, and never one a room protects unless the store admitted
// someone or the visitor holds that room's session; store calls stay
// within the platform's 32 backend requests; every answer the edge writes
// carries nosniff; no header value and no log line spans lines.
func FuzzServeHTTP(f *testing.F) {
	for _, s := range serveSeeds {
		f.Add(s.method, s.https, s.local, s.host, s.target, s.headers, s.body, s.pass, s.replies, s.commands, s.tmpl, s.limit)
	}
	f.Fuzz(checkServeHTTP)
}

// routeAtOrigin judges the request the origin got, whose path is p, as
// the edge judges a request (without the platform's facts).
func routeAtOrigin(sent *fsthttp.Request, p urlnorm.Path) (Destination, match.Judgement[*queue.Room]) {
	dest, j, _ := LoadSettings(fuzzConfig).Route(testRequest(&Handler{}).rulesRequest(sent, target{host: sent.Host, path: p}))
	return dest, j
}

func checkServeHTTP(t *testing.T, method string, https, local bool, host, target, headers, body string, pass uint8, replies []byte, commands, tmpl string, limit uint8) {
	scheme := "http"
	if https {
		scheme = "https"
	}
	u, err := urlnorm.ParseRequestURI(scheme + "://" + host + target)
	if err != nil {
		return // the platform hands the service no request it cannot parse
	}
	r, err := fsthttp.NewRequest(method, scheme+"://placeholder.test/", strings.NewReader(body))
	if err != nil {
		t.Fatal(err)
	}
	r.URL, r.Host, r.RemoteAddr = u, u.Host, "192.0.2.1"
	if https {
		r.TLSInfo.Protocol = "TLSv1.3"
	}
	for _, line := range strings.Split(headers, "\n") {
		name, value, ok := strings.Cut(line, ":")
		if ok && isToken(name) && !strings.ContainsAny(value, "\r\n\x00") {
			r.Header.Add(name, strings.TrimSpace(value))
		}
	}
	at := time.Unix(1_700_000_000, 0)
	sessionRoom := ""
	// Passes are bound to the browser they were issued to (shop's
	// bind_session is the default, user_agent).
	bind := queue.Binding(queue.DefaultBindMode, r.Header.Get("User-Agent"), net.ParseIP(r.RemoteAddr))
	if c := fuzzPass(t, int(pass)%passKinds, at, bind); c != "" {
		r.Header.Add("Cookie", "wr_shop="+c)
		if p := int(pass) % passKinds; p == passSession || p == passLapsed {
			sessionRoom = "shop"
		}
	}
	st := &cannedUpstash{script: replies}
	origin := &fuzzOrigin{commands: commands}
	var logs []string
	svc := Handler{
		Config: fuzzConfig, Templates: fuzzTemplates(tmpl), Origin: origin, Upstash: st,
		Secrets: mapSecrets{m: map[string]string{SecretUpstashToken: "real-token", SecretSigningKeys: testKeys, SecretAdminPassword: "a-password-of-24-letters"}},
		Limits:  fuzzLimits{n: int(limit % 64), boxed: limit >= 192},
		Local:   local, UpstashViaBackend: true, Now: fixed(at),
		Logf: func(f string, a ...any) { logs = append(logs, fmt.Sprintf(f, a...)) },
	}
	w := fsttest.NewRecorder()
	svc.ServeHTTP(context.Background(), w, r)

	request := fmt.Sprintf("%s %s://%s%s (pass %d, replies %x)", method, scheme, host, target, pass%passKinds, replies)
	switch {
	case len(origin.seen) > 1:
		t.Fatalf("%s: the origin got %d requests", request, len(origin.seen))
	case len(origin.seen) == 1 && w.Code != fuzzOriginStatus:
		t.Fatalf("%s: the origin answered %d, the visitor got %d", request, fuzzOriginStatus, w.Code)
	case len(origin.seen) == 0 && !edgeStatuses[w.Code]:
		t.Fatalf("%s: status %d: %s", request, w.Code, w.Body)
	case len(origin.seen) == 0 && w.HeaderMap.Get("X-Content-Type-Options") != "nosniff":
		t.Fatalf("%s: %d without X-Content-Type-Options: nosniff", request, w.Code)
	case st.calls > 32:
		t.Fatalf("%s: %d store calls, beyond the platform's 32 backend requests", request, st.calls)
	}
	for _, sent := range origin.seen {
		wire := urlnorm.WirePath(sent.URL)
		p, err := urlnorm.ParsePath(wire)
		if err != nil || p.Escaped != wire || urlnorm.CheckQuery(sent.URL.RawQuery) != nil {
			t.Fatalf("%s: the origin got %q?%q, not in normal form (%q, %v)", request, wire, sent.URL.RawQuery, p.Escaped, err)
		}
		if _, marked := TakeArrivalMark(&url.URL{RawQuery: sent.URL.RawQuery}); marked {
			t.Fatalf("%s: the origin got the arrival mark: %q", request, sent.URL.RawQuery)
		}
		dest, j := routeAtOrigin(sent, p)
		for _, k := range sent.Header.Keys() {
			// The one reserved header the origin gets: the edge's own
			// word that a bypass rule let the request through.
			v := sent.Header.Values(k)
			if strings.HasPrefix(strings.ToLower(k), "waiting-room-") &&
				!(k == BypassHeader && dest == ToBypass && len(v) == 1 && v[0] == j.Bypass) {
				t.Fatalf("%s: the origin got the reserved header %s: %q", request, k, v)
			}
		}
		if dest == ToLine && !st.admitted && j.Room.Name != sessionRoom {
			t.Fatalf("%s: the origin got %q for room %s, but the store admitted nobody and the visitor has no session there", request, wire, j.Room.Name)
		}
	}
	for k, values := range w.HeaderMap {
		for _, v := range values {
			if strings.ContainsAny(v, "\r\n") {
				t.Fatalf("%s: header %s: %q spans lines", request, k, v)
			}
		}
	}
	for _, line := range logs {
		if strings.ContainsAny(line, "\r\n") {
			t.Fatalf("%s: log line %q spans lines", request, line)
		}
	}
}

// fuzzPass is a pass of the given kind signed with testKeys, or "".
func fuzzPass(t *testing.T, kind int, at time.Time, bind string) string {
	p := queue.Pass{Room: "shop", Epoch: 1, Bind: bind, IssuedAt: at, Expires: at.Add(time.Hour)}
	switch kind {
	case passTicket:
		p.Kind, p.Number = queue.Ticket, 5
	case passSession:
		p.Kind, p.SessionID = queue.Session, "1.4"
	case passLapsed:
		p.Kind, p.SessionID, p.IssuedAt = queue.Session, "1.4", at.Add(-time.Hour/2)
	case passOtherRoom:
		p.Kind, p.SessionID, p.Room = queue.Session, "1.4", "tickets"
	case passArrival:
		p.Kind, p.ArrivalID = queue.Arrival, "0123456789abcdef"
	default:
		return ""
	}
	keys, err := queue.ParseKeySet(testKeys)
	if err != nil {
		t.Fatal(err)
	}
	tok, err := keys.Sign(p)
	if err != nil {
		t.Fatal(err)
	}
	return tok
}

// isToken reports whether s is a header name a client can send.
func isToken(s string) bool {
	if s == "" {
		return false
	}
	for i := 0; i < len(s); i++ {
		c := s[i]
		if c <= ' ' || c >= 0x7f || strings.IndexByte(`()<>@,;:\"/[]?={}`, c) >= 0 {
			return false
		}
	}
	return true
}
