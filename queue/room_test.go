package queue

import (
	"errors"
	"fmt"
	"net/netip"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/edgequeue/waitingroom/match"
)

func TestParseRoom(t *testing.T) {
	tests := []struct {
		name, json, wantErr string
	}{
		{"minimal", `{"paths":["/"],"new_users_per_minute":10}`, ""},
		{"full", `{"hosts":["a.test","B.test."],"case_insensitive_paths":true,"paths":["/x/"],"bypass_paths":["/x/static/"],"new_users_per_minute":10,"burst":5,
			"refresh":5,"queue_timeout":600,"session_duration":120,"inactivity_timeout":60,"claim_window":20,"max_active_users":100,
			"mode":"fifo","on_store_error":"open","cookie_name":"q","queue_status_code":429,"template":"t.html"}`, ""},
		{"capacity only", `{"paths":["/"],"max_active_users":50}`, ""},
		{"passthrough needs no limits", `{"paths":["/"],"mode":"passthrough"}`, ""},
		{"reject", `{"paths":["/"],"mode":"reject"}`, ""},
		{"bad mode", `{"paths":["/"],"mode":"lottery","max_active_users":5}`, `mode: must be`},
		{"bad store error policy", `{"paths":["/"],"max_active_users":5,"on_store_error":"panic"}`, `on_store_error: must be`},
		{"negative capacity", `{"paths":["/"],"max_active_users":-1}`, "max_active_users: must be between"},
		{"tiny rate", `{"paths":["/"],"new_users_per_minute":0.001}`, "new_users_per_minute: must be 0"},
		{"claim window under a refresh", `{"paths":["/"],"max_active_users":5,"refresh":30,"claim_window":20}`, "claim_window: 20 is shorter"},
		{"session shorter than inactivity", `{"paths":["/"],"max_active_users":5,"session_duration":30,"inactivity_timeout":60}`, "session_duration: 30 is shorter"},
		{"syntax", `{"paths":`, "unexpected EOF"},
		{"trailing data", `{"paths":["/"],"new_users_per_minute":1} {}`, "unexpected data"},
		{"unknown field", `{"paths":["/"],"new_users_per_minute":1,"rate":3}`, `unknown field "rate"`},
		{"wrong type", `{"paths":"/","new_users_per_minute":1}`, "paths"},
		{"no paths", `{"new_users_per_minute":1}`, "paths: at least one"},
		{"relative path", `{"paths":["x"],"new_users_per_minute":1}`, `paths[0]: "x" must start with /`},
		{"relative bypass", `{"paths":["/"],"bypass_paths":["s"],"new_users_per_minute":1}`, "bypass_paths[0]"},
		{"bad host", `{"hosts":["a b"],"paths":["/"],"new_users_per_minute":1}`, "hosts[0]"},
		{"host with a port", `{"hosts":["a.test:8080"],"paths":["/"],"new_users_per_minute":1}`, "without a port"},
		{"empty host", `{"hosts":[""],"paths":["/"],"new_users_per_minute":1}`, "hosts[0]"},
		{"path with dot segments", `{"paths":["/a/../b/"],"new_users_per_minute":1}`, `paths[0]: "/a/../b/" never matches`},
		{"path with repeated slashes", `{"paths":["//tickets/"],"new_users_per_minute":1}`, `write "/tickets/"`},
		{"bypass with an encoded unreserved character", `{"paths":["/"],"bypass_paths":["/%73tatic/"],"new_users_per_minute":1}`, `write "/static/"`},
		{"bypass with a bad escape", `{"paths":["/"],"bypass_paths":["/s%zz/"],"new_users_per_minute":1}`, "invalid percent escape"},
		{"case_insensitive_paths not a bool", `{"paths":["/"],"new_users_per_minute":1,"case_insensitive_paths":"yes"}`, "case_insensitive_paths"},
		{"no rate and no capacity", `{"paths":["/"]}`, "set at least one"},
		{"negative rate", `{"paths":["/"],"new_users_per_minute":-5}`, "new_users_per_minute"},
		{"negative burst", `{"paths":["/"],"new_users_per_minute":1,"burst":-1}`, "burst: must be between"},
		{"refresh too slow", `{"paths":["/"],"new_users_per_minute":1,"refresh":9999}`, "refresh: must be between 1 and 600, got 9999"},
		{"refresh in fractions", `{"paths":["/"],"new_users_per_minute":1,"refresh":2.5}`, "refresh"},
		{"refresh's old name", `{"paths":["/"],"new_users_per_minute":1,"refresh_seconds":5}`, `room "shop": refresh_seconds was renamed refresh, in seconds`},
		{"snapshot_ttl's old name", `{"paths":["/"],"new_users_per_minute":1,"snapshot_ttl_ms":500}`, "snapshot_ttl_ms was renamed snapshot_ttl, in seconds"},
		{"snapshot_ttl too long", `{"paths":["/"],"new_users_per_minute":1,"snapshot_ttl":10.5}`, "snapshot_ttl: must be between 0 and 10, got 10.5"},
		{"snapshot_ttl negative", `{"paths":["/"],"new_users_per_minute":1,"snapshot_ttl":-0.5}`, "snapshot_ttl: must be between"},
		{"snapshot_ttl a string", `{"paths":["/"],"new_users_per_minute":1,"snapshot_ttl":"1s"}`, "snapshot_ttl"},
		{"timeout shorter than refreshes", `{"paths":["/"],"new_users_per_minute":1,"refresh":60,"queue_timeout":60,"claim_window":70}`, "queue_timeout: 60 is shorter"},
		{"status code", `{"paths":["/"],"new_users_per_minute":1,"queue_status_code":302}`, "queue_status_code: must be"},
		{"cookie name", `{"paths":["/"],"new_users_per_minute":1,"cookie_name":"a;b"}`, "cookie_name"},
		{"template path", `{"paths":["/"],"new_users_per_minute":1,"template":"../x"}`, "template"},
		{"huge number", `{"paths":["/"],"new_users_per_minute":1e400}`, "new_users_per_minute"},
		{"every rule", `{"hosts":["*.example.com","shop.test"],"paths":["/tickets/*/buy","*.json"],"countries":["de","AT"],"max_active_users":5,
			"bypass_ips":["192.0.2.1","2001:db8::/32"],"bypass_acl":"office","bypass_paths":["/static/"],"bypass_extensions":["css",".png"],
			"bypass_methods":["OPTIONS"],"bypass_headers":[{"name":"X-Health","value":"1"},{"name":"X-Key","secret":"partner"}],
			"bypass_cookies":["staff","tier=gold"],"bypass_verified_bots":true}`, ""},
		{"bad bypass ip", `{"paths":["/"],"max_active_users":1,"bypass_ips":["192.0.2.1","10.0.0.1/8"]}`, `bypass_ips[1]: "10.0.0.1/8" has bits set`},
		{"bad country", `{"paths":["/"],"max_active_users":1,"countries":["UK"]}`, `countries[0]: "UK" is not`},
		{"bad wildcard", `{"hosts":["shop.*"],"paths":["/"],"max_active_users":1}`, `hosts[0]: "shop.*" may only hold *`},
		{"bad glob", `{"paths":["/a/**"],"max_active_users":1}`, `paths[0]: "/a/**" holds "**"`},
		{"bad header rule", `{"paths":["/"],"max_active_users":1,"bypass_headers":[{"name":"X-Health"}]}`, `bypass_headers[0]: value or secret`},
		{"unknown header field", `{"paths":["/"],"max_active_users":1,"bypass_headers":[{"name":"X-Health","valeu":"1"}]}`, `unknown field "valeu"`},
		{"bypass_verified_bots not a bool", `{"paths":["/"],"max_active_users":1,"bypass_verified_bots":"yes"}`, "bypass_verified_bots"},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			r, err := ParseRoom("shop", []byte(tc.json))
			if tc.wantErr == "" {
				if err != nil {
					t.Fatal(err)
				}
				if r.Name != "shop" {
					t.Fatalf("name %q", r.Name)
				}
				return
			}
			if err == nil || !errors.Is(err, ErrInvalidRoom) || !strings.Contains(err.Error(), tc.wantErr) || !strings.Contains(err.Error(), `room "shop"`) {
				t.Fatalf("error %v, want ErrInvalidRoom naming the room and %q", err, tc.wantErr)
			}
		})
	}
}

func TestParseRoomDefaults(t *testing.T) {
	r, err := ParseRoom("shop", []byte(`{"paths":["/"],"new_users_per_minute":10}`))
	if err != nil {
		t.Fatal(err)
	}
	if r.RefreshSeconds != 10 || r.QueueTimeout != 900 || r.ClaimWindow != 30 ||
		r.InactivityTimeout != 90 || r.SessionDuration != 300 || r.QueueStatusCode != 200 ||
		r.CookieName != "wr_shop" || r.Template != "queue.html" || r.Burst != 1 || r.Mode != Fifo || r.OnStoreError != Hold {
		t.Fatalf("defaults: %+v", r)
	}
}

// A number left out takes the table's default; 0 takes it too where the
// range refuses 0, and is kept where 0 means off.
func TestParseRoomNumbers(t *testing.T) {
	for _, tc := range []struct {
		json string
		got  func(r *Room) float64
		want float64
	}{
		{`"refresh":0`, func(r *Room) float64 { return float64(r.RefreshSeconds) }, 10},
		{`"refresh":3`, func(r *Room) float64 { return float64(r.RefreshSeconds) }, 3},
		{`"burst":0`, func(r *Room) float64 { return float64(r.Burst) }, 1},
		{`"queue_status_code":0`, func(r *Room) float64 { return float64(r.QueueStatusCode) }, 200},
		{`"joins_per_ip_per_minute":0`, func(r *Room) float64 { return float64(r.JoinsPerIPPerMinute) }, 0},
		{`"priority_share":0`, func(r *Room) float64 { return r.PriorityShare }, 0},
		{`"snapshot_ttl":0`, func(r *Room) float64 { return r.SnapshotTTLSeconds }, 0},
		{`"snapshot_ttl":0.25`, func(r *Room) float64 { return r.SnapshotTTLSeconds }, 0.25},
		{`"random_window":5`, func(r *Room) float64 { return float64(r.RandomWindow) }, 5},
		{`"new_users_per_minute":0.5`, func(r *Room) float64 { return r.NewUsersPerMinute }, 0.5},
	} {
		r, err := ParseRoom("shop", []byte(`{"paths":["/"],"max_active_users":1,`+tc.json+`}`))
		if err != nil {
			t.Errorf("%s: %v", tc.json, err)
			continue
		}
		if got := tc.got(r); got != tc.want {
			t.Errorf("%s: %v, want %v", tc.json, got, tc.want)
		}
	}
	r := mustRoom(t, "shop", `{"paths":["/"],"max_active_users":1}`)
	if r.JoinsPerIPPerMinute != 30 || r.PriorityShare != 0.2 || r.SnapshotTTL() != time.Second || r.RandomWindow != 60 || r.NewUsersPerMinute != 0 {
		t.Errorf("defaults: %+v", r)
	}
	if r := mustRoom(t, "shop", `{"paths":["/"],"max_active_users":1,"snapshot_ttl":1.5}`); r.SnapshotTTL() != 1500*time.Millisecond {
		t.Errorf("snapshot_ttl 1.5: %v", r.SnapshotTTL())
	}
}

func TestRoomNames(t *testing.T) {
	for _, name := range []string{"", "Shop", "a b", "a:b", strings.Repeat("a", 65), "ü"} {
		if _, err := ParseRoom(name, []byte(`{"paths":["/"],"new_users_per_minute":1}`)); !errors.Is(err, ErrInvalidRoom) {
			t.Errorf("name %q accepted", name)
		}
	}
	if _, err := ParseRoomIndex("a, b\nc"); err != nil {
		t.Fatal(err)
	}
	for _, idx := range []string{"a,a", "a,B"} {
		if _, err := ParseRoomIndex(idx); !errors.Is(err, ErrInvalidRoom) {
			t.Errorf("index %q accepted", idx)
		}
	}
}

// mustRoom parses a room definition that must be valid; the definition
// gets a capacity unless it sets a limit.
func mustRoom(t testing.TB, name, def string) *Room {
	t.Helper()
	if !strings.Contains(def, "max_active_users") && !strings.Contains(def, "new_users_per_minute") {
		def = strings.TrimSuffix(def, "}") + `,"max_active_users":10}`
	}
	r, err := ParseRoom(name, []byte(def))
	if err != nil {
		t.Fatal(err)
	}
	return r
}

// judged is Judge's answer in short: the room's name (or "-"), then
// "protected" or "bypass <rule>" (or nothing, in no room).
func judged(rooms []*Room, global *match.Bypass, req *match.Request) string {
	j, err := Judge(rooms, global, req)
	got := "-"
	if j.Room != nil {
		got = j.Room.Name
	}
	switch {
	case j.Protected:
		got += " protected"
	case j.Bypass != "":
		got += " bypass " + j.Bypass
	}
	if err != nil {
		got += " error " + err.Error()
	}
	return got
}

func TestMatch(t *testing.T) {
	shop := mustRoom(t, "shop", `{"hosts":["shop.test"],"paths":["/"],"bypass_paths":["/static/"]}`)
	event := mustRoom(t, "event", `{"paths":["/event/"]}`)
	rooms := []*Room{event, shop}
	tests := []struct {
		host, path, want string
	}{
		{"shop.test", "/", "shop protected"},
		{"SHOP.test:443", "/cart", "shop protected"},
		{"shop.test.", "/cart", "shop protected"},
		{"shop.test", "/static/a.css", "shop bypass path"},
		{"shop.test", "/STATIC/a.css", "shop protected"},
		{"shop.test", "/event/1", "shop protected"}, // an exact host beats a longer path on any host
		{"other.test", "/event/1", "event protected"},
		{"other.test", "/", "-"},
		{"[::1]:80", "/", "-"},
		{"shop test", "/", "-"},
		{"", "/", "-"},
	}
	for _, tc := range tests {
		if got := judged(rooms, nil, &match.Request{Host: tc.host, Paths: []string{tc.path}}); got != tc.want {
			t.Errorf("Judge(%q, %q) = %s, want %s", tc.host, tc.path, got, tc.want)
		}
	}
}

// TestParsedHostsMatch: a room's hosts are kept in normal form, so any
// spelling of the host in a request matches.
func TestParsedHostsMatch(t *testing.T) {
	r := mustRoom(t, "shop", `{"hosts":["Shop.Example.COM.","*.Shop.Test"],"paths":["/"],"new_users_per_minute":1}`)
	if r.Hosts[0] != "shop.example.com" || r.Hosts[1] != "*.shop.test" {
		t.Errorf("hosts kept as %q", r.Hosts)
	}
	for _, h := range []string{"shop.example.com", "SHOP.example.com", "shop.example.com.", "shop.example.com:443", "shop.example.com:8080", "a.shop.test"} {
		if !r.Serves(h) {
			t.Errorf("Serves(%q) = false", h)
		}
	}
	for _, h := range []string{"example.com", "shop.example.com.evil.test", "", "shop.example.com\x00", "shop.test"} {
		if r.Serves(h) {
			t.Errorf("Serves(%q) = true", h)
		}
	}
}

// TestCaseInsensitivePaths: with case_insensitive_paths, rooms and bypass
// rules match any case (Unicode folding, rune by rune); without, only the
// case written.
func TestCaseInsensitivePaths(t *testing.T) {
	room := func(fold bool) *Room {
		return mustRoom(t, "t", fmt.Sprintf(`{"paths":["/tickets/","/kiosk/","/café/"],"bypass_paths":["/tickets/static/"],"case_insensitive_paths":%v}`, fold))
	}
	tests := []struct {
		path          string
		plain, folded string
	}{
		{"/tickets/buy", "t protected", "t protected"},
		{"/TICKETS/buy", "-", "t protected"},
		{"/Tickets/Static/a.css", "-", "t bypass path"},
		{"/tickets/STATIC/a.css", "t protected", "t bypass path"},
		{"/tickets/static/a.css", "t bypass path", "t bypass path"},
		{"/\u212Aiosk/", "-", "t protected"}, // the Kelvin sign folds to k
		{"/CAFÉ/menu", "-", "t protected"},
		{"/ticket", "-", "-"},
		{"/tickets", "-", "-"},
	}
	for _, tc := range tests {
		for _, fold := range []bool{false, true} {
			want := tc.plain
			if fold {
				want = tc.folded
			}
			if got := judged([]*Room{room(fold)}, nil, &match.Request{Host: "any.test", Paths: []string{tc.path}}); got != want {
				t.Errorf("fold %v: %q: %s, want %s", fold, tc.path, got, want)
			}
		}
	}
}

// TestJudge: a request is protected when any reading of its path is in a
// room's line and not bypassed there; when none is, the room is the one
// the first reading in a room is in, with the rule that let it through.
func TestJudge(t *testing.T) {
	shop := mustRoom(t, "shop", `{"paths":["/"],"bypass_paths":["/static/"],"bypass_methods":["OPTIONS"]}`)
	tickets := mustRoom(t, "tickets", `{"hosts":["t.test"],"paths":["/tickets/"]}`)
	rooms := []*Room{tickets, shop}
	tests := []struct {
		host     string
		method   string
		readings []string
		want     string
	}{
		{"shop.test", "GET", []string{"/checkout", "/checkout"}, "shop protected"},
		{"shop.test", "GET", []string{"/static/a.css", "/static/a.css"}, "shop bypass path"},
		{"shop.test", "GET", []string{"/static/..%2Fcheckout", "/checkout"}, "shop protected"},
		{"shop.test", "GET", []string{"/static/x%2F..%2F..%2Fcheckout", "/checkout"}, "shop protected"},
		{"t.test", "GET", []string{"/tickets;x/buy", "/tickets/buy"}, "shop protected"}, // the first reading's room
		{"t.test", "GET", []string{"/static/a", "/static/a"}, "shop bypass path"},
		{"t.test", "OPTIONS", []string{"/tickets/buy", "/tickets/buy"}, "tickets protected"}, // that room bypasses no method
		{"other.test", "GET", []string{"/tickets/buy"}, "shop protected"},
		{"other.test", "OPTIONS", []string{"/tickets/buy"}, "shop bypass method"},
		{"other.test", "options", []string{"/tickets/buy"}, "shop protected"},
		{"other.test", "GET", nil, "-"},
	}
	for _, tc := range tests {
		got := judged(rooms, nil, &match.Request{Host: tc.host, Method: tc.method, Paths: tc.readings})
		if got != tc.want {
			t.Errorf("Judge(%s %q, %q) = %s, want %s", tc.method, tc.host, tc.readings, got, tc.want)
		}
	}
	if got := judged([]*Room{tickets}, nil, &match.Request{Host: "t.test", Paths: []string{"/about", "/about"}}); got != "-" {
		t.Errorf("a path in no room: %s", got)
	}
	if got := judged([]*Room{tickets}, nil, &match.Request{Host: "t.test", Paths: []string{"/tickets;x/buy", "/tickets/buy"}}); got != "tickets protected" {
		t.Errorf("only the loose reading is in a room: %s", got)
	}
}

// TestJudgeSpecificity is the "Which room applies" table of docs/rooms.md: each
// request is in the most specific room that holds it, whatever the order
// of the index, which breaks only ties.
func TestJudgeSpecificity(t *testing.T) {
	defs := []struct{ name, def string }{
		{"site", `{"paths":["/"]}`},
		{"api", `{"paths":["*.json"]}`},
		{"tickets", `{"paths":["/tickets/"]}`},
		{"buy", `{"paths":["/tickets/*/buy"]}`},
		{"sale", `{"paths":["/sale/"]}`},
		{"sale-de", `{"paths":["/sale/"],"countries":["DE"]}`},
		{"outlet", `{"paths":["/outlet/"]}`},
		{"outlet-not-fr", `{"paths":["/outlet/"],"except_countries":["FR"]}`},
		{"subdomains", `{"hosts":["*.example.com"],"paths":["/"]}`},
		{"shop-subdomains", `{"hosts":["*.shop.example.com"],"paths":["/"]}`},
		{"shop", `{"hosts":["shop.example.com"],"paths":["/"]}`},
		{"shop-too", `{"hosts":["shop.example.com"],"paths":["/"]}`},
	}
	tests := []struct {
		host, path, country, want string
	}{
		{"other.test", "/", "", "site"},
		{"other.test", "/api/x.json", "", "api"},         // 5 literal characters beat 1
		{"other.test", "/tickets/x.json", "", "tickets"}, // 9 beat 5
		{"other.test", "/tickets/42/buy", "", "buy"},     // 13 beat 9
		{"other.test", "/sale/1", "DE", "sale-de"},       // a country room beats an untargeted one
		{"other.test", "/sale/1", "FR", "sale"},          // when it applies
		{"other.test", "/sale/1", "", "sale"},            // unknown country: countries does not apply
		{"other.test", "/outlet/1", "DE", "outlet-not-fr"},
		{"other.test", "/outlet/1", "FR", "outlet"},
		{"other.test", "/outlet/1", "", "outlet-not-fr"},         // unknown country: except_countries applies
		{"a.example.com", "/tickets/42/buy", "DE", "subdomains"}, // any wildcard beats any path on every host
		{"a.b.example.com", "/", "", "subdomains"},
		{"example.com", "/", "", "site"},
		{"a.shop.example.com", "/", "", "shop-subdomains"}, // a longer suffix beats a shorter one
		{"shop.example.com", "/", "", "shop"},              // an exact host beats every wildcard; the earlier of equals
	}
	ip := netip.MustParseAddr("192.0.2.1")
	for _, reversed := range []bool{false, true} {
		var rooms []*Room
		for _, d := range defs {
			rooms = append(rooms, mustRoom(t, d.name, d.def))
		}
		if reversed {
			// Order decides only between equals: reversed, the later twin wins.
			slices.Reverse(rooms)
		}
		for _, tc := range tests {
			want := tc.want
			if reversed && want == "shop" {
				want = "shop-too"
			}
			req := &match.Request{Host: tc.host, Paths: []string{tc.path}, IP: ip, Facts: countryFacts(tc.country)}
			if got := judged(rooms, nil, req); got != want+" protected" {
				t.Errorf("reversed %v: %s%s from %q: %s, want %s", reversed, tc.host, tc.path, tc.country, got, want)
			}
		}
	}
}

// countryFacts is a platform that knows the client's country, and nothing
// else.
type countryFacts string

func (c countryFacts) Country(netip.Addr) (string, error)   { return string(c), nil }
func (countryFacts) VerifiedBot() (bool, error)             { return false, nil }
func (countryFacts) ACL(string, netip.Addr) (string, error) { return "", nil }
func (countryFacts) Secret(string) ([]byte, error)          { return nil, errors.New("no secrets") }

// failingFacts is a platform whose every answer fails.
type failingFacts struct{}

var errPlatform = errors.New("platform down")

func (failingFacts) Country(netip.Addr) (string, error)     { return "DE", errPlatform }
func (failingFacts) VerifiedBot() (bool, error)             { return true, errPlatform }
func (failingFacts) ACL(string, netip.Addr) (string, error) { return "ALLOW", errPlatform }
func (failingFacts) Secret(string) ([]byte, error)          { return []byte("k"), errPlatform }

// TestJudgeBypass: global rules apply before a room's and to every room,
// each reading of the path is judged, and a failing platform lets nobody
// through, but never stops the judgement.
func TestJudgeBypass(t *testing.T) {
	shop := mustRoom(t, "shop", `{"paths":["/"],"bypass_extensions":["css"],"bypass_verified_bots":true,"bypass_acl":"office"}`)
	de := mustRoom(t, "de", `{"paths":["/sale/"],"countries":["DE"]}`)
	rooms := []*Room{shop, de}
	global := &match.Bypass{Methods: []string{"OPTIONS"}, Paths: []string{"/health"}, Headers: []match.HeaderRule{{Name: "X-Health", Value: "ok"}}}
	if err := global.Compile(false); err != nil {
		t.Fatal(err)
	}
	ip := netip.MustParseAddr("192.0.2.1")
	tests := []struct {
		name     string
		req      match.Request
		readings []string
		want     string
	}{
		{"plain", match.Request{Method: "GET"}, []string{"/checkout"}, "shop protected"},
		{"global method", match.Request{Method: "OPTIONS"}, []string{"/checkout"}, "shop bypass global:method"},
		{"global path", match.Request{Method: "GET"}, []string{"/health", "/health"}, "shop bypass global:path"},
		{"global header in a country room", match.Request{Method: "GET", Header: func(string) []string { return []string{"ok"} },
			IP: ip, Facts: countryFacts("DE")}, []string{"/sale/1"}, "de bypass global:header:X-Health"},
		{"room rule", match.Request{Method: "GET"}, []string{"/a.css", "/a.css"}, "shop bypass extension"},
		{"room rule is the room's", match.Request{Method: "GET", IP: ip, Facts: countryFacts("DE")}, []string{"/sale/a.css"}, "de protected"},
		{"extension behind parameters", match.Request{Method: "GET"}, []string{"/checkout;.css", "/checkout"}, "shop protected"},
		{"extension in both readings", match.Request{Method: "GET"}, []string{"/a.css;v=1", "/a.css"}, "shop protected"},
		{"parameters in both", match.Request{Method: "GET"}, []string{"/a;v=1.css", "/a"}, "shop protected"},
		{"global path under one reading", match.Request{Method: "GET"}, []string{"/health;x/../checkout", "/checkout"}, "shop protected"},
		{"failing platform", match.Request{Method: "GET", IP: ip, Facts: failingFacts{}}, []string{"/sale/1"},
			`shop protected error room "de": platform down` + "\n" + `room "shop": bypass_acl "office": platform down` + "\n" + `room "shop": bypass_verified_bots: platform down`},
	}
	for _, tc := range tests {
		req := tc.req
		req.Paths = tc.readings
		if got := judged(rooms, global, &req); got != tc.want {
			t.Errorf("%s: %s, want %s", tc.name, got, tc.want)
		}
	}
	j, err := Judge(rooms, global, &match.Request{Method: "GET", IP: ip, Facts: failingFacts{}, Paths: []string{"/sale/1"}})
	if !errors.Is(err, errPlatform) || j.Room != shop || !j.Protected {
		t.Errorf("a failing platform: %+v, %v", j, err)
	}
}

func TestParseCommands(t *testing.T) {
	tests := []struct {
		values []string
		want   Commands
		errs   int
	}{
		{nil, Commands{}, 0},
		{[]string{"revoke"}, Commands{Revoke: true}, 0},
		{[]string{" Admit=5 , revoke"}, Commands{Revoke: true, Admit: 5}, 0},
		{[]string{"admit=2", "admit=3"}, Commands{Admit: 5}, 0},
		{[]string{"admit=0", "admit=x", "admit=-1", "admit=999999999"}, Commands{}, 4},
		{[]string{"reboot, revoke"}, Commands{Revoke: true}, 1},
		{[]string{"admit=10000", "admit=10000"}, Commands{Admit: MaxOriginAdmit}, 0},
		{[]string{"admit=10001"}, Commands{}, 1},
	}
	for _, tc := range tests {
		got, errs := ParseCommands(tc.values)
		if got != tc.want || len(errs) != tc.errs {
			t.Errorf("%q: %+v with %d errors, want %+v with %d", tc.values, got, len(errs), tc.want, tc.errs)
		}
	}
}

func TestPollEvery(t *testing.T) {
	tests := []struct {
		room  Room
		ahead int64
		want  time.Duration
	}{
		{Room{RefreshSeconds: 10, MaxActiveUsers: 100}, 0, FastPoll},
		{Room{RefreshSeconds: 10, MaxActiveUsers: 100}, 4, FastPoll},
		{Room{RefreshSeconds: 10, MaxActiveUsers: 100}, 5, 10 * time.Second},
		{Room{RefreshSeconds: 10, MaxActiveUsers: 1000}, 49, FastPoll},
		{Room{RefreshSeconds: 10, MaxActiveUsers: 1000}, 50, 10 * time.Second},
		{Room{RefreshSeconds: 30, NewUsersPerMinute: 600}, 299, FastPoll},
		{Room{RefreshSeconds: 30, NewUsersPerMinute: 600}, 300, 30 * time.Second},
		{Room{RefreshSeconds: 1, MaxActiveUsers: 100}, 0, time.Second},
	}
	for _, tc := range tests {
		if got := tc.room.PollEvery(tc.ahead); got != tc.want {
			t.Errorf("%+v ahead %d: %v, want %v", tc.room, tc.ahead, got, tc.want)
		}
	}
}
