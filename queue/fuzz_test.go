// Fuzz targets for what operators and origins hand the queue package: room
// definitions and the origin's commands (key sets: keyset_test.go). Each target's body is a
// check function and its seeds a table, so that TinyGo, which compiles Fuzz
// targets but never runs them, runs the seeds too (fuzz_tinygo_test.go).
// make fuzz fuzzes every target for a bounded time.

package queue

import (
	"encoding/json"
	"errors"
	"reflect"
	"strings"
	"testing"
)

// roomSeeds are room definitions of every shape ParseRoom meets: the
// documented examples, each mode, hosts with ports and dots, paths that are
// not in normal form, and JSON that is not a room.
var roomSeeds = []struct{ name, data string }{
	{"look", `{"paths":["/"],"max_active_users":9,"language":"ja","title":"Sale","message":"<b>soon</b>","logo_url":"/static/logo.png","brand_color":"#0a5","background_color":"#fff","support_link":"mailto:help@example.com","texts":{"de":{"title":"Verkauf"}},"cors_origins":["https://app.example.com:8443"],"leave_beacon":true}`},
	{"main", `{"paths":["/"],"bypass_paths":["/static/"],"new_users_per_minute":60,"burst":10}`},
	{"tickets", `{"hosts":["Shop.Example.com."],"paths":["/tickets/"],"max_active_users":500,"case_insensitive_paths":true}`},
	{"drop", `{"paths":["/drop"],"mode":"random","random_window":30,"new_users_per_minute":0.5,"on_store_error":"open","queue_status_code":429}`},
	{"closed", `{"paths":["/"],"mode":"reject","cookie_name":"c","template":"closed.html"}`},
	{"open-door", `{"paths":["/"],"mode":"passthrough","inactivity_timeout":10,"session_duration":10}`},
	{"v6", `{"hosts":["[::1]"],"paths":["/"],"max_active_users":1}`},
	{"main", `{"hosts":["shop.example.com:443"],"paths":["/"],"max_active_users":1}`},
	{"main", `{"paths":["/static/../x","//a","/%2e/","/a%2Fb"],"max_active_users":1}`},
	{"main", `{"paths":["/"],"max_active_users":1,"refresh":600,"queue_timeout":1800,"claim_window":605}`},
	{"main", `{"paths":["/"],"max_active_users":1e7,"new_users_per_minute":1e-3}`},
	{"main", `{"paths":["/"],"max_active_users":1} {}`},
	{"main", `{"paths":["/"],"max_active_users":1,"extra":true}`},
	{"Main", `{"paths":["/"],"max_active_users":1}`},
	{"main", `{"PATHS":["/"],"Max_Active_Users":2}`},
	{"main", `[]`},
	{"main", `{"paths":null}`},
	{"", ``},
	{"sale", `{"paths":["/"],"mode":"reject","events":[{"name":"drop","prequeue_from":"2026-12-01T09:00:00Z","starts":"2026-12-01T10:00:00Z","ends":"2026-12-01T12:00:00Z","overrides":{"max_active_users":5,"mode":"random"}},{"name":"b","starts":"2026-12-02T10:00:00.5Z","ends":"2026-12-02T12:00:00Z","overrides":{"new_users_per_minute":9}}]}`},
	{"sale", `{"paths":["/"],"max_active_users":1,"events":[{"name":"x","starts":"2026-12-01T10:00:00+02:00","ends":"0"}]}`},
}

// FuzzParseRoom: no definition panics; every refusal wraps ErrInvalidRoom;
// and a room that parses is a fixed point: written back as JSON and parsed
// again, it validates to the same room (defaults and host normalisation
// applied once are applied for good).
func FuzzParseRoom(f *testing.F) {
	for _, s := range roomSeeds {
		f.Add(s.name, []byte(s.data))
	}
	f.Fuzz(checkParseRoom)
}

func checkParseRoom(t *testing.T, name string, data []byte) {
	r, err := ParseRoom(name, data)
	if err != nil {
		if r != nil || !errors.Is(err, ErrInvalidRoom) {
			t.Fatalf("ParseRoom(%q, %q) = %+v, %v: an error must wrap ErrInvalidRoom and come without a room", name, data, r, err)
		}
		return
	}
	again, err := json.Marshal(r)
	if err != nil {
		t.Fatalf("ParseRoom(%q, %q) = %+v, which does not marshal: %v", name, data, r, err)
	}
	r2, err := ParseRoom(name, again)
	if err != nil || !reflect.DeepEqual(r, r2) {
		t.Fatalf("ParseRoom(%q, %q) = %+v, but its JSON %s parses to %+v, %v", name, data, r, again, r2, err)
	}
	if r.Heartbeat() <= 0 || r.PollEvery(0) <= 0 {
		t.Fatalf("room %+v: heartbeat %v, poll every %v", r, r.Heartbeat(), r.PollEvery(0))
	}
}

// commandSeeds are pairs of Waiting-Room-Command values from an origin.
var commandSeeds = []struct{ a, b string }{
	{"revoke", ""},
	{"admit=5", "admit=7, revoke"},
	{"ADMIT=100000", "admit=100000"},
	{"admit=0", "admit=-1"},
	{"admit=9223372036854775807", "admit=99999999999999999999"},
	{"admit=+3", "admit= 4"},
	{"reboot", "admit=1\nforged: line"},
	{",,,", " , revoke ,"},
}

// FuzzParseCommands: no header panics; the admissions asked for are
// within 0..MaxOriginAdmit; every error fits on one log line; and two
// header values mean what the same commands in one comma-separated value
// mean.
func FuzzParseCommands(f *testing.F) {
	for _, s := range commandSeeds {
		f.Add(s.a, s.b)
	}
	f.Fuzz(checkParseCommands)
}

func checkParseCommands(t *testing.T, a, b string) {
	c, errs := ParseCommands([]string{a, b})
	if c.Admit < 0 || c.Admit > MaxOriginAdmit {
		t.Fatalf("ParseCommands(%q, %q) admits %d", a, b, c.Admit)
	}
	for _, err := range errs {
		if strings.ContainsAny(err.Error(), "\r\n") {
			t.Fatalf("ParseCommands(%q, %q): error %q spans lines", a, b, err)
		}
	}
	joined, jerrs := ParseCommands([]string{a + "," + b})
	if joined != c || len(jerrs) != len(errs) {
		t.Fatalf("ParseCommands(%q, %q) = %+v (%d errors), but as one value %+v (%d errors)", a, b, c, len(errs), joined, len(jerrs))
	}
}
