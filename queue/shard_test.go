package queue

import (
	"context"
	"fmt"
	"strings"
	"testing"
	"time"

	"github.com/edgequeue/waitingroom/store"
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
