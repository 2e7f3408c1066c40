package edge

import (
	"context"
	"errors"
	"fmt"
	"io"
	"net/netip"
	"net/url"
	"strings"
	"testing"
	"time"

	"github.com/edgequeue/waitingroom/urlnorm"
	"github.com/fastly/compute-sdk-go/fsthttp"
	"github.com/fastly/compute-sdk-go/fsttest"
)

// platform is a Geo, ACLs and Bots that counts its calls; an err field,
// when set, is what the call returns.
type platform struct {
	country    string
	countryErr error
	as         int
	action     string
	aclErr     error
	verified   bool
	bad        bool
	botErr     error
	secret     string
	secretErr  error
	calls      map[string]int
}

func (p *platform) count(what string) {
	if p.calls == nil {
		p.calls = map[string]int{}
	}
	p.calls[what]++
}

func (p *platform) Country(netip.Addr) (string, error) {
	p.count("geo")
	return p.country, p.countryErr
}

func (p *platform) AS(netip.Addr) (int, error) {
	p.count("as")
	return p.as, nil
}

func (p *platform) Lookup(name string, _ netip.Addr) (string, error) {
	p.count("acl " + name)
	return p.action, p.aclErr
}

func (p *platform) Verified(*fsthttp.Request) (bool, error) {
	p.count("bots")
	return p.verified, p.botErr
}

func (p *platform) Bad(*fsthttp.Request) (bool, error) {
	p.count("bad bots")
	return p.bad, p.botErr
}

func (p *platform) Get(name string) ([]byte, error) {
	p.count("secret " + name)
	return []byte(p.secret), p.secretErr
}

// factsOver is the facts of a Service over p.
func factsOver(p *platform) facts {
	return facts{testRequest(&Handler{Geo: p, ACLs: p, Bots: p, Secrets: p})}
}

var visitorAddr = netip.MustParseAddr("192.0.2.7")

// TestFacts: each fact is the platform's answer, and each failure an error
// saying which rule it concerns and what failed.
func TestFacts(t *testing.T) {
	for _, tc := range []struct {
		name string
		p    platform
		ask  func(f facts) (string, error)
		want string
		err  string
	}{
		{"country", platform{country: "DE"}, country, "DE", ""},
		{"no record", platform{}, country, "", ""},
		{"geolocation error", platform{countryErr: errors.New("geo: unexpected error")}, country, "",
			"geolocation of 192.0.2.7 failed, so its country is unknown: geo: unexpected error"},
		{"verified bot", platform{verified: true}, bot, "true", ""},
		{"not a verified bot", platform{}, bot, "false", ""},
		{"bot detection error", platform{verified: true, botErr: errors.New("Fastly error: None")}, bot, "false",
			"bot detection failed, so the request is not a verified bot: Fastly error: None"},
		{"ACL entry", platform{action: "ALLOW"}, office, "ALLOW", ""},
		{"no ACL entry", platform{}, office, "", ""},
		{"no such ACL", platform{aclErr: fmt.Errorf("acl office: %w", ErrNotFound)}, office, "",
			"no ACL of that name is linked to this service"},
		{"ACL error", platform{action: "ALLOW", aclErr: errors.New("acl: too many requests")}, office, "",
			"lookup of 192.0.2.7 failed, so the rule does not let it through: acl: too many requests"},
		{"secret", platform{secret: "s3cret\n"}, probe, "s3cret", ""},
		{"missing secret", platform{secretErr: ErrNotFound}, probe, "", "missing from waiting_room_secrets"},
		{"blank secret", platform{secret: " \n"}, probe, "", "is blank"},
		{"unreadable secret", platform{secretErr: errors.New("secretstore: unexpected error")}, probe, "",
			"cannot be read, so the rule lets nobody through: secretstore: unexpected error"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			got, err := tc.ask(factsOver(&tc.p))
			if got != tc.want {
				t.Errorf("answer %q, want %q", got, tc.want)
			}
			switch {
			case tc.err == "" && err != nil:
				t.Errorf("error %v, want none", err)
			case tc.err != "" && (err == nil || !strings.Contains(err.Error(), tc.err)):
				t.Errorf("error %v, want one with %q", err, tc.err)
			}
			if n := len(tc.p.calls); n != 1 {
				t.Errorf("platform calls %v, want one", tc.p.calls)
			}
		})
	}
}

func country(f facts) (string, error) { return f.Country(visitorAddr) }
func office(f facts) (string, error)  { return f.ACL("office", visitorAddr) }

func bot(f facts) (string, error) {
	v, err := f.VerifiedBot()
	return fmt.Sprint(v), err
}

func probe(f facts) (string, error) {
	v, err := f.Secret("probe")
	return string(v), err
}

// TestFactsWithoutPlatform: the native build has no Geo, ACLs or Bots;
// every answer is unknown, without an error.
func TestFactsWithoutPlatform(t *testing.T) {
	f := facts{testRequest(&Handler{})}
	for name, ask := range map[string]func(facts) (string, error){"country": country, "ACL": office, "secret": probe} {
		if v, err := ask(f); v != "" || err != nil {
			t.Errorf("%s = %q, %v; want unknown", name, v, err)
		}
	}
	if v, err := bot(f); v != "false" || err != nil {
		t.Errorf("bot = %s, %v; want false", v, err)
	}
}

// seenRequest is what the origin received.
type seenRequest struct {
	target string // path and query, as the SDK sends them
	header fsthttp.Header
}

// recordingOrigin answers every request 200 and keeps what it received.
type recordingOrigin struct {
	seen   *[]seenRequest
	header fsthttp.Header // the answer's headers, if any
}

func (o recordingOrigin) Send(_ context.Context, r *fsthttp.Request) (*fsthttp.Response, error) {
	*o.seen = append(*o.seen, seenRequest{r.URL.RequestURI(), r.Header.Clone()})
	h := fsthttp.NewHeader()
	if o.header != nil {
		h = o.header.Clone()
	}
	return &fsthttp.Response{StatusCode: fsthttp.StatusOK, Header: h, Body: io.NopCloser(strings.NewReader("origin"))}, nil
}

// targetRooms: a site-wide room with a bypass on two hosts, a tickets room
// on another, and a tickets room for an origin that ignores case.
var targetRooms = mapConfig{
	KeyRooms:                  "tickets, shop, ci",
	KeyUpstashURL:             "https://eu1-real-12345.upstash.io",
	KeyRoomPrefix + "shop":    `{"hosts":["shop.example.com","[::1]"],"paths":["/"],"bypass_paths":["/static/"],"new_users_per_minute":60}`,
	KeyRoomPrefix + "tickets": `{"hosts":["tickets.test"],"paths":["/tickets/"],"new_users_per_minute":60}`,
	KeyRoomPrefix + "ci":      `{"hosts":["ci.test"],"paths":["/tickets/"],"bypass_paths":["/tickets/static/"],"case_insensitive_paths":true,"new_users_per_minute":60}`,
}

// targetCase is a service over targetRooms whose origin records what
// reaches it and whose store is down, so a request that reaches the line
// gets the busy page and nothing else.
type targetCase struct {
	svc    Handler
	now    time.Time // the time the service tells
	seen   []seenRequest
	stored []string
	logs   []string
}

func newTargetCase(config mapConfig) *targetCase {
	c := &targetCase{now: time.Unix(1_700_000_000, 0)}
	c.svc = Handler{
		Config: config, Templates: noTemplates{},
		Secrets:           mapSecrets{m: map[string]string{SecretUpstashToken: "real-token", SecretSigningKeys: testKeys}},
		Origin:            recordingOrigin{seen: &c.seen},
		Upstash:           recordingTransport{err: errors.New("the store is down"), urls: &c.stored},
		UpstashViaBackend: true, Now: func() time.Time { return c.now },
		Logf: func(f string, a ...any) { c.logs = append(c.logs, fmt.Sprintf(f, a...)) },
	}
	return c
}

// hostileRequest is a request for host and target (path and query) as a
// client sent them: parsed as the edge's URI parser parses what the
// platform hands over, or, where no parser accepts it (a raw control
// character), written into the URL as sent.
func hostileRequest(t *testing.T, method, scheme, host, target string) *fsthttp.Request {
	t.Helper()
	r, err := fsthttp.NewRequest(method, scheme+"://placeholder.test/", nil)
	if err != nil {
		t.Fatal(err)
	}
	u, err := urlnorm.ParseRequestURI(scheme + "://" + host + target)
	if err != nil {
		path, query, _ := strings.Cut(target, "?")
		u = &url.URL{Scheme: scheme, Host: host, Path: path, RawPath: path, RawQuery: query}
	}
	r.URL, r.Host = u, host
	return r
}

func (c *targetCase) do(t *testing.T, r *fsthttp.Request) *fsttest.ResponseRecorder {
	t.Helper()
	return browse(&c.svc, r)
}

// TestHostileTargets: each request is queued (it reached the line: the
// origin saw nothing and the answer is not the origin's), refused 400, or
// reaches the origin where no rule protects it, in the normal form the
// rules judged. Never the origin without a place.
func TestHostileTargets(t *testing.T) {
	const queued, refused = "queued", "400"
	tests := []struct {
		host, target string
		want         string // queued, refused, or the path and query the origin must see
	}{
		// The walks around a bypass (room "/", bypass "/static/").
		{"shop.example.com", "/static/../checkout", queued},
		{"shop.example.com", "/static/%2e%2e/checkout", queued},
		{"shop.example.com", "/static/%2E%2E/checkout", queued},
		{"shop.example.com", "/static/.%2e/checkout", queued},
		{"shop.example.com", "/static/..%2fcheckout", refused},
		{"shop.example.com", "/static%2f..%2fcheckout", refused},
		{"shop.example.com", "//checkout", queued},
		{"shop.example.com", "/static//../checkout", queued},
		{"shop.example.com", "/static/./../checkout", queued},
		{"shop.example.com", "/static/x/../../checkout", queued},
		{"shop.example.com", "/static/..%5ccheckout", refused},
		{"shop.example.com", `/static\..\checkout`, refused},
		{"shop.example.com", "/static/..%252fcheckout", refused},
		{"shop.example.com", "/static/%252e%252e/checkout", queued},
		{"shop.example.com", "/static/..;/checkout", refused},
		{"shop.example.com", "/static/..%3b/checkout", refused},
		{"shop.example.com", "/STATIC/x", queued},
		{"shop.example.com", "/%73tatic/x", "/static/x"},
		{"shop.example.com", "/static/./x?v=%2e%2e", "/static/x?v=%2e%2e"},
		{"shop.example.com", "/static/a%2Fb.png", "/static/a%2Fb.png"},
		{"shop.example.com", "/static/caf%c3%a9.png", "/static/caf%C3%A9.png"},
		// Past a room on one prefix.
		{"tickets.test", "/./tickets/buy", queued},
		{"tickets.test", "/tickets/./buy", queued},
		{"tickets.test", "/x/../tickets/buy", queued},
		{"tickets.test", "/tickets%2Fbuy", refused},
		{"tickets.test", "/tickets;a=b/buy", queued},
		{"tickets.test", "/about/../about", "/about"},
		// Case: a room for a case-sensitive origin matches the case
		// written; with case_insensitive_paths, any case.
		{"tickets.test", "/TICKETS/buy", "/TICKETS/buy"},
		{"ci.test", "/TICKETS/buy", queued},
		{"ci.test", "/Tickets/Static/app.css", "/Tickets/Static/app.css"},
		{"ci.test", "/tickets/STATIC/../buy", queued},
		// Hosts.
		{"SHOP.example.com", "/checkout", queued},
		{"shop.example.com.", "/checkout", queued},
		{"shop.example.com:443", "/checkout", queued},
		{"shop.example.com:8080", "/checkout", queued},
		{"Shop.Example.COM.:443", "/checkout", queued},
		{"[::1]:80", "/checkout", queued},
		{"other.test", "/checkout", "/checkout"},
		{"shop example.com", "/checkout", refused},
		{"", "/checkout", refused},
		{"shop.example.com:80x", "/checkout", refused},
		{"shop..example.com", "/checkout", refused},
		{"shop.example.com\r\nX-Forged: 1", "/checkout", refused},
		// Refused wherever they are.
		{"shop.example.com", "/static/%zz", refused},
		{"shop.example.com", "/checkout%", refused},
		{"other.test", "/a%00", refused},
		{"other.test", "/a\x00b", refused},
		{"shop.example.com", "/static/x%0d%0aSet-Cookie:%20a=b", refused},
		{"shop.example.com", "/static/x\r\nforged", refused},
		{"shop.example.com", "/static/x?q=\n", refused},
		{"tickets.test", "/%2e/tickets/%2e%2e/tickets/buy", queued},
		// Ambiguous outside any room's line: to the origin, escaped.
		{"other.test", "/a%2Fb/..%5Cc", "/a%2Fb/..%5Cc"},
	}
	if len(tests) < 30 {
		t.Fatalf("%d cases; the issue asks for at least 30", len(tests))
	}
	for _, tc := range tests {
		c := newTargetCase(targetRooms)
		w := c.do(t, hostileRequest(t, fsthttp.MethodGet, "https", tc.host, tc.target))
		name := fmt.Sprintf("%q %q", tc.host, tc.target)
		switch tc.want {
		case queued:
			if len(c.seen) != 0 || w.Code == fsthttp.StatusBadRequest || w.Code/100 == 2 {
				t.Errorf("%s: %d, origin saw %v; want it queued", name, w.Code, c.seen)
			}
		case refused:
			if len(c.seen) != 0 || w.Code != fsthttp.StatusBadRequest || !strings.Contains(w.Body.String(), "This address cannot be served") {
				t.Errorf("%s: %d %s, origin saw %v; want 400", name, w.Code, w.Body, c.seen)
			}
			if len(c.logs) != 1 || !strings.HasPrefix(c.logs[0], "refused: ") || strings.ContainsAny(c.logs[0], "\r\n\x00") {
				t.Errorf("%s: log %q; want one line saying why, quoted", name, c.logs)
			}
		default:
			if w.Code != fsthttp.StatusOK || len(c.seen) != 1 || c.seen[0].target != tc.want {
				t.Errorf("%s: %d, origin saw %v; want it to see %q", name, w.Code, c.seen, tc.want)
			}
		}
	}
}

// TestAdminAndLeaveMatchedNormalised: the admin panel and the beacon are
// found at their normal form, and only there.
func TestAdminAndLeaveMatchedNormalised(t *testing.T) {
	for _, tc := range []struct {
		target string
		code   int
	}{
		{"/_wr/x/../admin", fsthttp.StatusServiceUnavailable}, // the panel: no password set
		{"//_wr/%61dmin/", fsthttp.StatusServiceUnavailable},
		{"/_wr/./leave", fsthttp.StatusMethodNotAllowed}, // the beacon, which takes a POST
		{"/_wr/leave/", fsthttp.StatusOK},                // not the beacon: the origin's
		{"/_WR/admin", fsthttp.StatusOK},
	} {
		c := newTargetCase(mapConfig{})
		w := c.do(t, hostileRequest(t, fsthttp.MethodGet, "https", "shop.test", tc.target))
		if w.Code != tc.code {
			t.Errorf("%q: %d %s, want %d", tc.target, w.Code, w.Body, tc.code)
		}
	}
}

// TestPlainHTTP: outside a local host a protected room sends plain HTTP to
// https (308, same host, path and query, in normal form); a local host
// serves it; bypass paths and other hosts are not redirected.
func TestPlainHTTP(t *testing.T) {
	for _, local := range []bool{false, true} {
		c := newTargetCase(targetRooms)
		c.svc.Local = local
		w := c.do(t, hostileRequest(t, fsthttp.MethodPost, "http", "SHOP.example.com:80", "/static/../checkout?id=7&x=%2F"))
		switch {
		case len(c.seen) != 0:
			t.Errorf("local %v: the origin saw %v", local, c.seen)
		case !local && (w.Code != fsthttp.StatusPermanentRedirect || w.HeaderMap.Get("Location") != "https://shop.example.com/checkout?id=7&x=%2F"):
			t.Errorf("local %v: %d Location %q; want 308 to https", local, w.Code, w.HeaderMap.Get("Location"))
		case local && (w.Code != fsthttp.StatusServiceUnavailable || len(c.stored) == 0):
			t.Errorf("local %v: %d %s; want the line (the busy page of a store that is down)", local, w.Code, w.Body)
		}
		for _, target := range []string{"/static/app.css", "/"} {
			host := "shop.example.com"
			if target == "/" {
				host = "other.test"
			}
			c := newTargetCase(targetRooms)
			c.svc.Local = local
			if w := c.do(t, hostileRequest(t, fsthttp.MethodGet, "http", host, target)); w.Code != fsthttp.StatusOK || len(c.seen) != 1 {
				t.Errorf("local %v: http://%s%s: %d; want it forwarded", local, host, target, w.Code)
			}
		}
	}
	// TLS is the URL's scheme, or a TLS protocol the platform reports.
	c := newTargetCase(targetRooms)
	r := hostileRequest(t, fsthttp.MethodGet, "http", "shop.example.com", "/checkout")
	r.TLSInfo.Protocol = "TLSv1.3"
	if w := c.do(t, r); w.Code != fsthttp.StatusServiceUnavailable {
		t.Errorf("TLS reported by the platform: %d; want the line", w.Code)
	}
}

// TestHSTS: hsts_max_age adds Strict-Transport-Security to protected
// rooms' answers over TLS, the edge's pages and the origin's alike, unless
// the origin sets its own; off by default, and never over plain HTTP.
func TestHSTS(t *testing.T) {
	config := mapConfig{KeyHSTSMaxAge: "31536000"}
	for k, v := range targetRooms {
		config[k] = v
	}
	const want = "max-age=31536000"
	for _, tc := range []struct {
		config       mapConfig
		scheme, path string
		origin       fsthttp.Header
		want         string
	}{
		{config, "https", "/checkout", nil, want},
		{targetRooms, "https", "/checkout", nil, ""},
		{config, "http", "/checkout", nil, ""},
		{config, "https", "/static/x", nil, ""},
	} {
		c := newTargetCase(tc.config)
		c.svc.Local = true
		w := c.do(t, hostileRequest(t, fsthttp.MethodGet, tc.scheme, "shop.example.com", tc.path))
		if got := w.HeaderMap.Get(hstsHeader); got != tc.want {
			t.Errorf("%s %s: HSTS %q, want %q", tc.scheme, tc.path, got, tc.want)
		}
	}
	// On the origin's answer: kept when the origin sets none.
	c := newTargetCase(config)
	sessionCase := func(originHSTS string) *fsttest.ResponseRecorder {
		h := fsthttp.NewHeader()
		if originHSTS != "" {
			h.Set(hstsHeader, originHSTS)
		}
		c.svc.Origin = recordingOrigin{seen: &c.seen, header: h}
		w := fsttest.NewRecorder()
		w.Header().Set(hstsHeader, want) // as guard sets it
		testRequest(&c.svc).forward(context.Background(), w, hostileRequest(t, fsthttp.MethodGet, "https", "shop.example.com", "/"), "", nil)
		return w
	}
	if got := sessionCase("").HeaderMap.Get(hstsHeader); got != want {
		t.Errorf("origin without HSTS: %q", got)
	}
	if got := sessionCase("max-age=60").HeaderMap.Get(hstsHeader); got != "max-age=60" {
		t.Errorf("origin with its own HSTS: %q", got)
	}
}

// TestReservedHeadersStripped: whatever a visitor sends under the
// Waiting-Room- prefix never reaches the origin.
func TestReservedHeadersStripped(t *testing.T) {
	c := newTargetCase(targetRooms)
	r := hostileRequest(t, fsthttp.MethodGet, "https", "other.test", "/")
	r.Header.Add(FailOpenHeader, "store-unavailable")
	r.Header.Add("waiting-room-command", "admit=100")
	r.Header.Add("WAITING-ROOM-ANYTHING", "x")
	r.Header["waiting-room-raw"] = []string{"set without canonical form"}
	r.Header.Add("Waiting-Roomy", "kept")
	if w := c.do(t, r); w.Code != fsthttp.StatusOK || len(c.seen) != 1 {
		t.Fatalf("%d, origin saw %v", w.Code, c.seen)
	}
	h := c.seen[0].header
	for _, k := range h.Keys() {
		if strings.HasPrefix(strings.ToLower(k), "waiting-room-") {
			t.Errorf("the origin got %s: %q", k, h.Values(k))
		}
	}
	if h.Get("Waiting-Roomy") != "kept" {
		t.Errorf("a header outside the prefix was stripped: %v", h)
	}
}

// TestSecurityHeaders: every answer the edge writes itself carries
// nosniff, no-referrer and a Content-Security-Policy that forbids framing;
// the origin's answers carry the origin's own headers only.
func TestSecurityHeaders(t *testing.T) {
	broken := mapConfig{KeyRooms: "a", KeyRoomPrefix + "a": "{"}
	closed := mapConfig{KeyRooms: "a", KeyRoomPrefix + "a": `{"paths":["/"],"mode":"reject"}`}
	for _, tc := range []struct {
		name   string
		config mapConfig
		method string
		host   string
		target string
		policy string // "" for a page's own
		code   int
	}{
		{"busy", targetRooms, fsthttp.MethodGet, "shop.example.com", "/", "", fsthttp.StatusServiceUnavailable},
		{"problem (400)", targetRooms, fsthttp.MethodGet, "shop.example.com", "/%zz", "", fsthttp.StatusBadRequest},
		{"redirect to https", targetRooms, fsthttp.MethodGet, "shop.example.com", "/", pagePolicy, fsthttp.StatusPermanentRedirect},
		{"rooms broken", broken, fsthttp.MethodGet, "shop.example.com", "/", "", fsthttp.StatusServiceUnavailable},
		{"closed", closed, fsthttp.MethodGet, "shop.example.com", "/", "", fsthttp.StatusServiceUnavailable},
		{"not set up", mapConfig{KeyRooms: "a", KeyRoomPrefix + "a": `{"paths":["/"],"max_active_users":1}`}, fsthttp.MethodGet, "shop.example.com", "/", "", fsthttp.StatusServiceUnavailable},
		{"leave", targetRooms, fsthttp.MethodGet, "shop.example.com", LeavePath, pagePolicy, fsthttp.StatusMethodNotAllowed},
		{"admin", targetRooms, fsthttp.MethodGet, "shop.example.com", DefaultAdminPath, adminPolicy, fsthttp.StatusServiceUnavailable},
	} {
		c := newTargetCase(tc.config)
		if tc.name == "not set up" {
			c.svc.Secrets = mapSecrets{m: map[string]string{}}
		}
		scheme := "https"
		if tc.name == "redirect to https" {
			scheme = "http"
		}
		w := c.do(t, hostileRequest(t, tc.method, scheme, tc.host, tc.target))
		h := w.HeaderMap
		policy := h.Get("Content-Security-Policy")
		if tc.policy == "" && strings.HasPrefix(policy, "default-src 'none'; script-src ") && !strings.Contains(policy, "unsafe") {
			tc.policy = policy // a page: its template's own (TestPagePolicy)
		}
		if w.Code != tc.code || h.Get("X-Content-Type-Options") != "nosniff" || h.Get("Referrer-Policy") != "no-referrer" ||
			policy != tc.policy || !strings.Contains(tc.policy, "frame-ancestors 'none'") {
			t.Errorf("%s: %d %v", tc.name, w.Code, h)
		}
	}
	c := newTargetCase(targetRooms)
	w := c.do(t, hostileRequest(t, fsthttp.MethodGet, "https", "shop.example.com", "/static/a.css"))
	if w.Code != fsthttp.StatusOK || w.HeaderMap.Get("Content-Security-Policy") != "" || w.HeaderMap.Get("Referrer-Policy") != "" {
		t.Errorf("the origin's answer: %d %v", w.Code, w.HeaderMap)
	}
}

// TestLogLinesQuoted: what a visitor sends cannot forge a log line: a
// path with %0A and one with a raw CR each give exactly one line.
func TestLogLinesQuoted(t *testing.T) {
	for _, target := range []string{"/x%0Aroom shop: admit (forged)", "/x\rroom shop: admit (forged)", "/static/%0a"} {
		c := newTargetCase(targetRooms)
		c.do(t, hostileRequest(t, fsthttp.MethodGet, "https", "shop.example.com", target))
		all := strings.Join(c.logs, "\n")
		if len(c.logs) != 1 || strings.Count(all, "\n") != 0 || strings.ContainsRune(all, '\r') {
			t.Errorf("%q: log %q; want exactly one line", target, c.logs)
		}
	}
	// The origin's failure names the method and path quoted, too.
	c := newTargetCase(targetRooms)
	c.svc.Origin = failingOrigin{errors.New("connection refused")}
	c.do(t, hostileRequest(t, "GE\nT", "https", "other.test", "/a%20b"))
	if len(c.logs) != 1 || strings.ContainsAny(c.logs[0], "\r\n") || !strings.Contains(c.logs[0], `"GE\nT" "/a b"`) {
		t.Errorf("origin failure log %q", c.logs)
	}
}

func TestTakeArrivalMark(t *testing.T) {
	tests := []struct {
		query, kept, mark string
		found             bool
	}{
		{"", "", "", false},
		{"a=1&b=2", "a=1&b=2", "", false},
		{"_wr_arrival=x", "", "x", true},
		{"_wr_arrival=x&a=1", "a=1", "x", true},
		{"a=1&_wr_arrival=x", "a=1", "x", true},
		{"a=1&_wr_arrival=x&b=%2F&c", "a=1&b=%2F&c", "x", true},
		{"_wr_arrival=x&_wr_arrival=y&a=1", "a=1", "x", true},                               // the first counts, all go
		{"%5Fwr%5Farrival=x&a=1", "a=1", "x", true},                                         // as the origin would decode it
		{"_wr_arrival&a=1", "a=1", "", true},                                                // without a value
		{"a=_wr_arrival%3Dx&_wr_arrivals=1", "a=_wr_arrival%3Dx&_wr_arrivals=1", "", false}, // a value, another name
		{"_WR_ARRIVAL=x", "_WR_ARRIVAL=x", "", false},                                       // names are case-sensitive
		{"%zz=1&_wr_arrival=x", "%zz=1", "x", true},                                         // a bad escape is another name
		{"a=1&&_wr_arrival=x&", "a=1&&", "x", true},                                         // empty parts kept as sent
	}
	for _, tc := range tests {
		u := &url.URL{Path: "/p", RawQuery: tc.query}
		mark, found := TakeArrivalMark(u)
		if u.RawQuery != tc.kept || mark != tc.mark || found != tc.found {
			t.Errorf("%q: kept %q, mark %q, found %v; want %q, %q, %v", tc.query, u.RawQuery, mark, found, tc.kept, tc.mark, tc.found)
		}
	}
}
