package queue

import (
	"errors"
	"fmt"
	"strings"
	"testing"
	"time"
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

// TestCORSOrigins: an origin is accepted only as a browser writes it in
// its Origin header, since anything else would never match; each refusal
// names the entry and what to write instead.
func TestCORSOrigins(t *testing.T) {
	many := make([]string, MaxCORSOrigins+1)
	for i := range many {
		many[i] = fmt.Sprintf("%q", fmt.Sprintf("https://a%d.test", i))
	}
	tests := []struct {
		name, origins, wantErr string
	}{
		{"none", `[]`, ""},
		{"several", `["https://app.example.com","http://localhost:3000","https://[::1]:8443","https://xn--caf-dma.test"]`, ""},
		{"the most", `[` + strings.Join(many[:MaxCORSOrigins], ",") + `]`, ""},
		{"too many", `[` + strings.Join(many, ",") + `]`, "cors_origins: at most 16 origins, got 17"},
		{"wildcard", `["*"]`, `cors_origins[0]: "*" must begin with https://`},
		{"wildcard host", `["https://*.example.com"]`, "may not hold a wildcard"},
		{"null", `["null"]`, "must begin with https://"},
		{"no scheme", `["app.example.com"]`, "must begin with https://"},
		{"other scheme", `["ftp://app.example.com"]`, "must begin with https://"},
		{"upper-case scheme", `["HTTPS://app.example.com"]`, "must begin with https://"},
		{"path", `["https://app.example.com/"]`, "no path"},
		{"query", `["https://app.example.com?x"]`, "no path"},
		{"fragment", `["https://app.example.com#x"]`, "no path"},
		{"user", `["https://me@app.example.com"]`, "user name"},
		{"upper case", `["https://App.example.com"]`, `has 'A' in its host name`},
		{"space", `["https://app example.com"]`, `has ' '`},
		{"no host", `["https://"]`, "has no host"},
		{"no host with port", `["https://:8443"]`, "has no host"},
		{"trailing dot", `["https://app.example.com."]`, "empty label"},
		{"empty label", `["https://app..example.com"]`, "empty label"},
		{"default https port", `["https://app.example.com:443"]`, "default port 443"},
		{"default http port", `["http://app.example.com:80"]`, "default port 80"},
		{"port zero", `["https://app.example.com:0"]`, "not a number from 1 to 65535"},
		{"port leading zero", `["https://app.example.com:0443"]`, "not a number"},
		{"port too big", `["https://app.example.com:65536"]`, "not a number"},
		{"port not a number", `["https://app.example.com:x"]`, "not a number"},
		{"empty port", `["https://app.example.com:"]`, "not a number"},
		{"bad ipv6", `["https://[::G]"]`, "IPv6"},
		{"ipv6 upper case", `["https://[::A]"]`, "IPv6"},
		{"twice", `["https://a.test","https://b.test","https://a.test"]`, `cors_origins[2]: "https://a.test" is listed twice`},
		{"second bad", `["https://a.test","https://b.test/x"]`, `cors_origins[1]: "https://b.test/x"`},
		{"long", `["https://` + strings.Repeat("a", 300) + `.test"]`, "longer than"},
		{"not a list", `"https://a.test"`, "cors_origins"},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			r, err := ParseRoom("shop", []byte(`{"paths":["/"],"max_active_users":5,"cors_origins":`+tc.origins+`}`))
			if tc.wantErr == "" {
				if err != nil {
					t.Fatal(err)
				}
				return
			}
			if err == nil || !errors.Is(err, ErrInvalidRoom) || !strings.Contains(err.Error(), tc.wantErr) {
				t.Fatalf("error %v, want one naming %q", err, tc.wantErr)
			}
			if r != nil {
				t.Fatalf("a refused room came back: %+v", r)
			}
		})
	}
}

// TestAllowsOrigin: the comparison is exact, as browsers write origins.
func TestAllowsOrigin(t *testing.T) {
	r, err := ParseRoom("shop", []byte(`{"paths":["/"],"max_active_users":5,"cors_origins":["https://app.example.com","http://localhost:3000"]}`))
	if err != nil {
		t.Fatal(err)
	}
	for origin, want := range map[string]bool{
		"https://app.example.com": true, "http://localhost:3000": true,
		"https://app.example.com.evil.test": false, "https://evil.test/https://app.example.com": false,
		"http://app.example.com": false, "https://APP.example.com": false, "http://localhost:3001": false,
		"": false, "null": false, "*": false,
	} {
		if got := r.AllowsOrigin(origin); got != want {
			t.Errorf("AllowsOrigin(%q) = %v, want %v", origin, got, want)
		}
	}
}
