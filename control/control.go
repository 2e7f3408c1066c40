// Package control is what an operator can do to a room and read of it,
// whichever surface they use: the admin panel and the admin API both act
// through an Operator, so the two never differ in what they allow. The
// actions are one table (Actions, in actions.go), from which the panel
// draws its forms and the API its routes.
//
// Every action is one store call per shard of the room that applies it
// and appends it to the room's audit log atomically (store.Operate): the
// log holds exactly the actions that took effect, with the room's state
// before and after. Live values (capacity, rate, burst, mode) are
// overrides kept in the store: every edge applies them on its next call, a
// deploy keeps them, and clearing them restores the config store's values.
//
// Readings come from the same store: Stats from one call, History from
// the room's per-minute records. Waits are not stored per visitor; they
// are read off the history's two running counts, tickets issued and
// tickets called, as in a cumulative flow diagram: the k-th ticket waited
// from when "issued" reached k until "called" reached k. In random order
// the k-th position called is not the k-th ticket, so a wait is off by at
// most the room's random window.
//
// An Operator serves one request, and makes at most MaxStoreCalls store
// calls whatever the number of rooms, their shards or the audit entries:
// a call on a room of K shards counts K, the lists the panel and the API
// show come a page at a time, cut by what their rooms cost (Page), and the
// audit log of every room is merged page by page with a cursor (audit.go).
//
// The two surfaces are opened alike too: each by a Secret long enough to
// resist guessing, with wrong guesses limited per client by Guesses
// (secret.go).
package control

import (
	"context"
	"errors"
	"fmt"
	"math"
	"time"

	"github.com/edgequeue/waitingroom/queue"
	"github.com/edgequeue/waitingroom/store"
)

// Errors an Operator returns, to test with errors.Is; store errors wrap
// store.ErrUnavailable and its kin.
var (
	// ErrNoRoom: no room of that name is configured.
	ErrNoRoom = errors.New("no such room")
	// ErrConfirm: a reset's confirmation is not the room's name.
	ErrConfirm = errors.New("the confirmation does not match the room's name")
	// ErrModeLocked: the room is configured to reject, which the edge
	// answers without asking the store, so no live mode can open it.
	ErrModeLocked = errors.New("the room is configured with mode reject; change its mode in the config store")
)

// InputError is a bad value for a named field.
type InputError struct {
	Field, Message string
}

func (e *InputError) Error() string { return e.Field + ": " + e.Message }

// Store is what an Operator needs of the store; *store.Upstash has it.
type Store interface {
	Stats(ctx context.Context, room string, p store.Policy, now time.Time) (store.Line, error)
	Operate(ctx context.Context, room string, p store.Policy, a store.Action, now time.Time) (store.Line, error)
	History(ctx context.Context, room string, from, to time.Time) ([]store.Minute, error)
	Audit(ctx context.Context, reads []store.AuditRead) ([][]store.AuditEntry, error)
}

// Operator acts on the configured rooms at Now, for one request: its
// store calls, whichever methods make them, are at most MaxStoreCalls.
type Operator struct {
	Rooms []*queue.Room
	Store Store
	Now   time.Time
	// Logf notes what failed.
	Logf func(format string, args ...any)
	// Logged, when set, is told of every action that took effect.
	Logged func(store.AuditEntry)
	// Clock measures the store's latency; nil is time.Now.
	Clock func() time.Time
	// ActionID names the action this request makes (store.Action.ID), as
	// its caller gave it so that a retry is known as one (the API's
	// Idempotency-Key); "" names it afresh.
	ActionID string
	// Decoys, when set, counts a room's requests sent to its decoy line
	// in the last minute, at no store call (at the edge, the POP's rate
	// counter).
	Decoys func(room string) (int, error)

	// calls is Store behind the request's budget (see store).
	calls *budget
}

// Room is the configured room of that name (ErrNoRoom if none).
func (o *Operator) Room(name string) (*queue.Room, error) {
	for _, r := range o.Rooms {
		if r.Name == name {
			return r, nil
		}
	}
	return nil, fmt.Errorf("%w: %q", ErrNoRoom, name)
}

// Admit calls in n more waiting visitors at once, beyond the rate and the
// capacity.
func (o *Operator) Admit(ctx context.Context, room string, n int64, who store.Actor) (store.Line, error) {
	if n < 1 || n > store.MaxCallsPerOp {
		return store.Line{}, &InputError{"n", fmt.Sprintf("must be a whole number from 1 to %d", store.MaxCallsPerOp)}
	}
	return o.act(ctx, room, store.Action{Op: store.OpAdmit, N: n, Actor: who})
}

// Control pauses automatic admission, queues everyone, or resumes.
func (o *Operator) Control(ctx context.Context, room string, c store.Control, who store.Actor) (store.Line, error) {
	switch c {
	case store.Pause, store.QueueAll, store.Resume:
	default:
		return store.Line{}, &InputError{"control", fmt.Sprintf("must be pause, queue_all or resume, got %q", c)}
	}
	return o.act(ctx, room, store.Action{Op: string(c), Actor: who})
}

// Limits are a room's admission values, as the config names them; a nil
// field is not given (in a PATCH: left as it is).
type Limits struct {
	MaxActiveUsers    *int     `json:"max_active_users,omitempty"`
	NewUsersPerMinute *float64 `json:"new_users_per_minute,omitempty"`
	Burst             *int     `json:"burst,omitempty"`
	Mode              *string  `json:"mode,omitempty"`
}

// SetLimits overrides some of the room's live values, within the bounds
// the room's config has.
func (o *Operator) SetLimits(ctx context.Context, room string, l Limits, who store.Actor) (store.Line, error) {
	r, err := o.Room(room)
	if err != nil {
		return store.Line{}, err
	}
	set := store.Overrides{Capacity: l.MaxActiveUsers, PerMinute: l.NewUsersPerMinute, Burst: l.Burst}
	checks := []struct {
		field string
		v     *float64
	}{{"max_active_users", intValue(l.MaxActiveUsers)}, {"new_users_per_minute", l.NewUsersPerMinute}, {"burst", intValue(l.Burst)}}
	for _, c := range checks {
		if c.v == nil {
			continue
		}
		if err := queue.CheckLimit(c.field, *c.v); err != nil {
			return store.Line{}, &InputError{c.field, trimField(err.Error(), c.field)}
		}
	}
	if l.Mode != nil {
		if err := queue.CheckMode(*l.Mode); err != nil {
			return store.Line{}, &InputError{"mode", trimField(err.Error(), "mode")}
		}
		set.Mode = queue.Mode(*l.Mode)
	}
	if set.Empty() {
		return store.Line{}, &InputError{"limits", "give at least one of max_active_users, new_users_per_minute, burst, mode"}
	}
	if r.At(o.Now).Mode == queue.Reject {
		return store.Line{}, ErrModeLocked
	}
	// Nobody may be left with no limit at all while the room queues:
	// that is passthrough, and should say so.
	if set.Capacity != nil || set.PerMinute != nil || set.Mode != "" {
		st, err := o.stats(ctx, r)
		if err != nil {
			return store.Line{}, err
		}
		eff := effective(r.At(o.Now), st.line.Overrides.With(set))
		if k := r.Policy(o.Now).Shards; eff.capacity > 0 && eff.capacity < k {
			return store.Line{}, &InputError{"max_active_users", fmt.Sprintf("%d is below the room's %d shards: each shard needs at least one place, or nobody in the shards left without one is ever called (set at least %d, or 0 for no limit)", eff.capacity, k, k)}
		}
		if eff.capacity == 0 && eff.rate == 0 && (eff.mode == queue.Fifo || eff.mode == queue.Random) {
			return store.Line{}, &InputError{"max_active_users", "with new_users_per_minute 0 too, nobody would ever wait: set one of them, or mode passthrough"}
		}
	}
	return o.act(ctx, room, store.Action{Op: store.OpLimits, Set: set, Actor: who})
}

// ClearOverrides drops every live value: the config's apply again.
func (o *Operator) ClearOverrides(ctx context.Context, room string, who store.Actor) (store.Line, error) {
	return o.act(ctx, room, store.Action{Op: store.OpClear, Actor: who})
}

// Reset starts the room's line afresh (store.OpReset): everyone in it,
// waiting or admitted, joins the new line at the back. confirm must be
// the room's name, typed by the operator.
func (o *Operator) Reset(ctx context.Context, room, confirm string, who store.Actor) (store.Line, error) {
	if confirm != room {
		return store.Line{}, fmt.Errorf("%w: type %q to reset", ErrConfirm, room)
	}
	return o.act(ctx, room, store.Action{Op: store.OpReset, Actor: who})
}

func (o *Operator) act(ctx context.Context, room string, a store.Action) (store.Line, error) {
	r, err := o.Room(room)
	if err != nil {
		return store.Line{}, err
	}
	if a.ID = o.ActionID; a.ID == "" {
		if a.ID, err = store.NewActionID(); err != nil {
			return store.Line{}, err
		}
	} else if err := store.CheckActionID(a.ID); err != nil {
		return store.Line{}, &InputError{"id", err.Error()}
	}
	line, err := o.store().Operate(ctx, r.Name, r.Policy(o.Now), a, o.Now)
	if err != nil {
		o.logf("control: %s in room %s by %s failed: %v", a.Op, r.Name, a.Actor.Via, err)
		return store.Line{}, err
	}
	if o.Logged != nil {
		o.Logged(a.Entry(r.Name, o.Now, line))
	}
	return line, nil
}

func (o *Operator) logf(format string, args ...any) {
	if o.Logf != nil {
		o.Logf(format, args...)
	}
}

func intValue(v *int) *float64 {
	if v == nil {
		return nil
	}
	f := float64(*v)
	return &f
}

// trimField drops the "field: " CheckLimit's messages start with.
func trimField(msg, field string) string {
	if len(msg) > len(field)+2 && msg[:len(field)+2] == field+": " {
		return msg[len(field)+2:]
	}
	return msg
}

// limits is a room's values in force.
type limits struct {
	capacity int
	rate     float64
	burst    int
	mode     queue.Mode
}

func effective(r *queue.Room, o store.Overrides) limits {
	capacity, rate, burst := r.MaxActiveUsers, r.NewUsersPerMinute, r.Burst
	o = store.Overrides{Capacity: &capacity, PerMinute: &rate, Burst: &burst, Mode: r.Mode}.With(o)
	return limits{*o.Capacity, *o.PerMinute, *o.Burst, o.Mode}
}

func (l limits) json() Limits {
	mode := string(l.mode)
	return Limits{MaxActiveUsers: &l.capacity, NewUsersPerMinute: &l.rate, Burst: &l.burst, Mode: &mode}
}

// round keeps a figure to what is worth showing.
func round(v float64) float64 { return math.Round(v*10) / 10 }
