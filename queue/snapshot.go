package queue

import (
	"errors"
	"math"
	"strconv"
	"strings"
	"time"

	"github.com/edgequeue/waitingroom/settings"
	"github.com/edgequeue/waitingroom/store"
)

// A Snapshot is a POP's short-lived copy of a room's line, shared by every
// request the POP serves (at the edge, in Fastly's cache). Most of a line
// is far from the front: a visitor whose ticket will not be called before
// their next two polls learns nothing from the store that the line's
// counters do not already say. So the edge answers them from the snapshot
// with no store call, and only visitors near the front, arrivals, claims
// and sessions ask the store, as they always did. The first poll in a POP
// after the snapshot's TTL fills it with its own store call (the answer to
// a poll holds the whole line), which runs the room's admission step as
// every store call does: a snapshot costs no call of its own.
//
// What the snapshot cannot carry is the visitor's own "last seen", by which
// the store passes over tickets whose holders left. The ticket pass carries
// when the store last saw the ticket (Pass.Seen), and a visitor is answered
// from the snapshot only while that is less than a third of the queue
// timeout ago: the store still sees every waiting visitor three times per
// timeout, and an abandoned ticket is still passed over.
type Snapshot struct {
	// Line is what the store call that filled the snapshot answered.
	Line store.Line
	// At is when that call was made.
	At time.Time
}

// Snapshots keeps each room's Snapshot in the POP. Get returns the room's
// snapshot, at most room.SnapshotTTL() old, or fills it with fill (one
// store call); concurrent misses in a POP wait for a single fill. now is
// when the request began. Get's error is store.ErrUnavailable for a
// request that waited on a fill that failed, and ErrNoSnapshot when the
// request should ask the store itself.
//
// Peek returns the room's snapshot when the POP holds one, filling none
// (ErrNoSnapshot when it holds none): what a newcomer's proof of work
// reads the line's pressure from.
//
// A sharded room has a snapshot per shard (each shard is a line of its own).
type Snapshots interface {
	Get(room *Room, shard int, now time.Time, fill func() (Snapshot, error)) (Snapshot, error)
	Peek(room *Room, shard int) (Snapshot, error)
}

// ErrNoSnapshot: there is no snapshot to answer from, and the request
// should ask the store itself (the POP's last fill failed before it
// began).
var ErrNoSnapshot = errors.New("no snapshot")

// SnapshotTTL is how long a POP's snapshot of the room is used; 0 asks the
// store for every poll.
func (r *Room) SnapshotTTL() time.Duration {
	return settings.Seconds(r.SnapshotTTLSeconds)
}

// fromSnapshot answers a waiting visitor who holds ticket (of line epoch
// in shard sh, last seen by the store at seen) from snap, that shard's, at now, without the store. It
// reports false when the store must be asked: a priority, random or drawn
// place, a room closed or in an event, a line that was reset, a ticket the
// store has not seen for a third of the queue timeout, a snapshot older
// than two TTLs, or a ticket near the front. Near means fewer tickets
// ahead than the room's fast-poll zone plus the burst plus what the
// observed admissions reach in two refreshes and the snapshot's age: a
// visitor answered from a snapshot is not called before their next poll
// at the observed pace (an operator's "admit N" can still call them; they
// then learn it at their next poll, as they would without a snapshot, one
// TTL later at most).
func fromSnapshot(room *Room, ticket, epoch int64, sh int, seen time.Time, snap Snapshot, now time.Time) (Place, bool) {
	l, ttl := snap.Line, room.SnapshotTTL()
	age := now.Sub(snap.At)
	switch {
	case !maySnapshot(room, ticket, seen, now):
		return Place{}, false
	case l.Epoch != epoch || l.Mode(room.Mode) != Fifo || l.Event.Phase != store.NotEntered:
		return Place{}, false
	case age < -time.Second || age > 2*ttl:
		return Place{}, false
	}
	ahead := ticket - l.Admitted - 1
	if ahead < nearFront(room, snap, age) {
		return Place{}, false
	}
	pl := store.Place{Ticket: ticket, Outcome: store.Waiting, CallFrom: ticket, CallTo: ticket, Line: l, Shard: sh}
	return placeOf(room, pl, now), true
}

// maySnapshot reports what fromSnapshot can tell before any snapshot is
// read: whether the room uses snapshots, the ticket is a regular FIFO one
// outside an event, and the store saw it lately (seenLately). A request it
// refuses asks the store without reading the POP's cache.
func maySnapshot(room *Room, ticket int64, seen, now time.Time) bool {
	return room.SnapshotTTL() > 0 && ticket > 0 && room.Mode == Fifo && room.Event() == nil && seenLately(room, seen, now)
}

// nearFront is how many tickets ahead of a ticket make it near the front:
// the fast-poll zone, the burst, and the observed admissions of two
// refreshes plus the snapshot's age.
func nearFront(room *Room, snap Snapshot, age time.Duration) int64 {
	margin := zone(room) + int64(room.Burst)
	l := snap.Line
	window := snap.At.Sub(l.RecentSince)
	if l.Recent > 0 && window >= time.Second {
		perSecond := float64(l.Recent) / window.Seconds()
		reach := 2*seconds(room.RefreshSeconds) + max(age, 0) + room.SnapshotTTL()
		margin += int64(math.Ceil(perSecond * reach.Seconds()))
	}
	return margin
}

// snapshotVersion starts an encoded Snapshot: a POP's cache outlives a
// deploy, so a new encoding must not be read as the old one (version 2
// added the operator's live rate, burst and capacity, which the wait
// estimate reads).
const snapshotVersion = "wr-snapshot-2"

// ErrBadSnapshot: a cached snapshot could not be read.
var ErrBadSnapshot = errors.New("snapshot not understood")

// MarshalText encodes the snapshot for the POP's cache: what fromSnapshot
// and the queue page read of it, as space-separated fields.
func (s Snapshot) MarshalText() ([]byte, error) {
	l := s.Line
	b := make([]byte, 0, 160)
	b = append(b, snapshotVersion...)
	o := l.Overrides
	for _, n := range [...]int64{nanos(s.At), l.Epoch, l.Issued, l.Admitted, flag(l.Paused), flag(l.QueueAll),
		l.Active, l.Called, l.Recent, nanos(l.RecentSince), l.PriorityIssued, l.PriorityAdmitted, int64(l.Event.Phase),
		overridden(o.PerMinute, 1000), overridden(o.Burst, 1), overridden(o.Capacity, 1)} {
		b = append(b, ' ')
		b = strconv.AppendInt(b, n, 10)
	}
	b = append(b, ' ')
	b = append(b, l.Overrides.Mode...)
	return b, nil
}

// snapshotFields is how many fields MarshalText writes after the version.
const snapshotFields = 17

// UnmarshalText reads what MarshalText wrote, refusing anything else with
// ErrBadSnapshot.
func (s *Snapshot) UnmarshalText(b []byte) error {
	f := strings.Split(string(b), " ")
	if len(f) != 1+snapshotFields || f[0] != snapshotVersion {
		return ErrBadSnapshot
	}
	var n [snapshotFields - 1]int64
	for i := range n {
		v, err := strconv.ParseInt(f[1+i], 10, 64)
		if err != nil {
			return ErrBadSnapshot
		}
		n[i] = v
	}
	mode := store.Mode(f[snapshotFields])
	switch mode {
	case "", Fifo, Random, Passthrough, Reject:
	default:
		return ErrBadSnapshot
	}
	phase := store.EventPhase(n[12])
	if phase < store.NotEntered || phase > store.Drawn {
		return ErrBadSnapshot
	}
	o := store.Overrides{Mode: mode, PerMinute: live[float64](n[13], 1000), Burst: live[int](n[14], 1), Capacity: live[int](n[15], 1)}
	*s = Snapshot{At: fromNanos(n[0]), Line: store.Line{Epoch: n[1], Issued: n[2], Admitted: n[3], Paused: n[4] == 1, QueueAll: n[5] == 1,
		Active: n[6], Called: n[7], Recent: n[8], RecentSince: fromNanos(n[9]), PriorityIssued: n[10], PriorityAdmitted: n[11],
		Event: store.EventState{Phase: phase}, Overrides: o}}
	return nil
}

// overridden encodes an operator's live value v, times scale (the rate in
// thousandths, as the store keeps it), or -1 when it is not overridden.
func overridden[T int | float64](v *T, scale float64) int64 {
	if v == nil {
		return -1
	}
	return int64(math.Round(float64(*v) * scale))
}

// live decodes what overridden encoded.
func live[T int | float64](n int64, scale float64) *T {
	if n < 0 {
		return nil
	}
	v := T(float64(n) / scale)
	return &v
}

// nanos is t in Unix nanoseconds, 0 for the zero time (which has none).
func nanos(t time.Time) int64 {
	if t.IsZero() {
		return 0
	}
	return t.UnixNano()
}

// fromNanos is the time nanos gave n for.
func fromNanos(n int64) time.Time {
	if n == 0 {
		return time.Time{}
	}
	return time.Unix(0, n)
}

func flag(b bool) int64 {
	if b {
		return 1
	}
	return 0
}
