package queue

import (
	"context"
	"errors"
	"math"
	"strings"
	"testing"
	"time"

	"github.com/edgequeue/waitingroom/settings"
	"github.com/edgequeue/waitingroom/store"
)

// laneStore answers JoinPriority as told and records the calls; any other
// store call is a mistake of the gate's (the embedded nil Store fails it).
type laneStore struct {
	store.Store
	place store.Place
	err   error
	calls []laneCall
}

type laneCall struct {
	room, arrival string
	policy        store.Policy
	invite        store.Invite
}

func (s *laneStore) JoinPriority(_ context.Context, room string, p store.Policy, arrival string, inv store.Invite, _ time.Time) (store.Place, error) {
	s.calls = append(s.calls, laneCall{room, arrival, p, inv})
	return s.place, s.err
}

func TestInvitedDecisions(t *testing.T) {
	ks, _ := ParseKeySet("new:" + key2)
	line := store.Line{Epoch: 7, Issued: 100, Admitted: 40, PriorityIssued: 5, PriorityAdmitted: 2, Recent: 60, RecentSince: now.Add(-time.Minute)}
	waiting := store.Place{Ticket: -5, Outcome: store.Waiting, CallFrom: -5, CallTo: -5, Line: line}
	called := store.Place{Ticket: -5, Outcome: store.Admitted, Session: "7.-5", Line: line}
	priorityTicket := mustSign(t, ks, Pass{Kind: Ticket, Room: "shop", Number: -2, Epoch: 7, Bind: "b", IssuedAt: now, Expires: now.Add(time.Hour)})
	regularTicket := mustSign(t, ks, Pass{Kind: Ticket, Room: "shop", Number: 3, Epoch: 7, Bind: "b", IssuedAt: now, Expires: now.Add(time.Hour)})
	otherClients := mustSign(t, ks, Pass{Kind: Ticket, Room: "shop", Number: -2, Epoch: 7, Bind: "elsewhere", IssuedAt: now, Expires: now.Add(time.Hour)})
	room := func(extra string) *Room {
		r, err := ParseRoom("shop", []byte(`{"paths":["/shop/"],"max_active_users":10`+extra+`}`))
		if err != nil {
			t.Fatal(err)
		}
		return r
	}
	tests := []struct {
		name    string
		room    *Room
		invite  func(*Invite)
		passes  []string
		place   store.Place
		err     error
		action  Action
		pass    PassKind
		refused error
		calls   int
	}{
		{"a place in the lane", room(""), nil, nil, waiting, nil, Wait, Ticket, nil, 1},
		{"called at once", room(""), nil, nil, called, nil, Admit, Session, nil, 1},
		{"a regular ticket gives way to a priority one", room(""), nil, []string{regularTicket}, waiting, nil, Wait, Ticket, nil, 1},
		{"a priority ticket bound to another client is not the visitor's", room(""), nil, []string{otherClients}, waiting, nil, Wait, Ticket, nil, 1},
		{"already in the lane: sent on, no store call", room(""), nil, []string{priorityTicket}, waiting, nil, Wait, "", nil, 0},
		{"used up", room(""), nil, nil, store.Place{Outcome: store.InviteSpent, Line: line}, nil, 0, "", ErrInviteSpent, 1},
		{"store down, hold", room(""), nil, nil, store.Place{}, store.ErrUnavailable, Busy, "", nil, 1},
		{"store down, open", room(`,"on_store_error":"open"`), nil, nil, store.Place{}, store.ErrUnavailable, Admit, "", nil, 1},
		{"another room", room(""), func(i *Invite) { i.Room = "other" }, nil, waiting, nil, 0, "", ErrInviteWrongRoom, 0},
		{"a path outside the room", room(""), func(i *Invite) { i.To = "/checkout" }, nil, waiting, nil, 0, "", ErrInvitePath, 0},
		{"no priority lane", room(`,"priority_share":0`), nil, nil, waiting, nil, 0, "", ErrNoPriorityLane, 0},
		{"a closed room", room(`,"mode":"reject"`), nil, nil, waiting, nil, Closed, "", nil, 0},
		{"a room without a line", room(`,"mode":"passthrough"`), nil, nil, waiting, nil, Admit, "", nil, 0},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			st := &laneStore{place: tc.place, err: tc.err}
			g := &Gate{Store: st, Keys: ks}
			inv := goodInvite()
			inv.To = "/shop/sale"
			if tc.invite != nil {
				tc.invite(&inv)
			}
			d, err := g.Invited(context.Background(), tc.room, inv, Visitor{Passes: tc.passes, Bind: "b", Client: "192.0.2.1", Now: now})
			if len(st.calls) != tc.calls {
				t.Fatalf("%d store calls, want %d", len(st.calls), tc.calls)
			}
			if tc.refused != nil {
				if !errors.Is(err, tc.refused) || !errors.Is(err, ErrBadInvite) || d.Pass != "" {
					t.Fatalf("decision %+v, %v; want refused with %v", d, err, tc.refused)
				}
				return
			}
			if err != nil || d.Action != tc.action {
				t.Fatalf("decision %v (%s), %v; want %v", d.Action, d.Why, err, tc.action)
			}
			if tc.pass == "" {
				if d.Pass != "" {
					t.Fatalf("a pass was set: %+v", d)
				}
				return
			}
			p, err := ks.Verify("shop", d.Pass, now)
			if err != nil || p.Kind != tc.pass || p.Bind != "b" {
				t.Fatalf("pass %+v, %v; want a %s bound to the visitor", p, err, tc.pass)
			}
			if tc.pass == Ticket && (p.Number != -5 || p.Epoch != 7 || !d.Place.Priority || d.Place.Ahead != 2) {
				t.Fatalf("ticket %d place %+v; want priority ticket -5, 2 ahead", p.Number, d.Place)
			}
			if tc.pass == Session && p.SessionID != "7.-5" {
				t.Fatalf("session %q, want 7.-5", p.SessionID)
			}
			c := st.calls[0]
			if c.room != "shop" || c.invite != (store.Invite{ID: inv.ID, Uses: inv.Uses, Until: inv.Expires}) || c.policy.PriorityShare != 0.2 {
				t.Fatalf("store call %+v", c)
			}
		})
	}
}

// TestInviteArrivals: one client following a link twice is one arrival;
// another client, or another invite, is another.
func TestInviteArrivals(t *testing.T) {
	inv := goodInvite()
	other := goodInvite()
	other.ID = "another"
	v := Visitor{Bind: "b", Client: "192.0.2.1"}
	id := func(inv Invite, v Visitor) string {
		t.Helper()
		a, err := inviteArrival(inv, v)
		if err != nil || len(a) < 1 || len(a) > 128 {
			t.Fatalf("arrival %q, %v", a, err)
		}
		return a
	}
	first := id(inv, v)
	if again := id(inv, v); again != first {
		t.Errorf("the same client twice: %s then %s", first, again)
	}
	for name, a := range map[string]string{
		"another binding":         id(inv, Visitor{Bind: "c", Client: v.Client}),
		"another client":          id(inv, Visitor{Bind: v.Bind, Client: "192.0.2.2"}),
		"another invite":          id(other, v),
		"binding and client swap": id(inv, Visitor{Bind: v.Client, Client: v.Bind}),
	} {
		if a == first {
			t.Errorf("%s: the same arrival %s", name, a)
		}
	}
	if len(first) == 32 && strings.Trim(first, "0123456789abcdef") == "" {
		t.Errorf("arrival %s could be an arrival pass's id", first)
	}
	anon := Visitor{}
	if a, b := id(inv, anon), id(inv, anon); a == b {
		t.Errorf("two visitors with neither binding nor client key share the arrival %s", a)
	}
}

// TestPriorityPlaceFigures: a priority ticket counts its own lane, and
// both lanes' waits follow laneCalls.
func TestPriorityPlaceFigures(t *testing.T) {
	// One call a second.
	room := &Room{Name: "r", NewUsersPerMinute: 60, RefreshSeconds: 10, PriorityShare: 0.2}
	line := func(issued, admitted, pIssued, pAdmitted int64) store.Line {
		return store.Line{Issued: issued, Admitted: admitted, PriorityIssued: pIssued, PriorityAdmitted: pAdmitted, Recent: 60, RecentSince: now.Add(-time.Minute)}
	}
	tests := []struct {
		name     string
		share    float64
		place    store.Place
		priority bool
		ahead    int64
		wait     time.Duration
	}{
		// 3rd in the lane; 100 regular waiting: 3 priority calls come with
		// 3·0.8/0.2 = 12 regular ones.
		{"priority, both lanes busy", 0.2, store.Place{Ticket: -7, Line: line(200, 100, 10, 4)}, true, 2, 15 * time.Second},
		{"priority, few regular waiting", 0.2, store.Place{Ticket: -7, Line: line(105, 100, 10, 4)}, true, 2, 8 * time.Second},
		{"priority, none regular waiting", 0.2, store.Place{Ticket: -7, Line: line(100, 100, 10, 4)}, true, 2, 3 * time.Second},
		{"priority, half the admissions", 0.5, store.Place{Ticket: -7, Line: line(200, 100, 10, 4)}, true, 2, 6 * time.Second},
		{"priority, next", 0.2, store.Place{Ticket: -5, Line: line(200, 100, 10, 4)}, true, 0, 5 * time.Second},
		{"priority, lane switched off: behind every regular ticket", 0, store.Place{Ticket: -5, Line: line(200, 100, 10, 4)}, true, 0, 101 * time.Second},
		// 10th regular; 6 priority waiting: 10 regular calls come with up
		// to 10·0.2/0.8 = 2.5 priority ones.
		{"regular, priority waiting", 0.2, store.Place{Ticket: 110, Line: line(200, 100, 10, 4)}, false, 9, 13 * time.Second},
		{"regular, one priority waiting", 0.2, store.Place{Ticket: 110, Line: line(200, 100, 5, 4)}, false, 9, 11 * time.Second},
		{"regular, lane empty", 0.2, store.Place{Ticket: 110, Line: line(200, 100, 4, 4)}, false, 9, 10 * time.Second},
		{"regular, lane switched off", 0, store.Place{Ticket: 110, Line: line(200, 100, 10, 4)}, false, 9, 10 * time.Second},
	}
	for _, tc := range tests {
		room.PriorityShare = tc.share
		p := placeOf(room, tc.place, now)
		if tc.priority {
			room.Mode = Random
			if r := placeOf(room, tc.place, now); r.Random || r != p {
				t.Errorf("%s: in a random room %+v, want the lane's first come, first served place %+v", tc.name, r, p)
			}
			room.Mode = ""
		}
		if p.Priority != tc.priority || p.Ahead != tc.ahead || p.AheadMax != tc.ahead || !p.WaitKnown || p.Wait != tc.wait || p.WaitMin != tc.wait {
			t.Errorf("%s: priority %v ahead %d..%d wait %v..%v known %v; want %v %d %v", tc.name,
				p.Priority, p.Ahead, p.AheadMax, p.WaitMin, p.Wait, p.WaitKnown, tc.priority, tc.ahead, tc.wait)
		}
		l := tc.place.Line
		if tc.priority && (p.Admitted != l.PriorityAdmitted || p.Issued != l.PriorityIssued) {
			t.Errorf("%s: now serving %d of %d, want the lane's %d of %d", tc.name, p.Admitted, p.Issued, l.PriorityAdmitted, l.PriorityIssued)
		}
		if !tc.priority && (p.Admitted != l.Admitted || p.Issued != l.Issued) {
			t.Errorf("%s: now serving %d of %d, want the line's", tc.name, p.Admitted, p.Issued)
		}
	}
}

// TestLaneCallsKeepTheShare checks laneCalls against the store's rule
// played call by call: with both lanes full, of every run of calls the
// priority lane takes its share.
func TestLaneCallsKeepTheShare(t *testing.T) {
	for _, s := range []float64{0.1, 0.2, 0.3, 0.5, 0.6, settings.Get(settings.Room[:], "priority_share").Max} {
		room := &Room{PriorityShare: s}
		// The store's credit (store/line.lua), while the lane waits: each
		// regular call earns s/(1-s), each priority call spends 1.
		earn := s / (1 - s)
		credit, calls, priority := 0.0, 0, int64(0)
		for priority < 40 {
			calls++
			if credit >= 1 {
				credit--
				priority++
			} else {
				credit += earn // the lane waits: nothing is capped
			}
		}
		l := store.Line{Issued: 1_000_000, PriorityIssued: 40}
		if got := laneCalls(room, l, true, 40); math.Abs(got-float64(calls)) > 1/s+1 {
			t.Errorf("share %g: 40 priority tickets took %d calls played out, laneCalls says %g", s, calls, got)
		}
	}
}

func TestPriorityShareSetting(t *testing.T) {
	tests := []struct {
		json    string
		share   float64
		wantErr string
	}{
		{`{"paths":["/"],"max_active_users":1}`, 0.2, ""},
		{`{"paths":["/"],"max_active_users":1,"priority_share":0}`, 0, ""},
		{`{"paths":["/"],"max_active_users":1,"priority_share":0.9}`, 0.9, ""},
		{`{"paths":["/"],"max_active_users":1,"priority_share":0.95}`, 0, `room "shop": priority_share: must be between 0 and 0.9, got 0.95`},
		{`{"paths":["/"],"max_active_users":1,"priority_share":1}`, 0, "priority_share: must be between 0 and 0.9"},
		{`{"paths":["/"],"max_active_users":1,"priority_share":-0.1}`, 0, "priority_share: must be between 0 and 0.9"},
		{`{"paths":["/"],"max_active_users":1,"priority_share":"0.2"}`, 0, "priority_share"},
	}
	for _, tc := range tests {
		r, err := ParseRoom("shop", []byte(tc.json))
		if tc.wantErr != "" {
			if err == nil || !strings.Contains(err.Error(), tc.wantErr) {
				t.Errorf("%s: %v, want %q", tc.json, err, tc.wantErr)
			}
			continue
		}
		if err != nil || r.PriorityShare != tc.share || r.Policy(now).PriorityShare != tc.share {
			t.Errorf("%s: %+v, %v; want share %g in the room and its policy", tc.json, r, err, tc.share)
		}
	}
}
