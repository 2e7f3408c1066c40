package e2e

import (
	"bytes"
	"crypto/sha256"
	"fmt"
	"io"
	"net"
	"net/http"
	"net/http/cookiejar"
	"net/url"
	"strings"
	"testing"
	"time"

	"github.com/edgequeue/waitingroom/edge"
	"github.com/edgequeue/waitingroom/tools/devstack"
	"github.com/edgequeue/waitingroom/tools/fastlyhost"
)

// The rooms of the cookie tests: the shop ("/") holds everyone after its
// first visitor in line; the open room lets everyone in at once. Nobody
// is limited by joins per address: every client here is 127.0.0.1.
const (
	cookieShop = `{"paths":["/"],"new_users_per_minute":0.01,"burst":1,"refresh":5,"queue_timeout":300,"joins_per_ip_per_minute":0}`
	cookieOpen = `{"paths":["/open/","/upload"],"max_active_users":1000,"joins_per_ip_per_minute":0}`
	// browserUA is the User-Agent of every client here, which the
	// arrival mark is bound to.
	browserUA = "Mozilla/5.0 (e2e browser)"
)

// startCookieRooms starts the stack with the shop and the open room, the
// shop's burst already taken.
func startCookieRooms(t *testing.T) *env {
	t.Helper()
	e := startStack(t, loadTimeout, cookieShop, func(m *fastlyhost.Manifest) {
		devstack.SetRooms(m, loadTimeout, [2]string{"shop", cookieShop}, [2]string{"open", cookieOpen})
	})
	(&visitor{e: e}).get("/")
	e.restCalls()
	return e
}

// browser follows the service's redirects as a browser does (a 307 sends
// the method and the body again, to the Location), keeping cookies in
// its jar, or, with no jar, dropping them all as a browser that blocks
// cookies does.
type browser struct {
	e   *env
	jar http.CookieJar
}

func keepsCookies(e *env) *browser {
	jar, _ := cookiejar.New(nil)
	return &browser{e: e, jar: jar}
}

func dropsCookies(e *env) *browser { return &browser{e: e} }

// hop is one request of a visit and its answer.
type hop struct {
	method, uri string
	answer
}

// visit asks for uri and follows redirects, at most 5; it returns every
// hop.
func (b *browser) visit(method, uri string, body []byte, header ...string) []hop {
	b.e.t.Helper()
	var hops []hop
	for range 6 {
		// The service's Locations are paths on its host.
		u, err := url.Parse(b.e.stack.HostURL + uri)
		if err != nil {
			b.e.t.Fatal(err)
		}
		var r io.Reader
		if body != nil {
			r = bytes.NewReader(body)
		}
		req, err := http.NewRequest(method, u.String(), r)
		if err != nil {
			b.e.t.Fatal(err)
		}
		req.Header.Set("User-Agent", browserUA)
		for i := 0; i+1 < len(header); i += 2 {
			req.Header.Set(header[i], header[i+1])
		}
		if b.jar != nil {
			for _, c := range b.jar.Cookies(u) {
				req.AddCookie(c)
			}
		}
		resp, err := client.Do(req)
		if err != nil {
			b.e.t.Fatal(err)
		}
		got, err := io.ReadAll(resp.Body)
		resp.Body.Close()
		if err != nil {
			b.e.t.Fatal(err)
		}
		if b.jar != nil {
			b.jar.SetCookies(u, resp.Cookies())
		}
		hops = append(hops, hop{method, uri, answer{resp.StatusCode, resp.Header, string(got)}})
		if resp.StatusCode != http.StatusTemporaryRedirect || len(hops) > 5 {
			return hops
		}
		uri = resp.Header.Get("Location")
	}
	return hops
}

// statuses lists the hops' status codes.
func statuses(hops []hop) []int {
	out := make([]int, len(hops))
	for i, h := range hops {
		out[i] = h.status
	}
	return out
}

// markOf is the arrival mark in a hop's URI, or "".
func markOf(uri string) string {
	u, err := url.Parse(uri)
	if err != nil {
		return ""
	}
	return u.Query().Get(edge.ArrivalMark)
}

// noMarkAtOrigin fails when any request that reached the origin carried
// the arrival mark, in its URI or any header (a Referer...).
func (e *env) noMarkAtOrigin(t *testing.T) {
	t.Helper()
	for _, r := range e.stack.OriginRequests() {
		leak := strings.Contains(r.URI, edge.ArrivalMark) || strings.Contains(r.URI, "wr%5Farrival") || strings.Contains(r.URI, "%5Fwr")
		for k, vs := range r.Header {
			leak = leak || strings.Contains(k+strings.Join(vs, ","), edge.ArrivalMark)
		}
		if leak {
			t.Errorf("the origin saw the arrival mark: %s %s %v", r.Method, r.URI, r.Header)
		}
	}
}

// originSaw lists the method and URI of the requests that reached the
// origin since from of them had.
func (e *env) originSaw(from int) []string {
	var out []string
	for _, r := range e.stack.OriginRequests()[from:] {
		out = append(out, r.Method+" "+r.URI)
	}
	return out
}

// TestAClientWithoutCookiesIsAnsweredAfterOneRedirect: a browser that
// blocks cookies, or a script without a cookie jar, meets one arrival
// redirect and then the cookies answer (a page, or JSON when asked for),
// not the redirect again and again; it costs no store call, reaches no
// origin and is logged.
func TestAClientWithoutCookiesIsAnsweredAfterOneRedirect(t *testing.T) {
	e := startCookieRooms(t)
	tests := []struct {
		name, method, uri string
		body              []byte
		header            []string
		want              string
	}{
		{"a page in the line", "GET", "/products/42?colour=blue", nil, []string{"Accept", "text/html"},
			`<a id="wr-retry" href="/products/42?colour=blue">Try again</a>`},
		{"a page in a room with room", "GET", "/open/item", nil, []string{"Accept", "text/html"}, "Please allow cookies"},
		{"in German", "GET", "/open/item", nil, []string{"Accept-Language", "de"}, "Bitte Cookies erlauben"},
		{"a script asking for JSON", "GET", "/open/item?x=1", nil, []string{"Accept", "application/json"},
			`{"room":"open","status":"cookies","cookie":"wr_open","header":"Waiting-Room-Pass","url":"/open/item?x=1"}`},
		{"a form's POST", "POST", "/upload", []byte("a=1"), []string{"Content-Type", "application/x-www-form-urlencoded"}, "Please allow cookies"},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			e.t = t
			seen := len(e.stack.OriginRequests())
			hops := dropsCookies(e).visit(tc.method, tc.uri, tc.body, tc.header...)
			if got := statuses(hops); len(got) != 2 || got[0] != http.StatusTemporaryRedirect || got[1] != http.StatusForbidden {
				t.Fatalf("answers %v, want one 307 and then 403", got)
			}
			last := hops[1]
			if markOf(last.uri) == "" || devstack.Unmarked(last.uri) != tc.uri || last.method != tc.method {
				t.Errorf("the redirect sent the client to %s %s: want %s %s, marked", last.method, last.uri, tc.method, tc.uri)
			}
			if !strings.Contains(last.body, tc.want) || last.header.Get("Cache-Control") != "no-store" || len(last.header.Values("Set-Cookie")) != 0 {
				t.Errorf("the cookies answer: Cache-Control %q, Set-Cookie %q, body %s; want no-store, none, holding %q",
					last.header.Get("Cache-Control"), last.header.Values("Set-Cookie"), last.body, tc.want)
			}
			if n := e.restCalls(); n != 0 {
				t.Errorf("%d store calls, want 0", n)
			}
			if saw := e.originSaw(seen); len(saw) != 0 {
				t.Errorf("the origin saw %q", saw)
			}
			if !strings.Contains(e.logs.String(), "no cookies: the arrival pass given") {
				t.Errorf("no log line says why:\n%s", e.logs.String())
			}
		})
	}
	e.noMarkAtOrigin(t)
}

// TestABrowserThatKeepsCookies: the arrival redirect's mark changes
// nothing for a browser that keeps cookies: one redirect to the line's
// page, whose address drops the mark (the page's script, checked in
// Chromium by tools/suites/pagetest); let in at once, one more redirect to the
// address without the mark, with the session and no store call, so the
// origin's page never shows under it. The origin gets each request once,
// POST bodies included, and never the mark.
func TestABrowserThatKeepsCookies(t *testing.T) {
	e := startCookieRooms(t)
	big := bytes.Repeat([]byte("edge waiting room "), 100_000)
	sum := sha256.Sum256(big)
	tests := []struct {
		name, method, uri string
		body              []byte
		header            []string
		statuses          []int
		want              string
		origin            []string // what reaches the origin
	}{
		{"waits in line", "GET", "/products/42?colour=blue", nil, nil,
			[]int{307, 200}, "You are in line", nil},
		{"let in at once", "GET", "/open/item?colour=blue", nil, nil,
			[]int{307, 307, 200}, devstack.OriginReached, []string{"GET /open/item?colour=blue"}},
		{"a POST let in at once", "POST", "/upload", big, []string{"Content-Type", "application/octet-stream"},
			[]int{307, 307, 200}, fmt.Sprintf("%d %x", len(big), sum), []string{"POST /upload"}},
		{"a script let in at once: no second redirect", "GET", "/open/data?page=2", nil, []string{"Accept", "application/json"},
			[]int{307, 200}, devstack.OriginReached, []string{"GET /open/data?page=2"}},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			e.t = t
			seen := len(e.stack.OriginRequests())
			hops := keepsCookies(e).visit(tc.method, tc.uri, tc.body, tc.header...)
			last := hops[len(hops)-1]
			if got := statuses(hops); fmt.Sprint(got) != fmt.Sprint(tc.statuses) || !strings.Contains(last.body, tc.want) {
				t.Fatalf("answers %v, the last holding %.300q; want %v, the last holding %q", got, last.body, tc.statuses, tc.want)
			}
			if markOf(hops[1].uri) == "" || devstack.Unmarked(hops[1].uri) != tc.uri {
				t.Errorf("the arrival redirect sent the browser to %s, want %s marked", hops[1].uri, tc.uri)
			}
			if len(hops) == 3 && hops[2].uri != tc.uri {
				t.Errorf("the browser let in was sent on to %s, want %s", hops[2].uri, tc.uri)
			}
			if n := e.restCalls(); n != 1 {
				t.Errorf("%d store calls, want 1 (the join)", n)
			}
			if saw := e.originSaw(seen); fmt.Sprint(saw) != fmt.Sprint(tc.origin) {
				t.Errorf("the origin saw %q, want %q", saw, tc.origin)
			}
		})
	}
	e.noMarkAtOrigin(t)
}

// TestCraftedMarks: a mark the service did not give this client just now
// (made up, forged, another client's, another room's, stale) is ignored
// and logged: a browser that keeps cookies is sent back freshly marked and
// gets in; one that drops them is answered after that one redirect. A
// good mark never lets anyone past the line: without a pass it is the
// cookies answer; with a ticket, the place in line.
func TestCraftedMarks(t *testing.T) {
	e := startCookieRooms(t)
	ip := net.ParseIP("127.0.0.1")
	now := time.Now()
	good := func(room string, at time.Time) string { return edge.MarkArrival(e.keys, room, browserUA, ip, at) }
	tests := []struct {
		name, query string
	}{
		{"made up", edge.ArrivalMark + "=1"},
		{"forged", edge.ArrivalMark + "=" + strings.Split(good("open", now), ".")[0] + ".AAAAAAAAAAAAAAAAAAAAAA"},
		{"another browser's", edge.ArrivalMark + "=" + edge.MarkArrival(e.keys, "open", "Other/1.0", ip, now)},
		{"another room's", edge.ArrivalMark + "=" + good("shop", now)},
		{"stale", edge.ArrivalMark + "=" + good("open", now.Add(-10*time.Minute))},
		{"percent-encoded, twice", "%5Fwr_arrival=1&" + edge.ArrivalMark + "=2"},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			e.t = t
			uri := "/open/item?colour=blue&" + tc.query
			hops := keepsCookies(e).visit("GET", uri, nil)
			if got := statuses(hops); fmt.Sprint(got) != "[307 307 200]" || !strings.Contains(hops[2].body, devstack.OriginReached) {
				t.Fatalf("a browser that keeps cookies: answers %v; want 307, 307, the origin", got)
			}
			if m := markOf(hops[1].uri); m == "" || strings.Contains(tc.query, m) || devstack.Unmarked(hops[1].uri) != "/open/item?colour=blue" {
				t.Errorf("sent back to %s: want /open/item?colour=blue with a fresh mark", hops[1].uri)
			}
			if got := statuses(dropsCookies(e).visit("GET", uri, nil)); fmt.Sprint(got) != "[307 403]" {
				t.Errorf("a browser that drops cookies: answers %v, want 307 then 403", got)
			}
			if !strings.Contains(e.logs.String(), "arrival mark") || !strings.Contains(e.logs.String(), "ignored") {
				t.Errorf("no log line says the mark was ignored")
			}
		})
	}
	marked := []struct {
		name            string
		b               *browser
		before          string        // where the browser went first, if anywhere
		uri             func() string // the marked address it asks for then
		statuses        string
		last, lastWants string // the last hop's address and what its answer holds
		stores          int    // store calls for the marked address; -1: a poll's, not counted
	}{
		{"a good mark without a pass is never let in", dropsCookies(e), "",
			func() string { return "/open/item?" + edge.ArrivalMark + "=" + good("open", time.Now()) },
			"[403]", "", "Please allow cookies", 0},
		{"a good mark with a ticket keeps the place in line", keepsCookies(e), "/",
			func() string { return "/?" + edge.ArrivalMark + "=" + good("shop", time.Now()) },
			"[200]", "", "You are in line", -1},
		{"an admitted browser at a marked address is sent on without it", keepsCookies(e), "/open/",
			func() string { return "/open/item?" + edge.ArrivalMark + "=1&a=2" },
			"[307 200]", "/open/item?a=2", devstack.OriginReached, 0},
	}
	for _, tc := range marked {
		t.Run(tc.name, func(t *testing.T) {
			e.t = t
			if tc.before != "" {
				tc.b.visit("GET", tc.before, nil)
			}
			e.restCalls()
			hops := tc.b.visit("GET", tc.uri(), nil)
			last := hops[len(hops)-1]
			if got := fmt.Sprint(statuses(hops)); got != tc.statuses || !strings.Contains(last.body, tc.lastWants) || tc.last != "" && last.uri != tc.last {
				t.Errorf("answers %s, the last to %s holding %.200q; want %s, the last to %q holding %q", got, last.uri, last.body, tc.statuses, tc.last, tc.lastWants)
			}
			if n := e.restCalls(); tc.stores >= 0 && n != tc.stores {
				t.Errorf("%d store calls, want %d", n, tc.stores)
			}
		})
	}
	e.noMarkAtOrigin(t)
}
