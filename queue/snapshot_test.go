package queue

import (
	"context"
	"errors"
	"fmt"
	"reflect"
	"testing"
	"time"

	"github.com/edgequeue/waitingroom/store"
)

// snapRoom admits 600 a minute (10 a second), refreshes every 10 s, and
// times out waiting visitors after 900 s: its fast-poll zone is 100
// tickets and its burst 1.
func snapRoom(t *testing.T, extra string) *Room {
	t.Helper()
	room, err := ParseRoom("shop", []byte(`{"paths":["/"],"new_users_per_minute":600`+extra+`}`))
	if err != nil {
		t.Fatal(err)
	}
	return room
}

func TestFromSnapshot(t *testing.T) {
	room := snapRoom(t, "")
	// 10 admitted a second lately: two refreshes and the TTL reach 210
	// tickets, plus the zone (100) and the burst (1).
	line := store.Line{Epoch: 7, Issued: 5000, Admitted: 1000, Recent: 600, RecentSince: now.Add(-time.Minute)}
	snap := Snapshot{Line: line, At: now}
	const margin = 100 + 1 + 210
	tests := []struct {
		name   string
		room   *Room
		ticket int64
		epoch  int64
		seen   time.Time
		snap   func(Snapshot) Snapshot
		ok     bool
	}{
		{"far from the front", room, 1000 + margin + 1, 7, now.Add(-time.Minute), nil, true},
		{"just inside the margin", room, 1000 + margin, 7, now.Add(-time.Minute), nil, false},
		{"already called", room, 900, 7, now.Add(-time.Minute), nil, false},
		{"a slower pace narrows the margin", room, 1000 + 100 + 1 + 22 + 1, 7, now.Add(-time.Minute),
			func(s Snapshot) Snapshot { s.Line.Recent = 60; return s }, true},
		{"nobody admitted lately: the zone and the burst", room, 1000 + 102, 7, now.Add(-time.Minute),
			func(s Snapshot) Snapshot { s.Line.Recent = 0; return s }, true},
		{"paused far from the front", room, 3000, 7, now.Add(-time.Minute),
			func(s Snapshot) Snapshot { s.Line.Paused = true; return s }, true},
		{"an older snapshot reaches further", room, 1000 + margin + 1, 7, now.Add(-time.Minute),
			func(s Snapshot) Snapshot { s.At = now.Add(-1500 * time.Millisecond); return s }, false},
		{"a snapshot older than two TTLs", room, 3000, 7, now.Add(-time.Minute),
			func(s Snapshot) Snapshot { s.At = now.Add(-2001 * time.Millisecond); return s }, false},
		{"a snapshot from the future", room, 3000, 7, now.Add(-time.Minute),
			func(s Snapshot) Snapshot { s.At = now.Add(2 * time.Second); return s }, false},
		{"a line reset since", room, 3000, 6, now.Add(-time.Minute), nil, false},
		{"the store has not seen the ticket for a third of the timeout", room, 3000, 7, now.Add(-300 * time.Second), nil, false},
		{"seen just inside a third of the timeout", room, 3000, 7, now.Add(-299 * time.Second), nil, true},
		{"never seen (a pass from before snapshots)", room, 3000, 7, time.Time{}, nil, false},
		{"seen in the future", room, 3000, 7, now.Add(2 * time.Minute), nil, false},
		{"a priority ticket", room, -3, 7, now.Add(-time.Minute), nil, false},
		{"a random room", snapRoom(t, `,"mode":"random"`), 3000, 7, now.Add(-time.Minute), nil, false},
		{"random live", room, 3000, 7, now.Add(-time.Minute),
			func(s Snapshot) Snapshot { s.Line.Overrides.Mode = Random; return s }, false},
		{"closed live", room, 3000, 7, now.Add(-time.Minute),
			func(s Snapshot) Snapshot { s.Line.Overrides.Mode = Reject; return s }, false},
		{"an event entered", room, 3000, 7, now.Add(-time.Minute),
			func(s Snapshot) Snapshot { s.Line.Event.Phase = store.Prequeue; return s }, false},
		{"snapshots off", snapRoom(t, `,"snapshot_ttl":0`), 3000, 7, now.Add(-time.Minute), nil, false},
	}
	for _, tc := range tests {
		s := snap
		if tc.snap != nil {
			s = tc.snap(snap)
		}
		p, ok := fromSnapshot(tc.room, tc.ticket, tc.epoch, 0, tc.seen, s, now)
		if ok != tc.ok {
			t.Errorf("%s: ok %v, want %v", tc.name, ok, tc.ok)
			continue
		}
		if ok {
			want := placeOf(tc.room, store.Place{Ticket: tc.ticket, Line: s.Line}, now)
			if p != want {
				t.Errorf("%s: place %+v, want the store's answer's %+v", tc.name, p, want)
			}
		}
	}
}

func TestSnapshotText(t *testing.T) {
	liveRate, liveCapacity := 12.5, 0
	in := Snapshot{At: time.Unix(1_800_000_000, 123), Line: store.Line{Epoch: 7, Issued: 90, Admitted: 40, Paused: true, QueueAll: true,
		Active: 12, Called: 3, Recent: 33, RecentSince: time.Unix(1_799_999_800, 5), PriorityIssued: 4, PriorityAdmitted: 2,
		Event: store.EventState{Phase: store.Drawn}, Overrides: store.Overrides{Mode: Reject, PerMinute: &liveRate, Capacity: &liveCapacity}}}
	b, err := in.MarshalText()
	if err != nil {
		t.Fatal(err)
	}
	var out Snapshot
	if err := out.UnmarshalText(b); err != nil {
		t.Fatal(err)
	}
	if !out.At.Equal(in.At) || !out.Line.RecentSince.Equal(in.Line.RecentSince) {
		t.Fatalf("times %v %v, want %v %v", out.At, out.Line.RecentSince, in.At, in.Line.RecentSince)
	}
	out.At, out.Line.RecentSince = in.At, in.Line.RecentSince
	if !reflect.DeepEqual(out, in) {
		o := out.Line.Overrides
		t.Fatalf("read back %+v (live rate %v, capacity %v), want %+v", out, o.PerMinute, o.Capacity, in)
	}
	good := string(b)
	for _, bad := range []string{"", "wr-snapshot-0" + good[len(snapshotVersion):], good + " 1", good[:len(good)-len(" reject")],
		good[:len(good)-len("reject")] + "sideways", "wr-snapshot-1 1 7 90 40 1 1 12 3 33 5 4 2 2 ",
		"wr-snapshot-2 x 7 90 40 1 1 12 3 33 5 4 2 2 -1 -1 -1 ", "wr-snapshot-2 1 7 90 40 1 1 12 3 33 5 4 2 9 -1 -1 -1 ",
		"wr-snapshot-2 1 7 90 40 1 1 12 3 33 5 4 2 2 -1 -1 ", "wr-snapshot-2 1 7 90 40 1 1 12 3 33 5 4 2 2 -1 x -1 "} {
		if err := out.UnmarshalText([]byte(bad)); !errors.Is(err, ErrBadSnapshot) {
			t.Errorf("%q: %v, want ErrBadSnapshot", bad, err)
		}
	}
}

// snapStore answers Poll with line, or with pollErr, counting the calls;
// any other store call is a mistake of the gate's.
type snapStore struct {
	store.Store
	line    store.Line
	pollErr error
	polls   int
}

func (s *snapStore) Poll(_ context.Context, _ string, _ store.Policy, t store.Ticket, _ time.Time) (store.Place, error) {
	s.polls++
	return store.Place{Ticket: t.Number, Outcome: store.Waiting, Line: s.line}, s.pollErr
}

// memSnapshots is one POP's snapshots, filled when older than the TTL.
type memSnapshots struct {
	snap *Snapshot
	err  error
}

func (m *memSnapshots) Get(room *Room, _ int, _ time.Time, fill func() (Snapshot, error)) (Snapshot, error) {
	if m.err != nil {
		return Snapshot{}, m.err
	}
	if m.snap == nil || now.Sub(m.snap.At) >= room.SnapshotTTL() {
		s, err := fill()
		if err != nil {
			return Snapshot{}, err
		}
		m.snap = &s
	}
	return *m.snap, nil
}

func (m *memSnapshots) Peek(*Room, int) (Snapshot, error) {
	if m.snap == nil {
		return Snapshot{}, ErrNoSnapshot
	}
	return *m.snap, m.err
}

func TestGateAnswersFarTicketsFromTheSnapshot(t *testing.T) {
	ks, _ := ParseKeySet("new:" + key2)
	room := snapRoom(t, "")
	line := store.Line{Epoch: 7, Issued: 5000, Admitted: 1000, Recent: 600, RecentSince: now.Add(-time.Minute)}
	fresh, stale := &Snapshot{Line: line, At: now.Add(-500 * time.Millisecond)}, &Snapshot{Line: line, At: now.Add(-time.Second)}
	ticket := func(n int64, seen time.Time) string {
		p, err := ks.Sign(Pass{Kind: Ticket, Room: "shop", Number: n, Epoch: 7, Joined: now.Add(-time.Hour), StartAhead: 4500,
			Seen: seen, IssuedAt: seen, Expires: now.Add(time.Hour)})
		if err != nil {
			t.Fatal(err)
		}
		return p
	}
	down := fmt.Errorf("%w: timeout", store.ErrUnavailable)
	tests := []struct {
		name    string
		pass    string
		snap    *Snapshot
		snapErr error
		pollErr error
		action  Action
		polls   int
		filled  bool
	}{
		{"far: the snapshot answers", ticket(4000, now.Add(-time.Minute)), fresh, nil, nil, Wait, 0, false},
		{"far, the snapshot stale: the visitor's own poll answers and fills it", ticket(4000, now.Add(-time.Minute)), stale, nil, nil, Wait, 1, true},
		{"far, no snapshot yet: likewise", ticket(4000, now.Add(-time.Minute)), nil, nil, nil, Wait, 1, true},
		{"near: the store answers", ticket(1100, now.Add(-time.Minute)), fresh, nil, nil, Wait, 1, false},
		{"not seen lately: the store answers", ticket(4000, now.Add(-10*time.Minute)), fresh, nil, nil, Wait, 1, false},
		{"the cache failed: the store answers", ticket(4000, now.Add(-time.Minute)), nil, errors.New("cache broke"), nil, Wait, 1, false},
		{"waited on a fill that failed: busy, no call", ticket(4000, now.Add(-time.Minute)), nil, fmt.Errorf("%w: marker", store.ErrUnavailable), nil, Busy, 0, false},
		{"the POP's last fill failed before: the store answers", ticket(4000, now.Add(-time.Minute)), nil, fmt.Errorf("%w: marker", ErrNoSnapshot), nil, Wait, 1, false},
		{"the filling poll fails: busy, no second call", ticket(4000, now.Add(-time.Minute)), stale, nil, down, Busy, 1, false},
	}
	for _, tc := range tests {
		st := &snapStore{line: line, pollErr: tc.pollErr}
		snaps := &memSnapshots{snap: tc.snap, err: tc.snapErr}
		g := &Gate{Store: st, Keys: ks, Snapshots: snaps, Logf: t.Logf}
		d := g.Decide(context.Background(), room, Visitor{Passes: []string{tc.pass}, Now: now})
		newPass := tc.action == Wait && tc.polls == 1
		if d.Action != tc.action || st.polls != tc.polls || (d.Pass != "") != newPass {
			t.Errorf("%s: %v (%s) after %d polls, new pass %v; want %v after %d, new pass %v",
				tc.name, d.Action, d.Why, st.polls, d.Pass != "", tc.action, tc.polls, newPass)
			continue
		}
		if filled := snaps.snap != tc.snap; filled != tc.filled || filled && !snaps.snap.At.Equal(now) {
			t.Errorf("%s: snapshot filled %v (%+v), want %v", tc.name, filled, snaps.snap, tc.filled)
		}
		if tc.action == Wait && (d.Place.StartAhead != 4500 || d.Waited != time.Hour) {
			t.Errorf("%s: starts from %d having waited %v, want 4500 and 1h", tc.name, d.Place.StartAhead, d.Waited)
		}
		if newPass {
			p, err := ks.Verify("shop", d.Pass, now)
			if err != nil || !p.Seen.Equal(now) {
				t.Errorf("%s: the store's answer's pass says seen %v (%v), want now", tc.name, p.Seen, err)
			}
		}
	}
}
