// Package store owns the waiting room's shared state: per room, a line of
// numbered tickets ("issued"), the highest position called in ("admitted"),
// the live sessions, a lazily refilled token bucket that sets the admission
// rate, and the operator's pause switch.
//
// Every operation is one atomic Lua script (line.lua, which go generate
// assembles from its parts in lua/) run in Redis, one round trip, on the
// room's eleven keys, all named with the room as a
// hash tag (wr:{room}:line, ...) so they share one cluster slot and
// Upstash can lock just them; its arguments and reply are named in one
// table (genline/protocol.go) that go generate turns into both sides. The
// caller passes the time, so the same script runs in virtual time in a
// simulator; but the script keeps its own line time, and every deadline
// (a waiting visitor's last poll, a claim window, a session) runs on it: a
// gap between calls counts in full when it is at most a refresh or nobody
// is in line, so a quiet room's timeouts hold to the second, and a longer
// silence while visitors wait (or one a failed renewal reports) counts a
// few seconds at most, so a store outage costs nobody a place. The rate is a token bucket refilled from the time elapsed since
// the last call, so no scheduler is needed: a quiet spell saves at most
// Burst admissions and makes up at most CatchUp's worth of rate.
//
// The store, not the edge, names things that must be unique: a ticket per
// arrival (replaying an arrival answers with its ticket), and a session per
// called ticket (every poll of it gets the same one). An ended session can
// never come back, and holds its place while its pass can still admit. No
// operation calls or passes over more than MaxCallsPerOp tickets, so no
// script stalls the database for long, however long the line.
//
// Beside the line runs a priority lane for invited visitors (JoinPriority):
// its tickets are numbered -1, -2, ... and called first come, first served,
// ahead of the regular line but at most Policy.PriorityShare of the
// admissions while regular tickets wait. A room's scheduled event
// (Policy.Event) is entered and drawn inside the same calls: see Event.
//
// The operator acts through the same script (Operate): live overrides of
// the rate, burst, capacity and mode, kept until cleared; a reset to a new
// epoch; each action appended to the room's audit log in the same call.
// The calls also keep the room's history (History), a day of per-minute
// records (every call that moves a counter writes its minute's, a poll,
// renewal or stats call that moves none at most once a second), so
// charts cost no call of their own.
//
// Keys are versioned by name: this version's keys are new, so deploying it
// starts every room's line afresh (the keys of the previous version,
// wr:<room>:line and its three sorted sets, are left for the operator to
// delete).
//
// [Upstash] implements [Store] over Upstash's REST API; its HTTP transport
// is injected, so the same code runs through a Fastly backend at the edge
// and through net/http in tests.
package store

import (
	"context"
	"crypto/rand"
	"encoding/hex"
	"errors"
	"fmt"
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
	// CatchUp is how much unused rate a call may make up for beyond Burst
	// after a quiet spell (one refresh of the queue page): a room nobody
	// called for ten minutes must not call ten minutes of visitors at once.
	CatchUp time.Duration
	// Heartbeat is how long a session pass admits without asking the
	// store; End holds an ended session's place that long after its last
	// renewal, so no copy of its pass makes capacity overshoot.
	Heartbeat time.Duration
	// PriorityShare is the largest share of admissions the priority lane
	// takes while regular tickets wait (0 to 1).
	PriorityShare float64
	// Event is the room's current or next scheduled event, or nil.
	Event *Event
	// Mode is the room's configured calling mode. RandomWindow is the
	// window Random uses, whatever the mode, so that an operator's live
	// mode can switch to it. An empty Mode is Random when RandomWindow is
	// set and Fifo otherwise.
	Mode Mode
	// Shards is how many shards the room runs as (0 and 1: unsharded), and
	// Shard which of them this call's line is. Each shard is a line of its
	// own, with its own keys, and takes its share of PerMinute, Burst and
	// Capacity (split as evenly as whole numbers go), so that the shards
	// together never pass the room's rate or capacity.
	Shards, Shard int
	// FailedAt is the latest store failure the calling POP observed for
	// the room's line (a call that failed or timed out: the POP's down
	// marker), zero when none. The store sends the later of it and a
	// renewal's SessionRef.FailedAt on every call: a failure after the
	// last call the store answered makes the silence since an outage,
	// which counts a few seconds of line time at most; any other silence
	// counts in full.
	FailedAt time.Time
}

// Mode is a room's calling mode, as the store applies it.
type Mode string

// The modes. Passthrough calls everyone at once (still counted as
// sessions); Reject hands out no ticket and calls nobody.
const (
	Fifo        Mode = "fifo"
	Random      Mode = "random"
	Passthrough Mode = "passthrough"
	Reject      Mode = "reject"
)

// Overrides are an operator's live values for a room, kept in the store
// (so every edge applies them on its next call, and a deploy keeps them)
// until cleared. A nil field, or an empty Mode, is not overridden.
type Overrides struct {
	// Capacity overrides Policy.Capacity (0: no cap).
	Capacity *int `json:"max_active_users"`
	// PerMinute overrides Policy.PerMinute (0: no rate).
	PerMinute *float64 `json:"new_users_per_minute"`
	// Burst overrides Policy.Burst.
	Burst *int `json:"burst"`
	// Mode overrides the configured mode.
	Mode Mode `json:"mode,omitempty"`
}

// With is o with the values set in set replacing its own.
func (o Overrides) With(set Overrides) Overrides {
	if set.Capacity != nil {
		o.Capacity = set.Capacity
	}
	if set.PerMinute != nil {
		o.PerMinute = set.PerMinute
	}
	if set.Burst != nil {
		o.Burst = set.Burst
	}
	if set.Mode != "" {
		o.Mode = set.Mode
	}
	return o
}

// Empty reports whether nothing is overridden.
func (o Overrides) Empty() bool {
	return o.Capacity == nil && o.PerMinute == nil && o.Burst == nil && o.Mode == ""
}

// Event is a scheduled sale. From PrequeueFrom, arrivals join a pre-queue
// and nobody in it (nor the priority lane) is called; the first operation
// at or after Starts draws it: the pre-queue's tickets are called in the
// keyed pseudorandom order of the event's draw key, and later arrivals
// follow in the room's own order. Each transition happens once, in the
// first operation after its time that names the event. An event is its ID
// (its name) and its schedule: the start may be moved while the pre-queue
// is open, and it stays the same event, but an ID scheduled again (another
// pre-queue start, or a start moved after the draw) is a new event, with a
// pre-queue and a draw key of its own; no key is drawn twice. A pre-queue
// is drawn at the start it was last passed, with the key it was entered
// with, even if its event is no longer passed: a stray call (or an event
// removed by mistake) never draws it early nor holds it for ever. Every
// call for the room must still pass the event while it runs, since the rest
// of the Policy (the calling order above all) must not flip between calls.
// The draw key is derived from the store's secret (Upstash.RandomKey), the
// event's ID and its schedule: Line.Event carries its commitment from the
// start, and the key itself once drawn, so anyone can recompute the order
// afterwards (package draw).
type Event struct {
	ID                         string
	PrequeueFrom, Starts, Ends time.Time
}

// EventPhase is where a line stands in its event.
type EventPhase int

// The event phases.
const (
	// NotEntered: the event's pre-queue has not opened in the store.
	NotEntered EventPhase = iota
	// Prequeue: arrivals are collected for the draw.
	Prequeue
	// Drawn: the pre-queue was drawn; its tickets are called in the order.
	Drawn
)

// EventState is the line's view of the event passed in the Policy.
type EventState struct {
	Phase EventPhase
	// First is the first pre-queue ticket; DrawFirst and DrawLast bound
	// the drawn tickets (Drawn only; DrawLast < DrawFirst when nobody was
	// in the pre-queue).
	First               int64
	DrawFirst, DrawLast int64
	// Commitment is the SHA-256 of the draw key in hex, published from the
	// moment the pre-queue opens; Key is the key itself, revealed once the
	// draw is made.
	Commitment, Key string
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
	// CalledNow is how many tickets this operation called in.
	CalledNow int64
	// PriorityIssued and PriorityAdmitted are the priority lane's Issued
	// and Admitted (counted as positive numbers).
	PriorityIssued, PriorityAdmitted int64
	// Event is the state of the event in the Policy.
	Event EventState
	// Overrides are the operator's live values in force.
	Overrides Overrides
}

// Mode is the mode in force: the operator's, or else configured.
func (l Line) Mode(configured Mode) Mode {
	if l.Overrides.Mode != "" {
		return l.Overrides.Mode
	}
	return configured
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
	// Lost: Poll's ticket (or Join's known arrival's) no longer holds a
	// place (called but not claimed in time, passed over while its
	// holder was away, its session ended, or its line was reset). No new
	// ticket is handed out: a place is taken only through Join of a new
	// arrival or JoinPriority, the doors that the edge's join limit, its
	// proof of work and the invite's uses guard, so the holder joins
	// again as a newcomer.
	Lost
	// InviteSpent: JoinPriority's invite has no uses left; no ticket was
	// handed out.
	InviteSpent
	// Closed: the operator's live mode is Reject; no ticket was handed
	// out, and a waiting ticket is not called while it lasts.
	Closed
)

// Ticket names a place in a line: its number, in the line of that epoch.
// Numbers below zero are the priority lane's.
type Ticket struct {
	Number int64
	Epoch  int64
	// Shard is the shard of a sharded room whose line the ticket is in
	// (Place.Shard; 0 in a room of one line).
	Shard int
}

// Arrival names a visitor's arrival, as Join takes it.
type Arrival struct {
	// ID is the arrival's id: a replay of it answers with its ticket.
	ID string
	// Shard is the shard of a sharded room whose line the arrival joins
	// (0 in a room of one line): the caller chooses it, and names the same
	// one again when it replays the arrival, so the replay finds its
	// ticket (see package shard).
	Shard int
}

// Place is a visitor's standing after Join or Poll.
type Place struct {
	Ticket  int64
	Outcome Outcome
	// Session is the live session the ticket became (Outcome Admitted).
	Session string
	// CallFrom and CallTo bound the positions in the calling order this
	// ticket can be called at, to compare with Line.Admitted: both are the
	// ticket itself in first-come order; in random order they span the
	// ticket's group (its arrival window), which is shuffled. GroupsAhead
	// is how many groups (random order) are called before the ticket's.
	CallFrom, CallTo int64
	GroupsAhead      int64
	Line             Line
	// Shard is which of a sharded room's lines the place is in (0 in a
	// room of one line); Line is that shard's.
	Shard int
}

// Store is the shared state behind every edge server. Each method is one
// atomic round trip, and each one also calls in as many waiting tickets as
// the rate and the free places allow at now (at most MaxCallsPerOp).
//
// Session ids are chosen by the store: a called ticket becomes the session
// "<epoch>.<ticket>", so every poll of the same called ticket (two tabs,
// a retry after a lost answer) gets the same session, never a second place.
type Store interface {
	// Join hands out the next ticket to an arrival (a.ID, the id of the
	// visitor's signed arrival pass). Joining again with the same id
	// answers as a Poll of that ticket: while it waits, is called, or is a
	// live session, the same place; once that place is gone, Lost, with no
	// new ticket (one arrival, and the solution it was worked for, buys
	// one place; the edge sends its holder back to the door). When the
	// ticket is called at once, Place.Session is live.
	Join(ctx context.Context, room string, p Policy, a Arrival, now time.Time) (Place, error)
	// JoinPriority is Join into the priority lane with an invite: a new
	// ticket uses one of the invite's uses, and none is handed out once
	// they are spent (Outcome InviteSpent). A replayed arrival uses none.
	JoinPriority(ctx context.Context, room string, p Policy, arrival string, inv Invite, now time.Time) (Place, error)
	// Poll reports ticket t's place, turning it into a live session
	// (Place.Session) when it has been called, or reporting the session it
	// already became. A ticket from another epoch, or whose place was
	// lost, is answered Lost: Poll never hands out a place.
	Poll(ctx context.Context, room string, p Policy, t Ticket, now time.Time) (Place, error)
	// Renew extends a live session; it reports false for a session that
	// ended, expired, or belongs to a line that was reset, and for one the
	// store no longer holds (its state was lost): a session is never taken
	// back, since its holder, a newcomer again, joins through the same
	// guards as anyone. s.FailedAt, when set, tells the store the silence
	// before this call was an outage.
	Renew(ctx context.Context, room string, p Policy, s SessionRef, now time.Time) (bool, Line, error)
	// End ends a session: it can never be renewed again, and its place is
	// held only while a pass of it may still admit without asking the
	// store (until s.UsableUntil, or a heartbeat after its last renewal,
	// whichever is later), so capacity is never exceeded.
	End(ctx context.Context, room string, p Policy, s SessionRef, now time.Time) (Line, error)
	// Admit calls in up to n more waiting tickets at once, beyond the rate
	// and the capacity; n above MaxCallsPerOp is refused with ErrRejected.
	// Line.CalledNow says how many were called.
	Admit(ctx context.Context, room string, p Policy, n int64, now time.Time) (Line, error)
	// Control applies an operator's live control.
	Control(ctx context.Context, room string, p Policy, c Control, now time.Time) (Line, error)
	// Operate applies an operator's action and appends it to the room's
	// audit log, in one call.
	Operate(ctx context.Context, room string, p Policy, a Action, now time.Time) (Line, error)
	// Stats reports the line.
	Stats(ctx context.Context, room string, p Policy, now time.Time) (Line, error)
}

// MaxCallsPerOp bounds the tickets one store operation calls in (and the
// tickets it passes over), so no script runs long enough to stall the
// database for every other room: larger admissions are made in chunks.
const MaxCallsPerOp = 10000

// Invite is a signed invitation to a room's priority lane, as the store
// counts it.
type Invite struct {
	// ID names the invite; its uses are counted under it.
	ID string
	// Uses is how many tickets it may hand out (1 to MaxInviteUses).
	Uses int
	// Until is when it can no longer be presented; its count is kept until
	// then (plus a margin for edges' clocks), so no use comes back.
	Until time.Time
}

// MaxInviteUses bounds an invite's uses, as the script does.
const MaxInviteUses = 100000

// SessionRef names a live session and what its holder's pass allows.
type SessionRef struct {
	// ID is the session id the store gave (Place.Session).
	ID string
	// Epoch is the line the session belongs to.
	Epoch int64
	// UsableUntil is when the holder's pass stops admitting without a
	// store call (its issue time plus the heartbeat); End holds the place
	// until then.
	UsableUntil time.Time
	// FailedAt is when the holder's last renewal failed because the store
	// could not be reached (zero if it did not): the store then counts the
	// silence before this call as an outage, not a quiet spell, so the
	// session outlives it.
	FailedAt time.Time
	// Shard is the shard of a sharded room whose line holds the session
	// (Place.Shard when it was called; 0 in a room of one line).
	Shard int
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

// Actor is who did an operator action, for the audit log.
type Actor struct {
	// Via is the surface: "panel", "api" or "origin".
	Via string
	// Client is a keyed hash of the client's address (hex), so the log
	// tells operators apart without keeping their addresses.
	Client string
}

// The operator actions Action.Op names: the Controls, and these.
const (
	// OpAdmit calls in Action.N more tickets at once.
	OpAdmit = "admit"
	// OpLimits sets the overrides in Action.Set (nil fields are kept).
	OpLimits = "limits"
	// OpClear clears every override.
	OpClear = "clear"
	// OpReset starts the room's line afresh under a new epoch: every
	// ticket and session of the old line is void (their holders join the
	// new line at the back). The switches, overrides, invites used,
	// history and audit log are kept.
	OpReset = "reset"
)

// Action is one operator action.
type Action struct {
	// Op is OpAdmit, OpLimits, OpClear, OpReset, or a Control.
	Op string
	// N is how many tickets OpAdmit calls (1 to MaxCallsPerOp).
	N int64
	// Set holds OpLimits' values.
	Set   Overrides
	Actor Actor
	// ID names the action, so that a retry of it (the same ID) applies
	// only where it has not applied yet: the script keeps it in the audit
	// entry, and an action whose id is among the line's recent entries
	// applies nothing and answers the line as it is. At most MaxActionID
	// bytes of A-Z, a-z, 0-9, '.', '_', ':' and '-' (NewActionID makes
	// one); "" is an action no retry is told apart from.
	ID string
}

// MaxActionID bounds an Action.ID.
const MaxActionID = 64

// CheckActionID refuses an action id the script could not match as it
// keeps it (see Action.ID).
func CheckActionID(id string) error {
	if len(id) > MaxActionID {
		return fmt.Errorf("action id of %d bytes, want at most %d", len(id), MaxActionID)
	}
	for i := 0; i < len(id); i++ {
		switch c := id[i]; {
		case c >= 'a' && c <= 'z', c >= 'A' && c <= 'Z', c >= '0' && c <= '9', c == '.', c == '_', c == ':', c == '-':
		default:
			return fmt.Errorf("action id %.80q: want only letters, digits, '.', '_', ':' and '-'", id)
		}
	}
	return nil
}

// NewActionID names a new action with 128 random bits, for the surface
// that makes it (the panel, the API, the origin's command, the
// simulator) when its caller gives no id of its own.
func NewActionID() (string, error) {
	var b [16]byte
	if _, err := rand.Read(b[:]); err != nil {
		return "", fmt.Errorf("action id: %w", err)
	}
	return hex.EncodeToString(b[:]), nil
}

// Entry is a as the audit log of room keeps it, taken at now and leaving
// the line after: what a caller of Operate logs of the action (the state
// before is the store's own to record).
func (a Action) Entry(room string, now time.Time, after Line) AuditEntry {
	return AuditEntry{Time: now, Room: room, Via: a.Actor.Via, Client: a.Actor.Client, Action: a.Op, N: a.N, ID: a.ID,
		After: AuditState{Epoch: after.Epoch, Issued: after.Issued, Admitted: after.Admitted,
			Paused: after.Paused, QueueAll: after.QueueAll, Overrides: after.Overrides}}
}

// AuditCap is how many audit entries a room keeps: the newest.
const AuditCap = 1000

// AuditState is what an operator action can change of a room.
type AuditState struct {
	Epoch    int64 `json:"epoch"`
	Issued   int64 `json:"issued"`
	Admitted int64 `json:"admitted"`
	Paused   bool  `json:"paused"`
	QueueAll bool  `json:"queue_all"`
	Overrides
}

// AuditEntry is one operator action, as the room's audit log keeps it.
type AuditEntry struct {
	Time   time.Time `json:"time"`
	Room   string    `json:"room"`
	Via    string    `json:"via"`
	Client string    `json:"client"`
	Action string    `json:"action"`
	N      int64     `json:"n,omitempty"`
	// ID is the action's (Action.ID).
	ID     string     `json:"id,omitempty"`
	Before AuditState `json:"before"`
	After  AuditState `json:"after"`
}

// HistoryMinutes is how long a room's per-minute history is kept: a day.
const HistoryMinutes = 24 * 60

// Minute is one minute of a room's history, written by every store call
// in that minute: the counters as the last call left them, and what
// happened in the minute. A minute without a call has no record.
type Minute struct {
	Start time.Time
	// Epoch is the line's; Issued and Admitted its counters, and Active
	// and Waiting its live sessions and waiting tickets, at the last call.
	Epoch            int64
	Issued, Admitted int64
	Active, Waiting  int64
	// Joins is how many tickets were handed out, Admissions how many were
	// called in, in the minute.
	Joins, Admissions int64
	// Refusals is how many requests the store refused in the minute: bad
	// passes presented with a store call, spent invites, and arrivals
	// while the live mode is Reject.
	Refusals int64
	// IssuedMoved and AdmittedMoved are when in the minute Issued and
	// Admitted first and last changed (negative when they did not): a
	// burst moves them once, a stream all minute long.
	IssuedMoved, AdmittedMoved [2]time.Duration
}
