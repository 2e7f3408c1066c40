package upstashdev_test

import (
	"encoding/json"
	"io"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"

	"github.com/edgequeue/waitingroom/tools/redistest"
	"github.com/edgequeue/waitingroom/tools/upstashdev"
)

type call struct {
	method, path, body string
	header             map[string]string
}

func do(t *testing.T, base string, c call) (int, string) {
	t.Helper()
	method := c.method
	if method == "" {
		method = http.MethodPost
	}
	req, err := http.NewRequest(method, base+c.path, strings.NewReader(c.body))
	if err != nil {
		t.Fatal(err)
	}
	req.Header.Set("Authorization", "Bearer "+redistest.Token)
	for k, v := range c.header {
		if v == "" {
			req.Header.Del(k)
		} else {
			req.Header.Set(k, v)
		}
	}
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	b, _ := io.ReadAll(resp.Body)
	return resp.StatusCode, strings.TrimSpace(string(b))
}

func TestWireBehaviour(t *testing.T) {
	_, base := redistest.Upstash(t)
	const luaFlags = "#!lua flags=allow-key-locking,no-writes\nreturn ARGV[1]"
	tests := []struct {
		name       string
		call       call
		wantStatus int
		wantBody   string
	}{
		{"set", call{path: "/", body: `["SET","k","v"]`}, 200, `{"result":"OK"}`},
		{"get", call{path: "/", body: `["GET","k"]`}, 200, `{"result":"v"}`},
		{"missing key is null", call{path: "/", body: `["GET","nope"]`}, 200, `{"result":null}`},
		{"numbers keep their literal text", call{path: "/", body: `["SET","n",100.50]`}, 200, `{"result":"OK"}`},
		{"number read back", call{path: "/", body: `["GET","n"]`}, 200, `{"result":"100.50"}`},
		{"integer reply", call{path: "/", body: `["INCR","c"]`}, 200, `{"result":1}`},
		{"array reply", call{path: "/", body: `["MGET","k","nope"]`}, 200, `{"result":["v",null]}`},
		{"redis error is 400", call{path: "/", body: `["INCR","k"]`}, 400, `{"error":"ERR value is not an integer or out of range"}`},
		{"unknown command", call{path: "/", body: `["NOPE"]`}, 400, `{"error":"ERR unknown command 'NOPE', with args beginning with: "}`},
		{"wrong token", call{path: "/", body: `["GET","k"]`, header: map[string]string{"Authorization": "Bearer wrong"}}, 401, `{"error":"Unauthorized"}`},
		{"no token", call{path: "/", body: `["GET","k"]`, header: map[string]string{"Authorization": ""}}, 401, `{"error":"Unauthorized"}`},
		{"_token query", call{path: "/?_token=" + redistest.Token, body: `["GET","k"]`, header: map[string]string{"Authorization": ""}}, 200, `{"result":"v"}`},
		{"bad method", call{method: http.MethodDelete, path: "/"}, 405, `{"error":"Method not allowed"}`},
		{"malformed json", call{path: "/", body: `["GET",`}, 400, ``},
		{"nested argument", call{path: "/", body: `["SET","k",["x"]]`}, 400, ``},
		{"empty command", call{path: "/", body: `[]`}, 400, `{"error":"ERR empty command"}`},
		{"base64 encodes strings", call{path: "/", body: `["GET","k"]`, header: map[string]string{"Upstash-Encoding": "base64"}}, 200, `{"result":"dg=="}`},
		{"base64 leaves top-level OK", call{path: "/", body: `["SET","k","v"]`, header: map[string]string{"Upstash-Encoding": "base64"}}, 200, `{"result":"OK"}`},
		{"base64 leaves numbers and null", call{path: "/", body: `["MGET","nope"]`, header: map[string]string{"Upstash-Encoding": "base64"}}, 200, `{"result":[null]}`},
		{"pipeline keeps going after an error", call{path: "/pipeline", body: `[["SET","p","1"],["INCR","k"],["INCR","p"]]`}, 200,
			`[{"result":"OK"},{"error":"ERR value is not an integer or out of range"},{"result":2}]`},
		{"empty pipeline", call{path: "/pipeline", body: `[]`}, 400, `{"error":"ERR empty command array"}`},
		{"multi-exec run-time error is an item", call{path: "/multi-exec", body: `[["SET","m","1"],["INCR","k"],["INCR","m"]]`}, 200,
			`[{"result":"OK"},{"error":"ERR value is not an integer or out of range"},{"result":2}]`},
		{"multi-exec queue-time error discards all", call{path: "/multi-exec", body: `[["SET","m2","1"],["NOPE"]]`}, 400,
			`{"error":"EXECABORT Transaction discarded because of previous errors."}`},
		{"discarded transaction changed nothing", call{path: "/", body: `["GET","m2"]`}, 200, `{"result":null}`},
		{"path form", call{method: http.MethodGet, path: "/get/k"}, 200, `{"result":"v"}`},
		{"path form with body and query", call{path: "/set/pk?EX=100", body: "a/b"}, 200, `{"result":"OK"}`},
		{"path form value", call{method: http.MethodGet, path: "/get/pk"}, 200, `{"result":"a/b"}`},
		{"unknown script", call{path: "/", body: `["EVALSHA","0000000000000000000000000000000000000000","0"]`}, 400,
			`{"error":"NOSCRIPT No matching script. Please use EVAL."}`},
		{"Upstash shebang flags run", call{path: "/", body: mustJSON([]string{"EVAL", luaFlags, "0", "hi"})}, 200, `{"result":"hi"}`},
		{"EVALSHA of the original source", call{path: "/", body: mustJSON([]string{"EVALSHA", sha(luaFlags), "0", "again"})}, 200, `{"result":"again"}`},
		{"SCRIPT LOAD answers the original digest", call{path: "/", body: mustJSON([]string{"SCRIPT", "LOAD", luaFlags})}, 200, `{"result":"` + sha(luaFlags) + `"}`},
		{"response format json", call{path: "/", body: `["GET","k"]`, header: map[string]string{"Upstash-Response-Format": "json"}}, 200, `{"result":"v"}`},
		{"response format resp3 refused", call{path: "/", body: `["GET","k"]`, header: map[string]string{"Upstash-Response-Format": "resp3"}}, 400, ``},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			status, body := do(t, base, tc.call)
			if status != tc.wantStatus {
				t.Fatalf("status %d, want %d; body %s", status, tc.wantStatus, body)
			}
			if tc.wantBody != "" && body != tc.wantBody {
				t.Fatalf("body\n got %s\nwant %s", body, tc.wantBody)
			}
			if tc.wantBody == "" && !strings.HasPrefix(body, `{"error":`) {
				t.Fatalf("body %s is not an error body", body)
			}
		})
	}
}

func TestSyncTokenOnEveryAnswer(t *testing.T) {
	_, base := redistest.Upstash(t)
	resp, err := http.Post(base+"/", "application/json", strings.NewReader(`["PING"]`))
	if err != nil {
		t.Fatal(err)
	}
	resp.Body.Close()
	if resp.Header.Get("Upstash-Sync-Token") == "" {
		t.Fatal("no Upstash-Sync-Token header")
	}
}

func TestFaultsAndStats(t *testing.T) {
	srv, base := redistest.Upstash(t)
	do(t, base, call{path: "/", body: `["PING"]`})
	do(t, base, call{path: "/pipeline", body: `[["PING"],["PING"]]`})
	st := srv.Stats()
	if st.Requests["/"] != 1 || st.Requests["/pipeline"] != 1 || st.Commands["PING"] != 3 {
		t.Fatalf("stats %+v, want 1 single, 1 pipeline, 3 PINGs", st)
	}
	srv.ResetStats()
	if st := srv.Stats(); len(st.Requests) != 0 {
		t.Fatalf("stats after reset: %+v", st)
	}

	srv.SetFaults(upstashdev.Faults{Status: 503})
	if status, _ := do(t, base, call{path: "/", body: `["PING"]`}); status != 503 {
		t.Fatalf("injected 503: got %d", status)
	}
	srv.SetFaults(upstashdev.Faults{Drop: true})
	req, _ := http.NewRequest(http.MethodPost, base+"/", strings.NewReader(`["PING"]`))
	if resp, err := http.DefaultClient.Do(req); err == nil {
		resp.Body.Close()
		t.Fatalf("dropped connection answered %d", resp.StatusCode)
	}
	// A lost answer: the command ran, the client heard nothing.
	srv.SetFaults(upstashdev.Faults{LoseAnswers: true})
	req, _ = http.NewRequest(http.MethodPost, base+"/", strings.NewReader(`["SET","lost","ran"]`))
	req.Header.Set("Authorization", "Bearer "+redistest.Token)
	if resp, err := http.DefaultClient.Do(req); err == nil {
		resp.Body.Close()
		t.Fatalf("a lost answer arrived: %d", resp.StatusCode)
	}
	srv.SetFaults(upstashdev.Faults{})
	if status, body := do(t, base, call{path: "/", body: `["GET","lost"]`}); status != 200 || !strings.Contains(body, "ran") {
		t.Fatalf("the command whose answer was lost did not run: %d %s", status, body)
	}
	// Faults are set over HTTP too, as make serve's users do.
	if status, body := do(t, base, call{path: "/_dev/faults", body: `{}`}); status != 200 {
		t.Fatalf("clear faults over HTTP: %d %s", status, body)
	}
	if status, _ := do(t, base, call{path: "/", body: `["PING"]`}); status != 200 {
		t.Fatalf("after clearing faults: %d", status)
	}
}

func TestRedisDown(t *testing.T) {
	hs := httptest.NewServer(upstashdev.New("127.0.0.1:1", redistest.Token))
	defer hs.Close()
	status, body := do(t, hs.URL, call{path: "/", body: `["PING"]`})
	if status != http.StatusBadGateway || !strings.Contains(body, "Redis unavailable") {
		t.Fatalf("got %d %s, want 502 Redis unavailable", status, body)
	}
}

func mustJSON(v any) string {
	b, _ := json.Marshal(v)
	return string(b)
}
