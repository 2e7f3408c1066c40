package rules

import (
	"net/http"
	"strings"
	"testing"

	"github.com/edgequeue/waitingroom/tools/fastlyhost"
)

// The repository's fastly.toml places these loopback addresses (its
// [local_server.geolocation], use_default_loopback off); every other
// address has no record. Its ACL "office" allows 127.8.0.0/16 and blocks
// 127.9.0.0/16.
const (
	inGermany  = "127.0.0.2"
	inUS       = "127.0.0.3"
	inFrance   = "127.0.0.4"
	nowhere    = "127.0.0.1"
	reserved   = "127.0.0.5" // given the country "**" by the test
	officeIP   = "127.8.3.4"
	blockedIP  = "127.9.0.1"
	monitorKey = "s3cret-monitor-key"
)

// TestCountryRooms: a room with countries holds only clients the
// platform places there, one with except_countries everyone else, and a
// client whose country is unknown (no record, or "**") is in the second
// and not the first; other requests fall to the site-wide room. The room
// is the one whose cookie the arrival redirect sets (no store call).
func TestCountryRooms(t *testing.T) {
	e := start(t, map[string]string{
		"rooms":           "shop,sale_de,outside_us",
		"room.shop":       `{"paths":["/"],"max_active_users":1}`,
		"room.sale_de":    `{"paths":["/sale/"],"countries":["DE"],"max_active_users":1}`,
		"room.outside_us": `{"paths":["/promo/"],"except_countries":["us"],"max_active_users":1}`,
	}, func(m *fastlyhost.Manifest) {
		m.Geo[reserved] = map[string]any{"country_code": "**"}
	})
	for _, tc := range []struct {
		from, path, room string
	}{
		{inGermany, "/sale/shoes", "sale_de"},
		{inUS, "/sale/shoes", "shop"},
		{inFrance, "/sale/shoes", "shop"},
		{nowhere, "/sale/shoes", "shop"},
		{reserved, "/sale/shoes", "shop"},
		{inGermany, "/promo/x", "outside_us"},
		{inFrance, "/promo/x", "outside_us"},
		{inUS, "/promo/x", "shop"},
		{nowhere, "/promo/x", "outside_us"},
		{reserved, "/promo/x", "outside_us"},
		{inGermany, "/other", "shop"},
	} {
		a := e.send(request{from: tc.from, path: tc.path})
		if got := a.room(); got != tc.room {
			t.Errorf("%s from %s: in room %q (%s), want %q", tc.path, tc.from, got, a, tc.room)
		}
	}
	if e.logged("rules:") {
		t.Errorf("an unknown country is not a failure, yet:\n%s", e.logs.String())
	}
}

// shopRules is a site-wide room with every bypass rule, one place, and
// passes bound to nothing (a pass may be replayed from any address).
const shopRules = `{"paths":["/"],
	"bypass_ips":["127.0.5.5","127.0.6.0/24","::ffff:127.0.7.0/120"],
	"bypass_acl":"office",
	"bypass_extensions":["css",".WOFF2"],
	"bypass_methods":["OPTIONS"],
	"bypass_headers":[{"name":"X-Health","value":"probe-1"},{"name":"X-Monitor","secret":"monitor_key"},{"name":"X-Absent","secret":"absent_key"}],
	"bypass_cookies":["staff","preview=yes"],
	"bypass_verified_bots":true,
	"max_active_users":1,"inactivity_timeout":900,"session_duration":900,
	"bind_session":"none","joins_per_ip_per_minute":0}`

// verifiedBot is what the local host's bot detection reads as a verified
// bot (Viceroy's X-Fastly-Bot-* test headers).
var verifiedBot = []string{"X-Fastly-Bot-Analyzed", "true", "X-Fastly-Bot-Detected", "true", "X-Fastly-Bot-Verified", "true",
	"X-Fastly-Bot-Name", "Googlebot", "X-Fastly-Bot-Category", "SEARCH-ENGINE-CRAWLER"}

// TestBypassRules: each rule lets its requests through to the origin with
// Waiting-Room-Bypass naming it (a visitor's own being removed), and
// without a store call, though each request carries a pass that would
// join the full line; the near misses join it.
func TestBypassRules(t *testing.T) {
	e := start(t, map[string]string{
		"rooms":     "shop",
		"room.shop": shopRules,
		"bypass":    `{"bypass_paths":["/healthz"],"bypass_methods":["PURGE"]}`,
	}, func(m *fastlyhost.Manifest) {
		m.SecretStores["waiting_room_secrets"]["monitor_key"] = []byte(monitorKey + "\n")
	})
	pass := fillRoom(t, e)
	for _, tc := range []struct {
		name   string
		req    request
		cookie string // beside the pass
		rule   string // "" when the request must be held
	}{
		{"an address", request{from: "127.0.5.5", path: "/"}, "", "ip"},
		{"another address", request{from: "127.0.5.6", path: "/"}, "", ""},
		{"a CIDR range", request{from: "127.0.6.77", path: "/"}, "", "ip"},
		{"an IPv4-mapped range", request{from: "127.0.7.9", path: "/"}, "", "ip"},
		{"ACL ALLOW", request{from: officeIP, path: "/"}, "", "acl:office"},
		{"ACL BLOCK", request{from: blockedIP, path: "/"}, "", ""},
		{"an extension", request{path: "/assets/app.css"}, "", "extension"},
		{"an extension in another case", request{path: "/fonts/a.Woff2"}, "", "extension"},
		{"an extension not of the last segment", request{path: "/app.css/page"}, "", ""},
		{"a segment named as an extension", request{path: "/css"}, "", ""},
		{"a method", request{method: http.MethodOptions, path: "/"}, "", "method"},
		{"another method", request{method: http.MethodPost, path: "/"}, "", ""},
		{"a header", request{path: "/", header: []string{"X-Health", "probe-1"}}, "", "header:X-Health"},
		{"a header's other value", request{path: "/", header: []string{"X-Health", "probe-2"}}, "", ""},
		{"a secret header", request{path: "/", header: []string{"X-Monitor", monitorKey}}, "", "header:X-Monitor"},
		{"a secret header's wrong value", request{path: "/", header: []string{"X-Monitor", monitorKey + "x"}}, "", ""},
		{"a header whose secret is missing", request{path: "/", header: []string{"X-Absent", "anything"}}, "", ""},
		{"a cookie", request{path: "/"}, "staff=1", "cookie:staff"},
		{"a cookie's value", request{path: "/"}, "preview=yes", "cookie:preview"},
		{"a cookie's other value", request{path: "/"}, "preview=no", ""},
		{"a verified bot", request{path: "/", header: verifiedBot}, "", "verified-bot"},
		{"an unverified bot", request{path: "/", header: botWith("X-Fastly-Bot-Verified", "false")}, "", ""},
		{"a bot not analysed", request{path: "/", header: botWith("X-Fastly-Bot-Analyzed", "false")}, "", ""},
		{"a global path", request{path: "/healthz"}, "", "global:path"},
		{"a global method", request{method: "PURGE", path: "/"}, "", "global:method"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			e.stack.StoreCalls()
			cookie := "wr_shop=" + pass
			if tc.cookie != "" {
				cookie += "; " + tc.cookie
			}
			tc.req.header = append([]string{"Cookie", cookie, bypassHeader, "forged"}, tc.req.header...)
			a := e.send(tc.req)
			calls := e.stack.StoreCalls()
			if tc.rule == "" {
				checkHeld(t, tc.name, a)
				if calls == 0 {
					t.Errorf("no store call: the pass should have joined the line")
				}
				return
			}
			checkBypassed(t, tc.name, a, tc.rule)
			if calls != 0 {
				t.Errorf("%d store calls for a bypass", calls)
			}
		})
	}
	if !e.logged(`bypass_headers X-Absent: secret "absent_key": missing from waiting_room_secrets`) {
		t.Errorf("no log line says the secret is missing:\n%s", e.logs.String())
	}
}

// botWith is verifiedBot with one header's value changed.
func botWith(name, value string) []string {
	h := append([]string(nil), verifiedBot...)
	for i := 0; i < len(h); i += 2 {
		if h[i] == name {
			h[i+1] = value
		}
	}
	return h
}

// fillRoom takes the room's one place, and returns an arrival pass: a
// request carrying it joins the line (a store call), and is held there.
func fillRoom(t *testing.T, e *env) string {
	t.Helper()
	var pass string
	for i := 0; i < 2; i++ {
		a := e.send(request{path: "/"})
		if a.room() != "shop" {
			t.Fatalf("setup: no arrival redirect: %s", a)
		}
		for _, c := range (&http.Response{Header: a.header}).Cookies() {
			if c.Name == "wr_shop" {
				pass = c.Value
			}
		}
		if i == 0 {
			in := e.send(request{path: "/", header: []string{"Cookie", "wr_shop=" + pass}})
			if in.atOrigin == nil {
				t.Fatalf("setup: the first visitor did not get the free place: %s", in)
			}
		}
	}
	return pass
}

// TestSpecificity: the most specific room holds a request, whatever the
// rooms' order: an exact host before a wildcard before any host, then the
// longest literal path (a glob's * matching within one segment); a
// request no room holds reaches the origin without a Waiting-Room-Bypass,
// even one it sent.
func TestSpecificity(t *testing.T) {
	e := start(t, map[string]string{
		"rooms":      "any,json,wild,exact,glob",
		"room.any":   `{"paths":["/p/"],"max_active_users":1}`,
		"room.json":  `{"paths":["*.json"],"max_active_users":1}`,
		"room.wild":  `{"hosts":["*.example.com"],"paths":["/p/"],"max_active_users":1}`,
		"room.exact": `{"hosts":["shop.example.com"],"paths":["/p/"],"max_active_users":1}`,
		"room.glob":  `{"hosts":["shop.example.com"],"paths":["/p/*/buy"],"max_active_users":1}`,
	}, nil)
	for _, tc := range []struct {
		host, path, room string
	}{
		{"other.test", "/p/x", "any"},
		{"example.com", "/p/x", "any"},
		{"a.example.com", "/p/x", "wild"},
		{"a.b.example.com", "/p/x", "wild"},
		{"shop.example.com", "/p/x", "exact"},
		{"SHOP.Example.COM.:7676", "/p/x", "exact"},
		{"shop.example.com", "/p/42/buy", "glob"},
		{"shop.example.com", "/p/42/x/buy", "exact"},
		{"other.test", "/p/a.json", "json"},
		{"other.test", "/data/a.json", "json"},
		{"shop.example.com", "/p/a.json", "exact"},
		{"other.test", "/elsewhere", ""},
	} {
		a := e.send(request{host: tc.host, path: tc.path, header: []string{bypassHeader, "forged"}})
		if got := a.room(); got != tc.room {
			t.Errorf("%s%s: in room %q (%s), want %q", tc.host, tc.path, got, a, tc.room)
		}
		if tc.room == "" && (a.atOrigin == nil || len(a.atOrigin.Values(bypassHeader)) != 0) {
			t.Errorf("%s%s: in no room, want the origin without %s: %s, origin saw %v", tc.host, tc.path, bypassHeader, a, a.atOrigin)
		}
	}
}

// TestBrokenRulesLetNobodyThrough: a global bypass the edge cannot parse
// is left out whole and logged with its field; an ACL the service lacks
// is logged per request; neither lets anyone past the line, nor breaks
// the room.
func TestBrokenRulesLetNobodyThrough(t *testing.T) {
	e := start(t, map[string]string{
		"rooms":     "shop",
		"room.shop": `{"paths":["/"],"bypass_acl":"no_such_acl","mode":"reject"}`,
		"bypass":    `{"bypass_methods":["OPTIONS"],"bypass_ips":["127.8.0.0/8"]}`,
	}, nil)
	for _, req := range []request{{from: officeIP, path: "/"}, {method: http.MethodOptions, path: "/"}} {
		a := e.send(req)
		checkHeld(t, req.method+" from "+req.from, a)
		if a.status != http.StatusServiceUnavailable || !strings.Contains(a.body, "Closed") {
			t.Errorf("%s from %s: %s, want the closed room's page", req.method, req.from, a)
		}
	}
	for _, want := range []string{
		`config: bypass.bypass_ips[0]: "127.8.0.0/8" has bits set past its /8`,
		`rules: room "shop": bypass_acl "no_such_acl": no ACL of that name is linked to this service`,
	} {
		if !e.logged(want) {
			t.Errorf("no log line holds %q:\n%s", want, e.logs.String())
		}
	}
}

// TestTheDemoConfig: make serve's devconfig.json and fastly.toml show a
// sale for Germany with its own line and page, the office ACL and the
// global rules.
func TestTheDemoConfig(t *testing.T) {
	e := start(t, nil, nil)
	for _, tc := range []struct {
		name string
		req  request
		room string // the line it joins, or "" for the origin
		rule string // the bypass rule, for the origin
	}{
		{"the sale from Germany", request{from: inGermany, path: "/sale/shoes"}, "sale_de", ""},
		{"the sale from elsewhere", request{from: inUS, path: "/sale/shoes"}, "shop", ""},
		{"the sale from an unknown country", request{from: nowhere, path: "/sale/shoes"}, "shop", ""},
		{"the office", request{from: "127.8.0.9", path: "/"}, "", "acl:office"},
		{"a blocked address", request{from: blockedIP, path: "/"}, "shop", ""},
		{"a preflight", request{method: http.MethodOptions, path: "/"}, "", "global:method"},
		{"the health check", request{path: "/", header: []string{"X-Health-Check", "dev-probe"}}, "", "global:header:X-Health-Check"},
		{"an asset", request{path: "/static/app.css"}, "", "path"},
	} {
		a := e.send(tc.req)
		if tc.room != "" {
			if got := a.room(); got != tc.room {
				t.Errorf("%s: in room %q (%s), want %q", tc.name, got, a, tc.room)
			}
			continue
		}
		checkBypassed(t, tc.name, a, tc.rule)
	}
	// The sale's own page: shoppers take its places (two at most, one
	// at a time at its rate) until one waits, on sale.html.
	for i := 1; ; i++ {
		a := e.send(request{from: inGermany, path: "/sale/shoes"})
		var cookie string
		for _, c := range (&http.Response{Header: a.header}).Cookies() {
			cookie = c.Name + "=" + c.Value
		}
		a = e.send(request{from: inGermany, path: "/sale/shoes", header: []string{"Cookie", cookie}})
		switch {
		case strings.Contains(a.body, "You are in line for the sale"):
			return
		case a.atOrigin == nil || i == 3:
			t.Fatalf("shopper %d neither got a place in the sale nor its page: %s", i, a)
		}
	}
}
