package queue

import (
	"context"
	"errors"
	"fmt"
	"testing"
	"time"

	"github.com/edgequeue/waitingroom/store"
)

func TestRandomRoomPlaceIsARange(t *testing.T) {
	room := &Room{Name: "r", Mode: Random, NewUsersPerMinute: 60}
	line := store.Line{Admitted: 100, Issued: 400, Recent: 60, RecentSince: now.Add(-time.Minute)}
	tests := []struct {
		name            string
		place           store.Place
		ahead, aheadMax int64
		waitMin, wait   time.Duration
		groupsAhead     int64
	}{
		{"first come, first served figures when the store gives no range", store.Place{Ticket: 130, Line: line}, 29, 29, 30 * time.Second, 30 * time.Second, 0},
		{"a group being called", store.Place{Ticket: 130, CallFrom: 101, CallTo: 160, Line: line}, 0, 59, time.Second, time.Minute, 0},
		{"two groups ahead", store.Place{Ticket: 300, CallFrom: 221, CallTo: 400, GroupsAhead: 2, Line: line}, 120, 299, 121 * time.Second, 300 * time.Second, 2},
	}
	for _, tc := range tests {
		p := placeOf(room, tc.place, now)
		if p.Ahead != tc.ahead || p.AheadMax != tc.aheadMax || p.WaitMin != tc.waitMin || p.Wait != tc.wait || p.GroupsAhead != tc.groupsAhead || !p.Random {
			t.Errorf("%s: ahead %d..%d wait %v..%v groups %d, want %d..%d %v..%v %d", tc.name,
				p.Ahead, p.AheadMax, p.WaitMin, p.Wait, p.GroupsAhead, tc.ahead, tc.aheadMax, tc.waitMin, tc.wait, tc.groupsAhead)
		}
	}
}

// lineStore answers Join and Poll with the places given, in turn; any
// other store call is a mistake of the gate's (the nil Store fails it).
type lineStore struct {
	store.Store
	places []store.Place
	// stats is the line Stats answers (nil: the store is unreachable),
	// statsCalls how many times it was asked.
	stats      *store.Line
	statsCalls int
}

func (s *lineStore) Stats(context.Context, string, store.Policy, time.Time) (store.Line, error) {
	s.statsCalls++
	if s.stats == nil {
		return store.Line{}, fmt.Errorf("%w: timeout", store.ErrUnavailable)
	}
	return *s.stats, nil
}

func (s *lineStore) next() (store.Place, error) {
	pl := s.places[0]
	s.places = s.places[1:]
	return pl, nil
}

func (s *lineStore) Join(context.Context, string, store.Policy, store.Arrival, time.Time) (store.Place, error) {
	return s.next()
}

func (s *lineStore) Poll(context.Context, string, store.Policy, store.Ticket, time.Time) (store.Place, error) {
	return s.next()
}

// TestWaitedIsCarriedInThePass: how long a visitor has waited is read off
// their passes, from the arrival on, and starts afresh with a new ticket.
func TestWaitedIsCarriedInThePass(t *testing.T) {
	ks, _ := ParseKeySet("new:" + key2)
	room, err := ParseRoom("shop", []byte(`{"paths":["/"],"max_active_users":10}`))
	if err != nil {
		t.Fatal(err)
	}
	t0 := time.Unix(1_800_000_000, 0)
	line := store.Line{Epoch: 7, Issued: 9}
	st := &lineStore{places: []store.Place{
		{Ticket: 5, Outcome: store.Waiting, Line: line},
		{Ticket: 5, Outcome: store.Waiting, Line: line},
		{Ticket: 5, Outcome: store.Lost, Line: line},
		{Ticket: 9, Outcome: store.Waiting, Line: line},
		{Ticket: 9, Outcome: store.Admitted, Line: line},
	}}
	g := &Gate{Store: st, Keys: ks}
	arrival, err := ks.Sign(Pass{Kind: Arrival, Room: "shop", ArrivalID: "a1", IssuedAt: t0, Expires: t0.Add(ArrivalTTL)})
	if err != nil {
		t.Fatal(err)
	}
	steps := []struct {
		at             time.Duration
		action         Action
		waited, joined time.Duration
	}{
		{10 * time.Second, Wait, 10 * time.Second, 0},
		{70 * time.Second, Wait, 70 * time.Second, 0},
		{80 * time.Second, Arrive, 0, 0},              // the place is lost: join again
		{80 * time.Second, Wait, 0, 80 * time.Second}, // a new ticket: a new wait
		{95 * time.Second, Admit, 15 * time.Second, 0},
	}
	pass := arrival
	for i, s := range steps {
		now := t0.Add(s.at)
		d := g.Decide(context.Background(), room, Visitor{Passes: []string{pass}, Now: now})
		if d.Action != s.action || d.Waited != s.waited {
			t.Fatalf("step %d: %v having waited %v (%s), want %v having waited %v", i, d.Action, d.Waited, d.Why, s.action, s.waited)
		}
		if d.Action == Wait {
			p, err := ks.Verify("shop", d.Pass, now)
			if err != nil || !p.Joined.Equal(t0.Add(s.joined)) {
				t.Fatalf("step %d: the ticket pass says joined %v (%v), want %v", i, p.Joined, err, t0.Add(s.joined))
			}
		}
		pass = d.Pass
	}
}

// renewStore answers Renew with ok or err and counts every call; any other
// store call is a mistake of the gate's (the nil Store fails it).
type renewStore struct {
	store.Store
	ok    bool
	err   error
	calls int
}

func (s *renewStore) Renew(context.Context, string, store.Policy, store.SessionRef, time.Time) (bool, store.Line, error) {
	s.calls++
	return s.ok, store.Line{}, s.err
}

// TestKeep: the heartbeat renews a session as a request would (no store
// call inside the room's heartbeat, one when due), and neither joins the
// line nor polls a ticket for a visitor without one.
func TestKeep(t *testing.T) {
	ks, _ := ParseKeySet("new:" + key2)
	room, err := ParseRoom("shop", []byte(`{"paths":["/"],"max_active_users":10,"inactivity_timeout":30}`))
	if err != nil {
		t.Fatal(err)
	}
	closed, err := ParseRoom("shop", []byte(`{"paths":["/"],"max_active_users":10,"mode":"reject"}`))
	if err != nil {
		t.Fatal(err)
	}
	t0 := time.Unix(1_800_000_000, 0)
	sign := func(p Pass) string {
		p.Room, p.IssuedAt, p.Expires = "shop", t0, t0.Add(time.Hour)
		token, err := ks.Sign(p)
		if err != nil {
			t.Fatal(err)
		}
		return token
	}
	session := sign(Pass{Kind: Session, SessionID: "s1", Epoch: 3})
	down := errors.New("store down")
	tests := []struct {
		name      string
		room      *Room
		passes    []string
		at        time.Duration
		store     renewStore
		action    Action
		calls     int
		newPass   bool
		unrenewed bool
		err       error
	}{
		{"inside the heartbeat", room, []string{session}, 9 * time.Second, renewStore{ok: true}, Admit, 0, false, false, nil},
		{"heartbeat due", room, []string{session}, 10 * time.Second, renewStore{ok: true}, Admit, 1, true, false, nil},
		{"session ended in the store", room, []string{session}, 20 * time.Second, renewStore{}, 0, 1, false, false, ErrBadPass},
		{"store down keeps the session", room, []string{session}, 20 * time.Second, renewStore{err: down}, Admit, 1, true, true, down},
		{"no pass", room, nil, 20 * time.Second, renewStore{ok: true}, 0, 0, false, false, nil},
		{"a ticket is not polled", room, []string{sign(Pass{Kind: Ticket, Number: 4, Epoch: 3})}, 20 * time.Second, renewStore{ok: true}, 0, 0, false, false, nil},
		{"an arrival does not join", room, []string{sign(Pass{Kind: Arrival, ArrivalID: "a1"})}, 20 * time.Second, renewStore{ok: true}, 0, 0, false, false, nil},
		{"tampered pass", room, []string{session[:len(session)-2] + "xx"}, 20 * time.Second, renewStore{ok: true}, 0, 0, false, false, ErrBadPass},
		{"closed room", closed, []string{session}, 20 * time.Second, renewStore{ok: true}, Closed, 0, false, false, nil},
	}
	for _, tc := range tests {
		st := tc.store
		g := &Gate{Store: &st, Keys: ks}
		now := t0.Add(tc.at)
		d := g.Keep(context.Background(), tc.room, Visitor{Passes: tc.passes, Now: now})
		if d.Action != tc.action || st.calls != tc.calls || (d.Pass != "") != tc.newPass {
			t.Errorf("%s: %v (%s) after %d store calls, new pass %v; want %v after %d, new pass %v",
				tc.name, d.Action, d.Why, st.calls, d.Pass != "", tc.action, tc.calls, tc.newPass)
		}
		if !errors.Is(d.Err, tc.err) {
			t.Errorf("%s: error %v, want %v", tc.name, d.Err, tc.err)
		}
		if d.Pass == "" {
			continue
		}
		p, err := ks.Verify("shop", d.Pass, now)
		if err != nil || p.Kind != Session || p.SessionID != "s1" || !p.IssuedAt.Equal(now) || p.Unrenewed != tc.unrenewed {
			t.Errorf("%s: the refreshed pass is %+v (%v), want session s1 issued now, unrenewed %v", tc.name, p, err, tc.unrenewed)
		}
	}
}

// TestStartAheadIsCarriedInThePass: the progress bar's start is the place
// at arrival, kept from pass to pass while the line moves, raised if more
// come to be ahead, and taken afresh with a new ticket.
func TestStartAheadIsCarriedInThePass(t *testing.T) {
	ks, _ := ParseKeySet("new:" + key2)
	room, err := ParseRoom("shop", []byte(`{"paths":["/"],"max_active_users":10}`))
	if err != nil {
		t.Fatal(err)
	}
	t0 := time.Unix(1_800_000_000, 0)
	at := func(admitted int64) store.Line { return store.Line{Epoch: 7, Issued: 60, Admitted: admitted} }
	st := &lineStore{places: []store.Place{
		{Ticket: 50, Outcome: store.Waiting, Line: at(10)}, // joins 40th: 39 ahead
		{Ticket: 50, Outcome: store.Waiting, Line: at(30)}, // 19 ahead
		{Ticket: 50, Outcome: store.Waiting, Line: at(49)}, // first in line
		{Ticket: 50, Outcome: store.Lost, Line: at(50)},    // the place is lost: join again
		{Ticket: 60, Outcome: store.Waiting, Line: at(50)}, // a new ticket, 9 ahead
		{Ticket: 60, Outcome: store.Waiting, Line: at(55)},
	}}
	g := &Gate{Store: st, Keys: ks}
	pass, err := ks.Sign(Pass{Kind: Arrival, Room: "shop", ArrivalID: "a1", IssuedAt: t0, Expires: t0.Add(ArrivalTTL)})
	if err != nil {
		t.Fatal(err)
	}
	for i, want := range []struct{ ahead, start int64 }{{39, 39}, {19, 39}, {0, 39}, {-1, 0}, {9, 9}, {4, 9}} {
		now := t0.Add(time.Duration(i+1) * 10 * time.Second)
		d := g.Decide(context.Background(), room, Visitor{Passes: []string{pass}, Now: now})
		if want.ahead < 0 {
			if d.Action != Arrive {
				t.Fatalf("step %d: %v (%s), want arrive: the place is lost", i, d.Action, d.Why)
			}
			pass = d.Pass
			continue
		}
		if d.Action != Wait || d.Place.Ahead != want.ahead || d.Place.StartAhead != want.start {
			t.Fatalf("step %d: %v with %d ahead from %d (%s), want %d ahead from %d", i, d.Action, d.Place.Ahead, d.Place.StartAhead, d.Why, want.ahead, want.start)
		}
		p, err := ks.Verify("shop", d.Pass, now)
		if err != nil || p.StartAhead != want.start {
			t.Fatalf("step %d: the pass carries start %d (%v), want %d", i, p.StartAhead, err, want.start)
		}
		pass = d.Pass
	}
}

// operateStore answers Operate with line or err and keeps the action it
// was given; any other store call is a mistake of the gate's (the nil
// Store fails it).
type operateStore struct {
	store.Store
	line store.Line
	err  error
	got  []store.Action
}

func (s *operateStore) Operate(_ context.Context, _ string, _ store.Policy, a store.Action, _ time.Time) (store.Line, error) {
	s.got = append(s.got, a)
	return s.line, s.err
}

// TestAdmitIsAnAuditedAction: Gate.Admit is one operator action in the
// store (Operate, which writes the audit log), whose entry names who
// admitted how many and the line after; a store that refuses it is heard.
func TestAdmitIsAnAuditedAction(t *testing.T) {
	room := &Room{Name: "shop"}
	origin := store.Actor{Via: "origin"}
	tests := []struct {
		name string
		st   *operateStore
		want store.AuditEntry
		err  error
	}{
		{"admitted", &operateStore{line: store.Line{Epoch: 2, Issued: 40, Admitted: 13}},
			store.AuditEntry{Time: now, Room: "shop", Via: "origin", Action: store.OpAdmit, N: 3,
				After: store.AuditState{Epoch: 2, Issued: 40, Admitted: 13}}, nil},
		{"the store is down", &operateStore{err: store.ErrUnavailable}, store.AuditEntry{}, store.ErrUnavailable},
	}
	for _, tc := range tests {
		g := &Gate{Store: tc.st}
		e, err := g.Admit(context.Background(), room, 3, origin, now)
		// The action is named afresh (an origin's command is sent once),
		// and its entry names it.
		if len(tc.st.got) != 1 || len(tc.st.got[0].ID) != 32 ||
			tc.st.got[0] != (store.Action{Op: store.OpAdmit, N: 3, Actor: origin, ID: tc.st.got[0].ID}) {
			t.Fatalf("%s: the store was asked %+v, want one admit of 3 by the origin, with an id", tc.name, tc.st.got)
		}
		if tc.err == nil {
			tc.want.ID = tc.st.got[0].ID
		}
		if !errors.Is(err, tc.err) || e != tc.want {
			t.Errorf("%s: %+v, %v; want %+v, %v", tc.name, e, err, tc.want, tc.err)
		}
	}
}
