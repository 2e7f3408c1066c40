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
)

func (a Action) String() string {
	switch a {
	case Admit:
		return "admit"
	case Wait:
		return "wait"
	case Busy:
		return "busy"
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
	// Place is the visitor's place in the line (Wait only).
	Place Place
	// Why explains the decision for the log: "session", "called", "joined", …
	Why string
	// Err is the cause of Busy, and the reason an offered pass was refused.
	Err error
}

// Place is a waiting visitor's position and the line around it.
type Place struct {
	Room     string
	Ticket   int64
	Admitted int64
	Issued   int64
	Paused   bool
	// Ahead is how many tickets will be called before this one.
	Ahead int64
	// Wait estimates the time until this ticket is called; zero with
	// WaitKnown false when no estimate can honestly be given.
	Wait      time.Duration
	WaitKnown bool
}

// Gate decides, for each request to a room, whether it may pass.
type Gate struct {
	Store store.Store
	Keys  *KeySet
}

// Decide reads the visitor's pass and, only when the pass alone cannot
// settle it, makes one store call: a valid session needs none, a ticket
// polls, and a visitor without a valid pass joins.
func (g *Gate) Decide(ctx context.Context, room *Room, v Visitor) Decision {
	pass, refused := g.bestPass(room, v)
	policy := store.Policy{PerMinute: room.NewUsersPerMinute, Burst: room.Burst}
	switch pass.Kind {
	case Session:
		return g.keepSession(room, pass, v.Now)
	case Ticket:
		line, err := g.Store.Poll(ctx, room.Name, policy, v.Now)
		if err != nil {
			return Decision{Action: Busy, Why: "poll failed", Err: err}
		}
		if line.Epoch == pass.Epoch {
			if line.Admitted >= pass.Number {
				return g.startSession(room, line, v.Now, "called")
			}
			return g.wait(room, pass.Number, line, v.Now, "waiting")
		}
		refused = fmt.Errorf("%w: ticket from an earlier line (epoch %d, now %d)", ErrBadPass, pass.Epoch, line.Epoch)
	}
	ticket, line, err := g.Store.Join(ctx, room.Name, policy, v.Now)
	if err != nil {
		return Decision{Action: Busy, Why: "join failed", Err: err}
	}
	d := g.wait(room, ticket, line, v.Now, "joined")
	if line.Admitted >= ticket {
		d = g.startSession(room, line, v.Now, "joined and called")
	}
	if d.Err == nil {
		d.Err = refused
	}
	return d
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

// keepSession admits a session holder without a store call, and slides the
// session forward once less than half of it is left, so that an active
// visitor is not sent back to the line while a cookie is re-signed at most
// a few times per session.
func (g *Gate) keepSession(room *Room, p Pass, now time.Time) Decision {
	d := Decision{Action: Admit, Why: "session"}
	if p.Expires.Sub(now) >= room.SessionDuration()/2 {
		return d
	}
	p.IssuedAt, p.Expires = now, now.Add(room.SessionDuration())
	return g.withPass(d, p, room.SessionDuration())
}

func (g *Gate) startSession(room *Room, line store.Line, now time.Time, why string) Decision {
	id, err := newSessionID()
	if err != nil {
		return Decision{Action: Busy, Why: "session id", Err: err}
	}
	p := Pass{Kind: Session, Room: room.Name, Epoch: line.Epoch, SessionID: id,
		IssuedAt: now, Expires: now.Add(room.SessionDuration())}
	return g.withPass(Decision{Action: Admit, Why: why}, p, room.SessionDuration())
}

func (g *Gate) wait(room *Room, ticket int64, line store.Line, now time.Time, why string) Decision {
	p := Pass{Kind: Ticket, Room: room.Name, Number: ticket, Epoch: line.Epoch,
		IssuedAt: now, Expires: now.Add(room.QueueTimeout())}
	d := Decision{Action: Wait, Why: why, Place: placeOf(room, ticket, line)}
	return g.withPass(d, p, room.QueueTimeout())
}

func (g *Gate) withPass(d Decision, p Pass, ttl time.Duration) Decision {
	token, err := g.Keys.Sign(p)
	if err != nil {
		return Decision{Action: Busy, Why: "sign pass", Err: err}
	}
	d.Pass, d.PassTTL = token, ttl
	return d
}

// placeOf estimates the wait from the admission rate: the tickets still to
// be called before and including this one, at the configured rate. While
// the room is paused no honest estimate exists.
func placeOf(room *Room, ticket int64, line store.Line) Place {
	p := Place{Room: room.Name, Ticket: ticket, Admitted: line.Admitted, Issued: line.Issued, Paused: line.Paused}
	toCall := ticket - line.Admitted
	if toCall < 1 {
		toCall = 1
	}
	p.Ahead = toCall - 1
	if !line.Paused && room.NewUsersPerMinute > 0 {
		secs := math.Ceil(float64(toCall) * 60 / room.NewUsersPerMinute)
		p.Wait, p.WaitKnown = time.Duration(secs)*time.Second, true
	}
	return p
}
