// The decoy line: a request judged hostile is shown a place in a line that
// looks real, advances slowly and never admits. It costs no store call and
// takes no place, so a bot held there spends its time and its requests on
// nothing; and a real visitor misjudged leaves it by doing the room's
// hardest proof of work, which their browser does on its own.

package queue

import (
	"context"
	"encoding/binary"
	"encoding/hex"
	"errors"
	"math"
	"time"

	"github.com/edgequeue/waitingroom/challenge"
	"github.com/edgequeue/waitingroom/store"
)

// DecoyTTL is how long a decoy pass lasts from its first issue (its
// Joined): its holder is then judged afresh, as a newcomer. The token
// itself lives as long as a ticket's, so that its expiry tells nothing.
const DecoyTTL = time.Hour

// decoyHalfLife is how long the decoy's line takes to halve the places
// ahead of its holder: it moves, as a line does, but never reaches them.
const decoyHalfLife = 30 * time.Minute

// Solutions records which client joined with each arrival (at the edge,
// the POP's cache), so that an arrival pass and its solution replayed by
// another client are judged hostile without a store call.
type Solutions interface {
	// Spend records that client joined room with arrival (an arrival or
	// decoy pass's id) and returns the client that first did (client
	// itself, the first time).
	Spend(room *Room, arrival, client string) (first string, err error)
}

// Decoys reports whether room runs a decoy line: only a room with a proof
// of work, whose top rung is the decoy's way out.
func (r *Room) Decoys() bool { return r.ProofOfWork > 0 }

// hostile says why the request v is to be decoyed in room, or "": its
// client is in the join penalty box (it joined beyond a limit lately), or
// the edge judges it hostile (v.Hostile: bot detection, the operator's
// rules). A fault in asking is logged, and judges nothing.
func (g *Gate) hostile(room *Room, v Visitor) string {
	if !room.Decoys() {
		return ""
	}
	if g.Joins != nil && room.limitsJoins() {
		boxed, err := g.Joins.Penalized(room, v)
		switch {
		case err != nil && g.Logf != nil:
			g.Logf("room %s: penalty box not read: %v", room.Name, err)
		case err == nil && boxed:
			return "joined beyond a limit"
		}
	}
	if v.Hostile != nil {
		return v.Hostile()
	}
	return ""
}

// spent reports whether arrival, which v joins with, was joined with by
// another client before: a replay, judged hostile.
func (g *Gate) spent(room *Room, arrival string, v Visitor) bool {
	if g.Solutions == nil {
		return false
	}
	first, err := g.Solutions.Spend(room, arrival, v.Client)
	if err != nil {
		if g.Logf != nil {
			g.Logf("room %s: solution not checked for replays: %v", room.Name, err)
		}
		return false
	}
	return first != v.Client
}

// decoy sends v to room's decoy line for the reason why: a new decoy pass,
// its place a little behind the back of room's real line, and the way out.
//
// The pass is a ticket's, claim for claim (wait), told apart only by the
// key that signs it (KeySet.Sign). Where a real newcomer's join asks the
// store, so does the decoy: its answer takes as long as a join's, and the
// line it reads (decoyRead) gives the decoy's place the real line's epoch and
// back. Without it (the store did not answer), the POP's snapshot does,
// else the start of the day stands for the epoch: a guess, which a client
// holding a real ticket of the room could compare.
func (g *Gate) decoy(ctx context.Context, room *Room, v Visitor, why string) Decision {
	id, err := newID()
	if err != nil {
		return Decision{Action: Busy, Why: "decoy id", Err: err}
	}
	admitted, ahead := decoyStart(id)
	epoch := v.Now.UTC().Truncate(24 * time.Hour).UnixMilli()
	line, err := g.decoyRead(ctx, room, v.Now)
	if err != nil && g.Snapshots != nil && room.SnapshotTTL() > 0 {
		var snap Snapshot
		if snap, err = g.Snapshots.Peek(room, 0); err == nil {
			line = snap.Line
		}
	}
	if err == nil {
		epoch = line.Epoch
		if line.Issued > line.Admitted {
			// The back of the real line, a little further on.
			admitted, ahead = line.Admitted, line.Issued-line.Admitted+ahead/10
		}
	}
	p := Pass{Kind: DecoyKind, Room: room.Name, Number: admitted + ahead + 1, Epoch: epoch, ArrivalID: id, Bind: v.Bind,
		Joined: v.Now, StartAhead: ahead}
	return g.answerDecoy(room, v, p, why)
}

// decoyed is the decoy pass p's answer to v, to a poll: where a real
// ticket's poll would ask the store (maySnapshot says no), the decoy's
// asks it too (decoyRead, whose answer it has no use for: the call is for its
// time), so that the two take as long.
func (g *Gate) decoyed(ctx context.Context, room *Room, v Visitor, p Pass, why string) Decision {
	if !maySnapshot(room, p.Number, p.Seen, v.Now) {
		if _, err := g.decoyRead(ctx, room, v.Now); err != nil && g.Logf != nil {
			g.Logf("room %s: a decoy's poll did not reach the store (it is answered all the same): %v", room.Name, err)
		}
	}
	return g.answerDecoy(room, v, p, why)
}

// decoyRead is the store call a decoy makes where a real place's would be
// made: one read of the line its pass is in, shard 0's (a sharded room's
// through ShardStats, one call as a real place's is, not the K of the
// room's sum; the sum where the store cannot read one shard).
func (g *Gate) decoyRead(ctx context.Context, room *Room, now time.Time) (store.Line, error) {
	read := g.shardZero(room)
	if read == nil {
		read = g.Store.Stats
	}
	return read(ctx, room.Name, room.Policy(now), now)
}

// answerDecoy is the decoy pass p's answer to v: its place and way out,
// and a renewed pass whenever a real ticket's poll would bring one (when
// the store would be asked, as maySnapshot says), stamped as that one
// would be, so that the cookies come and go as a real place's do.
func (g *Gate) answerDecoy(room *Room, v Visitor, p Pass, why string) Decision {
	d := Decision{Action: Decoy, Why: why, Place: decoyPlace(room, p, v.Now), Challenge: decoyWork(room, p)}
	if maySnapshot(room, p.Number, p.Seen, v.Now) {
		return d
	}
	ttl := ticketTTL(room)
	p.Seen, p.IssuedAt, p.Expires = v.Now, v.Now, v.Now.Add(ttl)
	return g.withPass(d, p, ttl)
}

// decoyStart draws a decoy's line from its id: how many were called, and
// how many are ahead (100 to 4,195).
func decoyStart(id string) (admitted, ahead int64) {
	b, err := hex.DecodeString(id)
	if err != nil || len(b) < 4 {
		return 1000, 1000
	}
	return 500 + int64(binary.BigEndian.Uint16(b)>>4), 100 + int64(binary.BigEndian.Uint16(b[2:])&0x0fff)
}

// decoyPlace is the place the decoy pass p shows at now: the places ahead
// halve every decoyHalfLife and never reach none; others join behind.
func decoyPlace(room *Room, p Pass, now time.Time) Place {
	elapsed := max(now.Sub(p.Joined), 0)
	ahead := int64(math.Ceil(float64(p.StartAhead) * math.Exp2(-elapsed.Hours()/decoyHalfLife.Hours())))
	ahead = max(ahead, 1)
	return Place{Room: room.Name, Ticket: p.Number, Admitted: p.Number - ahead - 1, Issued: p.Number + int64(elapsed/(3*time.Second)),
		Ahead: ahead, AheadMax: ahead, StartAhead: p.StartAhead, Unknown: UnknownFull, PollEvery: room.PollEvery(ahead)}
}

// decoyWork is the way out of the decoy for the holder of p: the room's
// hardest proof of work.
func decoyWork(room *Room, p Pass) challenge.Challenge {
	return wayOut(room, p.ArrivalID, p.Bind)
}

// wayOut is the challenge a place of arrival's in room shows, bound to
// bind: the room's hardest proof of work, when it has a decoy line. A
// decoy's solution leads into the real line; a real place shows one all
// the same, derived the same way, so that the page and the JSON cannot
// tell the two, and its solution leads nowhere: every waiting visitor's
// page does the top rung's work once, in the background, the price of a
// decoy nobody can tell. A ticket that joined through the way out
// carries the decoy's arrival, so its page shows the challenge its tab
// has solved already (work.js keeps a tab's solutions: no second search).
func wayOut(room *Room, arrival, bind string) challenge.Challenge {
	if !room.Decoys() {
		return challenge.Challenge{}
	}
	return challenge.For(room.Name, arrival, bind, room.ProofOfWork)
}

// failedSolution reports whether err, a challenge's refusal, is a
// solution offered that does not solve (wrong or malformed), not one
// still to come.
func failedSolution(err error) bool {
	return err != nil && !errors.Is(err, challenge.Missing)
}
