package edge

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"strings"
	"testing"
	"time"

	"github.com/edgequeue/waitingroom/accesslog"
	"github.com/edgequeue/waitingroom/control"
	"github.com/edgequeue/waitingroom/match"
	"github.com/edgequeue/waitingroom/queue"
	"github.com/edgequeue/waitingroom/store"
	"github.com/fastly/compute-sdk-go/fsthttp"
	"github.com/fastly/compute-sdk-go/fsttest"
)

// memEndpoint keeps the lines written to it, or fails every write.
type memEndpoint struct {
	lines *[]string
	err   error
}

func (m memEndpoint) Write(line []byte) error {
	if m.err != nil {
		return m.err
	}
	*m.lines = append(*m.lines, string(line))
	return nil
}

const testEndpoint = "wr_requests"

// logCase is a service over inviteRooms that logs to testEndpoint, whose
// store answers ticket 30 waiting (20 admitted), or is down for outcome -1.
type logCase struct {
	*inviteCase
	opened []string // the endpoints the service opened
	lines  []string
}

func newLogCase(t *testing.T, outcome int64, config mapConfig, fail error) *logCase {
	t.Helper()
	c := &logCase{inviteCase: newInviteCase(t, 30, outcome)}
	cfg := mapConfig{KeyLogEndpoint: testEndpoint}
	for k, v := range inviteRooms {
		cfg[k] = v
	}
	for k, v := range config {
		cfg[k] = v
	}
	c.svc.Config = cfg
	c.svc.POP = "FRA"
	c.svc.Geo = &platform{country: "DE"}
	c.svc.LogEndpoints = func(name string) LogEndpoint {
		c.opened = append(c.opened, name)
		return memEndpoint{&c.lines, fail}
	}
	return c
}

// get serves a GET of host and target from 203.0.113.9, following an
// arrival redirect as a browser does (browse), after change, if any, has
// changed the request.
func (c *logCase) get(t *testing.T, host, target string, change func(*fsthttp.Request)) *fsttest.ResponseRecorder {
	t.Helper()
	r := hostileRequest(t, fsthttp.MethodGet, "https", host, target)
	r.RemoteAddr = "203.0.113.9"
	r.Header.Set("User-Agent", "test browser")
	if change != nil {
		change(r)
	}
	return browse(&c.svc, r)
}

// last is the last line written, decoded.
func (c *logCase) last(t *testing.T) map[string]any {
	t.Helper()
	if len(c.lines) == 0 {
		t.Fatalf("no line written; log: %q", c.logs)
	}
	var m map[string]any
	if err := json.Unmarshal([]byte(c.lines[len(c.lines)-1]), &m); err != nil {
		t.Fatalf("%v: %s", err, c.lines[len(c.lines)-1])
	}
	return m
}

// TestLogLines: each request's line says where it went and why, what the
// store was asked, and what was answered.
func TestLogLines(t *testing.T) {
	tests := []struct {
		name         string
		outcome      int64 // the store's answer: 0 waiting, -1 down
		host, target string
		lines        int // lines written (2 when the arrival redirect is followed)
		want         map[string]any
		absent       []string
	}{
		{"waiting", 0, "shop.example.com", "/cart", 2, map[string]any{
			"type": "request", "method": "GET", "path": "/cart", "room": "shop", "decision": "line/wait",
			"why": "joined", "ticket": 30.0, "ahead": 9.0, "store_calls": 1.0, "status": 200.0,
			"pop": "FRA", "country": "DE"}, []string{"fail_open"}},
		{"bypass", 0, "shop.example.com", "/static/app.css", 1, map[string]any{
			"room": "shop", "decision": "bypass", "why": "path", "store_calls": 0.0, "status": 200.0},
			[]string{"ticket", "ahead"}},
		{"in no room", 0, "elsewhere.test", "/", 1, map[string]any{
			"decision": "origin", "store_calls": 0.0, "status": 200.0}, []string{"room", "why"}},
		{"closed", 0, "closed.test", "/", 1, map[string]any{
			"room": "closed", "decision": "line/closed", "why": "room closed", "status": 503.0}, nil},
		{"store down, failing open", -1, "open.test", "/", 2, map[string]any{
			"room": "open", "decision": "line/admit", "fail_open": true, "why": "join failed, failing open",
			"store_calls": 1.0, "status": 200.0}, []string{"ticket"}},
		{"store down, busy", -1, "shop.example.com", "/", 2, map[string]any{
			"decision": "line/busy", "status": 503.0}, nil},
		{"admin panel", 0, "shop.example.com", DefaultAdminPath, 1, map[string]any{
			"decision": "admin", "status": 401.0}, []string{"room"}},
		{"admin API", 0, "shop.example.com", DefaultAPIPath + "/rooms", 1, map[string]any{
			"decision": "api"}, []string{"room"}},
		{"unreadable target", 0, "shop.example.com", "/a%00b", 1, map[string]any{
			"decision": "invalid", "status": 400.0}, nil},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			c := newLogCase(t, tc.outcome, nil, nil)
			w := c.get(t, tc.host, tc.target, nil)
			if len(c.lines) != tc.lines {
				t.Fatalf("%d lines, want %d: %q", len(c.lines), tc.lines, c.lines)
			}
			m := c.last(t)
			if m["status"] != float64(w.Code) {
				t.Errorf("status %v in the line, %d answered", m["status"], w.Code)
			}
			for k, v := range tc.want {
				if m[k] != v {
					t.Errorf("%s = %#v, want %#v\n%s", k, m[k], v, c.lines[len(c.lines)-1])
				}
			}
			for _, k := range tc.absent {
				if _, ok := m[k]; ok {
					t.Errorf("%s is there, should not be\n%s", k, c.lines[len(c.lines)-1])
				}
			}
			if ms, _ := m["store_ms"].(float64); ms < 0 || (m["store_calls"] == 0.0 && ms != 0) {
				t.Errorf("store_ms %v for %v calls", m["store_ms"], m["store_calls"])
			}
			if tc.name == "bypass" && m["why"] != c.seen[0].header.Get(BypassHeader) {
				t.Errorf("why %v, the origin was told %q", m["why"], c.seen[0].header.Get(BypassHeader))
			}
		})
	}
}

// TestDecisionNames: every destination has its own one-word name.
func TestDecisionNames(t *testing.T) {
	seen := map[string]Destination{}
	for d := Destination(0); d.String() != "unknown"; d++ {
		name := decisionName(d)
		if name == "" || strings.ContainsAny(name, " /") {
			t.Errorf("%v: name %q", d, name)
		}
		if other, ok := seen[name]; ok {
			t.Errorf("%v and %v are both %q", d, other, name)
		}
		seen[name] = d
	}
	if len(seen) < 8 {
		t.Errorf("only %d destinations named", len(seen))
	}
}

// TestLogNeverLeaks: no cookie, pass (offered or set), Authorization value
// or query string reaches the line, whatever the request carries.
func TestLogNeverLeaks(t *testing.T) {
	const (
		cookieSecret = "COOKIE-SECRET-1d9c"
		authSecret   = "AUTH-SECRET-77ab"
		querySecret  = "QUERY-SECRET-5e2f"
	)
	tests := []struct {
		name, host, target string
	}{
		{"line", "shop.example.com", "/cart?code=" + querySecret},
		{"bypass", "shop.example.com", "/static/x.css?code=" + querySecret},
		{"admin", "shop.example.com", DefaultAdminPath + "?code=" + querySecret},
		{"invite", "shop.example.com", InvitePath + "?code=" + querySecret},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			c := newLogCase(t, 0, nil, nil)
			w := c.get(t, tc.host, tc.target, func(r *fsthttp.Request) {
				r.Header.Add("Cookie", "wr_shop="+cookieSecret+"; other="+cookieSecret)
				r.Header.Set("Authorization", "Bearer "+authSecret)
				r.Header.Set("Proxy-Authorization", "Basic "+authSecret)
			})
			secrets := []string{cookieSecret, authSecret, querySecret, "Bearer", "203.0.113.9"}
			for _, sc := range w.HeaderMap.Values("Set-Cookie") {
				if _, value, _ := strings.Cut(strings.SplitN(sc, ";", 2)[0], "="); value != "" {
					secrets = append(secrets, value)
				}
			}
			if len(c.lines) == 0 {
				t.Fatal("no line written")
			}
			for _, line := range c.lines {
				for _, s := range secrets {
					if strings.Contains(line, s) {
						t.Errorf("the line holds %q:\n%s", s, line)
					}
				}
			}
		})
	}
}

// TestLogClient: the client's address is a hash keyed with the signing key
// unless the operator opts in; without signing keys, it is left out.
func TestLogClient(t *testing.T) {
	keys, err := queue.ParseKeySet(testKeys)
	if err != nil {
		t.Fatal(err)
	}
	hash := accesslog.ClientHash(keys.Key(), "203.0.113.9")
	tests := []struct {
		name      string
		config    mapConfig
		noKeys    bool
		client    any // the client field; nil: absent
		client_ip any
	}{
		{"default", nil, false, hash, nil},
		{"opted out", mapConfig{KeyLogClientIP: "false"}, false, hash, nil},
		{"opted in", mapConfig{KeyLogClientIP: "true"}, false, nil, "203.0.113.9"},
		{"bad opt-in value hashes", mapConfig{KeyLogClientIP: "yes"}, false, hash, nil},
		{"no signing keys", nil, true, nil, nil},
		{"no signing keys, opted in", mapConfig{KeyLogClientIP: "true"}, true, nil, "203.0.113.9"},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			c := newLogCase(t, 0, tc.config, nil)
			if tc.noKeys {
				c.svc.Secrets = mapSecrets{m: map[string]string{SecretUpstashToken: "real-token"}}
			}
			c.get(t, "shop.example.com", "/static/x.css", nil)
			m := c.last(t)
			if m["client"] != tc.client || m["client_ip"] != tc.client_ip {
				t.Errorf("client %v, client_ip %v; want %v, %v", m["client"], m["client_ip"], tc.client, tc.client_ip)
			}
		})
	}
}

// TestLogEndpointFails: an endpoint that cannot be written costs one plain
// log line naming it, and the visitor gets the same answer.
func TestLogEndpointFails(t *testing.T) {
	for _, target := range []string{"/cart", "/static/x.css", DefaultAdminPath} {
		ok := newLogCase(t, 0, nil, nil)
		want := ok.get(t, "shop.example.com", target, nil)
		c := newLogCase(t, 0, nil, errors.New("no such endpoint"))
		got := c.get(t, "shop.example.com", target, nil)
		if got.Code != want.Code || got.Body.String() != want.Body.String() && target != "/cart" {
			t.Errorf("%s: answered %d, %d with a working endpoint", target, got.Code, want.Code)
		}
		n := 0
		for _, l := range c.logs {
			if strings.Contains(l, `log endpoint "`+testEndpoint+`": no such endpoint`) {
				n++
			}
		}
		if requests := len(ok.lines); n != requests {
			t.Errorf("%s: %d log lines about the endpoint for %d requests: %q", target, n, requests, c.logs)
		}
	}
}

// TestNoLogEndpoint: without log_endpoint no endpoint is opened and the
// store is asked as before.
func TestNoLogEndpoint(t *testing.T) {
	c := newLogCase(t, 0, nil, nil)
	delete(c.svc.Config.(mapConfig), KeyLogEndpoint)
	if w := c.get(t, "shop.example.com", "/cart", nil); w.Code != fsthttp.StatusOK {
		t.Fatalf("answered %d", w.Code)
	}
	if len(c.opened) != 0 || len(c.lines) != 0 {
		t.Errorf("endpoints %q opened, lines %q", c.opened, c.lines)
	}
	if len(c.ops) != 1 {
		t.Errorf("%d store calls, want 1", len(c.ops))
	}
}

// TestLogSettings: each bad value of the log keys is a problem naming the
// key, and leaves the default.
func TestLogSettings(t *testing.T) {
	tests := []struct {
		endpoint, clientIP string // "-": unset
		wantEndpoint       string
		wantClientIP       bool
		problem            string // in the problems, "" for none
	}{
		{"-", "-", "", false, ""},
		{"wr_requests", "true", "wr_requests", true, ""},
		{"My Endpoint", "false", "My Endpoint", false, ""},
		{"", "-", "", false, `log_endpoint: "" is empty`},
		{"stdout", "-", "", false, "log_endpoint: \"stdout\" is reserved by Fastly"},
		{"STDERR", "-", "", false, "is reserved by Fastly"},
		{"fst_managed_logs", "-", "", false, "is reserved by Fastly"},
		{"a\nb", "-", "", false, "control characters"},
		{strings.Repeat("x", 256), "-", "", false, "longer than 255 bytes"},
		{"-", "True", "", false, `log_client_ip: "True" must be true or false`},
		{"-", "1", "", false, `log_client_ip: "1" must be true or false`},
	}
	for _, tc := range tests {
		cfg := mapConfig{}
		if tc.endpoint != "-" {
			cfg[KeyLogEndpoint] = tc.endpoint
		}
		if tc.clientIP != "-" {
			cfg[KeyLogClientIP] = tc.clientIP
		}
		s := LoadSettings(cfg)
		problems := fmt.Sprint(s.Problems)
		if s.LogEndpoint != tc.wantEndpoint || s.LogClientIP != tc.wantClientIP {
			t.Errorf("%q, %q: endpoint %q, client ip %v", tc.endpoint, tc.clientIP, s.LogEndpoint, s.LogClientIP)
		}
		if tc.problem == "" && len(s.Problems) != 0 || !strings.Contains(problems, tc.problem) {
			t.Errorf("%q, %q: problems %s, want %q", tc.endpoint, tc.clientIP, problems, tc.problem)
		}
	}
}

// BenchmarkLogLine is the per-request cost of the structured line at the
// edge: the endpoint opened, the store transport and the response wrapped,
// the decision noted, the signing keys read for the client hash, the
// country looked up, the line built and written (to memory here).
func BenchmarkLogLine(b *testing.B) {
	var lines []string
	svc := &Handler{
		Secrets: mapSecrets{m: map[string]string{SecretSigningKeys: testKeys}},
		Geo:     &platform{country: "DE"}, POP: "FRA",
		LogEndpoints: func(string) LogEndpoint { return memEndpoint{lines: &lines} },
		Logf:         func(string, ...any) {},
	}
	settings := Settings{LogEndpoint: testEndpoint}
	r, err := fsthttp.NewRequest(fsthttp.MethodGet, "https://shop.example.com/cart", nil)
	if err != nil {
		b.Fatal(err)
	}
	r.RemoteAddr = "203.0.113.9"
	room := &queue.Room{Name: "shop"}
	d := queue.Decision{Action: queue.Wait, Why: "waiting", Place: queue.Place{Ticket: 4242, Ahead: 17}}
	b.ReportAllocs()
	for i := 0; i < b.N; i++ {
		lines = lines[:0]
		q := testRequest(svc)
		q.settings = settings
		w := q.startLog(fsttest.NewRecorder(), r)
		q.log.routed(ToLine, match.Judgement[*queue.Room]{Room: room, Protected: true})
		q.log.decided(d)
		w.WriteHeader(fsthttp.StatusOK)
		q.finishLog(r)
		if len(lines) != 1 {
			b.Fatalf("%d lines", len(lines))
		}
	}
	if !strings.Contains(lines[0], `"ticket":4242`) {
		b.Fatalf("line %s", lines[0])
	}
}

// operateStore is a control.Store whose every action succeeds with line.
type operateStore struct {
	control.Store
	line store.Line
}

func (o operateStore) Operate(context.Context, string, store.Policy, store.Action, time.Time) (store.Line, error) {
	return o.line, nil
}

// TestLogActions: an operator's action that took effect writes an action
// line beside the request's; one refused writes none, and without a log
// endpoint nothing is written.
func TestLogActions(t *testing.T) {
	for _, endpoint := range []bool{true, false} {
		c := newLogCase(t, 0, nil, nil)
		if !endpoint {
			delete(c.svc.Config.(mapConfig), KeyLogEndpoint)
		}
		settings := LoadSettings(c.svc.Config)
		r := hostileRequest(t, fsthttp.MethodPost, "https", "shop.example.com", DefaultAdminPath)
		r.RemoteAddr = "203.0.113.9"
		q := testRequest(&c.svc)
		q.settings = settings
		q.startLog(fsttest.NewRecorder(), r)
		op, keys, err := q.operator()
		if err != nil {
			t.Fatal(err)
		}
		op.Store = operateStore{line: store.Line{Epoch: 7, Issued: 50, Admitted: 23, Paused: true}}
		who := store.Actor{Via: "api", Client: ClientHash(keys, r)}
		if _, err := op.Admit(context.Background(), "shop", 0, who); err == nil {
			t.Fatal("admitting 0 was accepted")
		}
		if _, err := op.Admit(context.Background(), "shop", 3, who); err != nil {
			t.Fatal(err)
		}
		if !endpoint {
			if len(c.lines) != 0 {
				t.Errorf("lines without an endpoint: %q", c.lines)
			}
			continue
		}
		if len(c.lines) != 1 {
			t.Fatalf("%d lines, want the one action that took effect: %q", len(c.lines), c.lines)
		}
		m := c.last(t)
		want := map[string]any{"type": "action", "room": "shop", "via": "api", "action": "admit", "n": 3.0,
			"client": accesslog.ClientHash(keys.Key(), "203.0.113.9")}
		for k, v := range want {
			if m[k] != v {
				t.Errorf("%s = %#v, want %#v\n%s", k, m[k], v, c.lines[0])
			}
		}
		if after, _ := m["after"].(map[string]any); after["admitted"] != 23.0 || after["paused"] != true {
			t.Errorf("after = %v", m["after"])
		}
	}
}

// countedSecrets counts the reads of each secret.
type countedSecrets struct {
	Secrets
	reads map[string]int
}

func (s countedSecrets) Get(name string) ([]byte, error) {
	s.reads[name]++
	return s.Secrets.Get(name)
}

// TestLoggedRequestReadsTheKeysOnce: the line's client hash uses the
// signing keys the gate already read, not a second read and parse.
func TestLoggedRequestReadsTheKeysOnce(t *testing.T) {
	c := newLogCase(t, 0, nil, nil)
	reads := map[string]int{}
	c.svc.Secrets = countedSecrets{c.svc.Secrets, reads}
	r := hostileRequest(t, fsthttp.MethodGet, "https", "shop.example.com", "/cart")
	r.RemoteAddr = "203.0.113.9"
	w := fsttest.NewRecorder()
	c.svc.ServeHTTP(context.Background(), w, r)
	if m := c.last(t); m["client"] == nil || m["decision"] != "line/arrive" {
		t.Fatalf("line %v: want the arrival, with a client hash", m)
	}
	if reads[SecretSigningKeys] != 1 {
		t.Fatalf("the signing keys were read %d times for one logged request, want 1", reads[SecretSigningKeys])
	}
}
