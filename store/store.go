// Package store owns the waiting room's shared state: per room, a line of
// numbered tickets ("issued"), the highest number called in ("admitted"),
// a lazily refilled token bucket that sets the admission rate, and the
// operator's pause switch.
//
// Every operation is one atomic Lua script run in Redis, one round trip:
// the caller passes the time, so the same script runs in virtual time in a
// simulator. The rate is a token bucket refilled from the time elapsed since
// the last call, so no scheduler is needed: quiet periods accumulate at most
// Burst admissions, and nothing is lost while nobody calls.
//
// [Upstash] implements [Store] over Upstash's REST API; its HTTP transport
// is injected, so the same code runs through a Fastly backend at the edge
// and through net/http in tests.
package store

import (
	"context"
	"errors"
	"time"
)

// Errors a caller can test with errors.Is.
var (
	// ErrUnavailable: the store could not be reached, timed out, or failed
	// on its side. Nothing was changed that the caller can rely on, and
	// retrying later is right.
	ErrUnavailable = errors.New("store unavailable")
	// ErrUnauthorized: the store refused the credentials.
	ErrUnauthorized = errors.New("store refused credentials")
	// ErrRejected: the store ran the request and answered with an error.
	ErrRejected = errors.New("store rejected the command")
	// ErrProtocol: the store's answer could not be understood.
	ErrProtocol = errors.New("store answer not understood")
)

// Policy is how a room admits: at a rate, up to a capacity, or both.
type Policy struct {
	// PerMinute is the number of visitors called in per minute; 0 means no
	// rate limit.
	PerMinute float64
	// Burst is how many admissions a quiet room may save up.
	Burst int
	// Capacity is the most visitors active at once (live sessions plus
	// called visitors still inside their claim window); 0 means no cap.
	Capacity int
	// ClaimWindow is how long a called visitor's place is held for them.
	ClaimWindow time.Duration
	// SessionTTL is how long a session lives without a renewal.
	SessionTTL time.Duration
	// QueueTimeout is how long a waiting visitor keeps their place without
	// polling.
	QueueTimeout time.Duration
	// RandomWindow, when set, calls visitors who arrived within the same
	// window of this length in a random order; 0 is first come, first served.
	RandomWindow time.Duration
}

// Line is a room's state after an operation.
type Line struct {
	// Epoch identifies this line: it is set when the room's state is first
	// created, and changes only if that state is lost or reset.
	Epoch int64
	// Issued is the last ticket handed out.
	Issued int64
	// Admitted is the highest ticket called in (or passed over because its
	// holder left).
	Admitted int64
	// Paused is true while the operator holds automatic admission.
	Paused bool
	// QueueAll is true while every newcomer waits and called visitors are
	// held: only live sessions continue.
	QueueAll bool
	// Active is the number of live sessions.
	Active int64
	// Called is the number of called visitors who have not arrived yet.
	Called int64
	// Recent is how many visitors were called in since RecentSince.
	Recent      int64
	RecentSince time.Time
}

// Waiting is how many tickets have not been reached yet.
func (l Line) Waiting() int64 { return l.Issued - l.Admitted }

// Outcome is what became of a visitor's ticket in Join or Poll.
type Outcome int

// Outcomes of Join and Poll.
const (
	// Waiting: the ticket holds a place in line.
	Waiting Outcome = iota
	// Admitted: the ticket was called and is now a live session.
	Admitted
	// Rejoined: the ticket's place was lost (called but not claimed in
	// time, or passed over while its holder was away); the visitor holds a
	// new ticket at the back.
	Rejoined
)

// Ticket names a place in a line: its number, in the line of that epoch.
type Ticket struct {
	Number int64
	Epoch  int64
}

// Place is a visitor's standing after Join or Poll.
type Place struct {
	Ticket  int64
	Outcome Outcome
	Line    Line
}

// Store is the shared state behind every edge server. Each method is one
// atomic round trip, and each one also calls in as many waiting tickets as
// the rate and the free places allow at now.
type Store interface {
	// Join hands out the next ticket; when it is called at once, sessionID
	// becomes a live session.
	Join(ctx context.Context, room string, p Policy, sessionID string, now time.Time) (Place, error)
	// Poll reports ticket t's place, turning it into the live session
	// sessionID when it has been called. A ticket from another epoch, or
	// whose place was lost, is replaced by a new one at the back.
	Poll(ctx context.Context, room string, p Policy, t Ticket, sessionID string, now time.Time) (Place, error)
	// Renew extends a live session; it reports false for a session that
	// ended, expired, or belongs to a line that was reset.
	Renew(ctx context.Context, room string, p Policy, sessionID string, now time.Time) (bool, Line, error)
	// End ends a session at once, freeing its place.
	End(ctx context.Context, room string, p Policy, sessionID string, now time.Time) (Line, error)
	// Admit calls in n more waiting tickets at once, beyond the rate and
	// the capacity.
	Admit(ctx context.Context, room string, p Policy, n int64, now time.Time) (Line, error)
	// Control applies an operator's live control.
	Control(ctx context.Context, room string, p Policy, c Control, now time.Time) (Line, error)
	// Stats reports the line.
	Stats(ctx context.Context, room string, p Policy, now time.Time) (Line, error)
}

// Control is an operator's live control of a room.
type Control string

// The live controls.
const (
	// Pause stops automatic admission; queued visitors keep their places
	// and "admit N" still works.
	Pause Control = "pause"
	// QueueAll makes everyone new wait and holds called visitors; live
	// sessions continue.
	QueueAll Control = "queue_all"
	// Resume undoes Pause and QueueAll.
	Resume Control = "resume"
)
