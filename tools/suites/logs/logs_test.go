package logs

import (
	"context"
	"encoding/base64"
	"encoding/json"
	"io"
	"net"
	"net/http"
	"net/url"
	"regexp"
	"strings"
	"testing"
	"time"

	"github.com/edgequeue/waitingroom/accesslog"
	"github.com/edgequeue/waitingroom/edge"
	"github.com/edgequeue/waitingroom/tools/devstack"
	"github.com/edgequeue/waitingroom/tools/fastlyhost"
)

// endpoint is devconfig.json's log_endpoint.
const endpoint = "wr_requests"

// env is the stack and what it logged.
type env struct {
	t     testing.TB
	stack *devstack.Stack
	logs  *devstack.LogBuffer
	seen  int // entries already returned by next
}

// start runs the stack with devconfig.json and config's keys on top (an
// empty value deletes the key).
func start(t testing.TB, config map[string]string) *env {
	t.Helper()
	logs := &devstack.LogBuffer{}
	opts := devstack.ForTest(logs, 30*time.Second)
	opts.Adjust = func(m *fastlyhost.Manifest) {
		cfg := m.ConfigStores[devstack.ConfigStore]
		// A loaded machine's store calls must not answer busy.
		cfg["store_timeout"] = "5"
		for k, v := range config {
			cfg[k] = v
			if v == "" {
				delete(cfg, k)
			}
		}
	}
	st, err := devstack.Start(context.Background(), opts)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(st.Close)
	return &env{t: t, stack: st, logs: logs}
}

// entries are the endpoint's entries so far, decoded, each checked to be
// one JSON object within accesslog.MaxLine.
func (e *env) entries() []map[string]any {
	e.t.Helper()
	var out []map[string]any
	for _, line := range strings.Split(e.logs.String(), "\n") {
		entry, ok := strings.CutPrefix(line, endpoint+" :: ")
		if !ok {
			continue
		}
		if len(entry) > accesslog.MaxLine {
			e.t.Errorf("an entry of %d bytes, over %d", len(entry), accesslog.MaxLine)
		}
		var m map[string]any
		if err := json.Unmarshal([]byte(entry), &m); err != nil {
			e.t.Fatalf("an entry that is not a JSON object: %v\n%s", err, entry)
		}
		out = append(out, m)
	}
	return out
}

// next returns the entries written since the last call. The host writes
// an entry before the instance ends, after the client has its answer, so
// next waits for want of them (a bounded wait for an event, not a pause).
func (e *env) next(want int) []map[string]any {
	e.t.Helper()
	deadline := time.Now().Add(30 * time.Second)
	for {
		all := e.entries()
		if len(all)-e.seen >= want || time.Now().After(deadline) {
			got := all[e.seen:]
			e.seen = len(all)
			if len(got) != want {
				e.t.Fatalf("%d entries, want %d: %v\nlog:\n%s", len(got), want, got, e.logs)
			}
			return got
		}
		time.Sleep(10 * time.Millisecond)
	}
}

// get sends a GET of path from the address from ("" is 127.0.0.1) with
// header's name, value pairs, and returns the answer.
func (e *env) get(from, path string, header ...string) *http.Response {
	e.t.Helper()
	resp, _ := e.do(http.MethodGet, from, path, nil, header...)
	return resp
}

// do sends a request from the address from with body (nil for none) and
// header's name, value pairs, and returns the answer and its body.
func (e *env) do(method, from, path string, body io.Reader, header ...string) (*http.Response, string) {
	e.t.Helper()
	req, err := http.NewRequest(method, e.stack.HostURL+path, body)
	if err != nil {
		e.t.Fatal(err)
	}
	req.Header.Set("User-Agent", "Mozilla/5.0 (logs suite)")
	for i := 0; i+1 < len(header); i += 2 {
		req.Header.Add(header[i], header[i+1])
	}
	d := &net.Dialer{Timeout: 30 * time.Second}
	if from != "" {
		d.LocalAddr = &net.TCPAddr{IP: net.ParseIP(from)}
	}
	c := &http.Client{
		Transport:     &http.Transport{DialContext: d.DialContext, DisableKeepAlives: true},
		CheckRedirect: func(*http.Request, []*http.Request) error { return http.ErrUseLastResponse },
		Timeout:       90 * time.Second,
	}
	resp, err := c.Do(req)
	if err != nil {
		e.t.Fatalf("%s %s: %v", method, path, err)
	}
	defer resp.Body.Close()
	b, err := io.ReadAll(resp.Body)
	if err != nil {
		e.t.Fatalf("%s %s: %v", method, path, err)
	}
	return resp, string(b)
}

// pass is the room cookie an answer sets, as a Cookie header value.
func pass(t testing.TB, resp *http.Response) string {
	t.Helper()
	for _, c := range resp.Cookies() {
		if strings.HasPrefix(c.Name, "wr_") && c.Value != "" {
			return c.Name + "=" + c.Value
		}
	}
	t.Fatalf("%d: no pass set", resp.StatusCode)
	return ""
}

// check compares an entry's fields with want.
func check(t *testing.T, what string, m map[string]any, want map[string]any) {
	t.Helper()
	for k, v := range want {
		if m[k] != v {
			t.Errorf("%s: %s = %#v, want %#v\n%v", what, k, m[k], v, m)
		}
	}
}

func TestRequestLines(t *testing.T) {
	e := start(t, nil)
	keys, err := e.stack.SigningKeys()
	if err != nil {
		t.Fatal(err)
	}
	hash := accesslog.ClientHash(keys.Key(), "127.0.0.1")
	everyone := map[string]any{"type": "request", "method": "GET", "pop": "XXX", "client": hash}

	// Visitors arrive in the shop (at most 3 inside, 2 let in at once):
	// each is sent back with an arrival pass, then joins; the first are
	// admitted at once, and within six one waits.
	var waiting map[string]any
	var waitingPass string
	for i := 0; i < 6 && waiting == nil; i++ {
		arrival := e.get("", "/cart")
		m := e.next(1)[0]
		check(t, "arrival", m, everyone)
		check(t, "arrival", m, map[string]any{"path": "/cart", "room": "shop", "decision": "line/arrive",
			"why": "arrived", "store_calls": 0.0, "status": 307.0})
		e.stack.StoreCalls()
		joined := e.get("", "/cart", "Cookie", pass(t, arrival))
		calls := e.stack.StoreCalls()
		m = e.next(1)[0]
		check(t, "join", m, everyone)
		check(t, "join", m, map[string]any{"room": "shop", "store_calls": float64(calls), "status": float64(joined.StatusCode)})
		if calls == 0 {
			t.Errorf("join: the REST stand-in counted no store call")
		}
		switch m["decision"] {
		case "line/admit":
			if _, ok := m["ticket"]; ok {
				t.Errorf("an admitted visitor's line has a ticket: %v", m)
			}
		case "line/wait":
			waiting, waitingPass = m, pass(t, joined)
		default:
			t.Fatalf("join: decision %v", m)
		}
	}
	if waiting == nil {
		t.Fatal("six visitors and none waits in a room of three")
	}
	if ticket, _ := waiting["ticket"].(float64); ticket < 3 {
		t.Errorf("waiting ticket %v", waiting["ticket"])
	}
	if ahead, ok := waiting["ahead"].(float64); !ok || ahead < 0 {
		t.Errorf("waiting: ahead %v", waiting["ahead"])
	}

	// However the request is crafted, no cookie, pass, Authorization value
	// or query reaches the line.
	const secret = "SECRET-d41d8cd9"
	resp := e.get("", "/cart?invite="+secret, "Cookie", waitingPass+"; other="+secret,
		"Authorization", "Bearer "+secret, "Proxy-Authorization", "Basic "+secret)
	m := e.next(1)[0]
	check(t, "poll", m, map[string]any{"path": "/cart", "decision": "line/wait", "why": "waiting", "store_calls": 1.0})
	raw, _ := json.Marshal(m)
	_, value, _ := strings.Cut(waitingPass, "=")
	for _, leak := range []string{secret, value, pass(t, resp)[len("wr_shop="):], "127.0.0.1"} {
		if strings.Contains(string(raw), leak) {
			t.Errorf("the line holds %q: %s", leak, raw)
		}
	}

	tests := []struct {
		name, from, path string
		want             map[string]any
	}{
		{"bypass", "", "/static/app.css", map[string]any{"room": "shop", "decision": "bypass", "why": "path",
			"store_calls": 0.0, "status": 200.0}},
		{"admin panel", "", edge.DefaultAdminPath, map[string]any{"decision": "admin", "status": 401.0}},
		{"a sale for Germany", "127.0.0.2", "/sale/", map[string]any{"room": "sale_de", "decision": "line/arrive",
			"country": "DE", "status": 307.0, "client": accesslog.ClientHash(keys.Key(), "127.0.0.2")}},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			resp := e.get(tc.from, tc.path)
			m := e.next(1)[0]
			check(t, tc.name, m, map[string]any{"type": "request", "pop": "XXX", "path": tc.path, "status": float64(resp.StatusCode)})
			check(t, tc.name, m, tc.want)
			if _, err := time.Parse(accesslog.TimeFormat, m["time"].(string)); err != nil || !strings.HasSuffix(m["time"].(string), "Z") {
				t.Errorf("time %v: %v", m["time"], err)
			}
		})
	}
}

// csrfField is the admin panel's CSRF token in its forms.
var csrfField = regexp.MustCompile(`name="csrf" value="([^"]+)"`)

// TestActionLines: an operator's action in the admin panel or the admin
// API writes an action line (then the request's own), a refused one none,
// and no line holds the password, the CSRF token or the API's token.
func TestActionLines(t *testing.T) {
	e := start(t, nil)
	keys, err := e.stack.SigningKeys()
	if err != nil {
		t.Fatal(err)
	}
	password := string(e.stack.Manifest.SecretStores[devstack.SecretStore]["admin_password"])
	basic := base64.StdEncoding.EncodeToString([]byte("op:" + password))
	auth := []string{"Authorization", "Basic " + basic}
	_, page := e.do(http.MethodGet, "", edge.DefaultAdminPath, nil, auth...)
	check(t, "panel", e.next(1)[0], map[string]any{"type": "request", "decision": "admin", "status": 200.0})
	m := csrfField.FindStringSubmatch(page)
	if m == nil {
		t.Fatalf("no CSRF token on the panel:\n%s", page)
	}
	post := func(csrf string) *http.Response {
		form := url.Values{"room": {"shop"}, "n": {"2"}, "csrf": {csrf}}
		resp, _ := e.do(http.MethodPost, "", edge.DefaultAdminPath+"/admit", strings.NewReader(form.Encode()),
			append([]string{"Content-Type", "application/x-www-form-urlencoded"}, auth...)...)
		return resp
	}
	if resp := post("forged"); resp.StatusCode == http.StatusSeeOther {
		t.Fatal("a forged CSRF token was accepted")
	}
	check(t, "refused", e.next(1)[0], map[string]any{"type": "request", "decision": "admin"})
	resp := post(m[1])
	if resp.StatusCode != http.StatusSeeOther {
		t.Fatalf("admit: %d", resp.StatusCode)
	}
	lines := e.next(2)
	check(t, "action", lines[0], map[string]any{"type": "action", "room": "shop", "via": "panel", "action": "admit",
		"n": 2.0, "client": accesslog.ClientHash(keys.Key(), "127.0.0.1")})
	if after, _ := lines[0]["after"].(map[string]any); after == nil || after["epoch"] == nil || after["paused"] != false {
		t.Errorf("after = %v", lines[0]["after"])
	}
	check(t, "admit", lines[1], map[string]any{"type": "request", "method": "POST", "decision": "admin", "status": 303.0,
		"store_calls": 1.0})
	// The same through the admin API, with its bearer token.
	token := string(e.stack.Manifest.SecretStores[devstack.SecretStore]["api_token"])
	resp, body := e.do(http.MethodPost, "", edge.DefaultAPIPath+"/rooms/shop/admit", strings.NewReader(`{"n":1}`),
		"Content-Type", "application/json", "Authorization", "Bearer "+token)
	if resp.StatusCode != http.StatusOK {
		t.Fatalf("API admit: %d %s", resp.StatusCode, body)
	}
	lines = e.next(2)
	check(t, "API action", lines[0], map[string]any{"type": "action", "room": "shop", "via": "api", "action": "admit",
		"n": 1.0, "client": accesslog.ClientHash(keys.Key(), "127.0.0.1")})
	check(t, "API admit", lines[1], map[string]any{"type": "request", "method": "POST", "decision": "api", "status": 200.0})
	for _, l := range e.entries() {
		raw, _ := json.Marshal(l)
		for _, leak := range []string{password, basic, m[1], token} {
			if strings.Contains(string(raw), leak) {
				t.Errorf("a line holds %q: %s", leak, raw)
			}
		}
	}
}

// TestClientAddressOptIn: log_client_ip shows the address instead of its
// hash.
func TestClientAddressOptIn(t *testing.T) {
	e := start(t, map[string]string{edge.KeyLogClientIP: "true"})
	e.get("", "/static/app.css")
	m := e.next(1)[0]
	if m["client_ip"] != "127.0.0.1" {
		t.Errorf("client_ip %v, want 127.0.0.1", m["client_ip"])
	}
	if _, ok := m["client"]; ok {
		t.Errorf("a hash beside the address: %v", m)
	}
}

// TestReservedEndpoint: a reserved endpoint name is a config problem the
// log names; no line is written and requests are answered as ever.
func TestReservedEndpoint(t *testing.T) {
	e := start(t, map[string]string{edge.KeyLogEndpoint: "stdout"})
	if resp := e.get("", "/static/app.css"); resp.StatusCode != http.StatusOK {
		t.Errorf("answered %d", resp.StatusCode)
	}
	if !strings.Contains(e.logs.String(), `log_endpoint: "stdout" is reserved by Fastly`) {
		t.Errorf("no log line says why:\n%s", e.logs)
	}
	if strings.Contains(e.logs.String(), " :: {") {
		t.Errorf("an entry was written:\n%s", e.logs)
	}
}
