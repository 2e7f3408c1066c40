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

// Policy is a room's admission rate.
type Policy struct {
	// PerMinute is the number of visitors admitted per minute.
	PerMinute float64
	// Burst is how many admissions a quiet room may save up.
	Burst int
}

// Line is a room's state after an operation.
type Line struct {
	// Epoch identifies this line: it is set when the room's state is first
	// created, and changes only if that state is lost or reset.
	Epoch int64
	// Issued is the last ticket handed out.
	Issued int64
	// Admitted is the highest ticket called in.
	Admitted int64
	// Paused is true while the operator holds admissions.
	Paused bool
}

// Waiting is how many tickets have not been called yet.
func (l Line) Waiting() int64 { return l.Issued - l.Admitted }

// Store is the shared state behind every edge server. Each method is one
// atomic round trip, and each one also admits as many waiting tickets as
// the rate allows at now.
type Store interface {
	// Join hands out the next ticket.
	Join(ctx context.Context, room string, p Policy, now time.Time) (ticket int64, l Line, err error)
	// Poll reports the line.
	Poll(ctx context.Context, room string, p Policy, now time.Time) (Line, error)
	// Admit calls in n more tickets at once, beyond the rate.
	Admit(ctx context.Context, room string, n int64, p Policy, now time.Time) (Line, error)
	// SetPaused stops or restarts automatic admission.
	SetPaused(ctx context.Context, room string, paused bool, p Policy, now time.Time) (Line, error)
}
