package edge

import (
	"context"
	"encoding/json"
	"net"
	"strings"
	"testing"
	"time"

	"github.com/edgequeue/waitingroom/heartbeat"
	"github.com/edgequeue/waitingroom/queue"
	"github.com/fastly/compute-sdk-go/fsthttp"
	"github.com/fastly/compute-sdk-go/fsttest"
)

// heartbeatRooms: a shop (heartbeat 10 s) whose pages send the departure
// beacon, a tickets room on the same host (heartbeat 20 s), and a room on
// another host.
var heartbeatRooms = mapConfig{
	KeyRooms:                  "tickets, shop, other",
	KeyUpstashURL:             "https://eu1-real-12345.upstash.io",
	KeyRoomPrefix + "tickets": `{"hosts":["shop.example.com"],"paths":["/tickets/"],"max_active_users":10,"inactivity_timeout":60}`,
	KeyRoomPrefix + "shop":    `{"hosts":["shop.example.com"],"paths":["/"],"max_active_users":10,"inactivity_timeout":30,"leave_beacon":true}`,
	KeyRoomPrefix + "other":   `{"hosts":["other.test"],"paths":["/"],"max_active_users":10,"inactivity_timeout":30}`,
}

// TestHeartbeat: the heartbeat keeps sessions as a request through the line
// would (no store call inside the room's heartbeat, one when due, the
// session kept when the store is down), refreshes the pass, never joins a
// line, and never reaches the origin.
func TestHeartbeat(t *testing.T) {
	at := time.Unix(1_700_000_000, 0)
	keys, err := queue.ParseKeySet(testKeys)
	if err != nil {
		t.Fatal(err)
	}
	const ua = "a browser"
	bind := queue.Binding(queue.DefaultBindMode, ua, net.ParseIP(""))
	pass := func(room string, kind queue.PassKind, age time.Duration) string {
		issued := at.Add(-age)
		p := queue.Pass{Kind: kind, Room: room, SessionID: "s-" + room, Number: 4, ArrivalID: "a1", Epoch: 7, Bind: bind,
			IssuedAt: issued, Expires: issued.Add(time.Hour)}
		token, err := keys.Sign(p)
		if err != nil {
			t.Fatal(err)
		}
		return "wr_" + room + "=" + token
	}
	type room struct {
		Room   string `json:"room"`
		Active bool   `json:"active"`
	}
	tests := []struct {
		name    string
		method  string
		host    string
		header  map[string]string
		outcome int64 // the store's answer to a renewal: 1 renewed, 0 ended, -1 down
		code    int
		rooms   []room
		next    int
		beacon  bool
		ops     []string
		cookies []string // the rooms whose pass is set
	}{
		{"inside the heartbeat", "POST", "shop.example.com", map[string]string{"Cookie": pass("shop", queue.Session, 5*time.Second)}, 1,
			200, []room{{"shop", true}}, 10, true, nil, nil},
		{"heartbeat due", "POST", "shop.example.com", map[string]string{"Cookie": pass("shop", queue.Session, 11*time.Second)}, 1,
			200, []room{{"shop", true}}, 10, true, []string{"renew"}, []string{"wr_shop"}},
		{"two rooms: the shorter heartbeat", "POST", "shop.example.com",
			map[string]string{"Cookie": pass("tickets", queue.Session, 25*time.Second) + "; " + pass("shop", queue.Session, 5*time.Second)}, 1,
			200, []room{{"tickets", true}, {"shop", true}}, 10, true, []string{"renew"}, []string{"wr_tickets"}},
		{"no beacon asked", "POST", "shop.example.com", map[string]string{"Cookie": pass("tickets", queue.Session, 5*time.Second)}, 1,
			200, []room{{"tickets", true}}, 20, false, nil, nil},
		{"session ended in the store", "POST", "shop.example.com", map[string]string{"Cookie": pass("shop", queue.Session, 11*time.Second)}, 0,
			200, []room{{"shop", false}}, 0, false, []string{"renew"}, nil},
		{"store down keeps the session", "POST", "shop.example.com", map[string]string{"Cookie": pass("shop", queue.Session, 11*time.Second)}, -1,
			200, []room{{"shop", true}}, 10, true, []string{"renew"}, []string{"wr_shop"}},
		{"no pass: no join", "POST", "shop.example.com", nil, 1, 200, []room{}, 0, false, nil, nil},
		{"a ticket is not polled", "POST", "shop.example.com", map[string]string{"Cookie": pass("shop", queue.Ticket, time.Second)}, 1,
			200, []room{{"shop", false}}, 0, false, nil, nil},
		{"an arrival does not join", "POST", "shop.example.com", map[string]string{"Cookie": pass("shop", queue.Arrival, time.Second)}, 1,
			200, []room{{"shop", false}}, 0, false, nil, nil},
		{"tampered pass", "POST", "shop.example.com", map[string]string{"Cookie": pass("shop", queue.Session, 11*time.Second) + "x"}, 1,
			200, []room{{"shop", false}}, 0, false, nil, nil},
		{"another host's room", "POST", "other.test", map[string]string{"Cookie": pass("shop", queue.Session, 11*time.Second)}, 1,
			200, []room{}, 0, false, nil, nil},
		{"same origin", "POST", "shop.example.com", map[string]string{"Cookie": pass("shop", queue.Session, 11*time.Second),
			"Sec-Fetch-Site": "same-origin", "Origin": "https://shop.example.com"}, 1,
			200, []room{{"shop", true}}, 10, true, []string{"renew"}, []string{"wr_shop"}},
		{"GET refused", "GET", "shop.example.com", map[string]string{"Cookie": pass("shop", queue.Session, 11*time.Second)}, 1,
			405, nil, 0, false, nil, nil},
		{"cross-site refused", "POST", "shop.example.com", map[string]string{"Cookie": pass("shop", queue.Session, 11*time.Second),
			"Sec-Fetch-Site": "cross-site"}, 1, 403, nil, 0, false, nil, nil},
		{"another origin refused", "POST", "shop.example.com", map[string]string{"Cookie": pass("shop", queue.Session, 11*time.Second),
			"Origin": "https://evil.test"}, 1, 403, nil, 0, false, nil, nil},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			var ops []string
			var seen []seenRequest
			var logs []string
			svc := Handler{
				Config: heartbeatRooms, Templates: noTemplates{},
				Secrets:           mapSecrets{m: map[string]string{SecretUpstashToken: "real-token", SecretSigningKeys: testKeys}},
				Origin:            recordingOrigin{seen: &seen},
				Upstash:           laneTransport{ticket: 4, outcome: tc.outcome, ops: &ops},
				UpstashViaBackend: true, Now: fixed(at),
				Logf: func(f string, a ...any) { logs = append(logs, f) },
			}
			r := hostileRequest(t, tc.method, "https", tc.host, heartbeat.Path)
			r.Header.Set("User-Agent", ua)
			for k, v := range tc.header {
				r.Header.Set(k, v)
			}
			w := fsttest.NewRecorder()
			svc.ServeHTTP(context.Background(), w, r)
			if w.Code != tc.code || len(seen) != 0 || strings.Join(ops, ",") != strings.Join(tc.ops, ",") {
				t.Fatalf("%d, %d origin requests, store calls %q; want %d, none, %q: %s", w.Code, len(seen), ops, tc.code, tc.ops, w.Body)
			}
			if cc := w.HeaderMap.Get("Cache-Control"); cc != "no-store" {
				t.Errorf("Cache-Control %q, want no-store", cc)
			}
			var set []string
			for _, c := range w.HeaderMap.Values("Set-Cookie") {
				name, value, _ := strings.Cut(strings.SplitN(c, ";", 2)[0], "=")
				p, err := keys.Verify(strings.TrimPrefix(name, "wr_"), value, at)
				if err != nil || p.Kind != queue.Session || !p.IssuedAt.Equal(at) {
					t.Errorf("cookie %s: %+v (%v), want a session pass issued now", c, p, err)
				}
				set = append(set, name)
			}
			if strings.Join(set, ",") != strings.Join(tc.cookies, ",") {
				t.Errorf("passes set for %q, want %q", set, tc.cookies)
			}
			if tc.code != 200 {
				if w.HeaderMap.Get("Content-Type") != "text/plain; charset=utf-8" || w.Body.Len() == 0 || len(logs) == 0 {
					t.Errorf("a refusal must say why, to the client and the log: %q, %q", w.Body, logs)
				}
				return
			}
			var got struct {
				Rooms       []room `json:"rooms"`
				NextSeconds int    `json:"next_seconds"`
				LeaveBeacon bool   `json:"leave_beacon"`
			}
			if err := json.Unmarshal(w.Body.Bytes(), &got); err != nil || w.HeaderMap.Get("Content-Type") != "application/json" {
				t.Fatalf("%q (%v): not JSON", w.Body, err)
			}
			if got.Rooms == nil || len(got.Rooms) != len(tc.rooms) || got.NextSeconds != tc.next || got.LeaveBeacon != tc.beacon {
				t.Fatalf("answer %s, want rooms %v, next %d, beacon %v", w.Body, tc.rooms, tc.next, tc.beacon)
			}
			for i := range got.Rooms {
				if got.Rooms[i] != tc.rooms[i] {
					t.Errorf("room %d: %+v, want %+v", i, got.Rooms[i], tc.rooms[i])
				}
			}
		})
	}
}

// TestHeartbeatScript: the script is served with no store call, cached for
// a year when asked for by its version and briefly otherwise, revalidated
// by its ETag.
func TestHeartbeatScript(t *testing.T) {
	v := heartbeat.Version()
	tests := []struct {
		name, method, target, ifNoneMatch string
		code                              int
		cache                             string
		body                              bool
	}{
		{"versioned", "GET", heartbeat.ScriptPath + "?v=" + v, "", 200, "public, max-age=31536000, immutable", true},
		{"unversioned", "GET", heartbeat.ScriptPath, "", 200, "public, max-age=300", true},
		{"another version", "GET", heartbeat.ScriptPath + "?v=0123456789abcdef", "", 200, "public, max-age=300", true},
		{"head", "HEAD", heartbeat.ScriptPath + "?v=" + v, "", 200, "public, max-age=31536000, immutable", false},
		{"not modified", "GET", heartbeat.ScriptPath + "?v=" + v, `"` + v + `"`, 304, "public, max-age=31536000, immutable", false},
		{"modified", "GET", heartbeat.ScriptPath, `"0123456789abcdef"`, 200, "public, max-age=300", true},
		{"POST refused", "POST", heartbeat.ScriptPath, "", 405, "", false},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			c := newTargetCase(heartbeatRooms)
			r := hostileRequest(t, tc.method, "https", "shop.example.com", tc.target)
			if tc.ifNoneMatch != "" {
				r.Header.Set("If-None-Match", tc.ifNoneMatch)
			}
			w := fsttest.NewRecorder()
			c.svc.ServeHTTP(context.Background(), w, r)
			h := w.HeaderMap
			if w.Code != tc.code || len(c.stored) != 0 || len(c.seen) != 0 {
				t.Fatalf("%d with %d store calls and %d origin requests, want %d and none", w.Code, len(c.stored), len(c.seen), tc.code)
			}
			if tc.code == fsthttp.StatusMethodNotAllowed {
				if h.Get("Allow") != "GET, HEAD" {
					t.Errorf("Allow %q", h.Get("Allow"))
				}
				return
			}
			if h.Get("Content-Type") != "text/javascript; charset=utf-8" || h.Get("ETag") != `"`+v+`"` || h.Get("Cache-Control") != tc.cache ||
				h.Get("X-Content-Type-Options") != "nosniff" {
				t.Errorf("headers %v, want text/javascript, ETag %q, Cache-Control %q, nosniff", h, v, tc.cache)
			}
			if got := w.Body.String(); (got == heartbeat.Script) != tc.body || (!tc.body && got != "") {
				t.Errorf("body %d bytes, want the script: %v", len(got), tc.body)
			}
		})
	}
}
