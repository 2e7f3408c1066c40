package queue

import (
	"context"
	"testing"
	"time"

	"github.com/edgequeue/waitingroom/challenge"
	"github.com/edgequeue/waitingroom/store"
)

// TestTheDecoysPlace: a decoy's place moves as a line does (fewer ahead,
// more behind) and never reaches the front, for as long as its pass
// lasts; it starts behind the real line when the POP's snapshot shows
// one, and the way out is the room's top rung as the pass was issued.
func TestTheDecoysPlace(t *testing.T) {
	ks, _ := ParseKeySet("new:" + key2)
	room := snapRoom(t, `,"proof_of_work":18,"snapshot_ttl":2`)
	snap := &Snapshot{At: now, Line: store.Line{Epoch: 7, Issued: 9000, Admitted: 1000}}
	g := &Gate{Store: &lineStore{}, Keys: ks, Snapshots: &memSnapshots{snap: snap}}
	d := g.Decide(context.Background(), room, Visitor{Now: now, Hostile: func() string { return "bad bot" }})
	p, err := ks.Verify("shop", d.Pass, now)
	if d.Action != Decoy || d.Why != "bad bot" || err != nil || p.Kind != DecoyKind || !p.Expires.Equal(now.Add(DecoyTTL)) {
		t.Fatalf("a hostile newcomer: %v (%s), pass %+v (%v); want a decoy pass for an hour", d.Action, d.Why, p, err)
	}
	if d.Place.Admitted != 1000 || d.Place.Ahead < 8000 || d.Place.Ticket != d.Place.Admitted+d.Place.Ahead+1 || d.Challenge != challenge.For("shop", p.ArrivalID, "", 18) {
		t.Errorf("the first place: %+v, challenge %+v; want behind the real line's 8,000, the top rung's work", d.Place, d.Challenge)
	}
	prev := d.Place
	for _, after := range []time.Duration{time.Minute, 30 * time.Minute, DecoyTTL - time.Second} {
		at := now.Add(after)
		pl := g.Decide(context.Background(), room, Visitor{Passes: []string{d.Pass}, Now: at}).Place
		if pl.Ticket != prev.Ticket || pl.Ahead > prev.Ahead || pl.Ahead < 1 || pl.Issued < prev.Issued || pl.Admitted != pl.Ticket-pl.Ahead-1 {
			t.Errorf("%v on: %+v after %+v; want the same ticket, fewer ahead but some, more issued", after, pl, prev)
		}
		prev = pl
	}
	if half := d.Place.Ahead / 2; prev.Ahead > half || prev.Ahead < half/4 {
		t.Errorf("an hour on, %d ahead of %d at first: want it halved, about twice", prev.Ahead, d.Place.Ahead)
	}
}

// TestWhoIsDecoyed: only a room with a proof of work (the way out) has a
// decoy line, and it asks the edge's judgement only of a newcomer; a
// ticket outranks a decoy pass, which outranks an arrival pass; a decoy
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
	decoyPass := sign(Pass{Kind: DecoyKind, Room: "shop", ArrivalID: "d1", Number: 700, StartAhead: 300, Work: 8, IssuedAt: now, Expires: now.Add(DecoyTTL)})
	arrivalPass := sign(Pass{Kind: Arrival, Room: "shop", ArrivalID: "a1", IssuedAt: now, Expires: now.Add(ArrivalTTL)})
	ticketPass := sign(Pass{Kind: Ticket, Room: "shop", Number: 3, Epoch: 7, Seen: now, IssuedAt: now, Expires: now.Add(time.Hour)})
	for _, tc := range []struct {
		name   string
		room   string
		passes []string
		want   Action
		asked  int
	}{
		{"a newcomer, a room with a decoy line", `,"proof_of_work":8`, nil, Decoy, 1},
		{"a newcomer, no proof of work", ``, nil, Arrive, 0},
		{"a waiting visitor", `,"proof_of_work":8,"snapshot_ttl":0`, []string{ticketPass}, Wait, 0},
		{"a decoy pass and an arrival pass", `,"proof_of_work":8`, []string{arrivalPass, decoyPass}, Decoy, 0},
		{"a ticket and a decoy pass", `,"proof_of_work":8,"snapshot_ttl":0`, []string{decoyPass, ticketPass}, Wait, 0},
		{"a decoy pass, the proof of work turned off", ``, []string{decoyPass}, Arrive, 0},
	} {
		t.Run(tc.name, func(t *testing.T) {
			asked := 0
			st := &lineStore{places: []store.Place{{Ticket: 3, Outcome: store.Waiting, Line: store.Line{Epoch: 7, Issued: 3}}}}
			g := &Gate{Store: st, Keys: ks}
			d := g.Decide(context.Background(), snapRoom(t, tc.room), Visitor{Passes: tc.passes, Now: now,
				Hostile: func() string { asked++; return "decoy rule ip" }})
			if d.Action != tc.want || asked != tc.asked {
				t.Errorf("%v (%s), the edge asked %d times; want %v, asked %d", d.Action, d.Why, asked, tc.want, tc.asked)
			}
		})
	}
}
