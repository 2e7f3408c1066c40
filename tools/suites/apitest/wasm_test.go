package apitest

import (
	"context"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/edgequeue/waitingroom/edge"
	"github.com/edgequeue/waitingroom/tools/devstack"
	"github.com/edgequeue/waitingroom/tools/fastlyhost"
	"github.com/edgequeue/waitingroom/tools/upstashdev"
)

// wasmEnv is the wasm under test in the local Compute host, with a real
// Redis behind the Upstash stand-in and the demo origin; its API token is
// fastly.toml's development one.
type wasmEnv struct {
	stack *devstack.Stack
	logs  *devstack.LogBuffer
	token string

	clients devstack.Clients
}

// The wasm suite's rooms: shop admits up to 100 at once (so only a live
// limit holds anyone), held one, closed nobody.
const (
	wasmShop = `{"paths":["/"],"max_active_users":100}`
	wasmHeld = `{"paths":["/held/"],"max_active_users":1}`
)

func startWasm(t *testing.T) *wasmEnv {
	t.Helper()
	return startWasmRooms(t, [2]string{"shop", wasmShop}, [2]string{"held", wasmHeld}, [2]string{"closed", closedRoom})
}

// startWasmRooms is the wasm in the local host with these rooms (name,
// config).
func startWasmRooms(t *testing.T, rooms ...[2]string) *wasmEnv {
	t.Helper()
	logs := &devstack.LogBuffer{}
	o := devstack.ForTest(logs, 30*time.Second)
	o.Adjust = func(m *fastlyhost.Manifest) {
		// A slow machine's store calls must not time out.
		devstack.SetRooms(m, 5*time.Second, rooms...)
	}
	st, err := devstack.Start(context.Background(), o)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(st.Close)
	token := string(st.Manifest.SecretStores[devstack.SecretStore][edge.SecretAPIToken])
	if len(token) < 32 {
		t.Fatalf("fastly.toml's [local_server] api_token %q is unusable", token)
	}
	return &wasmEnv{stack: st, logs: logs, token: token}
}

// send sends one request from ip and reads the answer.
func (e *wasmEnv) send(t *testing.T, ip, method, target string, body []byte, header ...string) (int, http.Header, []byte) {
	t.Helper()
	h := http.Header{}
	for i := 0; i+1 < len(header); i += 2 {
		h.Set(header[i], header[i+1])
	}
	resp, b, err := e.clients.Send(ip, method, e.stack.HostURL+target, body, h)
	if err != nil {
		t.Fatalf("%s %s: %v", method, target, err)
	}
	return resp.StatusCode, resp.Header, b
}

// client is the API's client from the address ip() gives for each
// request.
func (e *wasmEnv) client(ip func() string) client {
	return func(t *testing.T, method, path string, body []byte, header ...string) exchange {
		t.Helper()
		h := apiHeaders(body, header)
		for i := 0; i+1 < len(h); i += 2 {
			if h[i] == "Authorization" && h[i+1] == "Bearer "+apiToken {
				h[i+1] = "Bearer " + e.token
			}
		}
		status, got, b := e.send(t, ip(), method, edge.DefaultAPIPath+path, body, h...)
		return exchange{method: method, path: path, sent: body, status: status, header: got, body: b}
	}
}

// from is an address that is always ip.
func from(ip string) func() string { return func() string { return ip } }

// visitor is one browser in one room's line, from its own address.
type visitor struct {
	e       *wasmEnv
	ip      string
	path    string
	cookies map[string]string
}

// place polls the visitor's place as JSON, following the arrival
// redirect once: "admitted" when the origin answered.
func (v *visitor) place(t *testing.T) devstack.Place {
	t.Helper()
	for i := 0; i < 2; i++ {
		var header []string
		for name, value := range v.cookies {
			header = append(header, "Cookie", name+"="+value)
		}
		header = append(header, "Accept", "application/json")
		req, err := http.NewRequest(http.MethodGet, v.e.stack.HostURL+v.path, nil)
		if err != nil {
			t.Fatal(err)
		}
		for j := 0; j+1 < len(header); j += 2 {
			req.Header.Add(header[j], header[j+1])
		}
		resp, err := v.e.clients.From(v.ip).Do(req)
		if err != nil {
			t.Fatal(err)
		}
		b, _ := io.ReadAll(resp.Body)
		resp.Body.Close()
		for _, c := range resp.Cookies() {
			v.cookies[c.Name] = c.Value
		}
		if resp.StatusCode == http.StatusTemporaryRedirect && devstack.Unmarked(resp.Header.Get("Location")) == v.path {
			continue
		}
		p, err := devstack.ReadPlace(string(b))
		if err != nil {
			t.Fatalf("poll %s: %d %s: %v", v.path, resp.StatusCode, b, err)
		}
		return p
	}
	t.Fatalf("poll %s: redirected twice", v.path)
	return devstack.Place{}
}

func (e *wasmEnv) visitor(n int, path string) *visitor {
	return &visitor{e: e, ip: fmt.Sprintf("127.0.2.%d", n), path: path, cookies: map[string]string{}}
}

// call is a request through api that must succeed, checked against the
// document, decoded into out (when not nil).
func call(t *testing.T, s *spec, api client, method, path, body string, out any) {
	t.Helper()
	var b []byte
	if body != "" {
		b = []byte(body)
	}
	x := api(t, method, path, b)
	s.check(t, x)
	if x.status != http.StatusOK {
		t.Fatalf("%s", x)
	}
	if out != nil {
		if err := json.Unmarshal(x.body, out); err != nil {
			t.Fatalf("%s: %v", x, err)
		}
	}
}

// result is what the tests read of an action's answer and of stats.
type result struct {
	Epoch       int64          `json:"epoch"`
	Issued      int64          `json:"issued"`
	NowServing  int64          `json:"now_serving"`
	CalledNow   int64          `json:"called_now"`
	QueueLength int64          `json:"queue_length"`
	MaxSessions int            `json:"max_sessions"`
	Paused      bool           `json:"paused"`
	QueueAll    bool           `json:"queue_all"`
	Overrides   map[string]any `json:"overrides"`
	Configured  map[string]any `json:"configured"`
}

// auditLine is what the tests read of an audit entry.
type auditLine struct {
	Room, Via, Client, Action string
	N                         int64
	Before, After             map[string]any
}

// auditPage is what they read of a page of the audit log.
type auditPage struct {
	Entries []auditLine
	Next    *string
}

// TestAPIThroughTheWasm drives the API of the wasm under test over real
// HTTP: admit moves now_serving and lets the called in, pause and
// queue_all set their flags and resume clears them, a live capacity
// holds all but one visitor until cleared, a reset starts a new epoch
// whose line the old tickets rejoin, the audit log lists each action with
// the state before and after, and the history has the minutes. Every
// answer is checked against the document, and then every documented
// answer of every route is produced.
func TestAPIThroughTheWasm(t *testing.T) {
	e := startWasm(t)
	api := e.client(from("127.0.0.1"))
	doc := api(t, http.MethodGet, "/openapi.json", nil, "Authorization", "")
	checkServedDocument(t, doc.body, repoDocument(t))
	s := newSpec(t, doc.body)
	s.check(t, doc)

	// Admit: five in the held room, one let in; admit 2 calls the next two.
	var held []*visitor
	for i := 1; i <= 5; i++ {
		v := e.visitor(i, "/held/")
		p := v.place(t)
		if (i == 1) != (p.Status == "admitted") {
			t.Fatalf("visitor %d: %+v", i, p)
		}
		held = append(held, v)
	}
	// act is a request that must succeed, read afresh as a result.
	act := func(method, path, body string) (r result) {
		t.Helper()
		call(t, s, api, method, path, body, &r)
		return r
	}
	r := act("GET", "/rooms/held/stats", "")
	if r.NowServing != 1 || r.QueueLength != 4 {
		t.Fatalf("before admit: %+v", r)
	}
	r = act("POST", "/rooms/held/admit", `{"n":2}`)
	if r.CalledNow != 2 || r.NowServing != 3 {
		t.Fatalf("admit 2: %+v", r)
	}
	for i, want := range []string{"admitted", "admitted", "waiting", "waiting"} {
		if p := held[i+1].place(t); p.Status != want {
			t.Errorf("after admit 2, visitor %d: %+v, want %s", i+2, p, want)
		}
	}

	// The switches.
	for _, step := range []struct {
		action           string
		paused, queueAll bool
	}{{"pause", true, false}, {"queue_all", true, true}, {"resume", false, false}} {
		r = act("POST", "/rooms/held/"+step.action, "")
		if r.Paused != step.paused || r.QueueAll != step.queueAll {
			t.Errorf("%s: %+v", step.action, r)
		}
		r = act("GET", "/rooms/held/stats", "")
		if r.Paused != step.paused || r.QueueAll != step.queueAll {
			t.Errorf("stats after %s: %+v", step.action, r)
		}
	}

	// A live capacity of 1 in shop (configured 100): one in, two held,
	// until it is cleared.
	r = act("PATCH", "/rooms/shop/limits", `{"max_active_users":1}`)
	if r.Overrides["max_active_users"] != 1.0 {
		t.Fatalf("set limits: %+v", r)
	}
	r = act("GET", "/rooms/shop/stats", "")
	if r.MaxSessions != 1 || r.Configured["max_active_users"] != 100.0 {
		t.Fatalf("stats under the live limit: %+v", r)
	}
	var shop []*visitor
	for i := 1; i <= 3; i++ {
		v := e.visitor(10+i, "/")
		shop = append(shop, v)
		if p := v.place(t); (i == 1) != (p.Status == "admitted") {
			t.Fatalf("shop visitor %d under a live capacity of 1: %+v", i, p)
		}
	}
	r = act("DELETE", "/rooms/shop/limits", "")
	if len(r.Overrides) != 0 {
		t.Fatalf("cleared: %+v", r)
	}
	for i, v := range shop[1:] {
		if p := v.place(t); p.Status != "admitted" {
			t.Errorf("shop visitor %d after the limit was cleared: %+v", i+2, p)
		}
	}

	// Reset, paused so nobody is called: a new epoch, and the old line's
	// waiting tickets rejoin it at the back (admitted visitors keep their
	// passes until they are renewed).
	r = act("POST", "/rooms/held/pause", "")
	old := r.Epoch
	r = act("POST", "/rooms/held/reset", `{"confirm":"held"}`)
	if r.Epoch == old || r.Issued != 0 || r.NowServing != 0 {
		t.Fatalf("reset: %+v, from epoch %d", r, old)
	}
	for i, v := range []*visitor{held[4], held[3]} {
		if p := v.place(t); p.Status != "waiting" || p.Ticket != int64(i+1) {
			t.Errorf("after the reset, visitor %d: %+v, want waiting with ticket %d of the new line", i, p, i+1)
		}
	}
	call(t, s, api, "POST", "/rooms/held/resume", "", nil)

	// The audit log: every action, newest first, by the API, with the
	// state before and after.
	x := api(t, "GET", "/audit?limit=50", nil)
	s.check(t, x)
	var page auditPage
	if err := json.Unmarshal(x.body, &page); err != nil {
		t.Fatalf("%s: %v", x, err)
	}
	lines := page.Entries
	want := []string{"held resume", "held reset", "held pause", "shop clear", "shop limits", "held resume", "held queue_all", "held pause", "held admit"}
	var got []string
	for _, a := range lines {
		got = append(got, a.Room+" "+a.Action)
		if a.Via != "api" || len(a.Client) < 8 || strings.Contains(a.Client, "127.") {
			t.Errorf("audit line %+v: want via api and a hashed client", a)
		}
	}
	if strings.Join(got, ", ") != strings.Join(want, ", ") || page.Next != nil {
		t.Fatalf("audit: %q, next %v; want %q and no next page", got, page.Next, want)
	}
	admit, reset, limits := lines[8], lines[1], lines[4]
	if admit.N != 2 || admit.Before["admitted"] != 1.0 || admit.After["admitted"] != 3.0 {
		t.Errorf("audit of admit: %+v", admit)
	}
	if reset.Before["epoch"] != float64(old) || reset.After["epoch"] != float64(r.Epoch) {
		t.Errorf("audit of reset: %+v", reset)
	}
	if limits.Before["max_active_users"] != nil || limits.After["max_active_users"] != 1.0 {
		t.Errorf("audit of limits: %+v", limits)
	}
	// Pages of 4, each leading to the next by its address.
	var paged []string
	for next := edge.DefaultAPIPath + "/audit?limit=4"; next != ""; {
		x := api(t, "GET", strings.TrimPrefix(next, edge.DefaultAPIPath), nil)
		s.check(t, x)
		var page auditPage
		if err := json.Unmarshal(x.body, &page); err != nil || len(page.Entries) > 4 {
			t.Fatalf("%s: %v", x, err)
		}
		for _, a := range page.Entries {
			paged = append(paged, a.Room+" "+a.Action)
		}
		next = ""
		if page.Next != nil {
			next = *page.Next
		}
	}
	if strings.Join(paged, ", ") != strings.Join(want, ", ") {
		t.Errorf("audit in pages of 4: %q, want %q", paged, want)
	}

	// The history: the last five minutes, oldest first, counting what
	// happened.
	var h struct {
		Minutes []struct{ Joins, Admissions int64 }
	}
	call(t, s, api, "GET", "/rooms/held/history?minutes=5", "", &h)
	// (The current minute may have had no store call yet: the minutes are
	// summed, not read one by one.)
	var joins, admissions int64
	for _, m := range h.Minutes {
		joins, admissions = joins+m.Joins, admissions+m.Admissions
	}
	if len(h.Minutes) != 5 || joins < 5 || admissions < 3 {
		t.Errorf("history: %d minutes, %d joins, %d admissions: %+v", len(h.Minutes), joins, admissions, h.Minutes)
	}

	// Every documented answer, the penalty box's from an address that
	// tried eleven wrong tokens, and wrong tokens each from an address of
	// their own (so that they are not boxed).
	const boxed = "127.0.0.9"
	wrong := e.client(from(boxed))
	for i := 0; i < 11; i++ {
		wrong(t, "GET", "/rooms", nil, "Authorization", "Bearer wrong-token-wrong-token-wrong-token-wrong")
	}
	var n atomic.Int32
	stranger := e.client(func() string { return fmt.Sprintf("127.0.3.%d", n.Add(1)) })
	coverEveryAnswer(t, s, clients{api: api, stranger: stranger, boxed: wrong}, func(down bool) {
		if down {
			e.stack.Upstash.SetFaults(upstashdev.Faults{Status: 500})
		} else {
			e.stack.Upstash.SetFaults(upstashdev.Faults{})
		}
	}, "shop", "closed")
}
