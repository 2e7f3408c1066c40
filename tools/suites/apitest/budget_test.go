package apitest

import (
	"context"
	"encoding/base64"
	"encoding/json"
	"fmt"
	"html"
	"net/http"
	"net/url"
	"regexp"
	"strings"
	"testing"
	"time"

	"github.com/edgequeue/waitingroom/control"
	"github.com/edgequeue/waitingroom/edge"
	"github.com/edgequeue/waitingroom/queue"
	"github.com/edgequeue/waitingroom/store"
	"github.com/edgequeue/waitingroom/tools/devstack"
	"github.com/edgequeue/waitingroom/tools/native"
	"github.com/edgequeue/waitingroom/tools/redistest"
)

// budgetRooms is how many rooms the operator's requests are counted at,
// each with a full audit log (store.AuditCap entries): a page that read
// every room, or every room's log down to its page, would cost hundreds
// of store calls.
const budgetRooms = 50

// budgetShards are the shards of the rooms that run sharded, by index: a
// call on a room of K shards is K store calls, so their pages hold fewer
// rooms, and a room of 8 (the most) fills a page alone.
var budgetShards = map[int]int{0: 8, 1: 3, 7: 8, 8: 2, 20: 5, 49: 8}

// budgetRoom is one of the rooms: each its own path, one visitor at a time
// per shard.
func budgetRoom(i int) [2]string {
	k := max(budgetShards[i], 1)
	return [2]string{fmt.Sprintf("r%d", i), fmt.Sprintf(`{"paths":["/r%d/"],"max_active_users":%d,"shards":%d}`, i, k, k)}
}

// apiPages is how many pages GET /rooms takes for the rooms, as
// control.Page cuts them.
func apiPages(t *testing.T, names []string) int {
	var rooms []*queue.Room
	for i, name := range names {
		r, err := queue.ParseRoom(name, []byte(budgetRoom(i)[1]))
		if err != nil {
			t.Fatal(err)
		}
		rooms = append(rooms, r)
	}
	pages := 0
	for from := 0; from < len(rooms); from = control.Page(rooms, from, control.RoomsPerPage, control.MaxStoreCalls) {
		pages++
	}
	return pages
}

// operatorSite is the service an operator uses, natively or through the
// wasm, with the store calls it makes counted at the REST stand-in.
type operatorSite struct {
	// send sends one request: method, target (path and query), body and
	// header name, value pairs.
	send func(t *testing.T, method, target string, body []byte, header ...string) (int, []byte)
	// calls is the store calls made since it was last asked.
	calls func() int
	// logs is what the service logged.
	logs               func() string
	apiAuth, panelAuth string
}

// fillAuditLogs fills every room's audit log to store.AuditCap entries,
// the rooms' entries interleaved in time (so that every page of the
// merged log draws on every room), the newest at newest. It loads the
// line's script too, as any visitor's call does: the first call to a
// database without it costs one more request (NOSCRIPT, then EVAL), which
// TestStoreCallsPerRequestKind (tools/suites/e2e) counts, not this.
func fillAuditLogs(t *testing.T, u *store.Upstash, rooms []string, newest time.Time) {
	t.Helper()
	if _, err := u.Stats(context.Background(), rooms[0], store.Policy{Capacity: 1}, newest); err != nil {
		t.Fatal(err)
	}
	for i, room := range rooms {
		// LPUSH puts the last argument first: oldest first.
		cmd := []string{"LPUSH", u.Keys(room)[9]}
		for k := store.AuditCap - 1; k >= 0; k-- {
			at := newest.Add(-time.Duration(k*len(rooms)+len(rooms)-1-i) * time.Millisecond)
			state := store.AuditState{Epoch: 1, Issued: 40, Admitted: 20}
			b, err := json.Marshal(map[string]any{"t": at.UnixMilli(), "room": room, "via": "api", "client": "5eed5eed5eed5eed",
				"action": "pause", "before": state, "after": state})
			if err != nil {
				t.Fatal(err)
			}
			cmd = append(cmd, string(b))
		}
		body, _ := json.Marshal([][]string{cmd})
		resp, err := native.Upstash{}.RoundTrip(context.Background(), store.Request{URL: u.URL + "/pipeline",
			Header: map[string]string{"Authorization": "Bearer " + u.Token}, Body: body})
		if err != nil || resp.Status != http.StatusOK || strings.Contains(string(resp.Body), `"error"`) {
			t.Fatalf("filling the audit log of %s: %v %d %.200s", room, err, resp.Status, resp.Body)
		}
	}
}

// The panel's links and rows, as the page writes them.
var (
	nextRooms  = regexp.MustCompile(`<a href="([^"]+)" rel="next">Next rooms</a>`)
	olderAudit = regexp.MustCompile(`<a href="([^"]+)" rel="next">Older entries</a>`)
	// summaryRow is a room's row of the panel's summary: its mode, or
	// why the panel could not read it.
	summaryRow  = regexp.MustCompile(`<tr><td>(r\d+)</td><td(?:>[a-z]+</td>| colspan="9">store did not answer: ([^<]*)</td>)`)
	auditRow    = regexp.MustCompile(`<tr><td><time datetime="[^"]+">([^<]+)</time></td><td>(r\d+)</td>`)
	csrfInPanel = regexp.MustCompile(`name="csrf" value="([^"]+)"`)
)

// checkOperatorBudget sends every kind of operator request, the panel's
// and the API's, following their pages as an operator would, and fails
// the test for any that made more than control.MaxStoreCalls store calls,
// or whose pages skip or repeat a room or an entry.
func checkOperatorBudget(t *testing.T, site operatorSite, rooms []string) {
	// req is one request of a kind; what it answers may lead to the next.
	type req struct {
		method, target string
		body           []byte
	}
	panelForm := func(action, form string) req {
		return req{http.MethodPost, edge.DefaultAdminPath + "/" + action, []byte(form)}
	}
	var csrf string
	// What the pages showed: the panel's rooms and audit entries, the
	// API's.
	var panelRooms, panelAudit, apiRooms, apiAudit []string
	tests := []struct {
		name  string
		first req
		// follow reads an answer, and its link to the next page ("" for
		// none); nil for a request of one page.
		follow func(t *testing.T, body []byte) string
		// done checks what the pages showed, once there is no next.
		done func(t *testing.T, pages int)
	}{
		{"the panel, page by page of rooms", req{http.MethodGet, edge.DefaultAdminPath + "?refresh=off", nil},
			func(t *testing.T, body []byte) string {
				if m := csrfInPanel.FindSubmatch(body); m != nil {
					csrf = string(m[1])
				}
				for _, m := range summaryRow.FindAllSubmatch(body, -1) {
					panelRooms = append(panelRooms, string(m[1]))
					// A reading that timed out on a loaded machine is
					// still a room the page lists, where it should;
					// any other failure to read is the panel's.
					switch msg := html.UnescapeString(string(m[2])); {
					case len(m[2]) == 0:
					case strings.Contains(msg, store.ErrUnavailable.Error()):
						t.Logf("room %s listed unread: %s", m[1], msg)
					default:
						t.Errorf("room %s listed unread: %s", m[1], msg)
					}
				}
				if n := len(auditRow.FindAll(body, -1)); n != 20 {
					t.Errorf("%d entries of the audit log on the panel's page, want 20", n)
				}
				return link(nextRooms, body)
			}, func(t *testing.T, pages int) {
				if got, want := strings.Join(panelRooms, " "), strings.Join(rooms, " "); got != want {
					t.Errorf("the panel's %d pages showed the rooms %s, want each once: %s", pages, got, want)
				}
			}},
		{"the panel's audit log, page by page", req{http.MethodGet, edge.DefaultAdminPath + "?refresh=off&rooms_page=2", nil},
			func(t *testing.T, body []byte) string {
				for _, m := range auditRow.FindAllSubmatch(body, -1) {
					panelAudit = append(panelAudit, string(m[1]))
				}
				if len(panelAudit) >= 100 {
					return ""
				}
				return link(olderAudit, body)
			}, func(t *testing.T, pages int) {
				checkNewestFirst(t, "the panel's audit log", panelAudit, 100)
			}},
		{"admit from the panel", panelForm("admit", "room=r49&n=2"), nil, nil},
		{"pause from the panel", panelForm("pause", "room=r0"), nil, nil},
		{"queue all from the panel", panelForm("queue_all", "room=r0"), nil, nil},
		{"resume from the panel", panelForm("resume", "room=r0"), nil, nil},
		{"live values from the panel", panelForm("limits", "room=r0&max_active_users=9&burst=2"), nil, nil},
		{"clear from the panel", panelForm("clear", "room=r0"), nil, nil},
		{"reset from the panel", panelForm("reset", "room=r0&confirm=r0"), nil, nil},
		{"the API's rooms, page by page", req{http.MethodGet, edge.DefaultAPIPath + "/rooms", nil},
			func(t *testing.T, body []byte) string {
				var page struct {
					Rooms []struct{ Room string }
					Next  *string
				}
				if err := json.Unmarshal(body, &page); err != nil {
					t.Fatalf("%v: %.300s", err, body)
				}
				for _, r := range page.Rooms {
					apiRooms = append(apiRooms, r.Room)
				}
				if page.Next == nil {
					return ""
				}
				return *page.Next
			}, func(t *testing.T, pages int) {
				if got, want := strings.Join(apiRooms, " "), strings.Join(rooms, " "); got != want || pages != apiPages(t, rooms) {
					t.Errorf("the API's %d pages listed the rooms %s, want each once, in %d pages: %s", pages, got, apiPages(t, rooms), want)
				}
			}},
		{"a room's stats", req{http.MethodGet, edge.DefaultAPIPath + "/rooms/r7/stats", nil}, nil, nil},
		{"a room's day of history", req{http.MethodGet, edge.DefaultAPIPath + "/rooms/r7/history?minutes=1440", nil}, nil, nil},
		{"admit", req{http.MethodPost, edge.DefaultAPIPath + "/rooms/r7/admit", []byte(`{"n":2}`)}, nil, nil},
		{"pause", req{http.MethodPost, edge.DefaultAPIPath + "/rooms/r7/pause", nil}, nil, nil},
		{"queue all", req{http.MethodPost, edge.DefaultAPIPath + "/rooms/r7/queue_all", nil}, nil, nil},
		{"resume", req{http.MethodPost, edge.DefaultAPIPath + "/rooms/r7/resume", nil}, nil, nil},
		{"live values", req{http.MethodPatch, edge.DefaultAPIPath + "/rooms/r7/limits", []byte(`{"max_active_users":9,"mode":"random"}`)}, nil, nil},
		{"clear", req{http.MethodDelete, edge.DefaultAPIPath + "/rooms/r7/limits", nil}, nil, nil},
		{"reset", req{http.MethodPost, edge.DefaultAPIPath + "/rooms/r7/reset", []byte(`{"confirm":"r7"}`)}, nil, nil},
		{"the API's audit log, 200 a page", req{http.MethodGet, edge.DefaultAPIPath + "/audit?limit=200", nil},
			func(t *testing.T, body []byte) string {
				var page struct {
					Entries []struct{ Time time.Time }
					Next    *string
				}
				if err := json.Unmarshal(body, &page); err != nil {
					t.Fatalf("%v: %.300s", err, body)
				}
				if len(page.Entries) != 200 || page.Next == nil {
					t.Fatalf("a page of %d entries, next %v; want 200 and a next page", len(page.Entries), page.Next)
				}
				for _, e := range page.Entries {
					apiAudit = append(apiAudit, e.Time.UTC().Format("2006-01-02 15:04:05.000"))
				}
				if len(apiAudit) >= 1000 {
					return ""
				}
				return *page.Next
			}, func(t *testing.T, pages int) {
				checkNewestFirst(t, "the API's audit log", apiAudit, 1000)
			}},
		{"the OpenAPI document", req{http.MethodGet, edge.DefaultAPIPath + "/openapi.json", nil}, nil, nil},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			r, pages := tc.first, 0
			for {
				header := []string{"Authorization", site.apiAuth}
				body := r.body
				switch {
				case strings.HasPrefix(r.target, edge.DefaultAdminPath) && r.method == http.MethodPost:
					header = []string{"Authorization", site.panelAuth, "Content-Type", "application/x-www-form-urlencoded"}
					body = []byte(string(body) + "&csrf=" + url.QueryEscape(csrf))
				case strings.HasPrefix(r.target, edge.DefaultAdminPath):
					header = []string{"Authorization", site.panelAuth}
				case len(body) > 0:
					header = append(header, "Content-Type", "application/json")
				}
				site.calls()
				status, answer := site.send(t, r.method, r.target, body, header...)
				calls := site.calls()
				pages++
				t.Logf("%s %s: %d, %d store calls", r.method, cut(r.target), status, calls)
				if status != http.StatusOK && status != http.StatusSeeOther {
					t.Fatalf("%s %s: %d %.300s", r.method, r.target, status, answer)
				}
				if calls > control.MaxStoreCalls {
					t.Errorf("%s %s made %d store calls, more than control.MaxStoreCalls (%d)", r.method, cut(r.target), calls, control.MaxStoreCalls)
				}
				if tc.follow == nil {
					break
				}
				next := tc.follow(t, answer)
				if next == "" || t.Failed() {
					break
				}
				r = req{method: http.MethodGet, target: next}
			}
			if tc.done != nil {
				tc.done(t, pages)
			}
		})
	}
	if logs := site.logs(); strings.Contains(logs, "control.MaxStoreCalls") {
		t.Errorf("a request met the budget of store calls:\n%s", logs)
	}
}

// link is the address in the first match of re in a panel's page, or "".
func link(re *regexp.Regexp, page []byte) string {
	m := re.FindSubmatch(page)
	if m == nil {
		return ""
	}
	return html.UnescapeString(string(m[1]))
}

// checkNewestFirst fails the test unless times (formatted to sort as
// text) are want entries, none newer than the one before.
func checkNewestFirst(t *testing.T, what string, times []string, want int) {
	t.Helper()
	if len(times) != want {
		t.Errorf("%s: %d entries over the pages, want %d", what, len(times), want)
	}
	for i := 1; i < len(times); i++ {
		if times[i] > times[i-1] {
			t.Errorf("%s: entry %d at %s is newer than the one before, at %s", what, i, times[i], times[i-1])
			return
		}
	}
}

// cut keeps a long address readable in a message.
func cut(s string) string {
	if len(s) > 100 {
		return s[:100] + "…"
	}
	return s
}

// TestOperatorRequestsWithinTheBudgetNative counts the store calls of
// every operator request served natively by edge.Handler, at 50 rooms with
// full audit logs.
func TestOperatorRequestsWithinTheBudgetNative(t *testing.T) {
	e := newNativeEnv(t)
	const password = "a-native-admin-password-of-32-chars!"
	e.secrets[edge.SecretAdminPassword] = password
	var names []string
	for i := 0; i < budgetRooms; i++ {
		r := budgetRoom(i)
		names = append(names, r[0])
		e.config[edge.KeyRoomPrefix+r[0]] = r[1]
	}
	e.config[edge.KeyRooms] = strings.Join(names, ",")
	fillAuditLogs(t, &store.Upstash{URL: e.config[edge.KeyUpstashURL], Token: redistest.Token, Transport: native.Upstash{}}, names, e.now)
	checkOperatorBudget(t, operatorSite{
		send: func(t *testing.T, method, target string, body []byte, header ...string) (int, []byte) {
			w := e.serve(t, "192.0.2.1", method, target, body, header...)
			return w.Code, w.Body.Bytes()
		},
		calls:     func() int { return devstack.TakeCalls(e.upstash) },
		logs:      e.logs.String,
		apiAuth:   "Bearer " + apiToken,
		panelAuth: "Basic " + base64.StdEncoding.EncodeToString([]byte("operator:"+password)),
	}, names)
}

// TestOperatorRequestsWithinTheBudgetThroughTheWasm counts them through
// the wasm under test in the local Compute host.
func TestOperatorRequestsWithinTheBudgetThroughTheWasm(t *testing.T) {
	var rooms [][2]string
	var names []string
	for i := 0; i < budgetRooms; i++ {
		rooms = append(rooms, budgetRoom(i))
		names = append(names, rooms[i][0])
	}
	e := startWasmRooms(t, rooms...)
	fillAuditLogs(t, e.stack.Store(), names, time.Now())
	password := string(e.stack.Manifest.SecretStores[devstack.SecretStore][edge.SecretAdminPassword])
	checkOperatorBudget(t, operatorSite{
		send: func(t *testing.T, method, target string, body []byte, header ...string) (int, []byte) {
			status, _, b := e.send(t, "127.0.0.1", method, target, body, header...)
			return status, b
		},
		calls:     e.stack.StoreCalls,
		logs:      e.logs.String,
		apiAuth:   "Bearer " + e.token,
		panelAuth: "Basic " + base64.StdEncoding.EncodeToString([]byte("operator:"+password)),
	}, names)
}
