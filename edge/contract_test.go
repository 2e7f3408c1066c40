package edge

import (
	"context"
	"encoding/json"
	"net"
	"strings"
	"testing"
	"time"

	"github.com/edgequeue/waitingroom/queue"
	"github.com/fastly/compute-sdk-go/fsthttp"
	"github.com/fastly/compute-sdk-go/fsttest"
)

// contractRooms: a room that answers apps on other origins, a second
// room on the same host with its own cookie, a closed room, and a room
// that lists no origin.
var contractRooms = mapConfig{
	KeyRooms:      "app, other, closed, plain",
	KeyUpstashURL: "https://eu1-real-12345.upstash.io",
	KeyRoomPrefix + "app": `{"hosts":["app.test"],"paths":["/"],"bypass_paths":["/static/"],"max_active_users":10,"cookie_name":"wr_app",
		"queue_status_code":202,"cors_origins":["https://spa.test","http://localhost:3000"]}`,
	KeyRoomPrefix + "other":  `{"hosts":["app.test"],"paths":["/other/"],"max_active_users":10,"cookie_name":"wr_other","cors_origins":["https://spa.test"]}`,
	KeyRoomPrefix + "closed": `{"hosts":["closed.test"],"paths":["/"],"mode":"reject","cors_origins":["https://spa.test"]}`,
	KeyRoomPrefix + "plain":  `{"hosts":["plain.test"],"paths":["/"],"max_active_users":10}`,
}

// The store's outcomes as laneTransport takes them.
const (
	outWaiting = 0
	outCalled  = 1
	outLost    = 2
	outDown    = -1
)

// contractCase is a service over contractRooms whose store answers
// with outcome and counts its calls, and whose origin records what
// reaches it.
type contractCase struct {
	*inviteCase
}

func newContractCase(t *testing.T, outcome int64) *contractCase {
	c := &contractCase{newInviteCase(t, 12, outcome)}
	c.svc.Config = contractRooms
	return c
}

// pass signs a pass of kind for room, issued a second before the
// service's clock.
func (c *contractCase) pass(t *testing.T, kind queue.PassKind, room string) string {
	t.Helper()
	at := c.now.Add(-time.Second)
	var bind string
	for _, r := range LoadSettings(c.svc.Config).Rooms {
		if r.Name == room {
			bind = queue.Binding(r.BindSession, contractUA, net.ParseIP(contractIP))
		}
	}
	p := queue.Pass{Kind: kind, Room: room, Epoch: 7, Bind: bind, IssuedAt: at, Expires: at.Add(time.Hour)}
	switch kind {
	case queue.Ticket:
		p.Number = 12
	case queue.Session:
		p.SessionID = "7.1"
	case queue.Arrival:
		p.ArrivalID = "0123456789abcdef"
	}
	tok, err := c.keys.Sign(p)
	if err != nil {
		t.Fatal(err)
	}
	return tok
}

// The client contractCase sends from.
const (
	contractIP = "192.0.2.7"
	contractUA = "test app"
)

// send sends method host target with the header pairs, and counts the
// store calls and origin requests it caused.
func (c *contractCase) send(t *testing.T, method, host, target string, header ...string) (w *fsttest.ResponseRecorder, storeCalls, originRequests int) {
	t.Helper()
	r := hostileRequest(t, method, "https", host, target)
	r.RemoteAddr = contractIP
	r.Header.Set("User-Agent", contractUA)
	for i := 0; i+1 < len(header); i += 2 {
		r.Header.Add(header[i], header[i+1])
	}
	ops, seen := len(c.ops), len(c.seen)
	w = fsttest.NewRecorder()
	c.svc.ServeHTTP(context.Background(), w, r)
	return w, len(c.ops) - ops, len(c.seen) - seen
}

// answer is what a test reads of a JSON answer.
type answer struct {
	Room              string `json:"room"`
	Status            string `json:"status"`
	URL               string `json:"url"`
	Ticket            int64  `json:"ticket"`
	RetryAfterSeconds *int   `json:"retry_after_seconds"`
}

func readAnswer(t *testing.T, w *fsttest.ResponseRecorder) answer {
	t.Helper()
	var a answer
	if err := json.Unmarshal(w.Body.Bytes(), &a); err != nil {
		t.Fatalf("%d %q: not JSON: %v", w.Code, w.Body.String(), err)
	}
	if ct := w.HeaderMap.Get("Content-Type"); ct != "application/json" {
		t.Errorf("Content-Type %q", ct)
	}
	return a
}

// passKind is the kind of the pass in a Waiting-Room-Pass answer for
// room's cookie, or "" when there is none.
func (c *contractCase) passKind(t *testing.T, h fsthttp.Header, cookie string) queue.PassKind {
	t.Helper()
	v := h.Values(PassHeader)
	if len(v) == 0 {
		return ""
	}
	name, tok, ok := strings.Cut(v[0], "=")
	if len(v) != 1 || !ok || name != cookie {
		t.Fatalf("%s %q, want one %s=<pass>", PassHeader, v, cookie)
	}
	if tok == "" {
		return "withdrawn"
	}
	p, err := c.keys.Verify(strings.TrimPrefix(cookie, "wr_"), tok, c.now)
	if err != nil {
		t.Fatalf("%s: %v", PassHeader, err)
	}
	return p.Kind
}

// TestPassHeaderAttacks: a pass in Waiting-Room-Pass is read exactly as
// the same pass in the room's cookie: bounded, verified for this room
// alone, never a way around the line, and never seen by the origin.
func TestPassHeaderAttacks(t *testing.T) {
	valid := func(c *contractCase) string { return "wr_app=" + c.pass(t, queue.Ticket, "app") }
	tests := []struct {
		name    string
		outcome int64
		header  func(c *contractCase) []string
		// want: the answer's status, body status ("" for the origin's
		// answer), the pass kind given back, store calls, origin
		// requests, and a log line.
		code           int
		status         string
		gives          queue.PassKind
		stores, origin int
		log            string
	}{
		{"an app's first request", outWaiting, func(*contractCase) []string { return []string{PassHeader, "none"} },
			fsthttp.StatusAccepted, "joining", queue.Arrival, 0, 0, ""},
		{"its arrival pass joins", outWaiting, func(c *contractCase) []string {
			return []string{PassHeader, "wr_app=" + c.pass(t, queue.Arrival, "app")}
		}, fsthttp.StatusAccepted, "waiting", queue.Ticket, 1, 0, "wait (joined)"},
		{"its ticket polls", outWaiting, func(c *contractCase) []string { return []string{PassHeader, valid(c)} },
			fsthttp.StatusAccepted, "waiting", queue.Ticket, 1, 0, "wait (waiting)"},
		{"a called ticket reaches the origin with its session", outCalled, func(c *contractCase) []string { return []string{PassHeader, valid(c)} },
			fsthttp.StatusOK, "", queue.Session, 1, 1, "admit (called)"},
		{"a session inside its heartbeat costs nothing", outDown, func(c *contractCase) []string {
			return []string{PassHeader, "wr_app=" + c.pass(t, queue.Session, "app")}
		}, fsthttp.StatusOK, "", "", 0, 1, ""},
		{"another room's session", outCalled, func(c *contractCase) []string {
			return []string{PassHeader, "wr_app=" + c.pass(t, queue.Session, "other")}
		}, fsthttp.StatusAccepted, "joining", queue.Arrival, 0, 0, "offered pass refused"},
		{"another room's session under its own name", outCalled, func(c *contractCase) []string {
			return []string{PassHeader, "wr_other=" + c.pass(t, queue.Session, "other")}
		}, fsthttp.StatusAccepted, "joining", queue.Arrival, 0, 0, ""},
		{"a tampered session", outCalled, func(c *contractCase) []string {
			tok := c.pass(t, queue.Session, "app")
			return []string{PassHeader, "wr_app=" + tok[:len(tok)-2] + "AA"}
		}, fsthttp.StatusAccepted, "joining", queue.Arrival, 0, 0, "offered pass refused: pass refused: signature does not match"},
		{"a bare pass without its name", outCalled, func(c *contractCase) []string {
			return []string{PassHeader, c.pass(t, queue.Session, "app")}
		}, fsthttp.StatusAccepted, "joining", queue.Arrival, 0, 0, ""},
		{"an oversized header", outCalled, func(c *contractCase) []string {
			return []string{PassHeader, "wr_app=" + c.pass(t, queue.Session, "app") + "; junk=" + strings.Repeat("x", maxPassBytes)}
		}, fsthttp.StatusAccepted, "joining", queue.Arrival, 0, 0, PassHeader + " ignored: 8"},
		{"too many lines", outCalled, func(c *contractCase) []string {
			h := []string{PassHeader, "wr_app=" + c.pass(t, queue.Session, "app")}
			for range maxPassLines {
				h = append(h, PassHeader, "x=1")
			}
			return h
		}, fsthttp.StatusAccepted, "joining", queue.Arrival, 0, 0, PassHeader + " ignored: 5 lines, more than 4"},
		{"the valid pass behind eight forged ones is not looked at", outCalled, func(c *contractCase) []string {
			return []string{PassHeader, strings.Repeat("wr_app=forged; ", 8) + "wr_app=" + c.pass(t, queue.Session, "app")}
		}, fsthttp.StatusAccepted, "joining", queue.Arrival, 0, 0, "offered pass refused: pass refused: not a signed token"},
		{"several values: the best place is kept", outCalled, func(c *contractCase) []string {
			return []string{PassHeader, "wr_app=forged; wr_app=" + c.pass(t, queue.Arrival, "app"), PassHeader, valid(c)}
		}, fsthttp.StatusOK, "", queue.Session, 1, 1, "admit (called)"},
		{"a header beside the cookie: the cookie's session is kept", outDown, func(c *contractCase) []string {
			return []string{"Cookie", "wr_app=" + c.pass(t, queue.Session, "app"), PassHeader, "wr_app=forged"}
		}, fsthttp.StatusOK, "", "", 0, 1, ""},
		{"an empty header still asks for the header", outWaiting, func(*contractCase) []string { return []string{PassHeader, ""} },
			fsthttp.StatusAccepted, "joining", queue.Arrival, 0, 0, ""},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			c := newContractCase(t, tc.outcome)
			c.svc.Origin = recordingOrigin{seen: &c.seen, header: fsthttp.Header{PassHeader: {"wr_app=from-the-origin"}}}
			w, stores, origin := c.send(t, "GET", "app.test", "/checkout", append(tc.header(c), "Accept", "application/json")...)
			if w.Code != tc.code || stores != tc.stores || origin != tc.origin {
				t.Fatalf("%d with %d store calls and %d origin requests, want %d, %d, %d; body %q; log %q",
					w.Code, stores, origin, tc.code, tc.stores, tc.origin, w.Body.String(), c.logs)
			}
			if tc.status != "" {
				if a := readAnswer(t, w); a.Status != tc.status || a.Room != "app" {
					t.Errorf("answer %+v, want status %q in room app", a, tc.status)
				}
			}
			if got := c.passKind(t, w.HeaderMap, "wr_app"); got != tc.gives {
				t.Errorf("gave a %q pass, want %q", got, tc.gives)
			}
			if tc.status == "joining" {
				if loc := w.HeaderMap.Get("Location"); loc != "" || w.HeaderMap.Get("Retry-After") != "0" {
					t.Errorf("an app's arrival redirects (Location %q) or asks it to wait (Retry-After %q)", loc, w.HeaderMap.Get("Retry-After"))
				}
			}
			if cc := w.HeaderMap.Get("Cache-Control"); (tc.status != "" || tc.gives != "") && !strings.Contains(cc, "no-store") {
				t.Errorf("Cache-Control %q", cc)
			}
			for _, seen := range c.seen {
				for k := range seen.header {
					if strings.HasPrefix(strings.ToLower(k), "waiting-room-p") {
						t.Errorf("the origin saw %s: %q", k, seen.header.Values(k))
					}
				}
			}
			if tc.log != "" && !strings.Contains(strings.Join(c.logs, "\n"), tc.log) {
				t.Errorf("log %q, want a line holding %q", c.logs, tc.log)
			}
		})
	}
}

// TestTamperedHeaderIsATamperedCookie: the same forged pass in the
// cookie and in the header gets the same arrival and the same log line;
// only the arrival's form differs (a redirect for the cookie's browser).
func TestTamperedHeaderIsATamperedCookie(t *testing.T) {
	c := newContractCase(t, outCalled)
	tok := c.pass(t, queue.Ticket, "app")
	tok = tok[:len(tok)-2] + "AA"
	cookie, _, _ := c.send(t, "GET", "app.test", "/", "Accept", "application/json", "Cookie", "wr_app="+tok)
	cookieLog := strings.Join(c.logs, "\n")
	c.logs = nil
	header, _, _ := c.send(t, "GET", "app.test", "/", "Accept", "application/json", PassHeader, "wr_app="+tok)
	if a, b := readAnswer(t, cookie), readAnswer(t, header); a.Status != "joining" || b.Status != "joining" {
		t.Fatalf("cookie %+v, header %+v: want both joining", a, b)
	}
	if cookie.Code != fsthttp.StatusTemporaryRedirect || header.Code != fsthttp.StatusAccepted {
		t.Errorf("cookie %d, header %d", cookie.Code, header.Code)
	}
	if headerLog := strings.Join(c.logs, "\n"); headerLog != cookieLog || !strings.Contains(headerLog, "signature does not match") {
		t.Errorf("logs differ or say nothing:\ncookie %q\nheader %q", cookieLog, headerLog)
	}
}

// TestJSONStates: every state a JSON client meets, with its status code,
// headers and body.
func TestJSONStates(t *testing.T) {
	json := []string{"Accept", "application/json"}
	poll := append([]string{PollHeader, "1"}, json...)
	with := func(h []string, more ...string) []string { return append(append([]string(nil), h...), more...) }
	tests := []struct {
		name           string
		outcome        int64
		host, target   string
		header         func(c *contractCase) []string
		code           int
		status         string
		retryAfter     string
		url            string
		stores, origin int
		cookie         bool // a Set-Cookie is given
	}{
		{"joining: a browser's fetch follows the redirect", outWaiting, "app.test", "/a?b=1", func(*contractCase) []string { return json },
			fsthttp.StatusTemporaryRedirect, "joining", "0", "", 0, 0, true},
		{"waiting, with the room's queue_status_code", outWaiting, "app.test", "/", func(c *contractCase) []string {
			return with(json, "Cookie", "wr_app="+c.pass(t, queue.Ticket, "app"))
		}, fsthttp.StatusAccepted, "waiting", "", "", 1, 0, true},
		{"waiting, polled", outWaiting, "app.test", "/", func(c *contractCase) []string {
			return with(poll, "Cookie", "wr_app="+c.pass(t, queue.Ticket, "app"))
		}, fsthttp.StatusAccepted, "waiting", "", "", 1, 0, true},
		{"admitted: a poll is answered, not forwarded", outCalled, "app.test", "/checkout?item=7", func(c *contractCase) []string {
			return with(poll, "Cookie", "wr_app="+c.pass(t, queue.Ticket, "app"))
		}, fsthttp.StatusOK, "admitted", "", "/checkout?item=7", 1, 0, true},
		{"admitted: the url is the normal form", outCalled, "app.test", "//checkout/./x", func(c *contractCase) []string {
			return with(poll, "Cookie", "wr_app="+c.pass(t, queue.Ticket, "app"))
		}, fsthttp.StatusOK, "admitted", "", "/checkout/x", 1, 0, true},
		{"admitted: a session's poll inside its heartbeat", outDown, "app.test", "/", func(c *contractCase) []string {
			return with(poll, "Cookie", "wr_app="+c.pass(t, queue.Session, "app"))
		}, fsthttp.StatusOK, "admitted", "", "/", 0, 0, false},
		{"pass-through: JSON without the poll header", outCalled, "app.test", "/", func(c *contractCase) []string {
			return with(json, "Cookie", "wr_app="+c.pass(t, queue.Ticket, "app"))
		}, fsthttp.StatusOK, "", "", "", 1, 1, true},
		{"pass-through: a poll header that is not 1", outCalled, "app.test", "/", func(c *contractCase) []string {
			return with(json, PollHeader, "true", "Cookie", "wr_app="+c.pass(t, queue.Ticket, "app"))
		}, fsthttp.StatusOK, "", "", "", 1, 1, true},
		{"pass-through: a poll from a page that asks no JSON", outCalled, "app.test", "/", func(c *contractCase) []string {
			return []string{PollHeader, "1", "Cookie", "wr_app=" + c.pass(t, queue.Ticket, "app")}
		}, fsthttp.StatusOK, "", "", "", 1, 1, true},
		{"busy", outDown, "app.test", "/", func(c *contractCase) []string {
			return with(poll, "Cookie", "wr_app="+c.pass(t, queue.Ticket, "app"))
		}, fsthttp.StatusServiceUnavailable, "busy", "5", "", 1, 0, false},
		{"closed", outWaiting, "closed.test", "/", func(*contractCase) []string { return json },
			fsthttp.StatusServiceUnavailable, "closed", "300", "", 0, 0, false},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			c := newContractCase(t, tc.outcome)
			w, stores, origin := c.send(t, "GET", tc.host, tc.target, tc.header(c)...)
			if w.Code != tc.code || stores != tc.stores || origin != tc.origin {
				t.Fatalf("%d with %d store calls and %d origin requests, want %d, %d, %d; body %q; log %q",
					w.Code, stores, origin, tc.code, tc.stores, tc.origin, w.Body.String(), c.logs)
			}
			if got := w.HeaderMap.Get("Retry-After"); got != tc.retryAfter {
				t.Errorf("Retry-After %q, want %q", got, tc.retryAfter)
			}
			if got := w.HeaderMap.Get("Set-Cookie") != ""; got != tc.cookie {
				t.Errorf("Set-Cookie %q, want one: %v", w.HeaderMap.Get("Set-Cookie"), tc.cookie)
			}
			if cc := w.HeaderMap.Get("Cache-Control"); !strings.Contains(cc, "no-store") {
				t.Errorf("Cache-Control %q", cc)
			}
			if tc.status == "" {
				if w.Body.String() != "origin" {
					t.Errorf("body %q, want the origin's", w.Body.String())
				}
				return
			}
			a := readAnswer(t, w)
			if a.Status != tc.status || a.URL != tc.url {
				t.Errorf("answer %+v, want status %q url %q", a, tc.status, tc.url)
			}
			if tc.retryAfter != "" && (a.RetryAfterSeconds == nil || w.HeaderMap.Get("Retry-After") != itoa(*a.RetryAfterSeconds)) {
				t.Errorf("retry_after_seconds %v and Retry-After %q differ", a.RetryAfterSeconds, w.HeaderMap.Get("Retry-After"))
			}
			// A browser (no pass header) asking JSON is given the pass in
			// the header too, beside its cookie.
			if tc.cookie && c.passKind(t, w.HeaderMap, "wr_app") == "" {
				t.Errorf("no %s beside the cookie", PassHeader)
			}
		})
	}
}

func itoa(n int) string {
	b, _ := json.Marshal(n)
	return string(b)
}

// TestClosedPage: a browser still gets the closed page.
func TestClosedPage(t *testing.T) {
	c := newContractCase(t, outWaiting)
	w, stores, origin := c.send(t, "GET", "closed.test", "/")
	if w.Code != fsthttp.StatusServiceUnavailable || !strings.HasPrefix(w.HeaderMap.Get("Content-Type"), "text/html") ||
		w.HeaderMap.Get("Retry-After") != "300" || stores+origin != 0 {
		t.Errorf("%d %q Retry-After %q, %d store calls, %d origin requests", w.Code, w.HeaderMap.Get("Content-Type"),
			w.HeaderMap.Get("Retry-After"), stores, origin)
	}
}

// TestOriginRevokeWithdrawsTheHeaderPass: the origin's revoke command
// ends the session and the header pass with the cookie.
func TestOriginRevokeWithdrawsTheHeaderPass(t *testing.T) {
	c := newContractCase(t, outCalled)
	c.svc.Origin = recordingOrigin{seen: &c.seen, header: fsthttp.Header{queue.CommandHeader: {"revoke"}}}
	w, _, origin := c.send(t, "GET", "app.test", "/", PassHeader, "wr_app="+c.pass(t, queue.Ticket, "app"))
	if origin != 1 || c.passKind(t, w.HeaderMap, "wr_app") != "withdrawn" || !strings.Contains(w.HeaderMap.Get("Set-Cookie"), "Max-Age=0") {
		t.Errorf("%d: %s %q, Set-Cookie %q", w.Code, PassHeader, w.HeaderMap.Values(PassHeader), w.HeaderMap.Get("Set-Cookie"))
	}
}

// TestCORS: a room's answers are readable by the origins it lists, with
// credentials and the pass header exposed; to any other origin they say
// nothing, and an answer that depends on Origin says so (Vary).
func TestCORS(t *testing.T) {
	tests := []struct {
		name, host string
		origins    []string
		allow      string
		vary       bool
	}{
		{"listed", "app.test", []string{"https://spa.test"}, "https://spa.test", true},
		{"listed with a port", "app.test", []string{"http://localhost:3000"}, "http://localhost:3000", true},
		{"another room on the host lists it too", "app.test", []string{"https://spa.test"}, "https://spa.test", true},
		{"unlisted", "app.test", []string{"https://evil.test"}, "", true},
		{"a listed origin's look-alike", "app.test", []string{"https://spa.test.evil.test"}, "", true},
		{"listed in another case", "app.test", []string{"https://SPA.test"}, "", true},
		{"null", "app.test", []string{"null"}, "", true},
		{"two origins", "app.test", []string{"https://spa.test", "https://spa.test"}, "", true},
		{"none", "app.test", nil, "", true},
		{"a room that lists none", "plain.test", []string{"https://spa.test"}, "", false},
		{"the closed room", "closed.test", []string{"https://spa.test"}, "https://spa.test", true},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			c := newContractCase(t, outWaiting)
			h := []string{"Accept", "application/json"}
			for _, o := range tc.origins {
				h = append(h, "Origin", o)
			}
			w, _, _ := c.send(t, "GET", tc.host, "/", h...)
			got := w.HeaderMap
			if got.Get("Access-Control-Allow-Origin") != tc.allow {
				t.Fatalf("Access-Control-Allow-Origin %q, want %q", got.Get("Access-Control-Allow-Origin"), tc.allow)
			}
			if vary := strings.Contains(strings.Join(got.Values("Vary"), ","), "Origin"); vary != tc.vary {
				t.Errorf("Vary %q, want Origin: %v", got.Values("Vary"), tc.vary)
			}
			want := map[string]string{"Access-Control-Allow-Credentials": "true", "Access-Control-Expose-Headers": PassHeader + ", Retry-After"}
			for k, v := range want {
				if tc.allow == "" {
					v = ""
				}
				if got.Get(k) != v {
					t.Errorf("%s %q, want %q", k, got.Get(k), v)
				}
			}
		})
	}
}

// TestPreflights: a preflight is answered at the edge, with no store call
// and no origin request, wherever the room protects the path; a flood of
// them reaches neither.
func TestPreflights(t *testing.T) {
	long := strings.Repeat("x-a, ", maxPreflightHeaderBytes/5+1)
	var many []string
	for i := range maxPreflightHeaders - 1 {
		many = append(many, "x-h"+itoa(i))
	}
	tests := []struct {
		name, host, path string
		header           []string
		code             int
		allow            string // Access-Control-Allow-Headers, "" for none
		origin           int    // origin requests
		log              string
	}{
		{"listed", "app.test", "/api/cart", []string{"Origin", "https://spa.test", "Access-Control-Request-Method", "POST",
			"Access-Control-Request-Headers", "content-type, Waiting-Room-Pass"},
			fsthttp.StatusNoContent, PassHeader + ", " + PollHeader + ", content-type", 0, ""},
		{"listed, no headers asked", "app.test", "/", []string{"Origin", "http://localhost:3000", "Access-Control-Request-Method", "GET"},
			fsthttp.StatusNoContent, PassHeader + ", " + PollHeader, 0, ""},
		{"listed, headers on two lines", "app.test", "/", []string{"Origin", "https://spa.test", "Access-Control-Request-Method", "GET",
			"Access-Control-Request-Headers", "x-a,,x-b", "Access-Control-Request-Headers", "X-A"},
			fsthttp.StatusNoContent, PassHeader + ", " + PollHeader + ", x-a, x-b", 0, ""},
		{"listed, to a bypassed path", "app.test", "/static/app.js", []string{"Origin", "https://spa.test", "Access-Control-Request-Method", "GET"},
			fsthttp.StatusNoContent, PassHeader + ", " + PollHeader, 0, ""},
		{"unlisted", "app.test", "/", []string{"Origin", "https://evil.test", "Access-Control-Request-Method", "GET"},
			fsthttp.StatusForbidden, "", 0, `preflight refused: Origin "https://evil.test" is not in cors_origins`},
		{"two origins", "app.test", "/", []string{"Origin", "https://spa.test", "Origin", "https://evil.test", "Access-Control-Request-Method", "GET"},
			fsthttp.StatusForbidden, "", 0, "is not in cors_origins"},
		{"no origin", "app.test", "/", []string{"Access-Control-Request-Method", "GET"},
			fsthttp.StatusForbidden, "", 0, "is not in cors_origins"},
		{"a room that lists none", "plain.test", "/", []string{"Origin", "https://spa.test", "Access-Control-Request-Method", "GET"},
			fsthttp.StatusForbidden, "", 0, "room plain: preflight refused"},
		{"unlisted, to a bypassed path: the origin's own", "app.test", "/static/app.js", []string{"Origin", "https://evil.test", "Access-Control-Request-Method", "GET"},
			fsthttp.StatusOK, "", 1, ""},
		{"a method that is not a token", "app.test", "/", []string{"Origin", "https://spa.test", "Access-Control-Request-Method", "GET POST"},
			fsthttp.StatusBadRequest, "", 0, "Access-Control-Request-Method is not one method name"},
		{"two methods", "app.test", "/", []string{"Origin", "https://spa.test", "Access-Control-Request-Method", "GET", "Access-Control-Request-Method", "PUT"},
			fsthttp.StatusBadRequest, "", 0, "Access-Control-Request-Method is not one method name"},
		{"a header that is not a token", "app.test", "/", []string{"Origin", "https://spa.test", "Access-Control-Request-Method", "GET",
			"Access-Control-Request-Headers", "x-a, x b"}, fsthttp.StatusBadRequest, "", 0, `holds "x b", which is not a header name`},
		{"too many headers", "app.test", "/", []string{"Origin", "https://spa.test", "Access-Control-Request-Method", "GET",
			"Access-Control-Request-Headers", strings.Join(many, ",")}, fsthttp.StatusBadRequest, "", 0, "names more than 30 headers"},
		{"the most headers", "app.test", "/", []string{"Origin", "https://spa.test", "Access-Control-Request-Method", "GET",
			"Access-Control-Request-Headers", strings.Join(many[:len(many)-1], ",")},
			fsthttp.StatusNoContent, PassHeader + ", " + PollHeader + ", " + strings.Join(many[:len(many)-1], ", "), 0, ""},
		{"oversized headers", "app.test", "/", []string{"Origin", "https://spa.test", "Access-Control-Request-Method", "GET",
			"Access-Control-Request-Headers", long}, fsthttp.StatusBadRequest, "", 0, "longer than 2048 bytes"},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			c := newContractCase(t, outCalled)
			w, stores, origin := c.send(t, "OPTIONS", tc.host, tc.path, tc.header...)
			if w.Code != tc.code || stores != 0 || origin != tc.origin {
				t.Fatalf("%d with %d store calls and %d origin requests, want %d, 0, %d; log %q", w.Code, stores, origin, tc.code, tc.origin, c.logs)
			}
			h := w.HeaderMap
			if got := h.Get("Access-Control-Allow-Headers"); got != tc.allow {
				t.Errorf("Access-Control-Allow-Headers %q, want %q", got, tc.allow)
			}
			if tc.code == fsthttp.StatusNoContent {
				want := map[string]string{"Access-Control-Allow-Credentials": "true", "Access-Control-Max-Age": PreflightMaxAge,
					"Access-Control-Allow-Methods": tc.header[3], "Access-Control-Allow-Origin": tc.header[1]}
				for k, v := range want {
					if h.Get(k) != v {
						t.Errorf("%s %q, want %q", k, h.Get(k), v)
					}
				}
			} else if tc.origin == 0 && h.Get("Access-Control-Allow-Origin") != "" {
				t.Errorf("a refused preflight allows %q", h.Get("Access-Control-Allow-Origin"))
			}
			if tc.log != "" && !strings.Contains(strings.Join(c.logs, "\n"), tc.log) {
				t.Errorf("log %q, want a line holding %q", c.logs, tc.log)
			}
		})
	}
}

// TestOptionsFlood: a thousand preflights and bare OPTIONS requests from
// listed and unlisted origins cost no store call and reach no origin; an
// OPTIONS that is no preflight meets the line like any request.
func TestOptionsFlood(t *testing.T) {
	c := newContractCase(t, outCalled)
	origins := []string{"https://spa.test", "https://evil.test"}
	for i := range 1000 {
		h := []string{"Origin", origins[i%2], "Access-Control-Request-Method", "DELETE"}
		if i%3 == 0 {
			h = h[:2] // a bare OPTIONS, with no pass: an arrival
		}
		w, stores, origin := c.send(t, "OPTIONS", "app.test", "/checkout", h...)
		if stores != 0 || origin != 0 {
			t.Fatalf("request %d: %d with %d store calls and %d origin requests", i, w.Code, stores, origin)
		}
		if i%3 == 0 && w.Code != fsthttp.StatusTemporaryRedirect {
			t.Fatalf("a bare OPTIONS: %d, want the arrival", w.Code)
		}
	}
}
