package attack

import (
	"encoding/json"
	"fmt"
	"net/http"
	"strings"
	"testing"
	"time"

	"github.com/edgequeue/waitingroom/queue"
)

// invitePath is where invite links point.
const invitePath = "/_wr/invite"

// mintInvite signs an invite to the shop's priority lane for uses
// visitors, valid for an hour.
func mintInvite(e *env, id string, uses int) string {
	e.t.Helper()
	now := time.Now()
	code, err := e.keys.MintInvite(queue.Invite{ID: id, Room: "shop", Uses: uses, To: "/", IssuedAt: now.Add(-time.Minute), Expires: now.Add(time.Hour)})
	if err != nil {
		e.t.Fatal(err)
	}
	return code
}

// follow follows an invite link as a browser does: one GET, whose cookie
// it keeps.
func (v *visitor) follow(code string) answer {
	v.e.t.Helper()
	return v.do(http.MethodGet, invitePath+"?code="+code, nil)
}

// lanePlace is what a test reads of a visitor's JSON place.
type lanePlace struct {
	Status     string `json:"status"`
	Ticket     int64  `json:"ticket"`
	Ahead      int64  `json:"ahead"`
	Issued     int64  `json:"issued"`
	NowServing int64  `json:"now_serving"`
	Priority   bool   `json:"priority"`
}

// lanePoll polls v's place: "admitted" when it reached the origin.
func (v *visitor) lanePoll() lanePlace {
	v.e.t.Helper()
	a := v.get("/", "Accept", "application/json")
	if a.atOrigin() {
		return lanePlace{Status: "admitted"}
	}
	var p lanePlace
	if err := json.Unmarshal([]byte(a.body), &p); err != nil {
		v.e.t.Fatalf("poll: %s: %v", a, err)
	}
	return p
}

// ticketOf reads the ticket number in v's pass.
func ticketOf(e *env, v *visitor) int64 {
	e.t.Helper()
	c := claimsOf(e.t, v.cookies["wr_shop"])
	if c["knd"] != "ticket" {
		e.t.Fatalf("the visitor holds a %v pass, want a ticket: %v", c["knd"], c)
	}
	n, _ := c["tkt"].(float64)
	return int64(n)
}

// TestAnInvitedVisitorIsCalledAheadWithinTheShare: three visitors invited
// after ten others joined a full room are called first, but at most one
// in five admissions (priority_share's default 0.2) while the others
// wait: the line keeps moving.
func TestAnInvitedVisitorIsCalledAheadWithinTheShare(t *testing.T) {
	e := start(t, shop(oneSeat), nil)
	e.visitor().enter("/")
	regular := make([]*visitor, 10)
	for i := range regular {
		regular[i] = &visitor{e: e, ip: clientIP(0, 5, i+1)}
		// Ticket 1 is the visitor inside.
		if p := regular[i].lanePoll(); p.Status != "waiting" || p.Ticket != int64(i+2) || p.Priority {
			t.Fatalf("regular visitor %d: %+v, want waiting with ticket %d", i, p, i+2)
		}
	}
	code := mintInvite(e, "three", 3)
	invited := make([]*visitor, 3)
	for i := range invited {
		invited[i] = &visitor{e: e, ip: clientIP(0, 6, i+1)}
		a := invited[i].follow(code)
		if a.status != http.StatusSeeOther || a.header.Get("Location") != "/" {
			t.Fatalf("invited visitor %d: %s, want 303 to /", i, a)
		}
		p := invited[i].lanePoll()
		if p.Status != "waiting" || !p.Priority || p.Ticket != int64(-1-i) || p.Ahead != int64(i) || p.Issued != int64(i+1) {
			t.Fatalf("invited visitor %d: %+v, want a priority place, ticket %d, %d ahead", i, p, -1-i, i)
		}
	}
	if a := invited[2].get("/"); !strings.Contains(a.body, "You hold a priority place") || !strings.Contains(a.body, "#P3") {
		t.Fatalf("the queue page of a priority place: %s", a)
	}
	// Five admissions: one to the lane, four to the line; five more: the
	// same again.
	for round, want := range []struct{ invited, regular int }{{1, 4}, {2, 8}} {
		e.control("shop", "admit", 5)
		for i, v := range invited {
			if got, in := v.lanePoll(), i < want.invited; (got.Status == "admitted") != in {
				t.Fatalf("after %d admissions, invited visitor %d: %+v; want admitted %v", 5*(round+1), i, got, in)
			}
		}
		for i, v := range regular {
			if got, in := v.lanePoll(), i < want.regular; (got.Status == "admitted") != in {
				t.Fatalf("after %d admissions, regular visitor %d: %+v; want admitted %v", 5*(round+1), i, got, in)
			}
		}
	}
}

// TestASingleUseInviteSeatsOneClient: the first client to follow a
// single-use link gets the place; following it again, with or without the
// cookie, keeps that one place; a second client is refused with a page
// saying the invitation was used.
func TestASingleUseInviteSeatsOneClient(t *testing.T) {
	e := start(t, shop(oneSeat), nil)
	e.visitor().enter("/")
	code := mintInvite(e, "once", 1)
	first := &visitor{e: e, ip: clientIP(0, 7, 1)}
	if a := first.follow(code); a.status != http.StatusSeeOther || ticketOf(e, first) != -1 {
		t.Fatalf("the first client: %s, ticket %d; want 303 and priority ticket -1", a, ticketOf(e, first))
	}
	e.upstashCalls()
	if a := first.follow(code); a.status != http.StatusSeeOther || ticketOf(e, first) != -1 || e.upstashCalls() != 0 {
		t.Fatalf("the first client again, with its cookie: %s, ticket %d; want 303 with the same ticket and no store call", a, ticketOf(e, first))
	}
	// The same browser without its cookie (a private window) is the same
	// arrival: the same place, no second use.
	again := first.copyTo(first.ip, "")
	again.cookies = nil
	if a := again.follow(code); a.status != http.StatusSeeOther || ticketOf(e, again) != -1 {
		t.Fatalf("the first client without its cookie: %s, ticket %d; want 303 and ticket -1", a, ticketOf(e, again))
	}
	second := &visitor{e: e, ip: clientIP(0, 7, 2)}
	a := second.follow(code)
	if a.status != http.StatusGone || !strings.Contains(a.body, "This invitation has been used") || second.cookies["wr_shop"] != "" {
		t.Fatalf("a second client: %s, cookie %q; want 410 with the page, no cookie", a, second.cookies["wr_shop"])
	}
	if !strings.Contains(e.logs.String(), "used up: all 1 uses of invite once are taken") {
		t.Fatalf("no log line says why the second client was refused:\n%s", e.logs)
	}
	if p := first.lanePoll(); !p.Priority || p.Ticket != -1 || p.Issued != 1 {
		t.Fatalf("the lane after all that: %+v; want one priority ticket issued", p)
	}
}

// TestATamperedInviteIsRefusedWithoutAStoreCall: a changed code is
// refused with a page and a log line, without a store call; a client that
// keeps trying is boxed (429), good code or not.
func TestATamperedInviteIsRefusedWithoutAStoreCall(t *testing.T) {
	e := start(t, shop(oneSeat), nil)
	code := mintInvite(e, "good", 5)
	// One character of the payload changed.
	dot := strings.IndexByte(code, '.') + 10
	swap := map[bool]string{true: "B", false: "A"}[code[dot] == 'A']
	tampered := code[:dot] + swap + code[dot+1:]
	v := &visitor{e: e, ip: clientIP(0, 8, 1)}
	e.upstashCalls()
	a := v.follow(tampered)
	if a.status != http.StatusBadRequest || !strings.Contains(a.body, "This invitation link is not valid") || v.cookies["wr_shop"] != "" {
		t.Fatalf("a tampered code: %s; want 400 with the page and no cookie", a)
	}
	if n := e.upstashCalls(); n != 0 {
		t.Fatalf("a tampered code made %d store calls, want none", n)
	}
	if !strings.Contains(e.logs.String(), "not a code signed by this site") {
		t.Fatalf("no log line says why:\n%s", e.logs)
	}
	for i := 0; i < 10; i++ {
		if a := v.follow(fmt.Sprintf("guess%d", i)); a.status != http.StatusBadRequest {
			t.Fatalf("bad code %d: %s", i, a)
		}
	}
	if a := v.follow(code); a.status != http.StatusTooManyRequests || a.header.Get("Retry-After") != "300" {
		t.Fatalf("a good code after 11 bad ones in a minute: %s; want 429 with Retry-After 300", a)
	}
	if n := e.upstashCalls(); n != 0 {
		t.Fatalf("refused codes made %d store calls, want none", n)
	}
	if a := (&visitor{e: e, ip: clientIP(0, 8, 2)}).follow(code); a.status != http.StatusSeeOther {
		t.Fatalf("another client's good code: %s; want 303", a)
	}
}
