package queue

import (
	"context"
	"fmt"
	"math"
	"time"

	"github.com/edgequeue/waitingroom/store"
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
	}
	return fmt.Sprintf("Action(%d)", int(a))
}

// Visitor is what a Gate needs to know about a request.
type Visitor struct {
	// Passes are the values of the room's cookie in the request.
	Passes []string
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
	// Session is the visitor's session id (Admit only), for ending it later.
	Session string
	// FailOpen is set when the request is admitted only because the store
	// could not be asked and the room's policy is to open.
	FailOpen bool
	// Place is the visitor's place in the line (Wait only).
	Place Place
	// Why explains the decision for the log: "session", "called", "joined", …
	Why string
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
	// Ahead is how many tickets will be reached before this one.
	Ahead int64
	// Wait estimates the time until this ticket is called, from the
	// admissions observed in the last minutes; WaitKnown is false when no
	// honest estimate exists (paused, or nobody admitted lately).
	Wait      time.Duration
	WaitKnown bool
	// PollEvery is when the visitor should ask again.
	PollEvery time.Duration
}

// Gate decides, for each request to a room, whether it may pass.
type Gate struct {
	Store store.Store
	Keys  *KeySet
}

// Decide reads the visitor's pass and makes at most one store call in the
// common cases: none for a session inside its heartbeat, one to renew a
// session, poll a ticket or join the line. Only a lapsed session costs two
// (the failed renewal, then a join).
func (g *Gate) Decide(ctx context.Context, room *Room, v Visitor) Decision {
	if room.Mode == Reject {
		return Decision{Action: Closed, Why: "room closed"}
	}
	pass, refused := g.bestPass(room, v)
	policy := room.Policy()
	if room.Mode == Passthrough {
		policy = store.Policy{SessionTTL: policy.SessionTTL, QueueTimeout: policy.QueueTimeout, ClaimWindow: policy.ClaimWindow}
	}
	switch pass.Kind {
	case Session:
		if v.Now.Sub(pass.IssuedAt) < room.Heartbeat() {
			return Decision{Action: Admit, Why: "session", Session: pass.SessionID}
		}
		ok, _, err := g.Store.Renew(ctx, room.Name, policy, pass.SessionID, v.Now)
		if err != nil {
			// The visitor was admitted and holds a valid pass: an outage
			// must not throw them out. The next request tries again.
			return Decision{Action: Admit, Why: "session, renewal failed", Session: pass.SessionID, Err: err}
		}
		if ok {
			return g.session(room, pass.SessionID, pass.Epoch, v.Now, "session renewed")
		}
		refused = fmt.Errorf("%w: session %s ended in the store", ErrBadPass, pass.SessionID)
	case Ticket:
		id, err := newSessionID()
		if err != nil {
			return Decision{Action: Busy, Why: "session id", Err: err}
		}
		pl, err := g.Store.Poll(ctx, room.Name, policy, store.Ticket{Number: pass.Number, Epoch: pass.Epoch}, id, v.Now)
		if err != nil {
			return g.storeFailed(room, "poll failed", err)
		}
		return g.settle(room, pl, id, v.Now, map[store.Outcome]string{
			store.Waiting: "waiting", store.Admitted: "called", store.Rejoined: "place lost, rejoined"}, refused)
	}
	id, err := newSessionID()
	if err != nil {
		return Decision{Action: Busy, Why: "session id", Err: err}
	}
	pl, err := g.Store.Join(ctx, room.Name, policy, id, v.Now)
	if err != nil {
		return g.storeFailed(room, "join failed", err)
	}
	return g.settle(room, pl, id, v.Now, map[store.Outcome]string{
		store.Waiting: "joined", store.Admitted: "joined and called"}, refused)
}

// settle turns a store Place into a decision: a session when admitted, a
// (renewed or new) ticket otherwise.
func (g *Gate) settle(room *Room, pl store.Place, sessionID string, now time.Time, why map[store.Outcome]string, refused error) Decision {
	var d Decision
	if pl.Outcome == store.Admitted {
		d = g.session(room, sessionID, pl.Line.Epoch, now, why[pl.Outcome])
	} else {
		d = g.wait(room, pl, now, why[pl.Outcome])
	}
	if d.Err == nil {
		d.Err = refused
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
// valid ticket with the lowest number: when a browser sends duplicates,
// the visitor keeps the best place they hold.
func (g *Gate) bestPass(room *Room, v Visitor) (Pass, error) {
	var best Pass
	var firstErr error
	for _, token := range v.Passes {
		p, err := g.Keys.Verify(room.Name, token, v.Now)
		if err != nil {
			if firstErr == nil {
				firstErr = err
			}
			continue
		}
		switch {
		case p.Kind == Session:
			return p, nil
		case best.Kind == "" || p.Number < best.Number:
			best = p
		}
	}
	if best.Kind != "" {
		return best, nil
	}
	return best, firstErr
}

// session admits with a freshly signed session pass; its issue time marks
// the last renewal, so the next one is due a heartbeat later.
func (g *Gate) session(room *Room, id string, epoch int64, now time.Time, why string) Decision {
	ttl := seconds(room.SessionDuration)
	p := Pass{Kind: Session, Room: room.Name, Epoch: epoch, SessionID: id, IssuedAt: now, Expires: now.Add(ttl)}
	return g.withPass(Decision{Action: Admit, Why: why, Session: id}, p, ttl)
}

func (g *Gate) wait(room *Room, pl store.Place, now time.Time, why string) Decision {
	ttl := seconds(room.QueueTimeout)
	p := Pass{Kind: Ticket, Room: room.Name, Number: pl.Ticket, Epoch: pl.Line.Epoch, IssuedAt: now, Expires: now.Add(ttl)}
	d := Decision{Action: Wait, Why: why, Place: placeOf(room, pl, now)}
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

// placeOf estimates the wait from the admissions actually observed in the
// last minutes, not from the configured rate: capacity, departures and
// no-shows all shape the real pace. With no admissions observed, or while
// paused, it gives no estimate rather than a made-up one.
func placeOf(room *Room, pl store.Place, now time.Time) Place {
	l := pl.Line
	p := Place{Room: room.Name, Ticket: pl.Ticket, Admitted: l.Admitted, Issued: l.Issued, Paused: l.Paused || l.QueueAll}
	toCall := pl.Ticket - l.Admitted
	if toCall < 1 {
		toCall = 1
	}
	p.Ahead = toCall - 1
	p.PollEvery = room.PollEvery(p.Ahead)
	window := now.Sub(l.RecentSince)
	if p.Paused || l.Recent == 0 || window < time.Second {
		return p
	}
	perSecond := float64(l.Recent) / window.Seconds()
	secs := math.Ceil(float64(toCall) / perSecond)
	p.Wait, p.WaitKnown = time.Duration(secs)*time.Second, true
	return p
}

// End ends the visitor's session at once (a departure beacon, or the
// origin's revoke command). It reports whether there was one to end.
func (g *Gate) End(ctx context.Context, room *Room, v Visitor) (bool, error) {
	pass, _ := g.bestPass(room, v)
	if pass.Kind != Session {
		return false, nil
	}
	_, err := g.Store.End(ctx, room.Name, room.Policy(), pass.SessionID, v.Now)
	return err == nil, err
}
