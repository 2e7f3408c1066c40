package accesslog

import (
	"encoding/json"
	"math"
	"strings"
	"testing"
	"time"
	"unicode/utf8"

	"github.com/edgequeue/waitingroom/store"
)

var (
	testKey   = []byte("0123456789abcdefghijklmnopqrstuv")
	otherKey  = []byte("vutsrqponmlkjihgfedcba9876543210")
	testStart = time.Date(2025, 3, 1, 12, 30, 45, 678_901_234, time.FixedZone("CET", 3600))
)

// decode parses a line, failing the test unless it is one JSON object.
func decode(t *testing.T, line []byte) map[string]any {
	t.Helper()
	if strings.ContainsAny(string(line), "\n\r") {
		t.Fatalf("the line holds a line break: %s", line)
	}
	var m map[string]any
	if err := json.Unmarshal(line, &m); err != nil {
		t.Fatalf("not a JSON object: %v\n%s", err, line)
	}
	return m
}

// fields checks that m, decoded from line, has want's fields with their
// values and none of absent.
func fields(t *testing.T, m map[string]any, line []byte, want map[string]any, absent []string) {
	t.Helper()
	for k, v := range want {
		if m[k] != v {
			t.Errorf("%s = %#v, want %#v\n%s", k, m[k], v, line)
		}
	}
	for _, k := range absent {
		if _, ok := m[k]; ok {
			t.Errorf("%s is there, should not be\n%s", k, line)
		}
	}
}

func TestRequestLine(t *testing.T) {
	base := Request{Time: testStart, Method: "GET", Path: "/shop/cart", Room: "shop", Decision: "line/wait",
		Why: "waiting", Ticket: 42, Ahead: 0, StoreCalls: 1, StoreTime: 3456789 * time.Nanosecond,
		Status: 200, POP: "FRA", Country: "DE", Client: "203.0.113.9", ClientKey: testKey}
	tests := []struct {
		name   string
		change func(*Request)
		want   map[string]any // fields that must be there, with these values
		absent []string       // fields that must not be there
	}{
		{"waiting", nil, map[string]any{
			"type": "request", "time": "2025-03-01T11:30:45.678Z", "method": "GET", "path": "/shop/cart",
			"room": "shop", "decision": "line/wait", "why": "waiting", "ticket": 42.0, "ahead": 0.0,
			"store_calls": 1.0, "store_ms": 3.456, "status": 200.0, "pop": "FRA", "country": "DE",
			"client": ClientHash(testKey, "203.0.113.9"),
		}, []string{"client_ip", "fail_open"}},
		{"no ticket, no place", func(r *Request) { r.Ticket, r.Ahead, r.Decision = 0, 0, "bypass" },
			map[string]any{"decision": "bypass"}, []string{"ticket", "ahead"}},
		{"priority ticket", func(r *Request) { r.Ticket, r.Ahead = -3, 2 },
			map[string]any{"ticket": -3.0, "ahead": 2.0}, nil},
		{"fail open", func(r *Request) { r.FailOpen, r.Decision = true, "line/admit" },
			map[string]any{"fail_open": true, "decision": "line/admit"}, nil},
		{"address opted in", func(r *Request) { r.ShowClientIP = true },
			map[string]any{"client_ip": "203.0.113.9"}, []string{"client"}},
		{"no key, no client", func(r *Request) { r.ClientKey = nil },
			nil, []string{"client", "client_ip"}},
		{"no address", func(r *Request) { r.Client = "" },
			nil, []string{"client", "client_ip"}},
		{"waited", func(r *Request) { r.Waited = 83*time.Second + 260*time.Millisecond },
			map[string]any{"waited_s": 83.3}, nil},
		{"just joined", func(r *Request) { r.Waited = 0 }, nil, []string{"waited_s"}},
		{"unknown country and POP, no store call", func(r *Request) { r.Country, r.POP, r.StoreCalls, r.StoreTime = "", "", 0, 0 },
			map[string]any{"store_calls": 0.0, "store_ms": 0.0}, []string{"country", "pop"}},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			r := base
			if tc.change != nil {
				tc.change(&r)
			}
			line := r.Line()
			m := decode(t, line)
			fields(t, m, line, tc.want, tc.absent)
			if !r.ShowClientIP && strings.Contains(string(line), "203.0.113") {
				t.Errorf("the address shows without the opt-in:\n%s", line)
			}
		})
	}
}

// TestClientHash: one address, one name under one key; another address or
// key, another name; and nothing of the address in it.
func TestClientHash(t *testing.T) {
	a := ClientHash(testKey, "203.0.113.9")
	if len(a) != 2*clientHashBytes || strings.Trim(a, "0123456789abcdef") != "" {
		t.Fatalf("hash %q is not %d hex digits", a, 2*clientHashBytes)
	}
	for _, tc := range []struct {
		name   string
		key    []byte
		client string
		same   bool
	}{
		{"same address and key", testKey, "203.0.113.9", true},
		{"another address", testKey, "203.0.113.10", false},
		{"another key", otherKey, "203.0.113.9", false},
		{"IPv6", testKey, "2001:db8::1", false},
	} {
		if got := ClientHash(tc.key, tc.client); (got == a) != tc.same {
			t.Errorf("%s: %q against %q, same = %v", tc.name, got, a, !tc.same)
		}
	}
}

// TestBounded: every text field at any length, with characters JSON
// escapes at their longest and bytes that are not UTF-8, makes a line
// under MaxLine that is still one valid JSON object, each field cut at a
// character boundary.
func TestBounded(t *testing.T) {
	tests := []struct {
		name string
		fill string
	}{
		{"ascii", "a"},
		{"escaped", "<\x01\""},
		{"multibyte", "€"},
		{"not utf-8", "\xff"},
		{"line breaks", "\n\r\u2028"},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			long := strings.Repeat(tc.fill, 5000)
			r := Request{Time: testStart, Method: long, Path: long, Room: long, Decision: long, Why: long,
				POP: long, Country: long, Client: long, ShowClientIP: true, Ticket: -1 << 62, Ahead: 1 << 62,
				StoreCalls: 1 << 30, StoreTime: 1 << 62, Status: 999}
			line := r.Line()
			if len(line) > MaxLine {
				t.Fatalf("%d bytes, over MaxLine %d", len(line), MaxLine)
			}
			m := decode(t, line)
			for k, limit := range map[string]int{"method": maxMethod, "path": maxPath, "room": maxRoom,
				"decision": maxDecision, "why": maxWhy, "pop": maxPOP, "country": maxCountry, "client_ip": maxClientIP} {
				s, _ := m[k].(string)
				if s == "" || len(s) > limit*len("\ufffd") {
					t.Errorf("%s: %d bytes, limit %d", k, len(s), limit)
				}
				if tc.fill != "\xff" && !strings.HasPrefix(long, s) {
					t.Errorf("%s was not cut at a character boundary: %q", k, s[max(0, len(s)-8):])
				}
				if !utf8.ValidString(s) {
					t.Errorf("%s is not UTF-8", k)
				}
			}
		})
	}
}

func TestClip(t *testing.T) {
	tests := []struct {
		s    string
		n    int
		want string
	}{
		{"abc", 3, "abc"},
		{"abcd", 3, "abc"},
		{"a€", 3, "a"}, // € is 3 bytes: cutting inside it drops it
		{"a€", 4, "a€"},
		{"€€", 1, ""},
		{"", 0, ""},
	}
	for _, tc := range tests {
		if got := clip(tc.s, tc.n); got != tc.want {
			t.Errorf("clip(%q, %d) = %q, want %q", tc.s, tc.n, got, tc.want)
		}
	}
}

func TestActionLine(t *testing.T) {
	capacity, rate := 7, 12.5
	after := store.AuditState{Epoch: 3, Issued: 50, Admitted: 25, Paused: true,
		Overrides: store.Overrides{Capacity: &capacity, PerMinute: &rate, Mode: "fifo"}}
	entry := store.AuditEntry{Time: testStart, Room: "shop", Via: "api", Client: "0123456789abcdef",
		Action: "admit", N: 5, After: after}
	tests := []struct {
		name   string
		change func(*store.AuditEntry)
		want   map[string]any
		absent []string
	}{
		{"admit", nil, map[string]any{"type": "action", "time": "2025-03-01T11:30:45.678Z", "room": "shop",
			"via": "api", "client": "0123456789abcdef", "action": "admit", "n": 5.0}, []string{"before"}},
		{"with the state before", func(e *store.AuditEntry) { e.Before = store.AuditState{Epoch: 3, Issued: 50, Admitted: 20} },
			map[string]any{"action": "admit"}, nil},
		{"pause", func(e *store.AuditEntry) { e.Action, e.N = "pause", 0 }, map[string]any{"action": "pause"}, []string{"n"}},
		{"overlong", func(e *store.AuditEntry) {
			e.Room, e.Via, e.Client, e.Action = strings.Repeat("r", 5000), strings.Repeat("v", 5000), strings.Repeat("c", 5000), strings.Repeat("a", 5000)
			e.After.Mode = store.Mode(strings.Repeat("m", 5000))
		}, map[string]any{"room": strings.Repeat("r", maxRoom), "via": strings.Repeat("v", maxVia),
			"client": strings.Repeat("c", maxClient), "action": strings.Repeat("a", maxAction)}, nil},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			e := entry
			if tc.change != nil {
				tc.change(&e)
			}
			line := Action(e)
			if len(line) > MaxLine {
				t.Fatalf("%d bytes, over %d", len(line), MaxLine)
			}
			m := decode(t, line)
			fields(t, m, line, tc.want, tc.absent)
			a, _ := m["after"].(map[string]any)
			if a["admitted"] != 25.0 || a["paused"] != true || a["max_active_users"] != 7.0 || a["new_users_per_minute"] != 12.5 {
				t.Errorf("after = %v", m["after"])
			}
			if mode, _ := a["mode"].(string); len(mode) > maxMode {
				t.Errorf("mode of %d bytes", len(mode))
			}
			if b, ok := m["before"].(map[string]any); ok && b["admitted"] != 20.0 {
				t.Errorf("before = %v", b)
			}
		})
	}
}

// TestActionLineNotFinite: a rate JSON cannot hold is left out of the
// line, which is still written.
func TestActionLineNotFinite(t *testing.T) {
	for _, rate := range []float64{math.NaN(), math.Inf(1), math.Inf(-1)} {
		m := decode(t, Action(store.AuditEntry{Time: testStart, Room: "shop", Action: "limits",
			Before: store.AuditState{Overrides: store.Overrides{PerMinute: &rate}},
			After:  store.AuditState{Overrides: store.Overrides{PerMinute: &rate}}}))
		for _, state := range []string{"before", "after"} {
			s, _ := m[state].(map[string]any)
			if s == nil || m["type"] != "action" || s["new_users_per_minute"] != nil {
				t.Errorf("rate %v: %s %v in %v", rate, state, s, m)
			}
		}
	}
}
