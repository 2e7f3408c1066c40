package admin

import (
	"context"
	"encoding/base64"
	"errors"
	"fmt"
	"html"
	"net/url"
	"regexp"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/edgequeue/waitingroom/control"
	"github.com/edgequeue/waitingroom/queue"
	"github.com/edgequeue/waitingroom/store"
	"github.com/fastly/compute-sdk-go/fsthttp"
	"github.com/fastly/compute-sdk-go/fsttest"
)

// recordingOp is the operator behind the panel in these tests: it answers
// readings from its fields and records every action it is asked for. The
// real control.Operator is driven through the panel against Redis in the
// tools module (integration, paneltest).
type recordingOp struct {
	stats   control.Stats
	points  []control.Point
	audit   []store.AuditEntry
	readErr error // every reading fails with it
	actErr  error // every action fails with it
	did     []string
	read    []string // the rooms read
	cursors []string // the audit cursors asked for
}

func (o *recordingOp) Overview(_ context.Context, room string, _ time.Duration) (control.Stats, []control.Point, error) {
	o.read = append(o.read, room)
	st := o.stats
	st.Room = room
	return st, o.points, o.readErr
}

// Audit pages through audit; its cursors are offsets, which the panel
// takes as they come.
func (o *recordingOp) Audit(_ context.Context, cursor string, limit int) (control.AuditPage, error) {
	o.cursors = append(o.cursors, cursor)
	if o.readErr != nil {
		return control.AuditPage{}, o.readErr
	}
	offset, err := strconv.Atoi(cursor)
	if cursor != "" && (err != nil || offset < 1) {
		return control.AuditPage{}, &control.InputError{Field: "cursor", Message: "is not one this audit log gave"}
	}
	page := control.AuditPage{Entries: o.audit[min(offset, len(o.audit)):min(offset+limit, len(o.audit))]}
	if offset+limit < len(o.audit) {
		page.Next = strconv.Itoa(offset + limit)
	}
	return page, nil
}

func (o *recordingOp) act(format string, args ...any) (store.Line, error) {
	o.did = append(o.did, fmt.Sprintf(format, args...))
	return store.Line{}, o.actErr
}

func (o *recordingOp) Admit(_ context.Context, room string, n int64, who store.Actor) (store.Line, error) {
	return o.act("admit %s %d by %s/%s", room, n, who.Via, who.Client)
}

func (o *recordingOp) Control(_ context.Context, room string, c store.Control, who store.Actor) (store.Line, error) {
	return o.act("%s %s by %s/%s", c, room, who.Via, who.Client)
}

func (o *recordingOp) SetLimits(_ context.Context, room string, l control.Limits, who store.Actor) (store.Line, error) {
	show := func(set bool, v any) string {
		if !set {
			return "-"
		}
		return fmt.Sprint(v)
	}
	return o.act("limits %s cap=%s rate=%s burst=%s mode=%s", room,
		show(l.MaxActiveUsers != nil, deref(l.MaxActiveUsers)), show(l.NewUsersPerMinute != nil, deref(l.NewUsersPerMinute)),
		show(l.Burst != nil, deref(l.Burst)), show(l.Mode != nil, deref(l.Mode)))
}

func deref[T any](p *T) (v T) {
	if p != nil {
		v = *p
	}
	return v
}

func (o *recordingOp) ClearOverrides(_ context.Context, room string, who store.Actor) (store.Line, error) {
	return o.act("clear %s", room)
}

func (o *recordingOp) Reset(_ context.Context, room, confirm string, who store.Actor) (store.Line, error) {
	return o.act("reset %s confirm=%q", room, confirm)
}

const (
	password = "a-password-of-24-letters"
	hostile  = `<script>alert("x")</script>&'`
)

var now = time.Date(2025, 3, 1, 15, 59, 30, 0, time.UTC)

func ptr[T any](v T) *T { return &v }

// newPanel is a panel over op with a room "shop" and one whose name is
// hostile.
func newPanel(op *recordingOp) *Panel {
	var logs []string
	return &Panel{
		Path:  "/_wr/admin",
		Rooms: []*queue.Room{{Name: "shop", Mode: queue.Fifo}, {Name: hostile, Mode: queue.Fifo}},
		Op:    op, Actor: store.Actor{Via: "panel", Client: "c0ffee"},
		Password: []byte(password), CSRFKey: []byte("csrf-key"), Now: now,
		Logf: func(format string, args ...any) { logs = append(logs, fmt.Sprintf(format, args...)) },
	}
}

func serve(t *testing.T, p *Panel, method, target, form string) *fsttest.ResponseRecorder {
	t.Helper()
	var body *strings.Reader
	if form != "" {
		body = strings.NewReader(form)
	} else {
		body = strings.NewReader("")
	}
	r, err := fsthttp.NewRequest(method, "https://shop.example"+target, body)
	if err != nil {
		t.Fatal(err)
	}
	r.Header.Set("Authorization", "Basic "+base64.StdEncoding.EncodeToString([]byte("op:"+password)))
	w := fsttest.NewRecorder()
	p.ServeHTTP(context.Background(), w, r)
	return w
}

func liveStats() control.Stats {
	return control.Stats{
		ActiveSessions: 3, MaxSessions: 5, QueueLength: 12, Called: 1, Issued: 20, NowServing: 8, AdmittedLastMinute: 4,
		AvgWaitSeconds: ptr(75.0), P50WaitSeconds: ptr(61.0), P90WaitSeconds: ptr(3725.0), ETALastInLineSeconds: ptr(12.5),
		Mode: "random", Epoch: 7, StoreLatencyMS: 3.14159,
		Configured: control.Limits{MaxActiveUsers: ptr(5), NewUsersPerMinute: ptr(30.0), Burst: ptr(2), Mode: ptr("fifo")},
		Overrides:  control.Limits{Mode: ptr("random")},
		Effective:  control.Limits{MaxActiveUsers: ptr(5), NewUsersPerMinute: ptr(30.0), Burst: ptr(2), Mode: ptr("random")},
	}
}

func TestOverview(t *testing.T) {
	for _, tc := range []struct {
		name   string
		op     *recordingOp
		target string
		code   int
		want   []string
		not    []string
	}{
		{
			name: "a live room", op: &recordingOp{stats: liveStats(), points: minutes(90, func(i int) control.Point { return control.Point{Joins: 3} })},
			target: "/_wr/admin", code: 200,
			want: []string{
				`<meta http-equiv="refresh" content="30">`,
				`Updated at <time datetime="2025-03-01T15:59:30Z">15:59:30 UTC, 1 March 2025</time>`,
				`<a href="/_wr/admin?refresh=off">Turn automatic refresh off</a>`,
				`<tr><td>shop</td><td>random</td><td>12</td><td>8</td><td>20</td><td>3</td><td>1</td><td>5</td><td>30</td><td>admitting</td></tr>`,
				"<dt>Active sessions</dt><dd>3 of 5</dd>",
				"<dd>average 1 min 15 s, median 1 min 1 s, p90 1 h 2 min</dd>",
				"<dd>12.5 s</dd>", "<dd>3.1 ms</dd>",
				`<tr><th scope="row">Mode</th><td>fifo</td><td>random</td><td>random</td></tr>`,
				`<tr><th scope="row">Burst</th><td>2</td><td>not set</td><td>2</td></tr>`,
				`<form method="post" action="/_wr/admin/reset"><input type="hidden" name="csrf" value="`,
				`<label for="room-0-confirm">Room name, to confirm the reset</label> <input id="room-0-confirm" name="confirm"`,
				`<label for="room-0-max_active_users">Capacity (0: no cap)</label><input id="room-0-max_active_users" name="max_active_users" type="number" min="0" step="1">`,
				`aria-labelledby="room-0-hour-flow-title room-0-hour-flow-desc"`, `id="room-0-day-refused-title"`,
				"joins: latest 3, highest 3, total 180.",   // the hour: 60 minutes
				"joins: latest 30, highest 30, total 270.", // the day: 90 minutes in 10-minute slots
				"No operator actions are recorded yet.",
			},
			not: []string{"<script>", "Older entries", "Newer entries"},
		},
		{
			name: "refresh off", op: &recordingOp{stats: liveStats()}, target: "/_wr/admin?refresh=off", code: 200,
			want: []string{"Automatic refresh is off. <a href=\"/_wr/admin\">Refresh every 30 seconds</a>",
				`action="/_wr/admin/admit?refresh=off"`},
			not: []string{`http-equiv="refresh"`},
		},
		{
			name: "the store down", op: &recordingOp{readErr: errors.New("store unavailable: <timeout>")}, target: "/_wr/admin", code: 200,
			want: []string{`<tr><td>shop</td><td colspan="9">store did not answer: store unavailable: &lt;timeout&gt;</td></tr>`,
				"The history could not be read: store unavailable: &lt;timeout&gt;",
				"The audit log could not be read: store unavailable: &lt;timeout&gt;",
				`name="csrf"`},
			not: []string{"<timeout>"},
		},
		{name: "a wrong refresh", op: &recordingOp{}, target: "/_wr/admin?refresh=sometimes", code: 400,
			want: []string{"refresh must be off, or left out; not &#34;sometimes&#34;.", `<a href="/_wr/admin">Back to the panel</a>`}},
		{name: "a page of rooms of zero", op: &recordingOp{}, target: "/_wr/admin?rooms_page=0", code: 400,
			want: []string{"rooms_page must be a whole number from 1 to 1; not &#34;0&#34;."}},
		{name: "a page of rooms past the last", op: &recordingOp{}, target: "/_wr/admin?rooms_page=2", code: 400, want: []string{"from 1 to 1"}},
		{name: "a page of rooms not a number", op: &recordingOp{}, target: "/_wr/admin?rooms_page=%3Cb%3E", code: 400,
			want: []string{"not &#34;&lt;b&gt;&#34;"}, not: []string{"<b>"}},
		{name: "an audit cursor the panel did not give", op: &recordingOp{}, target: "/_wr/admin?audit=%3Cb%3E", code: 400,
			want: []string{"audit is not one this audit log gave.", `<a href="/_wr/admin">Back to the panel</a>`}, not: []string{"<b>"}},
		{name: "an unknown page", op: &recordingOp{}, target: "/_wr/admin/%3Cscript%3E", code: 404,
			want: []string{"The panel has no page &#34;&lt;script&gt;&#34;."}, not: []string{"<script>"}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			w := serve(t, newPanel(tc.op), fsthttp.MethodGet, tc.target, "")
			body := w.Body.String()
			if w.Code != tc.code || !strings.HasPrefix(w.Header().Get("Content-Type"), "text/html") {
				t.Fatalf("%d %s, want %d and HTML:\n%s", w.Code, w.Header().Get("Content-Type"), tc.code, body)
			}
			checkPage(t, body, tc.want, tc.not)
			checkLabels(t, body)
		})
	}
}

// TestHostileRoomName: a room name is the operator's, but escaping it
// everywhere costs nothing and keeps a typo in the config from breaking
// the page or the forms.
func TestHostileRoomName(t *testing.T) {
	w := serve(t, newPanel(&recordingOp{stats: liveStats()}), fsthttp.MethodGet, "/_wr/admin", "")
	body := w.Body.String()
	if strings.Contains(body, "<script>") || strings.Contains(body, `alert("x")`) {
		t.Fatalf("the hostile room name is not escaped:\n%s", body)
	}
	esc := `&lt;script&gt;alert(&#34;x&#34;)&lt;/script&gt;&amp;&#39;`
	for _, s := range []string{
		"<h2 id=\"room-1-h\">Room " + esc + "</h2>",
		`<input type="hidden" name="room" value="` + esc + `">`,
		"<tr><td>" + esc + "</td>",
		`<a href="#room-1">` + esc + "</a>",
	} {
		if !strings.Contains(body, s) {
			t.Errorf("no %q in\n%s", s, body)
		}
	}
	// The hidden field posts the name back unharmed.
	op := &recordingOp{}
	p := newPanel(op)
	if w := post(t, p, "pause", url.Values{"room": {hostile}}); w.Code != fsthttp.StatusSeeOther || w.Header().Get("Location") != "/_wr/admin#room-1" {
		t.Fatalf("pause: %d %q", w.Code, w.Header().Get("Location"))
	}
	if want := "pause " + hostile + " by panel/c0ffee"; len(op.did) != 1 || op.did[0] != want {
		t.Fatalf("did %q, want %q", op.did, want)
	}
}

// checkPage fails the test unless the page holds every string of want
// and none of not.
func checkPage(t *testing.T, body string, want, not []string) {
	t.Helper()
	for _, s := range want {
		if !strings.Contains(body, s) {
			t.Errorf("no %q in\n%s", s, body)
		}
	}
	for _, s := range not {
		if strings.Contains(body, s) {
			t.Errorf("%q in the page", s)
		}
	}
}

var labelFor = regexp.MustCompile(`<label for="([^"]+)"`)
var control_ = regexp.MustCompile(`<(input|select)([^>]*)>`)
var idAttr = regexp.MustCompile(` id="([^"]+)"`)

// checkLabels fails the test unless every visible field has a label.
func checkLabels(t *testing.T, body string) {
	t.Helper()
	labelled := map[string]bool{}
	for _, m := range labelFor.FindAllStringSubmatch(body, -1) {
		labelled[m[1]] = true
	}
	for _, m := range control_.FindAllStringSubmatch(body, -1) {
		if strings.Contains(m[2], `type="hidden"`) {
			continue
		}
		id := idAttr.FindStringSubmatch(m[2])
		if id == nil || !labelled[id[1]] {
			t.Errorf("a field without a label: %s", m[0])
		}
	}
}

// post sends a form as the panel's own page would, with a fresh CSRF
// token unless form has one.
func post(t *testing.T, p *Panel, action string, form url.Values) *fsttest.ResponseRecorder {
	t.Helper()
	if _, ok := form["csrf"]; !ok {
		form.Set("csrf", p.csrfToken(p.Now.Unix()/3600))
	}
	return serve(t, p, fsthttp.MethodPost, "/_wr/admin/"+action, form.Encode())
}

func TestActions(t *testing.T) {
	for _, tc := range []struct {
		name   string
		action string
		form   url.Values
		actErr error
		code   int
		did    string // what the operator was asked ("" for nothing)
		page   string // in the answer (HTML escaped)
	}{
		{name: "admit", action: "admit", form: url.Values{"room": {"shop"}, "n": {" 25 "}}, code: 303, did: "admit shop 25 by panel/c0ffee"},
		{name: "admit not a number", action: "admit", form: url.Values{"room": {"shop"}, "n": {"lots"}}, code: 400,
			page: "Check the field n: must be a whole number from 1 to 10000, not &#34;lots&#34;"},
		{name: "admit refused by the operator", action: "admit", form: url.Values{"room": {"shop"}, "n": {"0"}}, code: 400,
			actErr: &control.InputError{Field: "n", Message: "must be from 1 to 10000"}, did: "admit shop 0 by panel/c0ffee", page: "Check the field n: must be from 1 to 10000"},
		{name: "pause", action: "pause", form: url.Values{"room": {"shop"}}, code: 303, did: "pause shop by panel/c0ffee"},
		{name: "queue all", action: "queue_all", form: url.Values{"room": {"shop"}}, code: 303, did: "queue_all shop by panel/c0ffee"},
		{name: "resume", action: "resume", form: url.Values{"room": {"shop"}}, code: 303, did: "resume shop by panel/c0ffee"},
		{name: "limits, all", action: "limits", form: url.Values{"room": {"shop"}, "max_active_users": {"50"}, "new_users_per_minute": {"12.5"}, "burst": {"3"}, "mode": {"random"}},
			code: 303, did: "limits shop cap=50 rate=12.5 burst=3 mode=random"},
		{name: "limits, blanks left as they are", action: "limits", form: url.Values{"room": {"shop"}, "max_active_users": {""}, "new_users_per_minute": {"0"}, "burst": {" "}, "mode": {""}},
			code: 303, did: "limits shop cap=- rate=0 burst=- mode=-"},
		{name: "limits, capacity not whole", action: "limits", form: url.Values{"room": {"shop"}, "max_active_users": {"2.5"}}, code: 400,
			page: "Check the field max_active_users: must be a whole number, not &#34;2.5&#34;"},
		{name: "limits, rate not a number", action: "limits", form: url.Values{"room": {"shop"}, "new_users_per_minute": {"fast"}}, code: 400,
			page: "Check the field new_users_per_minute: must be a number"},
		{name: "limits, burst not whole", action: "limits", form: url.Values{"room": {"shop"}, "burst": {"1e3"}}, code: 400, page: "Check the field burst"},
		{name: "limits, mode locked", action: "limits", form: url.Values{"room": {"shop"}, "mode": {"reject"}}, code: 409,
			actErr: control.ErrModeLocked, did: "limits shop cap=- rate=- burst=- mode=reject",
			page: "No live value can be set: the room is configured with mode reject; change its mode in the config store."},
		{name: "clear", action: "clear", form: url.Values{"room": {"shop"}}, code: 303, did: "clear shop"},
		{name: "reset", action: "reset", form: url.Values{"room": {"shop"}, "confirm": {"shop"}}, code: 303, did: `reset shop confirm="shop"`},
		{name: "reset, wrong confirmation", action: "reset", form: url.Values{"room": {"shop"}, "confirm": {"Shop"}}, code: 400,
			actErr: control.ErrConfirm, did: `reset shop confirm="Shop"`,
			page: "The room was not reset: the confirmation must be the room&#39;s name, &#34;shop&#34;, exactly."},
		{name: "an unknown room", action: "pause", form: url.Values{"room": {"<b>nope</b>"}}, code: 404, actErr: control.ErrNoRoom,
			did: "pause <b>nope</b> by panel/c0ffee", page: "There is no room &#34;&lt;b&gt;nope&lt;/b&gt;&#34;."},
		{name: "the store down", action: "resume", form: url.Values{"room": {"shop"}}, code: 503, actErr: fmt.Errorf("%w: timeout", store.ErrUnavailable),
			did: "resume shop by panel/c0ffee", page: "The store did not answer (store unavailable: timeout), so the action may not have been done."},
		{name: "no CSRF token", action: "admit", form: url.Values{"room": {"shop"}, "n": {"3"}, "csrf": {""}}, code: 403, page: "The form has expired or did not come from this panel."},
		{name: "a forged CSRF token", action: "admit", form: url.Values{"room": {"shop"}, "n": {"3"}, "csrf": {"AAAA" + strings.Repeat("x", 39)}}, code: 403, page: "did not come from this panel"},
		{name: "a token two hours old", action: "pause", form: url.Values{"room": {"shop"}, "csrf": {(&Panel{CSRFKey: []byte("csrf-key")}).csrfToken(now.Unix()/3600 - 2)}}, code: 403, page: "has expired"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			op := &recordingOp{actErr: tc.actErr}
			w := post(t, newPanel(op), tc.action, tc.form)
			if w.Code != tc.code {
				t.Fatalf("%d, want %d:\n%s", w.Code, tc.code, w.Body)
			}
			if tc.code == 303 && w.Header().Get("Location") != "/_wr/admin#room-0" {
				t.Errorf("sent to %q, want the room on the panel", w.Header().Get("Location"))
			}
			if got := strings.Join(op.did, "; "); got != tc.did {
				t.Errorf("the operator was asked %q, want %q", got, tc.did)
			}
			if !strings.Contains(w.Body.String(), tc.page) {
				t.Errorf("no %q in\n%s", tc.page, w.Body)
			}
			if tc.code != 303 && !strings.Contains(w.Body.String(), `<a href="/_wr/admin">Back to the panel</a>`) {
				t.Errorf("no way back in\n%s", w.Body)
			}
		})
	}
}

// TestActionsKeepTheView: with the refresh off, a form comes back to the
// panel with the refresh still off.
func TestActionsKeepTheView(t *testing.T) {
	p := newPanel(&recordingOp{})
	form := url.Values{"room": {"shop"}, "csrf": {p.csrfToken(now.Unix() / 3600)}}
	w := serve(t, p, fsthttp.MethodPost, "/_wr/admin/pause?refresh=off", form.Encode())
	if w.Code != 303 || w.Header().Get("Location") != "/_wr/admin?refresh=off#room-0" {
		t.Fatalf("%d %q", w.Code, w.Header().Get("Location"))
	}
	if w := serve(t, p, fsthttp.MethodGet, "/_wr/admin/pause", ""); w.Code != 405 || w.Header().Get("Allow") != "POST" {
		t.Fatalf("pause by GET: %d %v", w.Code, w.Header())
	}
}

func TestAuditLog(t *testing.T) {
	entries := make([]store.AuditEntry, 45)
	for i := range entries {
		entries[i] = store.AuditEntry{Time: now.Add(-time.Duration(i) * time.Minute), Room: "shop", Via: "api", Client: "ab12", Action: "pause",
			Before: store.AuditState{Epoch: 1, Issued: 9, Admitted: 4}, After: store.AuditState{Epoch: 1, Issued: 9, Admitted: 4, Paused: true}}
	}
	entries[0] = store.AuditEntry{Time: now, Room: hostile, Via: "panel", Client: `"><i>`, Action: "limits<script>",
		Before: store.AuditState{Epoch: 1, Overrides: store.Overrides{Burst: ptr(2)}},
		After:  store.AuditState{Epoch: 1, Overrides: store.Overrides{Capacity: ptr(40), Burst: ptr(2), Mode: "random"}}}
	entries[1].Action, entries[1].N = "admit", 25
	for _, tc := range []struct {
		query      string
		cursor     string // asked of the operator
		rows       int
		want       []string
		newer, old bool
	}{
		{query: "", cursor: "", rows: 20, old: true, want: []string{
			"These are the newest entries.",
			`<td><time datetime="2025-03-01T15:59:30Z">2025-03-01 15:59:30</time></td><td>&lt;script&gt;alert(&#34;x&#34;)&lt;/script&gt;&amp;&#39;</td><td>limits&lt;script&gt;</td><td>panel <code>&#34;&gt;&lt;i&gt;</code></td>`,
			"<td>epoch 1, issued 0, serving 0, state admitting, capacity as configured, burst 2, mode as configured</td>",
			"<td>epoch 1, issued 0, serving 0, state admitting, <strong>capacity 40</strong>, burst 2, <strong>mode random</strong></td>",
			"<td>admit 25</td>",
			"<td>epoch 1, issued 9, serving 4, <strong>state paused</strong></td>",
			`<a href="/_wr/admin?audit=20#audit" rel="next">Older entries</a>`,
		}},
		{query: "audit=20", cursor: "20", rows: 20, newer: true, old: true, want: []string{"These are the older entries.",
			`<a href="/_wr/admin#audit" rel="first">Newest entries</a>`, `<a href="/_wr/admin?audit=40#audit" rel="next">Older entries</a>`}},
		{query: "audit=20&refresh=off", cursor: "20", rows: 20, newer: true, old: true, want: []string{
			`<a href="/_wr/admin?refresh=off#audit" rel="first">Newest entries</a>`,
			`<a href="/_wr/admin?refresh=off&amp;audit=40#audit" rel="next">Older entries</a>`}},
		{query: "audit=40", cursor: "40", rows: 5, newer: true, want: []string{`<a href="/_wr/admin#audit" rel="first">Newest entries</a>`}},
		{query: "audit=60", cursor: "60", rows: 0, newer: true, want: []string{"No entries on this page."}},
	} {
		t.Run(tc.query, func(t *testing.T) {
			op := &recordingOp{stats: liveStats(), audit: entries}
			target := "/_wr/admin"
			if tc.query != "" {
				target += "?" + tc.query
			}
			body := serve(t, newPanel(op), fsthttp.MethodGet, target, "").Body.String()
			if len(op.cursors) != 1 || op.cursors[0] != tc.cursor {
				t.Errorf("asked for the audit log at %q, want %q", op.cursors, tc.cursor)
			}
			audit := body[strings.Index(body, `<section id="audit"`):]
			if n := strings.Count(audit, "<tr><td><time"); n != tc.rows {
				t.Errorf("%d rows, want %d", n, tc.rows)
			}
			if strings.Contains(audit, "<script>") || strings.Contains(audit, "<i>") {
				t.Errorf("the audit log is not escaped:\n%s", audit)
			}
			if strings.Contains(audit, "Newest entries") != tc.newer || strings.Contains(audit, "Older entries") != tc.old {
				t.Errorf("newest %v older %v, want %v and %v:\n%s", strings.Contains(audit, "Newest entries"), strings.Contains(audit, "Older entries"), tc.newer, tc.old, audit)
			}
			for _, s := range tc.want {
				if !strings.Contains(audit, s) {
					t.Errorf("no %q in\n%s", s, audit)
				}
			}
		})
	}
}

// downStore is a store that never answers.
type downStore struct{}

func (downStore) Stats(context.Context, string, store.Policy, time.Time) (store.Line, error) {
	return store.Line{}, store.ErrUnavailable
}

func (downStore) Operate(context.Context, string, store.Policy, store.Action, time.Time) (store.Line, error) {
	return store.Line{}, store.ErrUnavailable
}

func (downStore) History(context.Context, string, time.Time, time.Time) ([]store.Minute, error) {
	return nil, store.ErrUnavailable
}

func (downStore) Audit(context.Context, []store.AuditRead) ([][]store.AuditEntry, error) {
	return nil, store.ErrUnavailable
}

// TestOperatorChecks: the real operator checks what it is given before
// it asks the store, so a wrong reset confirmation, an empty set of live
// values or a bad n is refused even with the store down, and the right
// ones get as far as the store.
func TestOperatorChecks(t *testing.T) {
	for _, tc := range []struct {
		action string
		form   url.Values
		code   int
		page   string
	}{
		{"reset", url.Values{"confirm": {"shop"}}, 503, "The store did not answer"},
		{"reset", url.Values{"confirm": {""}}, 400, "the confirmation must be the room&#39;s name, &#34;shop&#34;, exactly"},
		{"reset", url.Values{"confirm": {"shop "}}, 400, "exactly"},
		{"reset", url.Values{"confirm": {"SHOP"}}, 400, "exactly"},
		{"reset", url.Values{"confirm": {hostile}}, 400, "exactly"},
		{"limits", url.Values{"burst": {""}}, 400, "Check the field limits: give at least one of"},
		{"limits", url.Values{"burst": {"-1"}}, 400, "Check the field burst: "},
		{"limits", url.Values{"mode": {"<fast>"}}, 400, "Check the field mode: must be fifo, random, passthrough or reject, got &#34;&lt;fast&gt;&#34;"},
		{"admit", url.Values{"n": {"0"}}, 400, "Check the field n: must be a whole number from 1 to 10000"},
		{"admit", url.Values{"n": {"10001"}}, 400, "Check the field n: must be a whole number from 1 to 10000"},
		{"admit", url.Values{"n": {"10000"}}, 503, "The store did not answer"},
	} {
		t.Run(tc.action+" "+tc.form.Encode(), func(t *testing.T) {
			p := newPanel(nil)
			p.Op = &control.Operator{Rooms: p.Rooms, Store: downStore{}, Now: now}
			tc.form.Set("room", "shop")
			w := post(t, p, tc.action, tc.form)
			if w.Code != tc.code || !strings.Contains(w.Body.String(), tc.page) {
				t.Fatalf("%d, want %d and %q:\n%s", w.Code, tc.code, tc.page, w.Body)
			}
		})
	}
}

// TestPagesOfRooms: a page shows roomsPerPage rooms, reads no other, and
// leads to every room's page; a form comes back to its room's page.
func TestPagesOfRooms(t *testing.T) {
	newEight := func(op *recordingOp) *Panel {
		p := newPanel(op)
		p.Rooms = nil
		for i := 0; i < 8; i++ {
			p.Rooms = append(p.Rooms, &queue.Room{Name: fmt.Sprintf("r%d", i), Mode: queue.Fifo})
		}
		return p
	}
	for _, tc := range []struct {
		query string
		read  string // the rooms read, and shown
		want  []string
		not   []string
	}{
		{"", "r0 r1 r2", []string{
			"<caption>Rooms 1 to 3 of 8, now</caption>",
			`<a href="#room-2">r2</a>, <a href="/_wr/admin?rooms_page=2#room-3">r3</a>`,
			`<a href="/_wr/admin?rooms_page=3#room-7">r7</a>`,
			`<a href="/_wr/admin?rooms_page=2" rel="next">Next rooms</a>`,
			`<section id="room-2"`,
		}, []string{"Previous rooms", `<section id="room-3"`}},
		{"rooms_page=2&refresh=off", "r3 r4 r5", []string{
			"<caption>Rooms 4 to 6 of 8, now</caption>",
			`<a href="/_wr/admin?refresh=off#room-0">r0</a>`, `<a href="#room-3">r3</a>`,
			`<a href="/_wr/admin?refresh=off" rel="prev">Previous rooms</a> <a href="/_wr/admin?refresh=off&amp;rooms_page=3" rel="next">Next rooms</a>`,
			`<a href="/_wr/admin?rooms_page=2">Refresh every 30 seconds</a>`,
			`<section id="room-5"`, `<tr><td>r5</td>`,
		}, []string{`<tr><td>r2</td>`, `<section id="room-6"`}},
		{"rooms_page=3&audit=20", "r6 r7", []string{
			"<caption>Rooms 7 to 8 of 8, now</caption>",
			`<a href="/_wr/admin?rooms_page=3#audit" rel="first">Newest entries</a>`,
			`<a href="/_wr/admin?rooms_page=2" rel="prev">Previous rooms</a>`,
		}, []string{"Next rooms"}},
	} {
		t.Run(tc.query, func(t *testing.T) {
			op := &recordingOp{stats: liveStats(), audit: make([]store.AuditEntry, 45)}
			w := serve(t, newEight(op), fsthttp.MethodGet, "/_wr/admin?"+tc.query, "")
			body := w.Body.String()
			if w.Code != 200 || strings.Join(op.read, " ") != tc.read {
				t.Fatalf("%d, read %q, want 200 and %q", w.Code, op.read, tc.read)
			}
			checkPage(t, body, tc.want, tc.not)
		})
	}
	p := newEight(&recordingOp{})
	for room, want := range map[string]string{"r1": "/_wr/admin#room-1", "r3": "/_wr/admin?rooms_page=2#room-3", "r7": "/_wr/admin?rooms_page=3#room-7"} {
		if w := post(t, p, "pause", url.Values{"room": {room}}); w.Code != fsthttp.StatusSeeOther || w.Header().Get("Location") != want {
			t.Errorf("pause %s: %d to %q, want %q", room, w.Code, w.Header().Get("Location"), want)
		}
	}
}

// TestPagesOfShardedRooms: a page of sharded rooms shows as many as their
// shards' calls fit in roomCalls, beside the audit log; the next-page links
// lead through every room once, and every room's link and form lead to its
// page.
func TestPagesOfShardedRooms(t *testing.T) {
	for _, tc := range []struct {
		shards []int
		pages  []string // the rooms read, page by page
	}{
		{[]int{8}, []string{"r0"}},
		{[]int{1, 8, 1, 1, 3, 3, 3, 2}, []string{"r0", "r1", "r2 r3 r4", "r5 r6 r7"}},
		{[]int{8, 8, 1, 7}, []string{"r0", "r1", "r2 r3"}},
		{[]int{4, 4, 4, 4}, []string{"r0 r1", "r2 r3"}},
	} {
		t.Run(fmt.Sprint(tc.shards), func(t *testing.T) {
			var rooms []*queue.Room
			for i, k := range tc.shards {
				rooms = append(rooms, &queue.Room{Name: fmt.Sprintf("r%d", i), Mode: queue.Fifo, Shards: k})
			}
			var pages []string
			for target := "/_wr/admin?refresh=off"; target != ""; {
				if len(pages) > len(rooms) {
					t.Fatalf("more pages than rooms: %q", pages)
				}
				op := &recordingOp{stats: liveStats(), audit: make([]store.AuditEntry, 45)}
				p := newPanel(op)
				p.Rooms = rooms
				w := serve(t, p, fsthttp.MethodGet, target, "")
				body := w.Body.String()
				if w.Code != 200 {
					t.Fatalf("%s: %d", target, w.Code)
				}
				cost := 0
				for _, name := range op.read {
					for _, room := range rooms {
						if room.Name == name {
							cost += control.StatsCost(room)
						}
					}
				}
				if cost > roomCalls || cost+auditCalls > control.MaxStoreCalls {
					t.Errorf("%s: rooms %q cost %d store calls, more than the %d a page's rooms may spend", target, op.read, cost, roomCalls)
				}
				if len(op.cursors) != 1 || !strings.Contains(body, `<section id="audit"`) || strings.Contains(body, "could not be read") {
					t.Errorf("%s: the audit log is not on the page (asked %q)", target, op.cursors)
				}
				pages = append(pages, strings.Join(op.read, " "))
				target = html.UnescapeString(link(body, `rel="next">Next rooms`))
			}
			if strings.Join(pages, "|") != strings.Join(tc.pages, "|") {
				t.Fatalf("pages %q, want %q", pages, tc.pages)
			}
			p := newPanel(&recordingOp{})
			p.Rooms = rooms
			for n, page := range tc.pages {
				for _, name := range strings.Fields(page) {
					i := strings.TrimPrefix(name, "r")
					want := "/_wr/admin#room-" + i
					if n > 0 {
						want = fmt.Sprintf("/_wr/admin?rooms_page=%d#room-%s", n+1, i)
					}
					if w := post(t, p, "pause", url.Values{"room": {name}}); w.Header().Get("Location") != want {
						t.Errorf("pause %s: to %q, want %q", name, w.Header().Get("Location"), want)
					}
				}
			}
		})
	}
}

// link is the address of the link whose attributes end in tail, or "".
func link(body, tail string) string {
	end := strings.Index(body, `" `+tail)
	if end < 0 {
		return ""
	}
	return body[strings.LastIndex(body[:end], `href="`)+len(`href="`) : end]
}
