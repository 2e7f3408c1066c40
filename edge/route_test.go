package edge

import (
	"errors"
	"net/netip"
	"strings"
	"testing"

	"github.com/edgequeue/waitingroom/match"
	"github.com/fastly/compute-sdk-go/fsthttp"
)

// routeRooms: a sale for Germany inside a site-wide room, a broken room,
// and global rules.
var routeRooms = mapConfig{
	KeyRooms:                 "shop, sale, broken",
	KeyUpstashURL:            "https://eu1-real-12345.upstash.io",
	KeyBypass:                `{"bypass_methods":["OPTIONS"]}`,
	KeyRoomPrefix + "shop":   `{"hosts":["shop.test"],"paths":["/"],"bypass_paths":["/static/"],"bypass_acl":"office","new_users_per_minute":60}`,
	KeyRoomPrefix + "sale":   `{"hosts":["shop.test"],"paths":["/sale/"],"countries":["DE"],"new_users_per_minute":60}`,
	KeyRoomPrefix + "broken": `{"paths":["/b/"],"burst":-1}`,
}

// TestRoute: the edge's own paths come first, then the rooms by
// specificity and their bypass rules, then the origin, or a 503 while a
// room is broken.
func TestRoute(t *testing.T) {
	settings := LoadSettings(routeRooms)
	de := &platform{country: "DE"}
	office := &platform{action: "ALLOW"}
	for _, tc := range []struct {
		name     string
		host     string
		path     string
		method   string
		facts    match.Facts
		dest     Destination
		room     string
		rule     string
		platform string // the platform call made, if any
	}{
		{"admin panel", "shop.test", "/_wr/admin/x", "GET", nil, ToAdmin, "", "", ""},
		{"admin API", "shop.test", "/_wr/api/rooms", "GET", nil, ToAPI, "", "", ""},
		{"admin API's root", "shop.test", "/_wr/api", "GET", nil, ToAPI, "", "", ""},
		{"beside the admin API", "shop.test", "/_wr/apis", "GET", nil, ToLine, "shop", "", ""},
		{"departure beacon", "shop.test", "/_wr/leave", "POST", nil, ToLeave, "", "", ""},
		{"invite link", "shop.test", "/_wr/invite", "GET", nil, ToInvite, "", "", ""},
		{"heartbeat", "shop.test", "/_wr/heartbeat", "POST", nil, ToHeartbeat, "", "", ""},
		{"heartbeat script", "shop.test", "/_wr/heartbeat.js", "GET", nil, ToHeartbeatScript, "", "", ""},
		{"below the heartbeat", "shop.test", "/_wr/heartbeat/x", "GET", nil, ToLine, "shop", "", ""},
		{"site-wide room", "shop.test", "/cart", "GET", nil, ToLine, "shop", "", ""},
		{"the sale, from Germany", "shop.test", "/sale/x", "GET", factsOver(de), ToLine, "sale", "", "geo"},
		{"the sale, country unknown", "shop.test", "/sale/x", "GET", nil, ToLine, "shop", "", ""},
		{"room bypass path", "shop.test", "/static/a.css", "GET", nil, ToBypass, "shop", "path", ""},
		{"room ACL", "shop.test", "/cart", "GET", factsOver(office), ToBypass, "shop", "acl:office", "acl office"},
		{"global rule", "shop.test", "/cart", "OPTIONS", nil, ToBypass, "shop", "global:method", ""},
		{"no room, a room broken", "other.test", "/", "GET", nil, ToUnavailable, "", "", ""},
	} {
		t.Run(tc.name, func(t *testing.T) {
			for _, p := range []*platform{de, office} {
				p.calls = nil
			}
			req := &match.Request{Host: tc.host, Paths: []string{tc.path, tc.path}, Method: tc.method,
				IP: visitorAddr, Facts: tc.facts}
			dest, j, err := settings.Route(req)
			room := ""
			if j.Room != nil {
				room = j.Room.Name
			}
			if dest != tc.dest || room != tc.room || j.Bypass != tc.rule || err != nil {
				t.Errorf("%v, room %q, rule %q, %v; want %v, room %q, rule %q", dest, room, j.Bypass, err, tc.dest, tc.room, tc.rule)
			}
			if p, ok := tc.facts.(facts); ok {
				calls := p.q.Geo.(*platform).calls
				if want := map[string]int{tc.platform: 1}; tc.platform != "" && (len(calls) != 1 || calls[tc.platform] != 1) {
					t.Errorf("platform calls %v, want %v", calls, want)
				}
			}
		})
	}
	if dest, _, _ := LoadSettings(mapConfig{}).Route(&match.Request{Host: "shop.test", Paths: []string{"/"}}); dest != ToOrigin {
		t.Errorf("without rooms: %v, want the origin", dest)
	}
}

// TestBypassHeader: a request a bypass rule lets through reaches the
// origin with Waiting-Room-Bypass naming the rule, whatever the visitor
// sent under that name, and makes no store call; a request in no room
// reaches it without one.
func TestBypassHeader(t *testing.T) {
	for _, tc := range []struct {
		name   string
		method string
		host   string
		path   string
		addr   string
		want   string // the header the origin gets; "" for none
	}{
		{"room bypass path", "GET", "shop.test", "/static/a.css", "", "path"},
		{"global rule", "OPTIONS", "shop.test", "/cart", "", "global:method"},
		{"room ACL, an IPv4-mapped address", "GET", "shop.test", "/cart", "::ffff:192.0.2.7", "acl:office"},
		{"no room", "GET", "other.test", "/b", "", ""},
	} {
		t.Run(tc.name, func(t *testing.T) {
			config := mapConfig{}
			for k, v := range routeRooms {
				config[k] = v
			}
			config[KeyRoomPrefix+"broken"] = `{"paths":["/b/"],"mode":"passthrough"}` // valid: a 503 is not this test's
			c := newTargetCase(config)
			office := &platform{action: "ALLOW"}
			c.svc.ACLs = office
			r := hostileRequest(t, tc.method, "https", tc.host, tc.path)
			r.RemoteAddr = tc.addr
			r.Header.Add(BypassHeader, "forged")
			r.Header.Add("waiting-room-bypass", "forged too")
			if w := c.do(t, r); w.Code != fsthttp.StatusOK || len(c.seen) != 1 {
				t.Fatalf("%d, origin saw %v, logs %q", w.Code, c.seen, c.logs)
			}
			got := c.seen[0].header.Values(BypassHeader)
			if tc.want == "" && len(got) != 0 || tc.want != "" && (len(got) != 1 || got[0] != tc.want) {
				t.Errorf("the origin got %s: %q, want %q", BypassHeader, got, tc.want)
			}
			if len(c.stored) != 0 {
				t.Errorf("store calls %q", c.stored)
			}
			if tc.addr != "" && office.calls["acl office"] != 1 {
				t.Errorf("ACL lookups %v, want one", office.calls)
			}
		})
	}
}

// TestRulesFailuresAreLogged: a fact the platform cannot give is logged
// with the room and rule it concerns, and the request is judged as if it
// were unknown: here, kept in the line.
func TestRulesFailuresAreLogged(t *testing.T) {
	c := newTargetCase(routeRooms)
	c.svc.ACLs = &platform{aclErr: errors.New("acl: too many requests")}
	r := hostileRequest(t, "GET", "https", "shop.test", "/cart")
	r.RemoteAddr = "192.0.2.7"
	if w := c.do(t, r); len(c.seen) != 0 || w.Code == fsthttp.StatusOK {
		t.Fatalf("%d, the origin saw %v", w.Code, c.seen)
	}
	want := `rules: room "shop": bypass_acl "office": lookup of 192.0.2.7 failed, so the rule does not let it through: acl: too many requests`
	found := false
	for _, l := range c.logs {
		found = found || l == want
	}
	if !found {
		t.Errorf("logs %q lack %q", c.logs, want)
	}
}

func TestClientAddr(t *testing.T) {
	for in, want := range map[string]string{
		"192.0.2.7":        "192.0.2.7",
		"::ffff:192.0.2.7": "192.0.2.7",
		"2001:db8::1":      "2001:db8::1",
	} {
		if got := clientAddr(netip.MustParseAddr(in).AsSlice()); got.String() != want {
			t.Errorf("clientAddr(%s) = %s, want %s", in, got, want)
		}
	}
	if got := clientAddr(nil); got.IsValid() {
		t.Errorf("clientAddr(nil) = %s", got)
	}
	if !strings.Contains(ToBypass.String(), "bypass") || Destination(99).String() != "unknown" {
		t.Errorf("names: %v %v", ToBypass, Destination(99))
	}
}
