package queue

import (
	"context"
	"errors"
	"testing"
	"time"

	"github.com/edgequeue/waitingroom/challenge"
	"github.com/edgequeue/waitingroom/store"
)

// countedJoins is a JoinCounter that has counted joins for every client,
// and counts each Join it is asked.
type countedJoins struct{ joins, counted int }

func (c *countedJoins) Join(room *Room, _ Visitor) (string, error) {
	c.counted++
	if c.joins+c.counted > room.JoinsPerIPPerMinute {
		return "address", nil
	}
	return "", nil
}

func (c *countedJoins) Joins(*Room, string) (int, error) { return c.joins, nil }

func (c *countedJoins) Penalized(*Room, Visitor) (bool, error) { return false, nil }

// TestTheDoorsWork follows newcomers to a room with a proof of work: the
// rung they are asked for, from the line's pressure in the POP's snapshot
// and their own joins; a join without the solution is asked again, and
// one with another pass's, or a malformed one, is sent to the decoy line,
// with no store call and no join counted; the solution joins.
func TestTheDoorsWork(t *testing.T) {
	ks, _ := ParseKeySet("new:" + key2)
	room := snapRoom(t, `,"proof_of_work":20,"snapshot_ttl":2`)
	// 600 called in the last five minutes: 120 a minute.
	line := func(waiting int64) *Snapshot {
		return &Snapshot{At: now.Add(-time.Second), Line: store.Line{Epoch: 7, Issued: 1000 + waiting, Admitted: 1000, Recent: 600, RecentSince: now.Add(-5 * time.Minute)}}
	}
	tests := []struct {
		name  string
		snap  *Snapshot
		joins int
		bits  int
	}{
		{"no snapshot, the store unreachable: the base rung", nil, 0, 14},
		{"a calm line: no work", line(60), 0, 0},
		{"a stale snapshot, the store unreachable: the base rung", &Snapshot{At: now.Add(-5 * time.Second), Line: line(60).Line}, 0, 14},
		{"ten minutes of line", line(1200), 0, 17},
		{"ten minutes, the client's fourth join", line(1200), 4, 20},
		{"a calm line, the client's second join", line(60), 2, 16},
		{"a paused line", &Snapshot{At: now, Line: store.Line{Epoch: 7, Issued: 5, Paused: true}}, 0, 20},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			st := &lineStore{places: []store.Place{{Ticket: 1001, Outcome: store.Waiting, Line: line(1).Line}}}
			joins := &countedJoins{joins: tc.joins}
			g := &Gate{Store: st, Keys: ks, Snapshots: &memSnapshots{snap: tc.snap}, Joins: joins, Logf: t.Logf}
			ask := func(pass, work string) Decision {
				return g.Decide(context.Background(), room, Visitor{Passes: []string{pass}, Client: "203.0.113.9", Work: nonces(work), Now: now})
			}
			d := ask("", "")
			p, err := ks.Verify("shop", d.Pass, now)
			if err != nil {
				t.Fatalf("the arrival pass: %v", err)
			}
			if tc.bits == 0 {
				if d.Action != Arrive || p.Work != 0 {
					t.Fatalf("%v asking %d bits, want an arrival asking none", d.Action, p.Work)
				}
				return
			}
			if d.Action != Work || p.Work != tc.bits || d.Challenge != challenge.For("shop", p.ArrivalID, "", tc.bits) {
				t.Fatalf("%v (%s) asking %d bits, challenge %+v; want work of %d bits for the pass", d.Action, d.Why, p.Work, d.Challenge, tc.bits)
			}
			if tc.bits > 16 {
				return // solving is the lower rungs' part: a few ms each
			}
			other := challenge.For("shop", "another arrival", "", tc.bits)
			otherNonce, _ := other.Solve()
			again := ask(d.Pass, "")
			if again.Action != Work || again.Pass != "" || !errors.Is(again.Err, challenge.Missing) || again.Challenge != d.Challenge {
				t.Errorf("offering nothing: %v (%v), new pass %v; want the same work asked again", again.Action, again.Err, again.Pass != "")
			}
			for _, bad := range []string{"A!", otherNonce} {
				if d.Challenge.Check(bad) == nil {
					continue // the other pass's nonce happens to solve this one too
				}
				decoyed := ask(d.Pass, bad)
				dp, err := ks.Verify("shop", decoyed.Pass, now)
				if decoyed.Action != Decoy || decoyed.Why != "failed solution" || err != nil || dp.Kind != DecoyKind || decoyed.Challenge.Bits != 20 {
					t.Errorf("offering %q: %v (%s), pass %v %v, challenge of %d bits; want a decoy pass and the top rung's work", bad, decoyed.Action, decoyed.Why, dp.Kind, err, decoyed.Challenge.Bits)
				}
			}
			if joins.counted != 0 || len(st.places) != 1 {
				t.Errorf("unsolved joins counted %d joins and made %d store calls, want none", joins.counted, 1-len(st.places))
			}
			nonce, _ := d.Challenge.Solve()
			if joined := ask(d.Pass, nonce); joined.Action != Wait || joined.Place.Ticket != 1001 || joins.counted != 1 {
				t.Errorf("the solution: %v (%s), ticket %d, %d joins counted; want to wait with ticket 1001, one join", joined.Action, joined.Why, joined.Place.Ticket, joins.counted)
			}
		})
	}
}

// TestTheLadderLoweredFreesPasses: a pass asking more work than the room's
// ladder now reaches asks the room's top, and none once the room asks no
// work.
func TestTheLadderLoweredFreesPasses(t *testing.T) {
	ks, _ := ParseKeySet("new:" + key2)
	pass, err := ks.Sign(Pass{Kind: Arrival, Room: "shop", ArrivalID: "a1", Work: 20, IssuedAt: now, Expires: now.Add(ArrivalTTL)})
	if err != nil {
		t.Fatal(err)
	}
	for _, tc := range []struct {
		room   string
		action Action
		bits   int
	}{{`,"proof_of_work":20`, Work, 20}, {`,"proof_of_work":8`, Work, 8}, {``, Wait, 0}} {
		st := &lineStore{places: []store.Place{{Ticket: 3, Outcome: store.Waiting, Line: store.Line{Epoch: 7, Issued: 3}}}}
		g := &Gate{Store: st, Keys: ks}
		d := g.Decide(context.Background(), snapRoom(t, tc.room), Visitor{Passes: []string{pass}, Now: now})
		if d.Action != tc.action || d.Challenge.Bits != tc.bits {
			t.Errorf("room {%s}: %v asking %d bits, want %v asking %d", tc.room, d.Action, d.Challenge.Bits, tc.action, tc.bits)
		}
	}
}

// TestABrowserWithoutScriptWaitsInstead: at the ladder's lowest working
// rung a join that offers no solution is let in once NoScriptWait has
// passed since the arrival pass, not before; a wrong solution never is
// (it is sent to the decoy line), and above the lowest rung the work is asked whatever the wait.
func TestABrowserWithoutScriptWaitsInstead(t *testing.T) {
	ks, _ := ParseKeySet("new:" + key2)
	room := snapRoom(t, `,"proof_of_work":20,"snapshot_ttl":0`)
	pass := func(bits int) string {
		p, err := ks.Sign(Pass{Kind: Arrival, Room: "shop", ArrivalID: "a1", Work: bits, IssuedAt: now, Expires: now.Add(ArrivalTTL)})
		if err != nil {
			t.Fatal(err)
		}
		return p
	}
	for _, tc := range []struct {
		name   string
		bits   int
		after  time.Duration
		work   string
		action Action
	}{
		{"the lowest rung, at once", 14, 0, "", Work},
		{"the lowest rung, just before the wait", 14, NoScriptWait - time.Second, "", Work},
		{"the lowest rung, after the wait", 14, NoScriptWait, "", Wait},
		{"the lowest rung, a wrong solution after the wait", 14, NoScriptWait, "0", Decoy},
		{"a higher rung, long after", 16, time.Minute, "", Work},
	} {
		t.Run(tc.name, func(t *testing.T) {
			if tc.work != "" && challenge.For("shop", "a1", "", tc.bits).Check(tc.work) == nil {
				t.Skip("the wrong solution happens to solve")
			}
			st := &lineStore{places: []store.Place{{Ticket: 4, Outcome: store.Waiting, Line: store.Line{Epoch: 7, Issued: 4}}}}
			g := &Gate{Store: st, Keys: ks}
			d := g.Decide(context.Background(), room, Visitor{Passes: []string{pass(tc.bits)}, Work: nonces(tc.work), Now: now.Add(tc.after)})
			if d.Action != tc.action {
				t.Errorf("%v (%s, %v), want %v", d.Action, d.Why, d.Err, tc.action)
			}
		})
	}
	if !NoScript(room, challenge.Challenge{Bits: 14}) || NoScript(room, challenge.Challenge{Bits: 15}) {
		t.Error("NoScript: want the lowest working rung, 14 bits, only")
	}
}
