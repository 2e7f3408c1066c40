// The priority lane at the gate: an invite becomes a place in it, and a
// place in it gets figures of its own.

package queue

import (
	"context"
	"crypto/sha256"
	"encoding/hex"
	"math"

	"github.com/edgequeue/waitingroom/store"
)

// Invited gives the visitor who follows inv's link a place in room's
// priority lane, with one store call (store.Store.JoinPriority), and
// returns the decision for it: Wait with a ticket pass, or Admit with a
// session pass when called at once; the edge sets the pass and sends the
// visitor on to inv.To. A store failure follows the room's on_store_error
// as a join does (Busy, or Admit failing open, without a pass).
//
// It refuses (an error wrapping ErrBadInvite) an invite for another room
// or path (Invite.CheckRoom), into a room without a priority lane
// (ErrNoPriorityLane), or whose uses are all taken (ErrInviteSpent).
//
// A visitor who follows the same link again keeps one place and uses no
// other use: one who already holds a place in the lane is sent on without
// a store call, and otherwise the store knows the arrival (inviteArrival).
// A reject room is Closed; a passthrough room has no line to skip, so its
// visitor is sent on (Admit without a pass) and no use is taken.
func (g *Gate) Invited(ctx context.Context, room *Room, inv Invite, v Visitor) (Decision, error) {
	room = room.At(v.Now)
	if err := inv.CheckRoom(room); err != nil {
		return Decision{}, err
	}
	switch {
	case room.Mode == Reject:
		return Decision{Action: Closed, Why: "room closed"}, nil
	case room.Mode == Passthrough:
		return Decision{Action: Admit, Why: "invited to a room without a line"}, nil
	case room.PriorityShare <= 0:
		return Decision{}, invalid(ErrNoPriorityLane, "room %q has priority_share 0", room.Name)
	}
	if pass, _ := g.bestPass(room, v); pass.Kind == Ticket && pass.Number < 0 {
		return Decision{Action: Wait, Why: "already in the priority lane"}, nil
	}
	arrival, err := inviteArrival(inv, v)
	if err != nil {
		return Decision{Action: Busy, Why: "arrival id", Err: err}, nil
	}
	pl, err := g.Store.JoinPriority(ctx, room.Name, room.Policy(v.Now), arrival,
		store.Invite{ID: inv.ID, Uses: inv.Uses, Until: inv.Expires}, v.Now)
	if err != nil {
		return g.storeFailed(room, "invited join failed", err), nil
	}
	if pl.Outcome == store.InviteSpent {
		return Decision{}, invalid(ErrInviteSpent, "all %d uses of invite %s are taken", inv.Uses, inv.ID)
	}
	return g.settle(room, v, pl, map[store.Outcome]string{
		store.Waiting: "invited", store.Admitted: "invited and called"}, nil, arrival, v.Now, 0), nil
}

// inviteArrival is the arrival id a visitor's use of inv joins under: the
// same for the same client (its binding and client key), so a replayed
// link answers with the ticket it already got, and different for another,
// who takes another use. A visitor with neither a binding nor a client
// key cannot be told from anyone else; each of their requests is a new
// arrival, so a shared link never seats more visitors than its uses. The
// "i" keeps these ids apart from arrival passes' (32 hex digits).
func inviteArrival(inv Invite, v Visitor) (string, error) {
	if v.Bind == "" && v.Client == "" {
		return newID()
	}
	sum := sha256.Sum256([]byte("invite\x00" + inv.Room + "\x00" + inv.ID + "\x00" + v.Bind + "\x00" + v.Client))
	return "i" + hex.EncodeToString(sum[:16]), nil
}

// priorityPlace makes p a place in the priority lane, whose figures are
// its own (p.Admitted and p.Issued count that lane; it is first come,
// first served in a random room too), and returns the ticket's position
// in it: 1 for the next to be called.
func priorityPlace(p *Place, l store.Line, ticket int64) int64 {
	p.Priority, p.Admitted, p.Issued = true, l.PriorityAdmitted, l.PriorityIssued
	p.Random, p.GroupsAhead = false, 0
	return max(-ticket-l.PriorityAdmitted, 1)
}

// laneCalls is how many admissions, of both lanes, it takes until n more
// tickets of one lane are called (the priority lane's when priority).
//
// While both lanes wait, the store gives the priority lane a share s
// (priority_share) of the admissions and the regular line the rest, so n
// calls of a lane come with up to n·k calls of the other, where
// k = s/(1−s) for a regular ticket and (1−s)/s for a priority one; but
// never more than the w tickets of the other lane waiting now:
//
//	calls = n + min(w, n·k)
//
// (with s = 0 the priority lane is called only when no regular ticket
// waits: a priority ticket waits for all w). The wait is calls divided by
// the observed pace of admissions, which counts both lanes. Tickets that
// join the other lane meanwhile are not foreseen (the wait may grow), nor
// those whose holders left, passed over without a call (it may shrink).
func laneCalls(room *Room, l store.Line, priority bool, n int64) float64 {
	s := room.PriorityShare
	waiting, k := float64(l.PriorityIssued-l.PriorityAdmitted), s/(1-s)
	if priority {
		waiting, k = float64(l.Issued-l.Admitted), math.Inf(1)
		if s > 0 {
			k = (1 - s) / s
		}
	}
	return float64(n) + math.Min(max(waiting, 0), float64(n)*k)
}
