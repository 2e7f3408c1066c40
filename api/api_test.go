package api

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"sort"
	"strings"
	"testing"
	"time"

	"github.com/edgequeue/waitingroom/control"
	"github.com/edgequeue/waitingroom/queue"
	"github.com/edgequeue/waitingroom/store"
	"github.com/fastly/compute-sdk-go/fsthttp"
	"github.com/fastly/compute-sdk-go/fsttest"
)

// These tests need no store: every refusal below comes before the store
// is asked, or is the answer to a store that does not answer (a transport
// that fails, as a dead network does). What the store answers is tested
// against a real Redis, natively and through both wasm builds, in
// tools/suites/apitest.

const (
	testPath  = "/_wr/api"
	testToken = "a-token-of-at-least-thirty-two-chars"
)

// deadStore fails every request, as a store that cannot be reached.
type deadStore struct{ calls *int }

func (d deadStore) RoundTrip(context.Context, store.Request) (store.Response, error) {
	*d.calls++
	return store.Response{}, errors.New("connection refused")
}

// guessCounter is Guesses that counts wrong tokens and refuses once told.
type guessCounter struct {
	wrong   int
	refused bool
}

func (g *guessCounter) Refused() (time.Duration, bool) { return 5 * time.Minute, g.refused }
func (g *guessCounter) Wrong()                         { g.wrong++ }

// fixture is a Handler over the rooms shop and sale_de, with a dead
// store, whose log and guesses the test reads.
type fixture struct {
	h          *Handler
	logs       []string
	guesses    *guessCounter
	storeCalls int
}

func newFixture(t *testing.T) *fixture {
	t.Helper()
	f := &fixture{guesses: &guessCounter{}}
	var rooms []*queue.Room
	for _, name := range []string{"shop", "sale_de"} {
		r, err := queue.ParseRoom(name, []byte(`{"paths":["/`+name+`/"],"max_active_users":5}`))
		if err != nil {
			t.Fatal(err)
		}
		rooms = append(rooms, r)
	}
	logf := func(format string, args ...any) { f.logs = append(f.logs, fmt.Sprintf(format, args...)) }
	f.h = &Handler{
		Path: testPath, Token: []byte(testToken), Guesses: f.guesses, Client: "c0ffee", Logf: logf,
		Operator: &control.Operator{Rooms: rooms, Now: time.Unix(1_700_000_000, 0), Logf: logf,
			Store: &store.Upstash{URL: "https://db.test", Token: "t", Transport: deadStore{&f.storeCalls}, Timeout: time.Second}},
	}
	return f
}

// req is a request to the API: method, the target below testPath, a body
// and header name, value pairs. A body gets Content-Type JSON unless the
// headers set one; "auth" false sends no token.
type req struct {
	method, target, body string
	header               []string
	noAuth               bool
}

func (f *fixture) do(t *testing.T, q req) *fsttest.ResponseRecorder {
	t.Helper()
	r, err := fsthttp.NewRequest(q.method, "https://shop.test"+testPath+q.target, strings.NewReader(q.body))
	if err != nil {
		t.Fatal(err)
	}
	if !q.noAuth {
		r.Header.Set("Authorization", "Bearer "+testToken)
	}
	if q.body != "" {
		r.Header.Set("Content-Type", "application/json")
	}
	for i := 0; i+1 < len(q.header); i += 2 {
		r.Header.Set(q.header[i], q.header[i+1])
	}
	w := fsttest.NewRecorder()
	f.h.ServeHTTP(context.Background(), w, r)
	return w
}

// refusal reads an error answer, failing the test unless it is one: JSON,
// not cached, with a code and a message.
func refusalOf(t *testing.T, w *fsttest.ResponseRecorder) Error {
	t.Helper()
	var e Error
	if err := json.Unmarshal(w.Body.Bytes(), &e); err != nil || e.Code == "" || e.Message == "" {
		t.Fatalf("%d %s: not an error answer (%v)", w.Code, w.Body, err)
	}
	checkHeaders(t, w, "application/json")
	return e
}

func checkHeaders(t *testing.T, w *fsttest.ResponseRecorder, contentType string) {
	t.Helper()
	if got := w.HeaderMap.Get("Cache-Control"); got != "no-store" {
		t.Errorf("Cache-Control %q, want no-store", got)
	}
	if got := w.HeaderMap.Get("Content-Type"); got != contentType {
		t.Errorf("Content-Type %q, want %q", got, contentType)
	}
}

// TestAuth: without a usable token the API is disabled (503), never open;
// a request without a token is refused and not counted; a wrong one, in
// any scheme, is refused and counted; a client in the penalty box is
// refused 429 with Retry-After before its token is compared, the right
// one included. The OpenAPI document needs no token.
func TestAuth(t *testing.T) {
	for _, tc := range []struct {
		name     string
		token    string
		disabled string
		refused  bool
		header   []string
		noAuth   bool
		code     int
		errCode  string
		wrong    int
	}{
		{name: "right token", token: testToken, code: 503, errCode: "store_unavailable"},
		{name: "scheme in any case", token: testToken, header: []string{"Authorization", "bEARER " + testToken}, code: 503, errCode: "store_unavailable"},
		{name: "no token set", token: "", code: 503, errCode: "api_disabled"},
		{name: "short token", token: testToken[:31], header: []string{"Authorization", "Bearer " + testToken[:31]}, code: 503, errCode: "api_disabled"},
		{name: "disabled by the edge", token: testToken, disabled: "api_token holds the public development value", code: 503, errCode: "api_disabled"},
		{name: "no Authorization", token: testToken, noAuth: true, code: 401, errCode: "unauthorized"},
		{name: "wrong token", token: testToken, header: []string{"Authorization", "Bearer " + testToken + "x"}, code: 401, errCode: "unauthorized", wrong: 1},
		{name: "prefix of the token", token: testToken, header: []string{"Authorization", "Bearer " + testToken[:32]}, code: 401, errCode: "unauthorized", wrong: 1},
		{name: "basic auth", token: testToken, header: []string{"Authorization", "Basic " + testToken}, code: 401, errCode: "unauthorized", wrong: 1},
		{name: "empty bearer", token: testToken, header: []string{"Authorization", "Bearer  "}, code: 401, errCode: "unauthorized", wrong: 1},
		{name: "huge header", token: testToken, header: []string{"Authorization", "Bearer " + strings.Repeat(testToken, 100)}, code: 401, errCode: "unauthorized", wrong: 1},
		{name: "penalty box, right token", token: testToken, refused: true, code: 429, errCode: "too_many_attempts"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			f := newFixture(t)
			f.h.Token, f.h.Disabled, f.h.Operator, f.h.Unavailable = []byte(tc.token), tc.disabled, nil, "secret upstash_token is missing"
			f.guesses.refused = tc.refused
			w := f.do(t, req{method: "GET", target: "/rooms", header: tc.header, noAuth: tc.noAuth})
			e := refusalOf(t, w)
			if w.Code != tc.code || e.Code != tc.errCode || f.guesses.wrong != tc.wrong {
				t.Fatalf("%d %+v, %d wrong counted; want %d %s, %d", w.Code, e, f.guesses.wrong, tc.code, tc.errCode, tc.wrong)
			}
			switch tc.code {
			case 401:
				if !strings.HasPrefix(w.HeaderMap.Get("WWW-Authenticate"), "Bearer ") {
					t.Errorf("WWW-Authenticate %q", w.HeaderMap.Get("WWW-Authenticate"))
				}
			case 429:
				if w.HeaderMap.Get("Retry-After") != "300" || !strings.Contains(e.Message, "5 minutes") {
					t.Errorf("Retry-After %q, message %q", w.HeaderMap.Get("Retry-After"), e.Message)
				}
			}
			if tc.disabled != "" && !strings.Contains(e.Message, tc.disabled) {
				t.Errorf("message %q does not say why", e.Message)
			}
			if tc.errCode == "store_unavailable" && !strings.Contains(e.Message, "upstash_token is missing") {
				t.Errorf("message %q does not say why", e.Message)
			}
			if len(f.logs) != 1 || !strings.Contains(f.logs[0], tc.errCode) {
				t.Errorf("log %q", f.logs)
			}
			// The document is served whatever the token.
			doc := f.do(t, req{method: "GET", target: "/openapi.json", noAuth: true})
			if doc.Code != 200 || doc.Body.String() != openAPI {
				t.Errorf("openapi.json: %d", doc.Code)
			}
			checkHeaders(t, doc, "application/json")
		})
	}
}

// TestRefusals: each route's bad requests get their own status and code,
// naming the field, before the store is asked; crafted paths reach no
// room. Every answer is JSON, not cached, and logged.
func TestRefusals(t *testing.T) {
	const big = 5000
	for _, tc := range []struct {
		q       req
		code    int
		errCode string
		field   string
		allow   string
	}{
		{req{method: "GET", target: ""}, 404, "no_such_route", "", ""},
		{req{method: "GET", target: "/"}, 404, "no_such_route", "", ""},
		{req{method: "GET", target: "/rooms/"}, 404, "no_such_route", "", ""},
		{req{method: "GET", target: "/rooms/shop"}, 404, "no_such_route", "", ""},
		{req{method: "GET", target: "/rooms/shop/stats/"}, 404, "no_such_route", "", ""},
		{req{method: "GET", target: "/rooms//stats"}, 404, "no_such_route", "", ""},
		{req{method: "GET", target: "/rooms/../x"}, 404, "no_such_route", "", ""},
		{req{method: "GET", target: "/rooms/../stats"}, 404, "no_such_room", "room", ""},
		{req{method: "GET", target: "/rooms/%2e%2e/stats"}, 404, "no_such_room", "room", ""},
		{req{method: "GET", target: "/rooms/sh%2Fop/stats"}, 404, "no_such_room", "room", ""},
		{req{method: "GET", target: "/rooms/SHOP/stats"}, 404, "no_such_room", "room", ""},
		{req{method: "GET", target: "/rooms/sh%00op/stats"}, 404, "no_such_room", "room", ""},
		{req{method: "GET", target: "/rooms/%E2%80%AEshop/stats"}, 404, "no_such_room", "room", ""},
		{req{method: "GET", target: "/rooms/" + strings.Repeat("a", 500) + "/stats"}, 404, "no_such_room", "room", ""},
		{req{method: "POST", target: "/rooms/nope/admit", body: `{"n":1}`}, 404, "no_such_room", "room", ""},
		{req{method: "GET", target: "/rooms/shop/admit"}, 405, "method_not_allowed", "", "POST"},
		{req{method: "POST", target: "/rooms"}, 405, "method_not_allowed", "", "GET"},
		{req{method: "PUT", target: "/rooms/shop/limits"}, 405, "method_not_allowed", "", "PATCH, DELETE"},
		{req{method: "POST", target: "/openapi.json"}, 405, "method_not_allowed", "", "GET"},
		{req{method: "GET", target: "/rooms?x=1"}, 400, "unknown_parameter", "x", ""},
		{req{method: "GET", target: "/rooms/shop/history?minutes=0"}, 400, "invalid_parameter", "minutes", ""},
		{req{method: "GET", target: "/rooms/shop/history?minutes=1441"}, 400, "invalid_parameter", "minutes", ""},
		{req{method: "GET", target: "/rooms/shop/history?minutes=ten"}, 400, "invalid_parameter", "minutes", ""},
		{req{method: "GET", target: "/rooms/shop/history?minutes=5&minutes=6"}, 400, "invalid_parameter", "minutes", ""},
		{req{method: "GET", target: "/audit?limit=1001"}, 400, "invalid_parameter", "limit", ""},
		{req{method: "GET", target: "/audit?limit=201"}, 400, "invalid_parameter", "limit", ""},
		{req{method: "GET", target: "/audit?offset=800"}, 400, "unknown_parameter", "offset", ""},
		{req{method: "GET", target: "/audit?cursor=0"}, 400, "invalid_parameter", "cursor", ""},
		{req{method: "GET", target: "/audit?cursor=%3Cscript%3E.x."}, 400, "invalid_parameter", "cursor", ""},
		{req{method: "GET", target: "/audit?cursor=a&cursor=b"}, 400, "invalid_parameter", "cursor", ""},
		{req{method: "GET", target: "/rooms?cursor=3"}, 400, "invalid_parameter", "cursor", ""},
		{req{method: "GET", target: "/rooms?cursor=-1"}, 400, "invalid_parameter", "cursor", ""},
		{req{method: "GET", target: "/rooms?cursor=shop"}, 400, "invalid_parameter", "cursor", ""},
		{req{method: "GET", target: "/audit?limit=%zz"}, 400, "invalid_parameter", "", ""},
		{req{method: "POST", target: "/rooms/shop/admit"}, 400, "invalid_json", "", ""},
		{req{method: "POST", target: "/rooms/shop/admit", body: `{}`}, 400, "invalid_field", "n", ""},
		{req{method: "POST", target: "/rooms/shop/admit", body: `{"n":null}`}, 400, "invalid_field", "n", ""},
		{req{method: "POST", target: "/rooms/shop/admit", body: `{"n":"5"}`}, 400, "invalid_field", "n", ""},
		{req{method: "POST", target: "/rooms/shop/admit", body: `{"n":1.5}`}, 400, "invalid_field", "n", ""},
		{req{method: "POST", target: "/rooms/shop/admit", body: `{"n":1e30}`}, 400, "invalid_field", "n", ""},
		{req{method: "POST", target: "/rooms/shop/admit", body: `{"n":5,"N":6}`}, 400, "unknown_field", "N", ""},
		{req{method: "POST", target: "/rooms/shop/admit", body: `{"N":6}`}, 400, "unknown_field", "N", ""},
		{req{method: "POST", target: "/rooms/shop/admit", body: `{"n":5,"room":"x"}`}, 400, "unknown_field", "room", ""},
		{req{method: "POST", target: "/rooms/shop/admit", body: `{"n":5}{"n":6}`}, 400, "invalid_json", "", ""},
		{req{method: "POST", target: "/rooms/shop/admit", body: `[5]`}, 400, "invalid_json", "", ""},
		{req{method: "POST", target: "/rooms/shop/admit", body: `{"n":5`}, 400, "invalid_json", "", ""},
		{req{method: "POST", target: "/rooms/shop/admit", body: `n=5`, header: []string{"Content-Type", "application/x-www-form-urlencoded"}}, 415, "unsupported_media_type", "", ""},
		{req{method: "POST", target: "/rooms/shop/admit", body: `{"n":5}`, header: []string{"Content-Type", "text/plain"}}, 415, "unsupported_media_type", "", ""},
		{req{method: "POST", target: "/rooms/shop/admit", body: `{"n":5}`, header: []string{"Content-Type", ""}}, 415, "unsupported_media_type", "", ""},
		{req{method: "POST", target: "/rooms/shop/admit", body: `{"n":5,"x":"` + strings.Repeat("a", big) + `"}`}, 413, "body_too_large", "", ""},
		{req{method: "POST", target: "/rooms/shop/admit", body: `{"n":5}`, header: []string{"Content-Length", "1000000"}}, 413, "body_too_large", "", ""},
		{req{method: "POST", target: "/rooms/shop/pause", body: `{"n":5}`}, 400, "unknown_field", "n", ""},
		{req{method: "POST", target: "/rooms/shop/reset", body: `{}`}, 400, "invalid_field", "confirm", ""},
		{req{method: "POST", target: "/rooms/shop/reset", body: `{"confirm":5}`}, 400, "invalid_field", "confirm", ""},
		{req{method: "PATCH", target: "/rooms/shop/limits", body: `{}`}, 400, "invalid_field", "limits", ""},
		{req{method: "PATCH", target: "/rooms/shop/limits", body: `{"mode":"lifo"}`}, 400, "invalid_field", "mode", ""},
		{req{method: "PATCH", target: "/rooms/shop/limits", body: `{"burst":-1}`}, 400, "invalid_field", "burst", ""},
		{req{method: "POST", target: "/rooms/shop/admit", body: `{"n":0}`}, 400, "invalid_field", "n", ""},
		{req{method: "POST", target: "/rooms/shop/admit", body: `{"n":10001}`}, 400, "invalid_field", "n", ""},
		{req{method: "POST", target: "/rooms/shop/reset", body: `{"confirm":"SHOP"}`}, 409, "confirm_mismatch", "confirm", ""},
		{req{method: "PATCH", target: "/rooms/shop/limits", body: `{"max_active_users":"10"}`}, 400, "invalid_field", "max_active_users", ""},
		{req{method: "PATCH", target: "/rooms/shop/limits", body: `{"burst":null}`}, 400, "invalid_field", "burst", ""},
		{req{method: "PATCH", target: "/rooms/shop/limits", body: `{"capacity":10}`}, 400, "unknown_field", "capacity", ""},
		{req{method: "DELETE", target: "/rooms/shop/limits", body: `{"burst":1}`}, 400, "unknown_field", "burst", ""},
	} {
		name := tc.q.method + " " + tc.q.target
		if len(name) > 60 {
			name = name[:60]
		}
		t.Run(name, func(t *testing.T) {
			f := newFixture(t)
			w := f.do(t, tc.q)
			e := refusalOf(t, w)
			if w.Code != tc.code || e.Code != tc.errCode || e.Field != tc.field {
				t.Fatalf("%d %+v; want %d %s field %q", w.Code, e, tc.code, tc.errCode, tc.field)
			}
			if got := w.HeaderMap.Get("Allow"); got != tc.allow {
				t.Errorf("Allow %q, want %q", got, tc.allow)
			}
			if f.storeCalls != 0 {
				t.Errorf("%d store calls for a refused request", f.storeCalls)
			}
			if len(f.logs) != 1 || !strings.Contains(f.logs[0], tc.errCode) || strings.ContainsAny(f.logs[0], "\r\n") {
				t.Errorf("log %q", f.logs)
			}
		})
	}
}

// TestDeadStore: every route that passes its checks asks the store; when
// the store does not answer, the client gets 503 store_unavailable saying
// so, and may try again.
func TestDeadStore(t *testing.T) {
	for _, q := range []req{
		{method: "GET", target: "/rooms"},
		{method: "GET", target: "/rooms/shop/stats"},
		{method: "GET", target: "/rooms/shop/history?minutes=5"},
		{method: "POST", target: "/rooms/shop/admit", body: `{"n":3}`},
		{method: "POST", target: "/rooms/shop/pause"},
		{method: "POST", target: "/rooms/shop/resume", body: `{}`},
		{method: "POST", target: "/rooms/sale_de/queue_all", body: " {} ", header: []string{"Content-Type", "Application/JSON; charset=utf-8"}},
		{method: "POST", target: "/rooms/shop/reset", body: `{"confirm":"shop"}`},
		{method: "PATCH", target: "/rooms/shop/limits", body: `{"max_active_users":1}`},
		{method: "DELETE", target: "/rooms/shop/limits"},
		{method: "GET", target: "/rooms?cursor=1"},
		{method: "GET", target: "/audit?limit=5"},
	} {
		t.Run(q.method+" "+q.target, func(t *testing.T) {
			f := newFixture(t)
			w := f.do(t, q)
			e := refusalOf(t, w)
			if w.Code != 503 || e.Code != "store_unavailable" || !strings.Contains(e.Message, "connection refused") {
				t.Fatalf("%d %+v", w.Code, e)
			}
			if f.storeCalls == 0 {
				t.Error("the store was not asked")
			}
		})
	}
}

// TestRefusalOfAPageTooLarge: a request that met control.MaxStoreCalls
// is the API's fault, not the client's nor the store's.
func TestRefusalOfAPageTooLarge(t *testing.T) {
	for _, err := range []error{control.ErrBudget, fmt.Errorf("audit: %w (18): the audit log of 401 rooms", control.ErrBudget)} {
		if e := refusal(err); e.Status != 500 || e.Code != "internal" || !strings.Contains(e.Message, err.Error()) {
			t.Errorf("%v: %+v, want 500 internal saying why", err, e)
		}
	}
}

// TestDocumentCoversRoutes: the OpenAPI document names exactly the routes
// the handler serves (tools/suites/apitest checks every answer against it).
func TestDocumentCoversRoutes(t *testing.T) {
	var doc struct {
		OpenAPI string                                `json:"openapi"`
		Paths   map[string]map[string]json.RawMessage `json:"paths"`
	}
	if err := json.Unmarshal([]byte(openAPI), &doc); err != nil || !strings.HasPrefix(doc.OpenAPI, "3.1.") {
		t.Fatalf("openapi.json: %v, version %q", err, doc.OpenAPI)
	}
	var inDoc, served []string
	for path, item := range doc.Paths {
		for method := range item {
			if method != "parameters" {
				inDoc = append(inDoc, strings.ToUpper(method)+" "+path)
			}
		}
	}
	for _, r := range Routes() {
		served = append(served, r.Method+" "+r.Path)
	}
	sort.Strings(inDoc)
	sort.Strings(served)
	if strings.Join(inDoc, "\n") != strings.Join(served, "\n") {
		t.Fatalf("the document has\n%s\nthe handler serves\n%s", strings.Join(inDoc, "\n"), strings.Join(served, "\n"))
	}
}

// quietStore is a store of rooms nobody has joined yet: every line is
// empty, every history and audit log too.
type quietStore struct{}

func (quietStore) Stats(context.Context, string, store.Policy, time.Time) (store.Line, error) {
	return store.Line{}, nil
}

func (quietStore) Operate(context.Context, string, store.Policy, store.Action, time.Time) (store.Line, error) {
	return store.Line{}, nil
}

func (quietStore) History(context.Context, string, time.Time, time.Time) ([]store.Minute, error) {
	return nil, nil
}

func (quietStore) Audit(_ context.Context, reads []store.AuditRead) ([][]store.AuditEntry, error) {
	return make([][]store.AuditEntry, len(reads)), nil
}

// TestPagesOfShardedRooms: GET /rooms pages rooms of mixed shards as many
// as one request's store calls read (the Operator refuses any call past
// them, which would answer 500), and its next pages list every room once.
func TestPagesOfShardedRooms(t *testing.T) {
	for _, tc := range []struct {
		shards []int
		pages  []string // the rooms listed, page by page
	}{
		{[]int{1, 1, 1, 1, 1, 1}, []string{"r0 r1 r2 r3", "r4 r5"}},
		{[]int{8}, []string{"r0"}},
		{[]int{8, 8, 8}, []string{"r0", "r1", "r2"}},
		{[]int{1, 8, 1, 1}, []string{"r0 r1", "r2 r3"}},
		{[]int{3, 3, 3, 1, 2, 8, 1, 4, 4}, []string{"r0 r1 r2", "r3 r4", "r5 r6", "r7 r8"}},
	} {
		t.Run(fmt.Sprint(tc.shards), func(t *testing.T) {
			f := newFixture(t)
			var rooms []*queue.Room
			for i, k := range tc.shards {
				r, err := queue.ParseRoom(fmt.Sprintf("r%d", i), []byte(fmt.Sprintf(`{"paths":["/r%d/"],"max_active_users":8,"shards":%d}`, i, k)))
				if err != nil {
					t.Fatal(err)
				}
				rooms = append(rooms, r)
			}
			var pages []string
			for target := "/rooms"; ; {
				if len(pages) > len(rooms) {
					t.Fatalf("more pages than rooms: %q", pages)
				}
				// A request is a new Operator, with its own budget.
				f.h.Operator = &control.Operator{Rooms: rooms, Now: time.Unix(1_700_000_000, 0), Store: quietStore{}}
				w := f.do(t, req{method: "GET", target: target})
				var list RoomList
				if err := json.Unmarshal(w.Body.Bytes(), &list); w.Code != 200 || err != nil {
					t.Fatalf("%s: %d %s", target, w.Code, w.Body)
				}
				var names []string
				for _, st := range list.Rooms {
					names = append(names, st.Room)
				}
				pages = append(pages, strings.Join(names, " "))
				if list.Next == nil {
					break
				}
				target = strings.TrimPrefix(*list.Next, testPath)
			}
			if strings.Join(pages, "|") != strings.Join(tc.pages, "|") {
				t.Errorf("pages %q, want %q", pages, tc.pages)
			}
		})
	}
}
