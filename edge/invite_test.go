package edge

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"net/url"
	"strings"
	"testing"
	"time"

	"github.com/edgequeue/waitingroom/queue"
	"github.com/edgequeue/waitingroom/store"
	"github.com/fastly/compute-sdk-go/fsthttp"
	"github.com/fastly/compute-sdk-go/fsttest"
)

// inviteRooms: a shop with a tickets room before it on the same host, a
// room without a priority lane, a closed one and one that fails open.
var inviteRooms = mapConfig{
	KeyRooms:                  "tickets, shop, off, closed, open",
	KeyUpstashURL:             "https://eu1-real-12345.upstash.io",
	KeyRoomPrefix + "tickets": `{"hosts":["shop.example.com"],"paths":["/tickets/"],"max_active_users":10}`,
	KeyRoomPrefix + "shop":    `{"hosts":["shop.example.com"],"paths":["/"],"bypass_paths":["/static/"],"max_active_users":10}`,
	KeyRoomPrefix + "off":     `{"hosts":["off.test"],"paths":["/"],"max_active_users":10,"priority_share":0}`,
	KeyRoomPrefix + "closed":  `{"hosts":["closed.test"],"paths":["/"],"mode":"reject"}`,
	KeyRoomPrefix + "open":    `{"hosts":["open.test"],"paths":["/"],"max_active_users":10,"on_store_error":"open"}`,
}

// laneTransport answers every store call with one script reply (ticket
// and outcome; outcome -1: the store is down) and counts the calls.
type laneTransport struct {
	ticket, outcome int64
	ops             *[]string
}

func (l laneTransport) RoundTrip(_ context.Context, r store.Request) (store.Response, error) {
	var args []string
	json.Unmarshal(r.Body, &args)
	op := "?"
	if len(args) > 14 { // EVALSHA, its digest, 11, the eleven keys, the op
		op = args[14]
	}
	*l.ops = append(*l.ops, op)
	if l.outcome < 0 {
		return store.Response{}, errors.New("the store is down")
	}
	vals := make([]any, replyValues)
	for i := range vals {
		vals[i] = 0
	}
	vals[0], vals[1], vals[2], vals[4], vals[replyOutcome] = 7, 50, 20, l.ticket, l.outcome
	vals[8], vals[9] = 30, time.Unix(1_700_000_000, 0).Add(-time.Minute).UnixMilli()
	vals[14], vals[15] = -l.ticket, 1
	vals[replyKey] = ""
	vals[21], vals[22], vals[23] = -1, -1, -1 // no overrides
	b, _ := json.Marshal(map[string][]any{"result": vals})
	return store.Response{Status: 200, Body: b}, nil
}

// inviteCase is a service over inviteRooms whose store answers as told.
type inviteCase struct {
	*adminCase
	ops  []string
	keys *queue.KeySet
}

func newInviteCase(t *testing.T, ticket, outcome int64) *inviteCase {
	t.Helper()
	c := &inviteCase{adminCase: newAdminCase(goodAdminPassword)}
	c.svc.Config = inviteRooms
	c.svc.Upstash = laneTransport{ticket: ticket, outcome: outcome, ops: &c.ops}
	var err error
	if c.keys, err = queue.ParseKeySet(testKeys); err != nil {
		t.Fatal(err)
	}
	return c
}

// code mints an invite for room and path, valid around the service's
// clock unless changed.
func (c *inviteCase) code(t *testing.T, room, to string, change func(*queue.Invite)) string {
	t.Helper()
	inv := queue.Invite{ID: "inv1", Room: room, Uses: 1, To: to, IssuedAt: c.now.Add(-time.Hour), Expires: c.now.Add(time.Hour)}
	if change != nil {
		change(&inv)
	}
	code, err := c.keys.MintInvite(inv)
	if err != nil {
		t.Fatal(err)
	}
	return code
}

// follow follows an invite link from ip.
func (c *inviteCase) follow(t *testing.T, method, scheme, host, ip, query string) *fsttest.ResponseRecorder {
	t.Helper()
	r := hostileRequest(t, method, scheme, host, InvitePath+query)
	r.RemoteAddr = ip
	r.Header.Set("User-Agent", "test browser")
	w := fsttest.NewRecorder()
	c.svc.ServeHTTP(context.Background(), w, r)
	return w
}

func TestInviteLinks(t *testing.T) {
	const waiting, called, spent, down = 0, 1, 3, -1
	tests := []struct {
		name          string
		method        string
		scheme, host  string
		query         func(c *inviteCase) string
		outcome       int64
		status        int
		location      string
		pass          queue.PassKind
		page, log     string
		storeCalls    int
		refusedCounts bool
	}{
		{"a place in the lane", "GET", "https", "shop.example.com", func(c *inviteCase) string { return "?code=" + c.code(t, "shop", "/sale/", nil) },
			waiting, fsthttp.StatusSeeOther, "/sale/", queue.Ticket, "", "room shop: invite inv1: wait (invited)", 1, false},
		{"called at once", "GET", "https", "shop.example.com", func(c *inviteCase) string { return "?code=" + c.code(t, "shop", "/sale/", nil) },
			called, fsthttp.StatusSeeOther, "/sale/", queue.Session, "", "room shop: invite inv1: admit (invited and called)", 1, false},
		{"used up", "GET", "https", "shop.example.com", func(c *inviteCase) string { return "?code=" + c.code(t, "shop", "/sale/", nil) },
			spent, fsthttp.StatusGone, "", "", "This invitation has been used", "used up: all 1 uses of invite inv1 are taken", 1, true},
		{"store down", "GET", "https", "shop.example.com", func(c *inviteCase) string { return "?code=" + c.code(t, "shop", "/sale/", nil) },
			down, fsthttp.StatusServiceUnavailable, "", "", "", "room shop: invite inv1: busy", 1, false},
		{"store down, room open", "GET", "https", "open.test", func(c *inviteCase) string { return "?code=" + c.code(t, "open", "/", nil) },
			down, fsthttp.StatusSeeOther, "/", "", "", "failing open", 1, false},
		{"a closed room", "GET", "https", "closed.test", func(c *inviteCase) string { return "?code=" + c.code(t, "closed", "/", nil) },
			waiting, fsthttp.StatusServiceUnavailable, "", "", "Closed for now", "", 0, false},
		{"tampered", "GET", "https", "shop.example.com", func(c *inviteCase) string { return "?code=" + c.code(t, "shop", "/sale/", nil) + "x" },
			waiting, fsthttp.StatusBadRequest, "", "", "This invitation link is not valid", "not a code signed by this site", 0, true},
		{"no code", "GET", "https", "shop.example.com", func(*inviteCase) string { return "" },
			waiting, fsthttp.StatusBadRequest, "", "", "This invitation link is not valid", "invite refused", 0, true},
		{"a pass for a code", "GET", "https", "shop.example.com", func(c *inviteCase) string {
			tok, _ := c.keys.Sign(queue.Pass{Kind: queue.Ticket, Room: "shop", Number: 1, IssuedAt: c.now, Expires: c.now.Add(time.Hour)})
			return "?code=" + tok
		}, waiting, fsthttp.StatusBadRequest, "", "", "This invitation link is not valid", "not an invite", 0, true},
		{"expired", "GET", "https", "shop.example.com", func(c *inviteCase) string {
			return "?code=" + c.code(t, "shop", "/sale/", func(i *queue.Invite) { i.Expires = c.now.Add(-time.Second) })
		}, waiting, fsthttp.StatusGone, "", "", "This invitation has expired", "expired", 0, true},
		{"not yet valid", "GET", "https", "shop.example.com", func(c *inviteCase) string {
			return "?code=" + c.code(t, "shop", "/sale/", func(i *queue.Invite) { i.NotBefore = c.now.Add(time.Minute) })
		}, waiting, fsthttp.StatusForbidden, "", "", "This invitation is not valid yet", "not valid yet", 0, true},
		{"an unknown room", "GET", "https", "shop.example.com", func(c *inviteCase) string { return "?code=" + c.code(t, "gone", "/", nil) },
			waiting, fsthttp.StatusNotFound, "", "", "This invitation is not valid here", `no room "gone"`, 0, true},
		{"another host", "GET", "https", "other.test", func(c *inviteCase) string { return "?code=" + c.code(t, "shop", "/sale/", nil) },
			waiting, fsthttp.StatusNotFound, "", "", "This invitation is not valid here", `no room "shop" takes "/sale/" on host "other.test"`, 0, true},
		{"a path an earlier room takes", "GET", "https", "shop.example.com", func(c *inviteCase) string { return "?code=" + c.code(t, "shop", "/tickets/a", nil) },
			waiting, fsthttp.StatusNotFound, "", "", "This invitation is not valid here", "", 0, true},
		{"a bypass path", "GET", "https", "shop.example.com", func(c *inviteCase) string { return "?code=" + c.code(t, "shop", "/static/a.css", nil) },
			waiting, fsthttp.StatusNotFound, "", "", "This invitation is not valid here", "", 0, true},
		{"a room without a priority lane", "GET", "https", "off.test", func(c *inviteCase) string { return "?code=" + c.code(t, "off", "/", nil) },
			waiting, fsthttp.StatusNotFound, "", "", "This invitation is not valid here", "the room has no priority lane", 0, true},
		{"a HEAD (a link checker)", "HEAD", "https", "shop.example.com", func(c *inviteCase) string { return "?code=" + c.code(t, "shop", "/sale/", nil) },
			waiting, fsthttp.StatusMethodNotAllowed, "", "", "", "", 0, false},
		{"a POST", "POST", "https", "shop.example.com", func(c *inviteCase) string { return "?code=" + c.code(t, "shop", "/sale/", nil) },
			waiting, fsthttp.StatusMethodNotAllowed, "", "", "", "", 0, false},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			c := newInviteCase(t, -3, tc.outcome)
			w := c.follow(t, tc.method, tc.scheme, tc.host, "192.0.2.7", tc.query(c))
			if w.Code != tc.status || w.HeaderMap.Get("Location") != tc.location {
				t.Fatalf("%d Location %q, want %d %q; body %s; log %q", w.Code, w.HeaderMap.Get("Location"), tc.status, tc.location, w.Body, c.logs)
			}
			if len(c.ops) != tc.storeCalls {
				t.Fatalf("store calls %q, want %d", c.ops, tc.storeCalls)
			}
			for _, op := range c.ops {
				if op != "vip" {
					t.Fatalf("store call %q, want vip", op)
				}
			}
			if !strings.Contains(w.Body.String(), tc.page) {
				t.Fatalf("page %s, want %q", w.Body, tc.page)
			}
			if tc.log != "" && !strings.Contains(strings.Join(c.logs, "\n"), tc.log) {
				t.Fatalf("log %q, want %q", c.logs, tc.log)
			}
			for _, l := range c.logs {
				if strings.ContainsAny(l, "\r\n") {
					t.Fatalf("log line %q spans lines", l)
				}
			}
			if n := len(c.limits.events[badInvites+"|192.0.2.7"]); (n == 1) != tc.refusedCounts {
				t.Fatalf("refusals counted %d, want counted %v", n, tc.refusedCounts)
			}
			if w.HeaderMap.Get("Cache-Control") != "no-store" {
				t.Fatalf("Cache-Control %q", w.HeaderMap.Get("Cache-Control"))
			}
			cookie := w.HeaderMap.Get("Set-Cookie")
			if tc.pass == "" {
				if cookie != "" {
					t.Fatalf("cookie %q set", cookie)
				}
				return
			}
			if !strings.HasPrefix(cookie, "wr_shop=") || !strings.Contains(cookie, "; HttpOnly; Secure; SameSite=Lax") {
				t.Fatalf("cookie %q", cookie)
			}
			r := hostileRequest(t, "GET", "https", "shop.example.com", "/sale/")
			r.RemoteAddr = "192.0.2.7"
			r.Header.Set("User-Agent", "test browser")
			v := testRequest(&c.svc).visitor(r, &queue.Room{Name: "shop", BindSession: queue.BindUserAgent})
			p, err := c.keys.Verify("shop", strings.TrimPrefix(strings.SplitN(cookie, ";", 2)[0], "wr_shop="), c.now)
			if err != nil || p.Kind != tc.pass || p.Bind != v.Bind {
				t.Fatalf("pass %+v, %v; want a %s bound to the visitor", p, err, tc.pass)
			}
			if tc.pass == queue.Ticket && p.Number != -3 || tc.pass == queue.Session && p.SessionID != "7.-3" {
				t.Fatalf("pass %+v, want priority ticket -3", p)
			}
		})
	}
}

// TestInviteLinkOverPlainHTTP is sent to https, code and all, before
// anything is read.
func TestInviteLinkOverPlainHTTP(t *testing.T) {
	c := newInviteCase(t, -1, 0)
	code := c.code(t, "shop", "/sale/", nil)
	w := c.follow(t, "GET", "http", "shop.example.com", "192.0.2.7", "?code="+code)
	if w.Code != fsthttp.StatusPermanentRedirect || w.HeaderMap.Get("Location") != "https://shop.example.com"+InvitePath+"?code="+code || len(c.ops) != 0 {
		t.Fatalf("%d Location %q, %d store calls; want 308 to https and none", w.Code, w.HeaderMap.Get("Location"), len(c.ops))
	}
}

// TestBadInviteLinksArePenalized: ten refused links a minute are mistakes;
// the eleventh puts the client in the penalty box, where even a good link
// is answered 429 before its code is read, for five minutes. Other
// clients are not affected.
func TestBadInviteLinksArePenalized(t *testing.T) {
	c := newInviteCase(t, -1, 0)
	const ip = "203.0.113.9"
	good := "?code=" + url.QueryEscape(c.code(t, "shop", "/sale/", nil))
	for i := 1; i <= maxBadInvites+1; i++ {
		c.now = c.now.Add(time.Second)
		if w := c.follow(t, "GET", "https", "shop.example.com", ip, fmt.Sprintf("?code=guess%d", i)); w.Code != fsthttp.StatusBadRequest {
			t.Fatalf("bad code %d: %d", i, w.Code)
		}
	}
	logs := len(c.logs)
	w := c.follow(t, "GET", "https", "shop.example.com", ip, good)
	if w.Code != fsthttp.StatusTooManyRequests || w.HeaderMap.Get("Retry-After") != "300" || len(c.ops) != 0 {
		t.Fatalf("boxed client's good link: %d Retry-After %q, %d store calls; want 429, 300, none", w.Code, w.HeaderMap.Get("Retry-After"), len(c.ops))
	}
	if len(c.logs) != logs+1 || !strings.Contains(c.logs[logs], "more than 10 bad invite links") {
		t.Fatalf("log %q", c.logs[logs:])
	}
	if w := c.follow(t, "GET", "https", "shop.example.com", "203.0.113.10", good); w.Code != fsthttp.StatusSeeOther {
		t.Fatalf("another client's good link: %d", w.Code)
	}
	c.now = c.now.Add(badInvitePenalty + time.Second)
	if w := c.follow(t, "GET", "https", "shop.example.com", ip, good); w.Code != fsthttp.StatusSeeOther {
		t.Fatalf("after the penalty: %d", w.Code)
	}
	// Limits that fail limit nothing, and say so.
	c.limits.err = errors.New("erl down")
	if w := c.follow(t, "GET", "https", "shop.example.com", ip, "?code=x"); w.Code != fsthttp.StatusBadRequest ||
		!strings.Contains(strings.Join(c.logs, "\n"), "bad invite links not limited") {
		t.Fatalf("with failing limits: %d, log %q", w.Code, c.logs)
	}
}

// TestPriorityPlaceOnTheQueuePage: a visitor holding a priority ticket
// sees a priority place, in the lane's own numbers.
func TestPriorityPlaceOnTheQueuePage(t *testing.T) {
	c := newInviteCase(t, -3, 0)
	r := hostileRequest(t, "GET", "https", "shop.example.com", "/sale/")
	r.RemoteAddr = "192.0.2.7"
	r.Header.Set("User-Agent", "test browser")
	v := testRequest(&c.svc).visitor(r, &queue.Room{Name: "shop", BindSession: queue.BindUserAgent})
	tok, err := c.keys.Sign(queue.Pass{Kind: queue.Ticket, Room: "shop", Number: -3, Epoch: 7, Bind: v.Bind, IssuedAt: c.now, Expires: c.now.Add(time.Hour)})
	if err != nil {
		t.Fatal(err)
	}
	r.Header.Set("Cookie", "wr_shop="+tok)
	w := fsttest.NewRecorder()
	c.svc.ServeHTTP(context.Background(), w, r)
	body := w.Body.String()
	if w.Code != fsthttp.StatusOK || !strings.Contains(body, "You hold a priority place") || !strings.Contains(body, "up to 20% of the places") ||
		!strings.Contains(body, "#P3") || !strings.Contains(body, "#P1") {
		t.Fatalf("%d %s", w.Code, body)
	}
	r.Header.Set("Accept", "application/json")
	w = fsttest.NewRecorder()
	c.svc.ServeHTTP(context.Background(), w, r)
	var doc placeJSON
	if err := json.Unmarshal(w.Body.Bytes(), &doc); err != nil || !doc.Priority || doc.Ticket != -3 || doc.NowServing != 1 || doc.Ahead != 1 || doc.Issued != 3 {
		t.Fatalf("%s: %+v, %v", w.Body, doc, err)
	}
}
