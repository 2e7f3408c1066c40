package queue

import (
	"context"
	"fmt"
	"strings"
	"testing"
	"time"

	"github.com/edgequeue/waitingroom/store"
	"github.com/edgequeue/waitingroom/store/shard"
)

// TestShardedPlace: a sharded room's visitor waits in their shard's line,
// which calls at its share of the rate: the wait is that line's, and the
// place shown is the shard's scaled by the shards.
func TestShardedPlace(t *testing.T) {
	line := store.Line{Admitted: 100, Issued: 400}
	tests := []struct {
		name   string
		shards int
		rate   float64
		cap    int
		place  store.Place
		ahead  int64
		wait   time.Duration
		known  bool
	}{
		{"one shard", 1, 60, 0, store.Place{Ticket: 130, Line: line}, 29, 30 * time.Second, true},
		// 30 calls at 60/4 a minute: 2 minutes; 29 ahead in the shard, 116 in the room.
		{"four shards", 4, 60, 0, store.Place{Ticket: 130, Line: line, Shard: 2}, 116, 2 * time.Minute, true},
		// A capacity of 10 over 4 shards: shards 0 and 1 hold 3, 2 and 3 hold 2.
		// Shard 1 with 2 held has 1 free: the first call needs no departure.
		{"a free place in the shard's share", 4, 0, 10, store.Place{Ticket: 101, Line: store.Line{Admitted: 100, Issued: 110, Active: 2}, Shard: 1}, 0, 0, true},
		// Shard 3 with 2 held is full, and nobody left: no estimate.
		{"the shard's share is full", 4, 0, 10, store.Place{Ticket: 101, Line: store.Line{Admitted: 100, Issued: 110, Active: 2}, Shard: 3}, 0, 0, false},
	}
	for _, tc := range tests {
		room := &Room{Name: "r", Mode: Fifo, NewUsersPerMinute: tc.rate, MaxActiveUsers: tc.cap, Shards: tc.shards, RefreshSeconds: 10}
		p := placeOf(room, tc.place, now)
		if p.Ahead != tc.ahead || p.WaitKnown != tc.known || p.Wait != tc.wait || p.Shard != tc.place.Shard {
			t.Errorf("%s: ahead %d wait %v known %v shard %d, want %d %v %v %d", tc.name, p.Ahead, p.Wait, p.WaitKnown, p.Shard,
				tc.ahead, tc.wait, tc.known, tc.place.Shard)
		}
	}
}

// shardStore answers polls and renewals, noting the shard each names.
type shardStore struct {
	store.Store
	asked []int
}

func (s *shardStore) Poll(_ context.Context, _ string, _ store.Policy, tk store.Ticket, _ time.Time) (store.Place, error) {
	s.asked = append(s.asked, tk.Shard)
	return store.Place{Ticket: tk.Number, Outcome: store.Waiting, Line: store.Line{Epoch: 7, Issued: 50}, Shard: tk.Shard}, nil
}

func (s *shardStore) Renew(_ context.Context, _ string, _ store.Policy, ref store.SessionRef, _ time.Time) (bool, store.Line, error) {
	s.asked = append(s.asked, ref.Shard)
	return true, store.Line{Epoch: 7}, nil
}

// TestGateKeepsTheShard: a pass's shard goes to the store with its ticket
// or session and comes back in the next pass; a pass of a shard the room
// no longer has is a place lost, with a log line, and no store call.
func TestGateKeepsTheShard(t *testing.T) {
	ks, _ := ParseKeySet("new:" + key2)
	room, err := ParseRoom("shop", []byte(`{"paths":["/"],"max_active_users":10,"shards":4}`))
	if err != nil {
		t.Fatal(err)
	}
	tests := []struct {
		name   string
		pass   Pass
		action Action
		asked  string
		logged string
	}{
		{"a ticket of shard 2", Pass{Kind: Ticket, Number: 5, Epoch: 7, Shard: 2}, Wait, "[2]", ""},
		{"a session of shard 3, renewed", Pass{Kind: Session, SessionID: "7.5", Epoch: 7, Shard: 3}, Admit, "[3]", ""},
		{"a ticket of shard 4 of 4", Pass{Kind: Ticket, Number: 5, Epoch: 7, Shard: 4}, Arrive, "[]", "shard 4"},
		{"a session of shard 9 of 4", Pass{Kind: Session, SessionID: "7.5", Epoch: 7, Shard: 9}, Arrive, "[]", "shard 9"},
		{"a shard no pass could name", Pass{Kind: Ticket, Number: 5, Epoch: 7, Shard: -1}, Arrive, "[]", "shard -1"},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			st := &shardStore{}
			var logged []string
			g := &Gate{Store: st, Keys: ks, Logf: func(f string, a ...any) { logged = append(logged, fmt.Sprintf(f, a...)) }}
			p := tc.pass
			p.Room, p.IssuedAt, p.Expires = "shop", now.Add(-time.Hour), now.Add(time.Hour)
			tok, err := ks.Sign(p)
			if err != nil {
				t.Fatal(err)
			}
			d := g.Decide(context.Background(), room, Visitor{Passes: []string{tok}, Bind: "", Now: now})
			if d.Action != tc.action || fmt.Sprint(st.asked) != tc.asked {
				t.Fatalf("%v (%s), store asked for shards %v; want %v, %s", d.Action, d.Why, st.asked, tc.action, tc.asked)
			}
			if tc.logged != "" && !strings.Contains(strings.Join(logged, "\n"), tc.logged) {
				t.Errorf("logged %q, want a line naming %s", logged, tc.logged)
			}
			if tc.action == Arrive {
				return
			}
			next, err := ks.Verify("shop", d.Pass, now)
			if err != nil || next.Shard != tc.pass.Shard || d.Session.Shard != tc.pass.Shard && tc.action == Admit {
				t.Fatalf("next pass %+v (%v), session %+v: want shard %d", next, err, d.Session, tc.pass.Shard)
			}
		})
	}
}

func TestShardsNeedPlaces(t *testing.T) {
	for _, tc := range []struct {
		json, err string
	}{
		{`{"paths":["/"],"max_active_users":3,"shards":4}`, "max_active_users of at least 4"},
		{`{"paths":["/"],"max_active_users":4,"shards":4}`, ""},
		{`{"paths":["/"],"new_users_per_minute":60,"shards":8}`, ""},
		{`{"paths":["/"],"new_users_per_minute":60,"shards":9}`, "shards"},
		{`{"paths":["/"],"new_users_per_minute":60,"shards":2,"events":[{"name":"s","starts":"2030-01-01T00:00:00Z","ends":"2030-01-01T01:00:00Z"}]}`, "events"},
	} {
		r, err := ParseRoom("shop", []byte(tc.json))
		if tc.err == "" && err != nil || tc.err != "" && (err == nil || !strings.Contains(err.Error(), tc.err)) {
			t.Errorf("%s: %v, want %q", tc.json, err, tc.err)
		}
		if err == nil && r.Policy(now).Shards != r.Shards {
			t.Errorf("%s: policy shards %d, room %d", tc.json, r.Policy(now).Shards, r.Shards)
		}
	}
}

// shardSnaps is one POP's snapshots of a sharded room's lines, read only
// (Peek); a shard it holds none of has none.
type shardSnaps struct {
	snaps map[int]Snapshot
	err   error
}

func (s shardSnaps) Get(*Room, int, time.Time, func() (Snapshot, error)) (Snapshot, error) {
	return Snapshot{}, ErrNoSnapshot
}

func (s shardSnaps) Peek(_ *Room, i int) (Snapshot, error) {
	if s.err != nil {
		return Snapshot{}, s.err
	}
	snap, ok := s.snaps[i]
	if !ok {
		return Snapshot{}, ErrNoSnapshot
	}
	return snap, nil
}

// TestChooseTheShorterLine: an arrival is sent to the shorter of its two
// shards' lines as the POP's fresh snapshots show them (fewer waiting, or
// more places free), else to the first, the hash's; reading them is no
// store call (the gate has no store here).
func TestChooseTheShorterLine(t *testing.T) {
	const id = "a" // shard.Choices("a", 4) is shards 0 and 1
	if c := shard.Choices(id, 4); c != [2]int{0, 1} {
		t.Fatalf("choices of %q: %v", id, c)
	}
	fresh, stale := now.Add(-500*time.Millisecond), now.Add(-2*time.Second)
	waiting := func(n int64, at time.Time) Snapshot {
		return Snapshot{Line: store.Line{Epoch: 7, Admitted: 100, Issued: 100 + n, Active: 10}, At: at}
	}
	held := func(n int64) Snapshot { return Snapshot{Line: store.Line{Epoch: 7, Active: n}, At: fresh} }
	two := func(a, b Snapshot) map[int]Snapshot { return map[int]Snapshot{0: a, 1: b} }
	tenMore := Snapshot{Line: store.Line{Epoch: 7, Admitted: 100, Issued: 110, PriorityIssued: 10, Active: 10}, At: fresh}
	livePlaces := Snapshot{Line: store.Line{Epoch: 7, Active: 5, Overrides: store.Overrides{Capacity: ptr(80)}}, At: fresh}
	tests := []struct {
		name   string
		room   string
		snaps  map[int]Snapshot
		err    error
		want   int
		logged bool
	}{
		{"no snapshot: the hash's", "", nil, nil, 0, false},
		{"only the first's snapshot: the hash's", "", map[int]Snapshot{0: waiting(50, fresh)}, nil, 0, false},
		{"only the second's snapshot: the hash's", "", map[int]Snapshot{1: waiting(5, fresh)}, nil, 0, false},
		{"the second's line shorter", "", two(waiting(50, fresh), waiting(49, fresh)), nil, 1, false},
		{"the first's line shorter", "", two(waiting(5, fresh), waiting(49, fresh)), nil, 0, false},
		{"as long: the hash's", "", two(waiting(5, fresh), waiting(5, fresh)), nil, 0, false},
		{"nobody waits, the second has more places free", "", two(held(10), held(9)), nil, 1, false},
		{"nobody waits, as many free: the hash's", "", two(held(3), held(3)), nil, 0, false},
		{"places free in the first against a line in the second", "", two(held(9), waiting(1, fresh)), nil, 0, false},
		{"the priority lane waits too", "", two(tenMore, waiting(19, fresh)), nil, 1, false},
		// Shard 1's share of a live capacity of 80 is 20: 15 free.
		{"the operator's live capacity", "", two(held(8), livePlaces), nil, 1, false},
		{"the second's snapshot stale: the hash's", "", two(waiting(50, fresh), waiting(0, stale)), nil, 0, false},
		{"the first's snapshot stale: the hash's", "", two(waiting(50, stale), waiting(0, fresh)), nil, 0, false},
		{"a snapshot unreadable: the hash's, logged", "", two(waiting(50, fresh), waiting(0, fresh)), ErrBadSnapshot, 0, true},
		{"a room without snapshots: the hash's", `,"snapshot_ttl":0`, two(waiting(50, fresh), waiting(0, fresh)), nil, 0, false},
		{"a room of one line", `,"shards":1`, two(waiting(50, fresh), waiting(0, fresh)), nil, 0, false},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			room, err := ParseRoom("shop", []byte(`{"paths":["/"],"max_active_users":40,"shards":4`+tc.room+`}`))
			if err != nil {
				t.Fatal(err)
			}
			var logged []string
			g := &Gate{Snapshots: shardSnaps{tc.snaps, tc.err}, Logf: func(f string, a ...any) { logged = append(logged, fmt.Sprintf(f, a...)) }}
			if got := g.choose(room, id, now); got != tc.want {
				t.Errorf("choice %d, want %d", got, tc.want)
			}
			if (len(logged) > 0) != tc.logged {
				t.Errorf("logged %q, want a line: %v", logged, tc.logged)
			}
		})
	}
}

func ptr[T any](v T) *T { return &v }

// joinStore answers joins, noting the shard and arrival each names.
type joinStore struct {
	store.Store
	joins []store.Arrival
}

func (s *joinStore) Join(_ context.Context, _ string, _ store.Policy, a store.Arrival, _ time.Time) (store.Place, error) {
	s.joins = append(s.joins, a)
	return store.Place{Ticket: int64(len(s.joins)), Outcome: store.Waiting, Line: store.Line{Epoch: 7, Issued: 50}, Shard: a.Shard}, nil
}

// TestArrivalPassCarriesTheShard: the shard chosen at the arrival (the
// shorter line of the two in the POP's snapshots) is signed into the
// arrival pass, the join goes to it, and so does a replay of the same
// pass; a pass that records no choice (issued before it) joins the
// hash's shard, where its first join went.
func TestArrivalPassCarriesTheShard(t *testing.T) {
	ks, _ := ParseKeySet("new:" + key2)
	room, err := ParseRoom("shop", []byte(`{"paths":["/"],"max_active_users":40,"shards":4}`))
	if err != nil {
		t.Fatal(err)
	}
	// Shard i has 40 - 10 i waiting: the higher, the shorter.
	snaps := shardSnaps{snaps: map[int]Snapshot{}}
	for i := 0; i < 4; i++ {
		snaps.snaps[i] = Snapshot{Line: store.Line{Epoch: 7, Admitted: 100, Issued: 140 - 10*int64(i), Active: 10}, At: now}
	}
	sentTo := map[int]int{}
	for range 40 {
		st := &joinStore{}
		g := &Gate{Store: st, Keys: ks, Snapshots: snaps}
		d := g.Decide(context.Background(), room, Visitor{Now: now})
		if d.Action != Arrive {
			t.Fatalf("a newcomer: %v (%s)", d.Action, d.Why)
		}
		arrival, err := ks.Verify("shop", d.Pass, now)
		if err != nil {
			t.Fatal(err)
		}
		c := shard.Choices(arrival.ArrivalID, 4)
		want := max(c[0], c[1])
		if got := c[arrival.Shard]; got != want || arrival.Shard != 0 && arrival.Shard != 1 {
			t.Fatalf("arrival pass records %d of %v: shard %d, want %d, the shorter line", arrival.Shard, c, got, want)
		}
		sentTo[want]++
		// The join, and a replay of the same pass, go to that shard.
		for range 2 {
			d := g.Decide(context.Background(), room, Visitor{Passes: []string{d.Pass}, Now: now.Add(time.Second)})
			next, err := ks.Verify("shop", d.Pass, now.Add(time.Second))
			if d.Action != Wait || err != nil || next.Shard != want {
				t.Fatalf("join: %v (%s), ticket pass %+v (%v); want a wait in shard %d", d.Action, d.Why, next, err, want)
			}
		}
		if len(st.joins) != 2 || st.joins[0] != st.joins[1] || st.joins[0] != (store.Arrival{ID: arrival.ArrivalID, Shard: want}) {
			t.Fatalf("joins %+v: want two of %s in shard %d", st.joins, arrival.ArrivalID, want)
		}

		// The same arrival's pass as it was issued before the choice.
		old := arrival
		old.Shard = 0
		tok, err := ks.Sign(old)
		if err != nil {
			t.Fatal(err)
		}
		g.Decide(context.Background(), room, Visitor{Passes: []string{tok}, Now: now.Add(time.Second)})
		if got := st.joins[2].Shard; got != shard.Of(arrival.ArrivalID, 4) {
			t.Fatalf("a pass with no choice joined shard %d, want the hash's, %d", got, shard.Of(arrival.ArrivalID, 4))
		}
	}
	if sentTo[0] != 0 || sentTo[3] == 0 {
		t.Errorf("arrivals by shard %v: none to shard 0, the longest line, some to 3, the shortest", sentTo)
	}
}

// fillSnaps is one POP's snapshots of a sharded room's lines, each
// filled when older than the TTL.
type fillSnaps map[int]Snapshot

func (s fillSnaps) Get(room *Room, i int, now time.Time, fill func() (Snapshot, error)) (Snapshot, error) {
	if snap, ok := s[i]; ok && now.Sub(snap.At) < room.SnapshotTTL() {
		return snap, nil
	}
	snap, err := fill()
	if err == nil {
		s[i] = snap
	}
	return snap, err
}

func (s fillSnaps) Peek(_ *Room, i int) (Snapshot, error) {
	if snap, ok := s[i]; ok {
		return snap, nil
	}
	return Snapshot{}, ErrNoSnapshot
}

// TestJoinFillsItsShardsSnapshot: in a sharded room a join's answer fills
// the POP's snapshot of its shard when it is due, with no store call of
// its own, so the POP sees a line nobody polls; a fresh one is left.
func TestJoinFillsItsShardsSnapshot(t *testing.T) {
	ks, _ := ParseKeySet("new:" + key2)
	room, err := ParseRoom("shop", []byte(`{"paths":["/"],"max_active_users":40,"shards":4}`))
	if err != nil {
		t.Fatal(err)
	}
	old := Snapshot{Line: store.Line{Epoch: 7, Issued: 3}, At: now.Add(-5 * time.Second)}
	fresh := Snapshot{Line: store.Line{Epoch: 7, Issued: 3}, At: now.Add(-500 * time.Millisecond)}
	for _, tc := range []struct {
		name  string
		snaps fillSnaps
		// issued is the snapshot's Issued after the join: 50 is the
		// join's answer.
		issued int64
	}{
		{"none: filled", fillSnaps{}, 50},
		{"stale: filled", fillSnaps{0: old, 1: old, 2: old, 3: old}, 50},
		{"fresh: kept", fillSnaps{0: fresh, 1: fresh, 2: fresh, 3: fresh}, 3},
	} {
		t.Run(tc.name, func(t *testing.T) {
			st := &joinStore{}
			g := &Gate{Store: st, Keys: ks, Snapshots: tc.snaps}
			tok, err := ks.Sign(Pass{Kind: Arrival, Room: "shop", ArrivalID: "a", Shard: 1, IssuedAt: now, Expires: now.Add(ArrivalTTL)})
			if err != nil {
				t.Fatal(err)
			}
			d := g.Decide(context.Background(), room, Visitor{Passes: []string{tok}, Now: now})
			to := shard.Choices("a", 4)[1]
			if d.Action != Wait || len(st.joins) != 1 || st.joins[0].Shard != to {
				t.Fatalf("%v (%s), joins %+v: want one join, to shard %d", d.Action, d.Why, st.joins, to)
			}
			if got := tc.snaps[to]; got.Line.Issued != tc.issued {
				t.Errorf("shard %d's snapshot %+v, want issued %d", to, got, tc.issued)
			}
		})
	}
}
