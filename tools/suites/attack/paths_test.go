package attack

import (
	"net/http"
	"strings"
	"testing"
)

// hostileSetup is a stack whose one place a visitor has taken, and the
// requests that must not reach the origin past it.
type hostileSetup struct {
	name     string
	def      string // the room "shop"
	occupant string // the path the first visitor takes the place at
	host     string // the Host the room serves ("" for any)
	cases    []hostile
}

// hostile is one request: its target as sent on the wire, and its Host
// ("" for the room's own). "{host}" in a target is the stack's address.
type hostile struct{ target, host string }

// TestHostilePathsAndHostsCannotWalkPastTheRoom sends each request on its
// own connection from its own client address, with no cookie, while the
// room's one place is taken: each is queued or refused with 400, and none
// reaches the origin.
func TestHostilePathsAndHostsCannotWalkPastTheRoom(t *testing.T) {
	setups := []hostileSetup{
		{name: "site room with a /static/ bypass", def: `{"paths":["/"],"bypass_paths":["/static/"],"max_active_users":1}`, occupant: "/",
			cases: []hostile{
				{target: "/static/../checkout"},
				{target: "/static/%2e%2e/checkout"},
				{target: "/static/%2E%2E/checkout"},
				{target: "/static/%2e%2E/checkout"},
				{target: "/static/.%2e/checkout"},
				{target: "/static/%2e./checkout"},
				{target: "/static/..%2fcheckout"},
				{target: "/static/..%2Fcheckout"},
				{target: "/static%2f..%2fcheckout"},
				{target: "/static/%2e%2e%2fcheckout"},
				{target: "/static/./../checkout"},
				{target: "/static/..//checkout"},
				{target: "//static/../checkout"},
				{target: "/static/%2e%2e/%2e%2e/checkout"},
				{target: `/static/..\checkout`},
				{target: `/static\..\checkout`},
				{target: "/static/..%5ccheckout"},
				{target: "/static/..%5Ccheckout"},
				{target: "/static/%00/../../checkout"},
				{target: "/static/app.css%00"},
				{target: "/static/%zz/../../checkout"},
				{target: "/static/%2/../../checkout"},
				{target: "/STATIC/app.css"},
				{target: "/STATIC/../checkout"},
				{target: "/static/../checkout?next=/static/"},
				{target: "http://{host}/static/../checkout"},
			}},
		{name: "/tickets/ room", def: `{"paths":["/tickets/"],"max_active_users":1}`, occupant: "/tickets/",
			cases: []hostile{
				{target: "/./tickets/buy"},
				{target: "//tickets/buy"},
				{target: "/x/../tickets/buy"},
				{target: "/%2e/tickets/buy"},
				{target: "/%2E%2E/tickets/buy"},
				{target: "/%74ickets/buy"},
				{target: "/tickets%2fbuy"},
				{target: `/tickets\buy`},
			}},
		{name: "case-insensitive /tickets/ room", def: `{"paths":["/tickets/"],"case_insensitive_paths":true,"max_active_users":1}`, occupant: "/tickets/",
			cases: []hostile{
				{target: "/TICKETS/buy"},
				{target: "/Tickets/buy"},
				{target: "/./TiCkEtS/buy"},
			}},
		{name: "room for one host", def: `{"hosts":["shop.example"],"paths":["/"],"max_active_users":1}`, occupant: "/", host: "shop.example",
			cases: []hostile{
				{target: "/", host: "SHOP.EXAMPLE"},
				{target: "/", host: "Shop.Example"},
				{target: "/", host: "shop.example."},
				{target: "/", host: "SHOP.EXAMPLE."},
				{target: "/", host: "shop.example:8443"},
				{target: "/", host: "shop.example.:443"},
			}},
	}
	n := 0
	for _, s := range setups {
		n += len(s.cases)
	}
	if n < 30 {
		t.Fatalf("only %d hostile requests", n)
	}
	for si, s := range setups {
		t.Run(s.name, func(t *testing.T) {
			e := start(t, shop(s.def), nil)
			(&visitor{e: e, host: s.host}).enter(s.occupant)
			for i, c := range s.cases {
				name := c.target
				if c.host != "" {
					name = "Host " + c.host
				}
				t.Run(name, func(t *testing.T) {
					e := e.on(t)
					target := strings.ReplaceAll(c.target, "{host}", e.host)
					before := e.origin.reached()
					a := e.raw(clientIP(1, si, i+1), http.MethodGet, target, c.host)
					if sent := e.origin.reached() - before; sent != 0 || a.atOrigin() {
						t.Fatalf("reached the origin without a place (%d requests there): %s", sent, a)
					}
					if a.status != http.StatusBadRequest && !a.queued() {
						t.Fatalf("%s; want the line or 400", a)
					}
				})
			}
		})
	}
}
