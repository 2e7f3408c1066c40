package queue

import (
	"context"
	"errors"
	"fmt"
	"testing"
	"time"

	"github.com/edgequeue/waitingroom/challenge"
	"github.com/edgequeue/waitingroom/store"
)

// TestWorkIsPricedAtTheJoin (issue 34, defect 1): the work a join must
// show is the rung in force when it joins (the line's pressure then, the
// client's joins then), the pass's own bits at least. A pass collected
// while the line was calm pays the rush's rung, which the pass given back
// records; a solution of the pass's lower challenge is asked more work,
// not decoyed; a solution of a harder one than now asked joins; the wait of a browser without script is let in
// only at the lowest working rung of the rung in force.
func TestWorkIsPricedAtTheJoin(t *testing.T) {
	ks, _ := ParseKeySet("new:" + key2)
	room := snapRoom(t, `,"proof_of_work":8,"snapshot_ttl":2`) // rungs 2 (the base) to 8
	// 600 called in the last five minutes: 120 a minute.
	line := func(waiting int64) *Snapshot {
		return &Snapshot{At: now.Add(-time.Second), Line: store.Line{Epoch: 7, Issued: 1000 + waiting, Admitted: 1000, Recent: 600, RecentSince: now.Add(-5 * time.Minute)}}
	}
	calm, rush := line(60), line(1200) // rung 0; rung 2+3 = 5
	solution := func(bits int) string {
		nonce, _ := challenge.For("shop", "a1", "", bits).Solve()
		return nonce
	}
	tests := []struct {
		name   string
		own    int // the pass's bits, when it was handed out
		snap   *Snapshot
		joins  int
		work   string
		after  time.Duration
		action Action
		why    string
		bits   int // the challenge asked, when the action is Work
	}{
		{"a calm pass, the line still calm", 0, calm, 0, "", 0, Wait, "joined", 0},
		{"a calm pass in the rush: the rush's rung", 0, rush, 0, "", 0, Work, "work to do", 5},
		{"a calm pass, the client's fourth join: its rung", 0, calm, 4, "", 0, Work, "work to do", 6},
		{"a calm pass in the rush, the rush's work done", 0, rush, 0, solution(5), 0, Wait, "joined", 0},
		{"the base rung's work done, the rush since: more work", 2, rush, 0, solution(2), 0, Work, "more work to do", 5},
		{"a rung asked at an earlier join done, higher since: more work", 5, rush, 4, solution(5), 0, Work, "more work to do", 8},
		{"a rung asked at an earlier join, the line calm since: its own", 5, calm, 0, solution(5), 0, Wait, "joined", 0},
		{"harder work done than now asked (the ladder lowered): joins", 10, calm, 0, solution(10), 0, Wait, "joined", 0},
		{"a nonce of another rung than the pass's: failed", 5, calm, 0, solution(3), 0, Decoy, "failed solution", 0},
		{"the pass's own rung above the rung in force: its own", 5, calm, 0, "", 0, Work, "work to do", 5},
		{"no script, waited, the base rung in force: joins", 0, nil, 0, "", NoScriptWait, Wait, "joined", 0},
		{"no script, waited, the rush's rung in force: the work", 2, rush, 0, "", NoScriptWait, Work, "work to do", 5},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			pass, err := ks.Sign(Pass{Kind: Arrival, Room: "shop", ArrivalID: "a1", Work: tc.own, IssuedAt: now, Expires: now.Add(ArrivalTTL)})
			if err != nil {
				t.Fatal(err)
			}
			st := &lineStore{places: []store.Place{{Ticket: 1001, Outcome: store.Waiting, Line: line(1).Line}}}
			snap := tc.snap
			if snap != nil {
				moved := *snap
				moved.At = moved.At.Add(tc.after)
				snap = &moved
			}
			g := &Gate{Store: st, Keys: ks, Snapshots: &memSnapshots{snap: snap}, Joins: &countedJoins{joins: tc.joins}, Logf: t.Logf}
			d := g.Decide(context.Background(), room, Visitor{Passes: []string{pass}, Client: "203.0.113.9", Work: nonces(tc.work), Now: now.Add(tc.after)})
			if d.Action != tc.action || d.Why != tc.why {
				t.Fatalf("%v (%s, %v), want %v (%s)", d.Action, d.Why, d.Err, tc.action, tc.why)
			}
			if want := challenge.For("shop", "a1", "", tc.bits); tc.action == Work && d.Challenge != want {
				t.Errorf("asked %+v, want %+v", d.Challenge, want)
			}
			// A rung above the pass's own is recorded in the pass given
			// back, for the same arrival and expiry.
			if p, err := ks.Verify("shop", d.Pass, now); tc.action == Work && tc.bits > tc.own && (err != nil || p.ArrivalID != "a1" || p.Work != tc.bits || !p.Expires.Equal(now.Add(ArrivalTTL))) {
				t.Errorf("the pass given back: %+v (%v), want arrival a1 recording %d bits", p, err, tc.bits)
			}
			if tc.action == Work && tc.bits <= tc.own && d.Pass != "" {
				t.Errorf("a new pass for the rung the pass records")
			}
			if tc.why == "more work to do" && !errors.Is(d.Err, errMoreWork) {
				t.Errorf("err %v, want errMoreWork", d.Err)
			}
		})
	}
}

// TestUnknownPressureIsLearned (issue 34, defect 3): a POP with no fresh
// snapshot of the line fills it (one store call, Stats, for every
// arrival until the snapshot's TTL) and prices the work from it: an
// empty, calm room asks none. Only when the fill fails is the pressure
// unknown (the base rung), and that is logged.
func TestUnknownPressureIsLearned(t *testing.T) {
	ks, _ := ParseKeySet("new:" + key2)
	room := snapRoom(t, `,"proof_of_work":18,"snapshot_ttl":2`)
	empty := store.Line{Epoch: 7}
	long := store.Line{Epoch: 7, Issued: 2200, Admitted: 1000, Recent: 600, RecentSince: now.Add(-5 * time.Minute)} // 10 minutes
	tests := []struct {
		name  string
		snap  *Snapshot
		stats *store.Line
		bits  int
		calls int
		logs  int
	}{
		{"no snapshot, an empty room: no work", nil, &empty, 0, 1, 0},
		{"no snapshot, a long line: its rung", nil, &long, 15, 1, 0},
		{"a stale snapshot of a long line, the room empty now: no work", &Snapshot{At: now.Add(-5 * time.Second), Line: long}, &empty, 0, 1, 0},
		{"a fresh snapshot: no store call", &Snapshot{At: now.Add(-time.Second), Line: long}, &empty, 15, 0, 0},
		{"no snapshot, the store unreachable: the base rung, logged", nil, nil, 12, 1, 1},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			st := &lineStore{stats: tc.stats}
			logs := 0
			g := &Gate{Store: st, Keys: ks, Snapshots: &memSnapshots{snap: tc.snap}, Logf: func(string, ...any) { logs++ }}
			for i := 0; i < 3; i++ {
				d := g.Decide(context.Background(), room, Visitor{Now: now})
				p, err := ks.Verify("shop", d.Pass, now)
				if err != nil || p.Work != tc.bits {
					t.Fatalf("arrival %d: %v (%s) asking %d bits (%v), want %d", i, d.Action, d.Why, p.Work, err, tc.bits)
				}
				if tc.stats == nil {
					break // the fill failed: memSnapshots, unlike a POP, would fill again
				}
			}
			if st.statsCalls != tc.calls || logs != tc.logs {
				t.Errorf("%d store calls and %d log lines for the arrivals, want %d and %d", st.statsCalls, logs, tc.calls, tc.logs)
			}
		})
	}
}

// oneShardStore is a lineStore that reads one shard alone (ShardStats), and
// records which.
type oneShardStore struct {
	*lineStore
	read []int
}

func (s *oneShardStore) ShardStats(ctx context.Context, room string, p store.Policy, i int, now time.Time) (store.Line, error) {
	s.read = append(s.read, i)
	return s.lineStore.Stats(ctx, room, p, now)
}

// TestUnknownPressureIsLearnedShardByShard (issue 34, defect 3): a sharded
// room's POP with no fresh snapshot learns the pressure from shard 0's
// line alone (a shard's snapshot holds a shard's line, not the room's
// sum), so a calm sharded room asks no work either; a store that cannot
// read one shard leaves it unknown (the base rung), unlogged, until a
// join fills the snapshot.
func TestUnknownPressureIsLearnedShardByShard(t *testing.T) {
	ks, _ := ParseKeySet("new:" + key2)
	room := snapRoom(t, `,"proof_of_work":18,"snapshot_ttl":2,"shards":4`)
	empty := store.Line{Epoch: 7}
	for _, tc := range []struct {
		name   string
		st     store.Store
		bits   int
		shards []int
	}{
		{"a store that reads shard 0: no work", &oneShardStore{lineStore: &lineStore{stats: &empty}}, 0, []int{0}},
		{"a store that cannot: the base rung", &lineStore{stats: &empty}, 12, nil},
	} {
		t.Run(tc.name, func(t *testing.T) {
			logs := 0
			g := &Gate{Store: tc.st, Keys: ks, Snapshots: &memSnapshots{}, Logf: func(string, ...any) { logs++ }}
			for i := 0; i < 3; i++ {
				d := g.Decide(context.Background(), room, Visitor{Now: now})
				p, err := ks.Verify("shop", d.Pass, now)
				if err != nil || p.Work != tc.bits {
					t.Fatalf("arrival %d: %v (%s) asking %d bits (%v), want %d", i, d.Action, d.Why, p.Work, err, tc.bits)
				}
			}
			var read []int
			if ss, ok := tc.st.(*oneShardStore); ok {
				read = ss.read
			}
			if fmt.Sprint(read) != fmt.Sprint(tc.shards) || logs != 0 {
				t.Errorf("shards read %v, %d log lines; want %v, none", read, logs, tc.shards)
			}
		})
	}
}

// TestALostJoinArrivesAgain (issue 34, defect 2): a join the store
// answers lost (the arrival's place is gone: called, or its session ended)
// takes no place; its holder is a newcomer again, given a new arrival pass
// and its work priced again, whether it joined with an arrival pass or
// with a decoy pass and the decoy's way out.
func TestALostJoinArrivesAgain(t *testing.T) {
	ks, _ := ParseKeySet("new:" + key2)
	room := snapRoom(t, `,"proof_of_work":8,"snapshot_ttl":2`)
	decoyPass := Pass{Kind: DecoyKind, Room: "shop", ArrivalID: "d1", Number: 900, StartAhead: 100, Work: 8, Joined: now, IssuedAt: now, Expires: now.Add(DecoyTTL)}
	way, _ := challenge.For("shop", "d1", "", 8).Solve()
	for _, tc := range []struct {
		name string
		pass Pass
		work string
	}{
		{"an arrival pass", Pass{Kind: Arrival, Room: "shop", ArrivalID: "a1", IssuedAt: now, Expires: now.Add(ArrivalTTL)}, ""},
		{"a decoy pass and the way out", decoyPass, way},
	} {
		t.Run(tc.name, func(t *testing.T) {
			pass, err := ks.Sign(tc.pass)
			if err != nil {
				t.Fatal(err)
			}
			calm := &Snapshot{At: now, Line: store.Line{Epoch: 7}}
			st := &lineStore{places: []store.Place{{Ticket: 3, Outcome: store.Lost, Line: calm.Line}}}
			g := &Gate{Store: st, Keys: ks, Snapshots: &memSnapshots{snap: calm}}
			d := g.Decide(context.Background(), room, Visitor{Passes: []string{pass}, Work: nonces(tc.work), Now: now})
			p, err := ks.Verify("shop", d.Pass, now)
			if d.Action != Arrive || d.Why != "place lost, arriving again" || err != nil || p.Kind != Arrival || p.ArrivalID == tc.pass.ArrivalID {
				t.Errorf("%v (%s), pass %v %q (%v); want a new arrival pass", d.Action, d.Why, p.Kind, p.ArrivalID, err)
			}
			if len(st.places) != 0 {
				t.Errorf("the join was not asked")
			}
		})
	}
}

// nonces is a request's offered solutions when it offers nonce ("" for
// none).
func nonces(nonce string) []string {
	if nonce == "" {
		return nil
	}
	return []string{nonce}
}

// TestEveryWorkValueIsTried (issue 34, defect 10): a request may offer
// several solutions (a work cookie planted from a sibling domain comes
// ahead of the browser's own); each is tried, as passes are, so a wrong
// first value decoys nobody whose later one solves, neither at the join
// nor at the decoy's way out.
func TestEveryWorkValueIsTried(t *testing.T) {
	ks, _ := ParseKeySet("new:" + key2)
	room := snapRoom(t, `,"proof_of_work":8,"snapshot_ttl":0`)
	arrival := Pass{Kind: Arrival, Room: "shop", ArrivalID: "a1", Work: 8, IssuedAt: now, Expires: now.Add(ArrivalTTL)}
	decoy := Pass{Kind: DecoyKind, Room: "shop", ArrivalID: "a1", Number: 900, StartAhead: 100, Work: 8, Joined: now, IssuedAt: now, Expires: now.Add(DecoyTTL)}
	right, _ := challenge.For("shop", "a1", "", 8).Solve()
	wrong := "zz"
	if challenge.For("shop", "a1", "", 8).Check(wrong) == nil {
		t.Fatal("the wrong solution happens to solve")
	}
	for _, tc := range []struct {
		name   string
		pass   Pass
		work   []string
		action Action
		why    string
	}{
		{"the arrival, planted then right", arrival, []string{wrong, right}, Wait, "joined"},
		{"the arrival, right then planted", arrival, []string{right, wrong}, Wait, "joined"},
		{"the arrival, only planted", arrival, []string{wrong}, Decoy, "failed solution"},
		{"the decoy's way out, planted then right", decoy, []string{wrong, right}, Wait, "joined"},
		{"the decoy, only planted", decoy, []string{wrong}, Decoy, "decoyed"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			pass, err := ks.Sign(tc.pass)
			if err != nil {
				t.Fatal(err)
			}
			st := &lineStore{places: []store.Place{{Ticket: 4, Outcome: store.Waiting, Line: store.Line{Epoch: 7, Issued: 4}}}}
			g := &Gate{Store: st, Keys: ks}
			d := g.Decide(context.Background(), room, Visitor{Passes: []string{pass}, Work: tc.work, Now: now})
			if d.Action != tc.action || d.Why != tc.why {
				t.Errorf("%v (%s, %v), want %v (%s)", d.Action, d.Why, d.Err, tc.action, tc.why)
			}
		})
	}
}
