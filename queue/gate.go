package queue

import (
	"context"
	"errors"
	"fmt"
	"math"
	"net/netip"
	"time"

	"github.com/edgequeue/waitingroom/challenge"
	"github.com/edgequeue/waitingroom/store"
	"github.com/edgequeue/waitingroom/store/shard"
)

// Action is what to do with a request.
type Action int

// The actions a Gate decides on.
const (
	// Admit: forward the request to the origin.
	Admit Action = iota + 1
	// Wait: show the visitor their place in the line.
	Wait
	// Busy: the store could not be asked; ask the visitor to retry soon.
	// The visitor's pass is left as it was, so no place is lost.
	Busy
	// Closed: the room is closed (reject mode).
	Closed
	// Arrive: the visitor has no usable pass. Give them an arrival pass
	// and send them straight back (a redirect to the same URL): only a
	// client that keeps the cookie joins the line.
	Arrive
	// Limited: the client joined too often lately; it is refused (429)
	// without a store call.
	Limited
	// Work: the visitor must solve Decision.Challenge before joining (the
	// room's proof of work, package challenge). Pass, when set, is their
	// new arrival pass, which the challenge is derived from.
	Work
	// Decoy: the request is judged hostile (Why says why) and shown Place
	// in the room's decoy line (decoy.go), at no store call and with no
	// place taken. Challenge, the room's hardest proof of work, is the
	// way out: a decoy pass that comes back with its solution joins the
	// line. Pass, when set, is a new decoy pass.
	Decoy
)

func (a Action) String() string {
	switch a {
	case Admit:
		return "admit"
	case Wait:
		return "wait"
	case Busy:
		return "busy"
	case Closed:
		return "closed"
	case Arrive:
		return "arrive"
	case Limited:
		return "limited"
	case Work:
		return "work"
	case Decoy:
		return "decoy"
	}
	return fmt.Sprintf("Action(%d)", int(a))
}

// Visitor is what a Gate needs to know about a request.
type Visitor struct {
	// Passes are the values of the room's cookie in the request.
	Passes []string
	// Bind is the client's Binding under the room's BindSession: a pass
	// bound to another value is refused.
	Bind string
	// Client names the client for the join limit (edge.ClientKey); ""
	// when unknown, which is not limited.
	Client string
	// Addr is the client's address, by which the limits per network and
	// per autonomous system count it; the zero Addr when unknown.
	Addr netip.Addr
	// Work is every nonce the request offers as the solution of its
	// arrival (or decoy) pass's challenge, none for none: each is tried,
	// so a value planted ahead of the browser's own (a cookie of a
	// sibling domain) fails nobody.
	Work []string
	// Hostile, when set, says why the edge judges the request hostile by
	// what only it knows (bot detection, the operator's decoy rules), or
	// "" when it does not. The gate asks it only of a newcomer in a room
	// with a decoy line.
	Hostile func() string
	// Now is the time of the request.
	Now time.Time
}

// Decision is the Gate's answer for one request.
type Decision struct {
	Action Action
	// Pass, when not empty, is a new signed pass to set as the room's cookie.
	Pass string
	// PassTTL is how long the browser should keep Pass.
	PassTTL time.Duration
	// Session is the visitor's session (Admit only), for ending it later.
	Session store.SessionRef
	// FailOpen is set when the request is admitted only because the store
	// could not be asked and the room's policy is to open.
	FailOpen bool
	// Place is the visitor's place in the line (Wait only).
	Place Place
	// Challenge is the proof of work to do before joining (Work), or the
	// decoy's way out (Decoy); a place in the real line of a room with a
	// decoy line carries one too (Wait), whose solution leads nowhere,
	// so that the two look alike.
	Challenge challenge.Challenge
	// Why explains the decision for the log: "session", "called", "joined", …
	Why string
	// Waited is how long the visitor has been in line (Wait, and Admit
	// of a called ticket), from the arrival their ticket came from.
	Waited time.Duration
	// Err is the cause of Busy or FailOpen, and the reason an offered pass
	// was refused.
	Err error
}

// Place is a waiting visitor's position and the line around it.
type Place struct {
	Room     string
	Ticket   int64
	Admitted int64
	Issued   int64
	Paused   bool
	// Ahead is how many tickets will be reached before this one at the
	// least; AheadMax at the most. They differ in a random room, where the
	// visitor's group (GroupsAhead groups from being called) is shuffled.
	Ahead, AheadMax int64
	// Random is true for a room that shuffles arrival groups.
	Random      bool
	GroupsAhead int64
	// Wait estimates the time until this ticket is called at the latest
	// (WaitMin at the earliest), from the room's rate and the departures
	// that free its places (estimateWait); WaitKnown is false when no
	// honest estimate exists, and Unknown then says why.
	Wait, WaitMin time.Duration
	WaitKnown     bool
	Unknown       Unknown
	// PollEvery is when the visitor should ask again.
	PollEvery time.Duration
	// StartAhead is Ahead when the ticket was first issued: the queue
	// page's progress runs from it to zero.
	StartAhead int64
	// Priority is true for a place in the priority lane (an invite's):
	// Ticket is below zero, and Admitted and Issued count that lane.
	Priority bool
	// Event is the visitor's standing in the room's scheduled event, if
	// the room is in one.
	Event *EventPlace
	// Shard is the shard of a sharded room the place is in: Ticket,
	// Admitted and Issued are that shard's line's, and Ahead is scaled
	// to the room (see placeOf).
	Shard int
}

// JoinCounter counts joins (at the edge, Fastly's Edge Rate Limiting).
// Join counts one for v in room by each scope room limits (its address,
// JoinsPerIPPerMinute; its network, JoinsPerNetworkPerMinute; its
// autonomous system, JoinsPerASPerMinute) and returns the first scope
// beyond its limit ("address", "network", "autonomous system"), or ""
// when v is within them all, and any fault met on the way. In a room with
// a decoy line it also puts a client beyond a limit in the room's penalty
// box for a while, and Penalized reports whether v's client is in it.
// Joins reports how many joins it counted for client's address in the
// last minute, counting none.
type JoinCounter interface {
	Join(room *Room, v Visitor) (over string, err error)
	Joins(room *Room, client string) (int, error)
	Penalized(room *Room, v Visitor) (bool, error)
}

// Gate decides, for each request to a room, whether it may pass.
type Gate struct {
	Store store.Store
	Keys  *KeySet
	// Joins limits joins per client; nil limits nothing.
	Joins JoinCounter
	// Logf, when set, notes what the gate decided despite a fault.
	Logf func(format string, args ...any)
	// Snapshots, when set, is the POP's snapshot of each line: a waiting
	// visitor far from the front is answered from it with no store call.
	Snapshots Snapshots
	// Solutions, when set, tells an arrival replayed by another client
	// (judged hostile) from its first use.
	Solutions Solutions
}

// ArrivalTTL is how long an arrival pass may be used to join: a browser
// comes back at once; the margin is for slow networks.
const ArrivalTTL = 10 * time.Minute

// Decide reads the visitor's pass and makes at most one store call: none
// for a visitor without a pass (who gets an arrival pass), none for one
// judged hostile (the decoy line) nor for a decoy pass, none for a session
// inside its heartbeat, one to renew a session, poll a ticket or join the
// line with an arrival pass (or a decoy pass and its way out's solution).
// In a room with a proof of work, a POP whose snapshot of the line is not
// fresh adds one to learn the pressure that prices the work (ladderBits):
// one per POP per snapshot, shared by the arrivals and joins meanwhile.
func (g *Gate) Decide(ctx context.Context, room *Room, v Visitor) Decision {
	room = room.At(v.Now)
	if room.Mode == Reject {
		return Decision{Action: Closed, Why: "room closed"}
	}
	pass, refused := g.bestPass(room, v)
	policy := room.Policy(v.Now)
	if refused != nil {
		ctx = store.WithRefusal(ctx)
	}
	switch pass.Kind {
	case Session:
		d, ended := g.renew(ctx, room, v, pass)
		if ended == nil {
			return d
		}
		refused = ended
	case Ticket:
		return g.poll(ctx, room, v, pass, policy, refused)
	case DecoyKind:
		if !room.Decoys() || v.Now.After(pass.Joined.Add(DecoyTTL)) {
			// The proof of work was turned off, and the decoy with
			// it, or the decoy's hour is over: its holder is a
			// newcomer again.
			break
		}
		if bestOf(v.Work, decoyWork(room, pass).Check) != nil {
			return g.decoyed(ctx, room, v, pass, "decoyed")
		}
		if v.Now.After(pass.Joined.Add(ArrivalTTL)) {
			// The store remembers the arrival the way out joins
			// under for ArrivalTTL from its join: a way out taken
			// later could buy a second place with one solution (its
			// first place gone, and forgotten). Its holder is judged
			// afresh, as a newcomer.
			break
		}
		// The way out: the hardest work, done. It joins as an arrival
		// does, judged no more, but limited and not replayed.
		if g.spent(room, pass.ArrivalID, v) {
			return g.decoy(ctx, room, v, "replayed arrival")
		}
		return g.join(ctx, room, v, pass, policy, refused)
	case Arrival:
		// The work is priced now, at the join, not when the pass was
		// handed out: a pass collected while the line was calm pays
		// the rung in force once it is not. Priced, and checked,
		// before the join limit counts a join: an unsolved challenge
		// has joined nothing.
		if c := workOf(room, pass, g.ladderBits(ctx, room, v)); c.Bits > 0 {
			err := solves(room, pass, c, v.Work)
			switch {
			case err == nil, waitedWithoutScript(room, pass, c, v, err):
			case errors.Is(err, errMoreWork):
				return g.askWork(room, pass, c, "more work to do", err, v.Now)
			case room.Decoys() && failedSolution(err):
				return g.decoy(ctx, room, v, "failed solution")
			default:
				return g.askWork(room, pass, c, "work to do", err, v.Now)
			}
		}
		if why := g.hostile(room, v); why != "" {
			return g.decoy(ctx, room, v, why)
		}
		if room.Decoys() && g.spent(room, pass.ArrivalID, v) {
			// Its work (or its wait) bought one client a place.
			return g.decoy(ctx, room, v, "replayed arrival")
		}
		return g.join(ctx, room, v, pass, policy, refused)
	}
	return g.arrive(ctx, room, v, refused)
}

// join takes a place in room's line with the arrival (or decoy) pass, once
// the join limits allow it.
func (g *Gate) join(ctx context.Context, room *Room, v Visitor, pass Pass, policy store.Policy, refused error) Decision {
	if g.Joins != nil && room.limitsJoins() {
		over, err := g.Joins.Join(room, v)
		if err != nil && g.Logf != nil {
			// Counting is a defence, not a gate: a fault in it lets
			// the visitor join, unless a limit was already passed.
			g.Logf("room %s: join limit: %v", room.Name, err)
		}
		if over != "" {
			return Decision{Action: Limited, Why: "joins per " + over}
		}
	}
	a := store.Arrival{ID: pass.ArrivalID, Shard: arrivalShard(room, pass)}
	var pl store.Place
	var err error
	joined := false
	join := func() (store.Place, error) {
		pl, err = g.Store.Join(ctx, room.Name, policy, a, v.Now)
		joined = true
		return pl, err
	}
	if g.Snapshots != nil && room.SnapshotTTL() > 0 && room.shards() > 1 {
		// The join's answer holds its shard's line as a poll's does:
		// when the POP's snapshot of the shard is due, the join fills
		// it, so the POP sees the lines of shards nobody waits in (and
		// nobody polls), which the next arrivals' choice reads (choose).
		_, serr := g.Snapshots.Get(room, a.Shard, v.Now, func() (Snapshot, error) {
			pl, err := join()
			return Snapshot{Line: pl.Line, At: v.Now}, err
		})
		if serr != nil && !joined && !errors.Is(serr, ErrNoSnapshot) && !errors.Is(serr, store.ErrUnavailable) && g.Logf != nil {
			g.Logf("room %s: snapshot of shard %d not filled by a join: %v", room.Name, a.Shard, serr)
		}
	}
	if !joined {
		join()
	}
	if err != nil {
		return g.storeFailed(room, "join failed", err)
	}
	if pl.Outcome == store.Lost {
		// The pass's place is gone (it was called, or its session
		// ended): one solution buys one place, and its holder comes
		// back as a newcomer, judged and priced again.
		return g.arriveAgain(ctx, room, v, refused, "place lost, arriving again")
	}
	return g.settle(room, v, pl, map[store.Outcome]string{
		store.Waiting: "joined", store.Admitted: "joined and called"}, refused, pass.ArrivalID, joinedAt(pass.IssuedAt, v.Now), 0)
}

// poll answers a waiting ticket: from the POP's snapshot when fromSnapshot
// may (no store call, no new pass), else from the store. A snapshot miss
// is filled by this request's own poll, whose answer holds the line as
// well as Stats would: a miss costs the poll that was due anyway. A
// request that waited on a fill that failed is answered as the fill was,
// rather than asking again and waiting as long.
func (g *Gate) poll(ctx context.Context, room *Room, v Visitor, pass Pass, policy store.Policy, refused error) Decision {
	if !room.HasShard(pass.Shard) {
		return g.shardGone(ctx, room, v, pass.Shard, refused)
	}
	var polled *store.Place
	var err error
	ask := func() (store.Place, error) {
		var pl store.Place
		pl, err = g.Store.Poll(ctx, room.Name, policy, store.Ticket{Number: pass.Number, Epoch: pass.Epoch, Shard: pass.Shard}, v.Now)
		polled = &pl
		return pl, err
	}
	if g.Snapshots != nil && maySnapshot(room, pass.Number, pass.Seen, v.Now) {
		snap, serr := g.Snapshots.Get(room, pass.Shard, v.Now, func() (Snapshot, error) {
			pl, err := ask()
			return Snapshot{Line: pl.Line, At: v.Now}, err
		})
		switch {
		case polled != nil:
		case errors.Is(serr, store.ErrUnavailable):
			return g.storeFailed(room, "store down (snapshot)", serr)
		case errors.Is(serr, ErrNoSnapshot):
		case serr != nil:
			if g.Logf != nil {
				g.Logf("room %s: snapshot not used: %v", room.Name, serr)
			}
		default:
			if place, ok := fromSnapshot(room, pass.Number, pass.Epoch, pass.Shard, pass.Seen, snap, v.Now); ok {
				place.StartAhead = max(pass.StartAhead, place.Ahead)
				joined := joinedAt(pass.Joined, v.Now)
				return Decision{Action: Wait, Why: "waiting, from the snapshot", Place: place, Waited: v.Now.Sub(joined), Err: refused,
					Challenge: wayOut(room, pass.ArrivalID, v.Bind)}
			}
		}
	}
	if polled == nil {
		ask()
	}
	if err != nil {
		return g.storeFailed(room, "poll failed", err)
	}
	if polled.Outcome == store.Lost {
		// The place is gone; a new one is taken only through the door
		// every newcomer uses (an arrival pass, then Join), so the join
		// limit counts it and an invite's place is never handed out
		// again without a use of it.
		return g.arriveAgain(ctx, room, v, refused, "place lost, joining again")
	}
	return g.settle(room, v, *polled, map[store.Outcome]string{
		store.Waiting: "waiting", store.Admitted: "called"}, refused, pass.ArrivalID, joinedAt(pass.Joined, v.Now), pass.StartAhead)
}

// seenLately reports whether the store saw a ticket lately enough (at seen)
// for its holder to be answered without it: within a third of the queue
// timeout, so the store sees a visitor who keeps polling again within a
// third of the timeout and one refresh, well before it would pass them
// over (the timeout is at least three refreshes).
func seenLately(room *Room, seen, now time.Time) bool {
	return !seen.IsZero() && now.Sub(seen) < seconds(room.QueueTimeout)/3 && !seen.After(now.Add(time.Minute))
}

// Keep renews the visitor's session as a request of theirs through the
// line would, for a page that makes none (the heartbeat script): no store
// call inside the room's heartbeat, one when due. It never joins the line
// nor issues a ticket: a visitor without a session gets a decision whose
// Action is zero (Closed in a closed room), and Err says why a session
// pass offered was refused or has ended. Admit means the session is held;
// Pass is then the refreshed pass to set, when one was issued.
func (g *Gate) Keep(ctx context.Context, room *Room, v Visitor) Decision {
	room = room.At(v.Now)
	if room.Mode == Reject {
		return Decision{Action: Closed, Why: "room closed"}
	}
	pass, refused := g.bestPass(room, v)
	if pass.Kind != Session {
		return Decision{Why: "no session", Err: refused}
	}
	d, ended := g.renew(ctx, room, v, pass)
	if ended != nil {
		return Decision{Why: "session ended", Err: ended}
	}
	return d
}

// renew keeps the session pass admitted: as it is inside the heartbeat,
// else renewed in the store. ended is set, and the decision empty, when
// the store says the session is over.
func (g *Gate) renew(ctx context.Context, room *Room, v Visitor, pass Pass) (d Decision, ended error) {
	if !room.HasShard(pass.Shard) {
		if g.Logf != nil {
			g.Logf("room %s: session %s is in shard %d, which the room of %d shards no longer has: the visitor joins again", room.Name, pass.SessionID, pass.Shard, room.shards())
		}
		return Decision{}, fmt.Errorf("%w: session %s in shard %d of a room of %d", ErrBadPass, pass.SessionID, pass.Shard, room.shards())
	}
	ref := sessionRef(room, pass)
	if v.Now.Sub(pass.IssuedAt) < room.Heartbeat() {
		return Decision{Action: Admit, Why: "session", Session: ref}, nil
	}
	ok, _, err := g.Store.Renew(ctx, room.Name, room.Policy(v.Now), ref, v.Now)
	if err != nil {
		// The visitor was admitted and holds a valid pass: an outage
		// must not throw them out, nor make every request of theirs
		// wait for the store. An unrenewed pass admits until the next
		// heartbeat, when the store is asked again.
		d := g.session(room, v, ref, true, "session, renewal failed")
		d.Err = err
		return d, nil
	}
	if !ok {
		return Decision{}, fmt.Errorf("%w: session %s ended in the store", ErrBadPass, pass.SessionID)
	}
	return g.session(room, v, ref, false, "session renewed"), nil
}

// sessionRef is the store's name for the session a pass holds, usable
// until a heartbeat after the pass was issued (renewed).
func sessionRef(room *Room, pass Pass) store.SessionRef {
	ref := store.SessionRef{ID: pass.SessionID, Epoch: pass.Epoch, Shard: pass.Shard, UsableUntil: pass.IssuedAt.Add(room.Heartbeat())}
	if pass.Unrenewed {
		// Issued when a renewal failed: the store hears of the outage.
		ref.FailedAt = pass.IssuedAt
	}
	return ref
}

// arrive gives a visitor without a usable pass an arrival pass: no store
// call, no place, until they come back with it. A hostile one too: it is
// judged at its join (Decide), so that its way into the decoy line is a
// real newcomer's, step for step.
func (g *Gate) arrive(ctx context.Context, room *Room, v Visitor, refused error) Decision {
	id, err := newID()
	if err != nil {
		return Decision{Action: Busy, Why: "arrival id", Err: err}
	}
	p := Pass{Kind: Arrival, Room: room.Name, ArrivalID: id, Bind: v.Bind, IssuedAt: v.Now, Expires: v.Now.Add(ArrivalTTL),
		Work: g.ladderBits(ctx, room, v), Shard: g.choose(room, id, v.Now)}
	d := Decision{Action: Arrive, Why: "arrived", Err: refused}
	if p.Work > 0 {
		d.Action, d.Why, d.Challenge = Work, "arrived, work to do", workOf(room, p, 0)
	}
	return g.withPass(d, p, ArrivalTTL)
}

// choose is which of the two shards an arrival may join (shard.Choices)
// it is sent to, as its arrival pass records it: 1, the second, when the
// POP's snapshots of both, fresh (at most two TTLs old), show the
// second's line the shorter (shardLoad); else 0, the first, the hash's,
// as when the POP has no fresh snapshot of either. Reading them is no
// store call; a fault in reading one is logged, and reads as none.
func (g *Gate) choose(room *Room, id string, now time.Time) int {
	k := room.shards()
	if k <= 1 || g.Snapshots == nil || room.SnapshotTTL() <= 0 {
		return 0
	}
	var load [2]int64
	for j, i := range shard.Choices(id, k) {
		snap, err := g.Snapshots.Peek(room, i)
		switch {
		case err == nil && snap.At.After(now.Add(-2*room.SnapshotTTL())):
			load[j] = shardLoad(room, snap, i, now)
			continue
		case err != nil && !errors.Is(err, ErrNoSnapshot) && g.Logf != nil:
			g.Logf("room %s: snapshot of shard %d not read for an arrival's shard: %v", room.Name, i, err)
		}
		return 0
	}
	if load[1] < load[0] {
		return 1
	}
	return 0
}

// shardLoad is how long shard i's line in snap is for a newcomer: its
// waiting tickets (both lanes), less the places it has free, so that of
// two empty lines the one with more room is the shorter.
func shardLoad(room *Room, snap Snapshot, i int, now time.Time) int64 {
	l := snap.Line
	return l.Waiting() + l.PriorityIssued - l.PriorityAdmitted - max(paceOf(room, l, i, now).free, 0)
}

// arrivalShard is the shard an arrival (or decoy) pass joins: the one of
// its two (shard.Choices) its pass records. A pass that records none
// (issued before the choice, or a decoy's) joins the first, the hash's,
// where a replay of it finds the ticket it took.
func arrivalShard(room *Room, pass Pass) int {
	c := shard.Choices(pass.ArrivalID, room.shards())
	if pass.Kind == Arrival && pass.Shard == 1 {
		return c[1]
	}
	return c[0]
}

// NoScriptWait is how long a browser without JavaScript waits on the work
// page before it joins at the ladder's lowest working rung (the page's
// <noscript> refresh): a wait in place of the work it cannot do.
const NoScriptWait = 5 * time.Second

// NoScript reports whether a holder of the challenge c may join in room
// without its solution, once they have waited NoScriptWait: only at the
// ladder's lowest working rung. Above it the door asks for the work.
func NoScript(room *Room, c challenge.Challenge) bool {
	return c.Bits <= challenge.Ladder{Top: room.ProofOfWork}.Base()
}

// waitedWithoutScript reports whether a join that offers no solution
// (err, Missing) comes from a browser without JavaScript that waited out
// NoScriptWait since its arrival pass, at the lowest working rung: it
// joins as if it had done the work. A wrong solution is never one.
func waitedWithoutScript(room *Room, pass Pass, c challenge.Challenge, v Visitor, err error) bool {
	return errors.Is(err, challenge.Missing) && NoScript(room, c) && !v.Now.Before(pass.IssuedAt.Add(NoScriptWait))
}

// workOf is the challenge an arrival pass asks of its holder in room when
// the rung in force is rung: the harder of it and the pass's own bits, at
// most the room's top rung now (an operator who lowers the ladder or turns
// it off frees the passes already handed out).
func workOf(room *Room, p Pass, rung int) challenge.Challenge {
	return challenge.For(room.Name, p.ArrivalID, p.Bind, min(max(p.Work, rung), room.ProofOfWork))
}

// errMoreWork: the nonce solves the pass's own challenge, of a lower rung
// than the one now asked (the rung rose since that work was asked): work
// done, not enough, not a wrong solution.
var errMoreWork = errors.New("proof of work: solves a lower rung than the one in force")

// solves checks the nonces against c, the challenge pass asks in room
// now (solvesOne), and keeps the best verdict (bestOf).
func solves(room *Room, pass Pass, c challenge.Challenge, nonces []string) error {
	return bestOf(nonces, func(nonce string) error { return solvesOne(room, pass, c, nonce) })
}

// bestOf is the best of check's verdicts on the nonces: nil when one
// passes; else errMoreWork when one solves an easier challenge; else the
// first one's refusal (Missing for none). Each is tried, so a value
// planted ahead of the browser's own (a cookie of a sibling domain) fails
// nobody.
func bestOf(nonces []string, check func(nonce string) error) error {
	var err error = challenge.Missing
	for i, nonce := range nonces {
		switch e := check(nonce); {
		case e == nil:
			return nil
		case i == 0, errors.Is(e, errMoreWork):
			err = e
		}
	}
	return err
}

// solvesOne checks nonce against c. A nonce c refuses may solve the
// challenge the pass records (its Work: the rung it was last asked;
// the rung is in the seed, so the two differ): when that one is harder,
// it solves c (a browser that did the work it was given is not failed by
// a rung that fell, or an operator who lowered the ladder, meanwhile);
// when easier, it is errMoreWork. Only the rung the pass records is
// tried, so a wrong nonce is no likelier to pass than at c alone.
func solvesOne(room *Room, pass Pass, c challenge.Challenge, nonce string) error {
	err := c.Check(nonce)
	if err == nil || errors.Is(err, challenge.Missing) || pass.Work == c.Bits || pass.Work <= 0 {
		return err
	}
	if challenge.For(room.Name, pass.ArrivalID, pass.Bind, pass.Work).Check(nonce) != nil {
		return err
	}
	if pass.Work > c.Bits {
		return nil
	}
	return errMoreWork
}

// askWork asks the holder of the arrival pass for c's work, for why. A
// rung above the one the pass records (the rung rose since it was asked)
// is recorded in the pass given back, with the same arrival and expiry, so
// that its solution is known for what it is when the rung falls again
// (solvesOne).
func (g *Gate) askWork(room *Room, pass Pass, c challenge.Challenge, why string, err error, now time.Time) Decision {
	d := Decision{Action: Work, Why: why, Challenge: c, Err: err}
	if c.Bits <= pass.Work {
		return d
	}
	pass.Work = c.Bits
	return g.withPass(d, pass, pass.Expires.Sub(now))
}

// ShardStats is a store that reads one shard of a sharded room alone
// (store/shard's Store): a POP fills its snapshot of shard 0 with it, to
// learn the pressure the door's work is priced from. The room's Stats, a
// sum of its shards, is not a shard's line.
type ShardStats interface {
	ShardStats(ctx context.Context, room string, p store.Policy, i int, now time.Time) (store.Line, error)
}

// ladderBits is the rung of room's ladder in force for v: from the
// pressure on the line in the POP's snapshot (shard 0's: a room's shards
// share their load alike) and from the client's joins in the last minute.
// A POP with no fresh snapshot fills it (one store call per POP per
// snapshot, as a poll does; a sharded room's through ShardStats): an
// unknown pressure is learned, not charged to visitors. Only a fault in
// reading either (a failed fill among them) is logged, and reads as
// unknown or no joins.
func (g *Gate) ladderBits(ctx context.Context, room *Room, v Visitor) int {
	l := challenge.Ladder{Top: room.ProofOfWork}
	if l.Top <= 0 {
		return 0
	}
	pressure := -1.0
	if g.Snapshots != nil && room.SnapshotTTL() > 0 {
		snap, err := g.Snapshots.Peek(room, 0)
		fresh := err == nil && snap.At.After(v.Now.Add(-2*room.SnapshotTTL()))
		stats := g.shardZero(room)
		if !fresh && (err == nil || errors.Is(err, ErrNoSnapshot)) && stats != nil {
			snap, err = g.Snapshots.Get(room, 0, v.Now, func() (Snapshot, error) {
				l, err := stats(ctx, room.Name, room.Policy(v.Now), v.Now)
				return Snapshot{Line: l, At: v.Now}, err
			})
			fresh = err == nil
		}
		switch {
		case fresh:
			pressure = linePressure(snap)
		case err != nil && (stats != nil || !errors.Is(err, ErrNoSnapshot)) && g.Logf != nil:
			g.Logf("room %s: snapshot not read for the proof of work: %v", room.Name, err)
		}
	}
	joins := 0
	if g.Joins != nil && v.Client != "" {
		n, err := g.Joins.Joins(room, v.Client)
		switch {
		case err == nil:
			joins = n
		case g.Logf != nil:
			g.Logf("room %s: joins not looked up for the proof of work: %v", room.Name, err)
		}
	}
	return l.Bits(pressure, joins)
}

// shardZero is how the gate reads the line of room's shard 0, the one its
// snapshot prices from: the room's Stats when it has one shard, the
// store's ShardStats when it has more; nil when the store cannot read one
// shard alone (the pressure is then unknown until a join fills the
// snapshot).
func (g *Gate) shardZero(room *Room) func(context.Context, string, store.Policy, time.Time) (store.Line, error) {
	if room.shards() == 1 {
		return g.Store.Stats
	}
	ss, ok := g.Store.(ShardStats)
	if !ok {
		return nil
	}
	return func(ctx context.Context, name string, p store.Policy, now time.Time) (store.Line, error) {
		return ss.ShardStats(ctx, name, p, 0, now)
	}
}

// linePressure is how many minutes the regular line in snap takes to be
// called at the pace the snapshot observed (its admissions of the last
// five minutes): 0 for an empty line, infinite for one nobody is called
// from (paused, or full).
func linePressure(snap Snapshot) float64 {
	l := snap.Line
	waiting := l.Issued - l.Admitted
	if waiting <= 0 {
		return 0
	}
	if l.Recent <= 0 {
		return math.Inf(1)
	}
	window := max(snap.At.Sub(l.RecentSince), time.Minute)
	return float64(waiting) / (float64(l.Recent) / window.Minutes())
}

// shardGone answers a ticket of a shard the room no longer has (its
// shards were lowered): the place is lost, and the visitor joins again as
// a newcomer, through the door everyone uses.
func (g *Gate) shardGone(ctx context.Context, room *Room, v Visitor, i int, refused error) Decision {
	if g.Logf != nil {
		g.Logf("room %s: ticket of shard %d, which the room of %d shards no longer has: the visitor joins again", room.Name, i, room.shards())
	}
	return g.arriveAgain(ctx, room, v, refused, "place lost (shard gone), joining again")
}

// arriveAgain is arrive for a visitor whose place is gone, for the reason
// why (a decoy's keeps the reason it was judged hostile).
func (g *Gate) arriveAgain(ctx context.Context, room *Room, v Visitor, refused error, why string) Decision {
	d := g.arrive(ctx, room, v, refused)
	if d.Action != Decoy {
		d.Why = why
	}
	return d
}

// joinedAt is when a visitor joined: since, when they held their ticket
// already (or arrived with the pass that took it), else now.
func joinedAt(since, now time.Time) time.Time {
	if since.IsZero() || since.After(now) {
		return now
	}
	return since
}

// settle turns a store Place into a decision: a session when admitted, a
// (renewed or new) ticket otherwise, which carries arrival, the arrival
// that took it.
func (g *Gate) settle(room *Room, v Visitor, pl store.Place, why map[store.Outcome]string, refused error, arrival string, joined time.Time, start int64) Decision {
	var d Decision
	if pl.Outcome == store.Closed {
		return Decision{Action: Closed, Why: "room closed live by the operator", Err: refused}
	}
	if pl.Outcome == store.Admitted {
		d = g.session(room, v, store.SessionRef{ID: pl.Session, Epoch: pl.Line.Epoch, Shard: pl.Shard}, false, why[pl.Outcome])
	} else {
		d = g.wait(room, v, pl, why[pl.Outcome], arrival, joined, start)
	}
	if d.Err == nil {
		d.Err = refused
	}
	if d.Action == Wait || d.Action == Admit {
		d.Waited = v.Now.Sub(joined)
	}
	return d
}

// storeFailed applies the room's store error policy.
func (g *Gate) storeFailed(room *Room, why string, err error) Decision {
	if room.OnStoreError == Open {
		return Decision{Action: Admit, FailOpen: true, Why: why + ", failing open", Err: err}
	}
	return Decision{Action: Busy, Why: why, Err: err}
}

// bestPass picks, among the cookie's values, a valid session, or else the
// valid ticket with the lowest number, or else an arrival: when a browser
// sends duplicates, the visitor keeps the best place they hold. A pass
// bound to another client is refused.
func (g *Gate) bestPass(room *Room, v Visitor) (Pass, error) {
	var best Pass
	var firstErr error
	for _, token := range v.Passes {
		p, err := g.Keys.Verify(room.Name, token, v.Now)
		if err == nil && p.Bind != v.Bind {
			err = errBoundElsewhere
		}
		if err != nil {
			if firstErr == nil {
				firstErr = err
			}
			continue
		}
		switch {
		case p.Kind == Session:
			return p, nil
		case rank(p.Kind) > rank(best.Kind):
			best = p
		case p.Kind == Ticket && best.Kind == Ticket && p.Number < best.Number:
			best = p
		}
	}
	if best.Kind != "" {
		return best, nil
	}
	return best, firstErr
}

// rank orders the kinds of pass below a session: a place in the line
// before the decoy (a ticket outranks what made it), and the decoy before
// an arrival, so that an arrival pass kept aside cannot walk out of it.
func rank(k PassKind) int {
	switch k {
	case Ticket:
		return 3
	case DecoyKind:
		return 2
	case Arrival:
		return 1
	}
	return 0
}

// session admits with a freshly signed session pass; its issue time marks
// the last renewal (or, unrenewed, the last attempt), so the store is asked
// again a heartbeat later.
func (g *Gate) session(room *Room, v Visitor, s store.SessionRef, unrenewed bool, why string) Decision {
	ttl := seconds(room.SessionDuration)
	p := Pass{Kind: Session, Room: room.Name, Epoch: s.Epoch, SessionID: s.ID, Shard: s.Shard, Bind: v.Bind, Unrenewed: unrenewed, IssuedAt: v.Now, Expires: v.Now.Add(ttl)}
	ref := store.SessionRef{ID: s.ID, Epoch: s.Epoch, Shard: s.Shard, UsableUntil: v.Now.Add(room.Heartbeat())}
	return g.withPass(Decision{Action: Admit, Why: why, Session: ref}, p, ttl)
}

// TicketGrace is how much longer than the queue timeout a ticket pass
// lives: the store, not the cookie, says when a place is lost (its clock
// stops while it cannot be reached), so a pass must outlive an outage
// during which its holder could not poll.
const TicketGrace = 24 * time.Hour

// ticketTTL is how long a ticket's pass lives from its issue, a decoy's
// too (so that its expiry tells nothing): the queue timeout and the grace.
func ticketTTL(room *Room) time.Duration { return seconds(room.QueueTimeout) + TicketGrace }

// wait keeps a visitor in line with a renewed ticket pass. start is the
// ahead count the pass carried (0: none, as for a new ticket): the place
// at arrival, or the place now if more are ahead now (a shuffled group).
// The pass carries arrival, and the answer the way out a decoy's would
// (wayOut), so that a place in the real line looks like a decoy's.
func (g *Gate) wait(room *Room, v Visitor, pl store.Place, why, arrival string, joined time.Time, start int64) Decision {
	ttl := ticketTTL(room)
	place := placeOf(room, pl, v.Now)
	place.StartAhead = max(start, place.Ahead)
	p := Pass{Kind: Ticket, Room: room.Name, Number: pl.Ticket, Epoch: pl.Line.Epoch, Shard: pl.Shard, ArrivalID: arrival, Bind: v.Bind,
		Joined: joined, StartAhead: place.StartAhead, Seen: v.Now, IssuedAt: v.Now, Expires: v.Now.Add(ttl)}
	d := Decision{Action: Wait, Why: why, Place: place, Challenge: wayOut(room, arrival, v.Bind)}
	return g.withPass(d, p, ttl)
}

func (g *Gate) withPass(d Decision, p Pass, ttl time.Duration) Decision {
	token, err := g.Keys.Sign(p)
	if err != nil {
		return Decision{Action: Busy, Why: "sign pass", Err: err}
	}
	d.Pass, d.PassTTL = token, ttl
	return d
}

// placeOf is the visitor's place and its wait (estimateWait). In a random
// room the ticket may be called anywhere in its group, so figures are
// ranges. The two lanes share the admissions (laneCalls).
func placeOf(room *Room, pl store.Place, now time.Time) Place {
	l := pl.Line
	p := Place{Room: room.Name, Ticket: pl.Ticket, Admitted: l.Admitted, Issued: l.Issued, Paused: l.Paused || l.QueueAll,
		Random: pl.Line.Mode(room.Mode) == Random, GroupsAhead: pl.GroupsAhead, Event: eventPlace(room, pl), Shard: pl.Shard}
	from, to := pl.CallFrom, pl.CallTo
	if from == 0 || to < from {
		from, to = pl.Ticket, pl.Ticket
	}
	first, last := max(from-l.Admitted, 1), max(to-l.Admitted, 1)
	if pl.Ticket < 0 {
		first = priorityPlace(&p, l, pl.Ticket)
		last = first
	}
	// In a sharded room the line is the visitor's shard's, which calls at
	// its share of the rate: the wait is that line's, and honest; the
	// place shown is the shard's scaled by the shards, about the room's
	// (arrivals spread evenly over the shards).
	k := int64(room.shards())
	p.Ahead, p.AheadMax = (first-1)*k, (last-1)*k
	p.PollEvery = room.PollEvery(p.Ahead)
	if p.Event != nil && p.Event.Prequeue {
		p.PollEvery = prequeuePoll(room, p.Event, now)
	}
	estimateWait(room, &p, l, first, last, now)
	return p
}

// Admit calls in n more waiting visitors of room at once, beyond the rate
// and the capacity, for who: the origin's admit=N command (Via "origin"),
// or the simulator's operator. Like every operator action it is one store
// call that applies it and appends it to the room's audit log
// (store.Operate), so the log holds the origin's admissions beside the
// panel's and the API's. It returns the entry, for the caller's own log.
// The action gets an id of its own (store.Action.ID): the origin sends a
// command once, and nothing retries it.
func (g *Gate) Admit(ctx context.Context, room *Room, n int64, who store.Actor, now time.Time) (store.AuditEntry, error) {
	id, err := store.NewActionID()
	if err != nil {
		return store.AuditEntry{}, err
	}
	a := store.Action{Op: store.OpAdmit, N: n, Actor: who, ID: id}
	line, err := g.Store.Operate(ctx, room.Name, room.Policy(now), a, now)
	if err != nil {
		return store.AuditEntry{}, err
	}
	return a.Entry(room.Name, now, line), nil
}

// End ends the visitor's session (a departure beacon, or the origin's
// revoke command). It reports whether there was one to end.
func (g *Gate) End(ctx context.Context, room *Room, v Visitor) (bool, error) {
	pass, _ := g.bestPass(room, v)
	if pass.Kind != Session || !room.HasShard(pass.Shard) {
		return false, nil
	}
	ref := sessionRef(room, pass)
	_, err := g.Store.End(ctx, room.Name, room.Policy(v.Now), ref, v.Now)
	return err == nil, err
}
