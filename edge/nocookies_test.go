package edge

import (
	"net"
	"net/url"
	"strings"
	"testing"
	"time"

	"github.com/edgequeue/waitingroom/queue"
	"github.com/fastly/compute-sdk-go/fsthttp"
)

func TestCheckMark(t *testing.T) {
	keys, err := queue.ParseKeySet(testKeys)
	if err != nil {
		t.Fatal(err)
	}
	retired, err := queue.ParseKeySet("k0:" + strings.Repeat("QUJD", 11))
	if err != nil {
		t.Fatal(err)
	}
	now := time.Unix(1_700_000_000, 0)
	const ua, ip = "test browser", "192.0.2.7"
	mint := func(ks *queue.KeySet, room, ua, ip string, at time.Time) string {
		return MarkArrival(ks, room, ua, net.ParseIP(ip), at)
	}
	tests := []struct {
		name, mark string
		ok         bool
	}{
		{"this client's, just given", mint(keys, "shop", ua, ip, now), true},
		{"this client's, 50 s ago", mint(keys, "shop", ua, ip, now.Add(-50*time.Second)), true},
		{"from another address in the network", mint(keys, "shop", ua, "192.0.2.200", now), true},
		{"this client's, stale", mint(keys, "shop", ua, ip, now.Add(-MarkTTL-time.Second)), false},
		{"from the far future", mint(keys, "shop", ua, ip, now.Add(time.Hour)), false},
		{"another browser's", mint(keys, "shop", "other browser", ip, now), false},
		{"another network's", mint(keys, "shop", ua, "198.51.100.7", now), false},
		{"another room's", mint(keys, "sale", ua, ip, now), false},
		{"under a retired key", mint(retired, "shop", ua, ip, now), false},
		{"a forged signature", strings.Split(mint(keys, "shop", ua, ip, now), ".")[0] + ".AAAAAAAAAAAAAAAAAAAAAA", false},
		{"no signature", "s44we8", false},
		{"empty", "", false},
		{"garbage", "%%%.<script>", false},
		{"a stamp too long", strings.Repeat("z", 40) + ".x", false},
	}
	for _, tc := range tests {
		r, err := fsthttp.NewRequest("GET", "https://shop.example.com/", nil)
		if err != nil {
			t.Fatal(err)
		}
		r.RemoteAddr = ip
		r.Header.Set("User-Agent", ua)
		if _, err := checkMark(keys, "shop", r, tc.mark, now); (err == nil) != tc.ok {
			t.Errorf("%s (%q): %v, want accepted %v", tc.name, tc.mark, err, tc.ok)
		}
	}
}

// TestArrivalMarkEndsTheRedirects follows the arrival redirect as a
// client that drops cookies does (without the pass) and as a browser
// that keeps them does (with it), natively: the one gets the cookies
// answer after one redirect, the other its place or the origin, and the
// origin never sees the mark.
func TestArrivalMarkEndsTheRedirects(t *testing.T) {
	const target = "/checkout?item=7"
	tests := []struct {
		name    string
		method  string
		header  []string
		keeps   bool  // the client sends the arrival pass back
		outcome int64 // the store's answer to the join
		code    int   // the answer to the marked request
		stores  int
		want    string // in the answer's body
		origin  bool   // the answer's Location leads to the origin
	}{
		{"a page, cookies blocked", "GET", []string{"Accept", "text/html"}, false, outWaiting,
			fsthttp.StatusForbidden, 0, `<a id="wr-retry" href="/checkout?item=7">Try again</a>`, false},
		{"a script asking for JSON, no cookie jar", "GET", []string{"Accept", "application/json"}, false, outWaiting,
			fsthttp.StatusForbidden, 0, `{"room":"app","status":"cookies","cookie":"wr_app","header":"Waiting-Room-Pass","url":"/checkout?item=7"}`, false},
		{"a form's POST, cookies blocked", "POST", nil, false, outWaiting,
			fsthttp.StatusForbidden, 0, "Please allow cookies", false},
		{"a browser that keeps cookies, in line", "GET", nil, true, outWaiting,
			fsthttp.StatusAccepted, 1, "You are in line", false},
		{"a browser that keeps cookies, let in at once", "GET", nil, true, outCalled,
			fsthttp.StatusTemporaryRedirect, 1, "You are being taken to the page you asked for", true},
		{"a script that keeps cookies, let in at once: straight through", "GET", []string{"Accept", "application/json"}, true, outCalled,
			fsthttp.StatusOK, 1, "origin", false},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			c := newContractCase(t, tc.outcome)
			c.svc.Origin = recordingOrigin{seen: &c.seen}
			w, stores, origin := c.send(t, tc.method, "app.test", target, tc.header...)
			loc, err := url.Parse(w.HeaderMap.Get("Location"))
			if w.Code != fsthttp.StatusTemporaryRedirect || err != nil || stores != 0 || origin != 0 {
				t.Fatalf("first request: %d Location %q, %d store calls, %d origin requests", w.Code, w.HeaderMap.Get("Location"), stores, origin)
			}
			if mark := loc.Query().Get(ArrivalMark); mark == "" || loc.Path != "/checkout" || loc.Query().Get("item") != "7" {
				t.Fatalf("the arrival redirect goes to %q: want %s marked", loc, target)
			}
			header := tc.header
			if tc.keeps {
				header = append(header, "Cookie", strings.SplitN(w.HeaderMap.Get("Set-Cookie"), ";", 2)[0])
			}
			w, stores, origin = c.send(t, tc.method, "app.test", loc.RequestURI(), header...)
			if w.Code != tc.code || stores != tc.stores || !strings.Contains(w.Body.String(), tc.want) {
				t.Fatalf("the marked request: %d with %d store calls, body %q; want %d, %d, holding %q; log %q",
					w.Code, stores, w.Body.String(), tc.code, tc.stores, tc.want, c.logs)
			}
			if !tc.keeps && (w.HeaderMap.Get("Set-Cookie") != "" || w.HeaderMap.Get("Cache-Control") != "no-store" ||
				!strings.Contains(strings.Join(c.logs, "\n"), "room app: no cookies: the arrival pass given")) {
				t.Errorf("the cookies answer: Set-Cookie %q, Cache-Control %q, log %q", w.HeaderMap.Get("Set-Cookie"), w.HeaderMap.Get("Cache-Control"), c.logs)
			}
			if tc.origin {
				if w.HeaderMap.Get("Location") != target {
					t.Fatalf("sent on to %q, want %s", w.HeaderMap.Get("Location"), target)
				}
				session := strings.SplitN(w.HeaderMap.Get("Set-Cookie"), ";", 2)[0]
				w, stores, origin = c.send(t, tc.method, "app.test", target, "Cookie", session)
				if w.Code != fsthttp.StatusOK || stores != 0 || origin != 1 {
					t.Fatalf("the unmarked request: %d with %d store calls and %d origin requests", w.Code, stores, origin)
				}
			}
			for _, seen := range c.seen {
				if seen.target != target {
					t.Errorf("the origin saw %q, want %q", seen.target, target)
				}
			}
		})
	}
}

// TestAMarkedRequestWithAPassIsNoCookieless: a client back on a marked URL
// with a pass keeps cookies, whatever became of the pass. A ticket whose
// place is lost (the store answers Lost, and the gate sends its holder to
// join again) and a pass refused both get the arrival redirect, not the
// cookies page.
func TestAMarkedRequestWithAPassIsNoCookieless(t *testing.T) {
	tests := []struct {
		name   string
		cookie func(c *contractCase) string
	}{
		{"a ticket whose place is lost", func(c *contractCase) string { return c.pass(t, queue.Ticket, "app") }},
		{"a pass refused", func(c *contractCase) string { return c.pass(t, queue.Ticket, "app") + "x" }},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			c := newContractCase(t, outLost)
			mark := MarkArrival(c.keys, "app", contractUA, net.ParseIP(contractIP), c.now)
			w, _, origin := c.send(t, "GET", "app.test", "/checkout?"+ArrivalMark+"="+mark, "Cookie", "wr_app="+tc.cookie(c))
			if w.Code != fsthttp.StatusTemporaryRedirect || origin != 0 || strings.Contains(w.Body.String(), "Please allow cookies") {
				t.Fatalf("%d, body %q; want the arrival redirect; log %q", w.Code, w.Body.String(), c.logs)
			}
		})
	}
}
