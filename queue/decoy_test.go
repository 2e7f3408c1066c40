package queue

import (
	"context"
	"encoding/base64"
	"encoding/json"
	"fmt"
	"sort"
	"strings"
	"testing"
	"time"

	"github.com/edgequeue/waitingroom/challenge"
	"github.com/edgequeue/waitingroom/store"
)

// TestTheDecoysPlace: a decoy's place moves as a line does (fewer ahead,
// more behind) and never reaches the front, for its hour; it starts
// behind the real line, as the store tells it (the POP's snapshot when
// the store does not answer), and the way out is the room's top rung. Its
// pass lives as long as a ticket's, and is renewed when a real ticket's
// would be; it asks the store when a real place would (its join, a poll
// not answered from the snapshot), so that it takes as long; after the
// hour its holder is a newcomer.
func TestTheDecoysPlace(t *testing.T) {
	ks, _ := ParseKeySet("new:" + key2)
	room := snapRoom(t, `,"proof_of_work":18,"snapshot_ttl":2`)
	snap := &Snapshot{At: now, Line: store.Line{Epoch: 6, Issued: 5000, Admitted: 1000}}
	st := &lineStore{}
	g := &Gate{Store: st, Keys: ks, Snapshots: &memSnapshots{snap: snap}}
	if d := hostileJoin(t, g, room, "bad bot"); d.Place.Ahead < 4000 || st.statsCalls != 1 {
		t.Errorf("a decoy while the store is down: %+v after %d store calls; want the snapshot's line behind it, one call", d.Place, st.statsCalls)
	}
	st.stats, st.statsCalls = &store.Line{Epoch: 7, Issued: 9000, Admitted: 1000}, 0
	d := hostileJoin(t, g, room, "bad bot")
	if st.statsCalls != 1 {
		t.Errorf("a decoy's first answer asked the store %d times, want once, as a join does", st.statsCalls)
	}
	p, err := ks.Verify("shop", d.Pass, now)
	passTTL := seconds(room.QueueTimeout) + TicketGrace
	if d.Action != Decoy || d.Why != "bad bot" || err != nil || p.Kind != DecoyKind || !p.Joined.Equal(now) || p.Epoch != 7 ||
		!p.Expires.Equal(now.Add(passTTL)) || d.PassTTL != passTTL {
		t.Fatalf("a hostile newcomer: %v (%s), pass %+v (%v); want a decoy pass in the snapshot's line, as long-lived as a ticket's", d.Action, d.Why, p, err)
	}
	if d.Place.Admitted != 1000 || d.Place.Ahead < 8000 || d.Place.Ticket != d.Place.Admitted+d.Place.Ahead+1 || d.Challenge != challenge.For("shop", p.ArrivalID, "", 18) {
		t.Errorf("the first place: %+v, challenge %+v; want behind the real line's 8,000, the top rung's work", d.Place, d.Challenge)
	}
	prev, pass := d.Place, d.Pass
	for _, tc := range []struct {
		after   time.Duration
		renewed bool
	}{{time.Minute, false}, {30 * time.Minute, true}, {DecoyTTL - time.Second, true}} {
		at := now.Add(tc.after)
		polled := g.Decide(context.Background(), room, Visitor{Passes: []string{pass}, Now: at})
		pl := polled.Place
		if polled.Action != Decoy || pl.Ticket != prev.Ticket || pl.Ahead > prev.Ahead || pl.Ahead < 1 || pl.Issued < prev.Issued || pl.Admitted != pl.Ticket-pl.Ahead-1 {
			t.Errorf("%v on: %v %+v after %+v; want the same ticket, fewer ahead but some, more issued", tc.after, polled.Action, pl, prev)
		}
		// A real ticket's poll inside a third of the queue timeout
		// since the store saw it is answered from the snapshot, with
		// no new pass; a later one brings one.
		if (polled.Pass != "") != tc.renewed {
			t.Errorf("%v on: renewed pass %q, want one: %v", tc.after, polled.Pass, tc.renewed)
		}
		if calls := map[bool]int{false: 1, true: 2}[tc.renewed]; st.statsCalls != calls {
			t.Errorf("%v on: %d store calls in all, want %d", tc.after, st.statsCalls, calls)
		}
		st.statsCalls = 1
		if polled.Pass != "" {
			pass = polled.Pass
		}
		prev = pl
	}
	if d := g.Decide(context.Background(), room, Visitor{Passes: []string{pass}, Now: now.Add(DecoyTTL + time.Second),
		Hostile: func() string { return "" }}); d.Action != Arrive && d.Action != Work {
		t.Errorf("after the decoy's hour: %v (%s), want a newcomer's arrival", d.Action, d.Why)
	}
	if half := d.Place.Ahead / 2; prev.Ahead > half || prev.Ahead < half/4 {
		t.Errorf("an hour on, %d ahead of %d at first: want it halved, about twice", prev.Ahead, d.Place.Ahead)
	}
}

// hostileJoin is a newcomer judged hostile (for why) on its way into the
// decoy line, a real newcomer's step for step: its arrival, its work done
// when asked, and its join, where it is judged. The snapshot, if any, is
// fresh: the arrival asks the store nothing.
func hostileJoin(t *testing.T, g *Gate, room *Room, why string) Decision {
	t.Helper()
	hostile := func() string { return why }
	a := g.Decide(context.Background(), room, Visitor{Now: now, Hostile: hostile})
	var work []string
	switch a.Action {
	case Work:
		nonce, _ := a.Challenge.Solve()
		work = []string{nonce}
	case Arrive:
	default:
		t.Fatalf("a hostile newcomer's arrival: %v (%s), want a newcomer's", a.Action, a.Why)
	}
	return g.Decide(context.Background(), room, Visitor{Passes: []string{a.Pass}, Work: work, Now: now, Hostile: hostile})
}

// TestWhoIsDecoyed: only a room with a proof of work (the way out) has a
// decoy line, and it asks the edge's judgement only of a newcomer, at its
// join (its arrival is a real newcomer's, work and all); a ticket outranks a decoy pass, which outranks an arrival pass; a decoy
// pass is a newcomer's again once the room's proof of work is off.
func TestWhoIsDecoyed(t *testing.T) {
	ks, _ := ParseKeySet("new:" + key2)
	sign := func(p Pass) string {
		token, err := ks.Sign(p)
		if err != nil {
			t.Fatal(err)
		}
		return token
	}
	decoyPass := sign(Pass{Kind: DecoyKind, Room: "shop", ArrivalID: "d1", Number: 700, StartAhead: 300, Joined: now, IssuedAt: now, Expires: now.Add(DecoyTTL)})
	arrivalPass := sign(Pass{Kind: Arrival, Room: "shop", ArrivalID: "a1", IssuedAt: now, Expires: now.Add(ArrivalTTL)})
	// The base rung's work (no pressure known: no snapshot), 8 bits less 6.
	nonce, _ := challenge.For("shop", "a1", "", 2).Solve()
	baseWork := []string{nonce}
	ticketPass := sign(Pass{Kind: Ticket, Room: "shop", Number: 3, Epoch: 7, Seen: now, IssuedAt: now, Expires: now.Add(time.Hour)})
	for _, tc := range []struct {
		name   string
		room   string
		passes []string
		work   []string
		want   Action
		asked  int
	}{
		{"a newcomer's arrival, a room with a decoy line", `,"proof_of_work":8`, nil, nil, Work, 0},
		{"a newcomer's join, its work done", `,"proof_of_work":8`, []string{arrivalPass}, baseWork, Decoy, 1},
		{"a newcomer's join, its work not done", `,"proof_of_work":8`, []string{arrivalPass}, nil, Work, 0},
		{"a newcomer, no proof of work", ``, nil, nil, Arrive, 0},
		{"a waiting visitor", `,"proof_of_work":8,"snapshot_ttl":0`, []string{ticketPass}, nil, Wait, 0},
		{"a decoy pass and an arrival pass", `,"proof_of_work":8`, []string{arrivalPass, decoyPass}, nil, Decoy, 0},
		{"a ticket and a decoy pass", `,"proof_of_work":8,"snapshot_ttl":0`, []string{decoyPass, ticketPass}, nil, Wait, 0},
		{"a decoy pass, the proof of work turned off", ``, []string{decoyPass}, nil, Arrive, 0},
	} {
		t.Run(tc.name, func(t *testing.T) {
			asked := 0
			st := &lineStore{places: []store.Place{{Ticket: 3, Outcome: store.Waiting, Line: store.Line{Epoch: 7, Issued: 3}}}}
			g := &Gate{Store: st, Keys: ks}
			d := g.Decide(context.Background(), snapRoom(t, tc.room), Visitor{Passes: tc.passes, Work: tc.work, Now: now,
				Hostile: func() string { asked++; return "decoy rule ip" }})
			if d.Action != tc.want || asked != tc.asked {
				t.Errorf("%v (%s), the edge asked %d times; want %v, asked %d", d.Action, d.Why, asked, tc.want, tc.asked)
			}
		})
	}
}

// TestADecoyLooksReal: what a client can read of a decoy place, the
// pass's claims and the answer's challenge, has the shapes of a real
// place's: a ticket's claims, the same names and types, and the top
// rung's challenge. Only the server tells them apart, by the key that
// signed the pass, and a ticket signed with the room's key is no decoy's.
func TestADecoyLooksReal(t *testing.T) {
	ks, _ := ParseKeySet("new:" + key2 + ",old:" + key1)
	room := snapRoom(t, `,"proof_of_work":18,"snapshot_ttl":2`)
	snap := &Snapshot{At: now, Line: store.Line{Epoch: 7, Issued: 9000, Admitted: 1000}}
	st := &lineStore{places: []store.Place{{Ticket: 9001, Outcome: store.Waiting, Line: store.Line{Epoch: 7, Issued: 9001, Admitted: 1000}}}}
	g := &Gate{Store: st, Keys: ks, Snapshots: &memSnapshots{snap: snap}}
	arrival := mustSign(t, ks, Pass{Kind: Arrival, Room: "shop", ArrivalID: "0123456789abcdef0123456789abcdef", IssuedAt: now, Expires: now.Add(ArrivalTTL)})
	// The real newcomer does the work the door asks (the line is long:
	// its top rung), then joins.
	asked := g.Decide(context.Background(), room, Visitor{Passes: []string{arrival}, Now: now, Hostile: func() string { return "" }})
	nonce, _ := asked.Challenge.Solve()
	real := g.Decide(context.Background(), room, Visitor{Passes: []string{asked.Pass}, Work: []string{nonce}, Now: now, Hostile: func() string { return "" }})
	decoy := hostileJoin(t, g, room, "bad bot")
	if real.Action != Wait || decoy.Action != Decoy {
		t.Fatalf("the real newcomer: %v (%s); the hostile one: %v (%s); want a place in each line", real.Action, real.Why, decoy.Action, decoy.Why)
	}
	if a, b := claimShapes(t, real.Pass), claimShapes(t, decoy.Pass); a != b {
		t.Errorf("a real ticket's claims: %s\na decoy's: %s\nwant the same", a, b)
	}
	if real.PassTTL != decoy.PassTTL || real.Challenge.Bits != 18 || decoy.Challenge.Bits != 18 || len(real.Challenge.Seed) != len(decoy.Challenge.Seed) {
		t.Errorf("pass TTLs %v and %v, challenges %+v and %+v; want the same TTL and the top rung's work in both",
			real.PassTTL, decoy.PassTTL, real.Challenge, decoy.Challenge)
	}
	rp, err1 := ks.Verify("shop", real.Pass, now)
	dp, err2 := ks.Verify("shop", decoy.Pass, now)
	if err1 != nil || err2 != nil || rp.Kind != Ticket || dp.Kind != DecoyKind {
		t.Errorf("verified: %q (%v) and %q (%v); want a ticket and a decoy pass", rp.Kind, err1, dp.Kind, err2)
	}
	// The decoy's claims under the room's own key would be a real
	// ticket: only the keys' holder can sign them so.
	parts := strings.Split(decoy.Pass, ".")
	raw, _ := base64.RawURLEncoding.DecodeString(parts[1])
	if p, err := ks.Verify("shop", signRaw(ks.Key(), `{"alg":"HS256","kid":"new","typ":"JWT"}`, string(raw)), now); err != nil || p.Kind != Ticket {
		t.Errorf("the decoy's claims under the room's key: %q, %v; want a ticket", p.Kind, err)
	}
}

// claimShapes is a pass's claims as a client reads them without the key:
// each name and its JSON type, sorted.
func claimShapes(t *testing.T, token string) string {
	t.Helper()
	parts := strings.Split(token, ".")
	raw, err := base64.RawURLEncoding.DecodeString(parts[1])
	claims := map[string]any{}
	if err != nil || json.Unmarshal(raw, &claims) != nil {
		t.Fatalf("pass %q is not a token", token)
	}
	var shapes []string
	for k, v := range claims {
		shape := fmt.Sprintf("%s:%T", k, v)
		if k == "knd" {
			shape += "=" + v.(string)
		}
		shapes = append(shapes, shape)
	}
	sort.Strings(shapes)
	return strings.Join(shapes, " ")
}

// TestTheWayOutHoldsWhileTheArrivalIsRemembered: the decoy's way out
// joins under the decoy's arrival, which the store remembers for
// ArrivalTTL from its join (one solution, one place). A way out taken
// within that joins; one taken later is judged afresh, as a newcomer,
// without a join: its solution could otherwise buy a second place once
// the first is gone and forgotten.
func TestTheWayOutHoldsWhileTheArrivalIsRemembered(t *testing.T) {
	ks, _ := ParseKeySet("new:" + key2)
	room := snapRoom(t, `,"proof_of_work":8,"snapshot_ttl":0`)
	way, _ := challenge.For("shop", "d1", "", 8).Solve()
	for _, tc := range []struct {
		name   string
		joined time.Time
		want   Action
		joins  int
	}{
		{"within the arrival's memory", now.Add(-ArrivalTTL + time.Second), Wait, 1},
		{"past it", now.Add(-ArrivalTTL - time.Second), Work, 0}, // a newcomer's work, priced again
	} {
		t.Run(tc.name, func(t *testing.T) {
			pass, err := ks.Sign(Pass{Kind: DecoyKind, Room: "shop", ArrivalID: "d1", Number: 900, StartAhead: 100,
				Joined: tc.joined, IssuedAt: now, Expires: now.Add(time.Hour)})
			if err != nil {
				t.Fatal(err)
			}
			st := &lineStore{places: []store.Place{{Ticket: 4, Outcome: store.Waiting, Line: store.Line{Epoch: 7, Issued: 4}}}}
			g := &Gate{Store: st, Keys: ks}
			d := g.Decide(context.Background(), room, Visitor{Passes: []string{pass}, Work: []string{way}, Now: now})
			if d.Action != tc.want || 1-len(st.places) != tc.joins {
				t.Errorf("%v (%s), %d joins; want %v, %d joins", d.Action, d.Why, 1-len(st.places), tc.want, tc.joins)
			}
		})
	}
}

// TestAShardedRoomsDecoyReadsOneShard: in a sharded room the decoy's one
// store call reads one shard's line (the one its pass is in), as a real
// place's one call does, not the room's sum, a call to every shard.
func TestAShardedRoomsDecoyReadsOneShard(t *testing.T) {
	ks, _ := ParseKeySet("new:" + key2)
	room := snapRoom(t, `,"proof_of_work":8,"snapshot_ttl":0,"shards":4`)
	st := &oneShardStore{lineStore: &lineStore{stats: &store.Line{Epoch: 7, Issued: 900, Admitted: 100}}}
	d := hostileJoin(t, &Gate{Store: st, Keys: ks}, room, "bad bot")
	if d.Action != Decoy || d.Place.Ahead < 800 || fmt.Sprint(st.read) != "[0]" || st.statsCalls != 1 {
		t.Errorf("%v (%s) %+v: shards read %v in %d calls; want a decoy behind shard 0's line, read once", d.Action, d.Why, d.Place, st.read, st.statsCalls)
	}
}
