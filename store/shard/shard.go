// Package shard runs a room as K lines instead of one, for a room whose
// calls are more than one database core can take.
//
// The model: shard i of room R is a line of its own, the store room R for
// i = 0 (so a room of one shard keeps exactly its keys) and R#i beyond (a
// room name never holds '#'), with its own keys in its own hash slot, on
// Backends[i % len(Backends)]: one database can carry every shard, a
// Redis Cluster spreads the slots, or each shard has an Upstash database
// of its own. Each shard takes its share of the room's rate, burst and
// capacity (the script splits them: see store.Policy.Shards), so the
// shards together never call more than the room's rate nor hold more
// than its capacity, with no call between shards.
//
// A visitor belongs to one shard for good: an arrival names its shard
// (store.Arrival.Shard), which the edge picks when it hands out the
// arrival pass and signs into it, so replaying the pass finds its ticket:
// the shorter line of the two its arrival id picks (Choices), as the
// POP's snapshot shows them, or the first of them, a stable hash of the
// id (Of), when the POP knows neither. A ticket and the session it
// becomes name their shard (store.Ticket.Shard, store.SessionRef.Shard,
// from store.Place.Shard), and every call about them goes to that shard
// only. An invited arrival goes to the shard its invite's id picks, so
// one shard counts all of an invite's uses.
//
// Operators see one room: an action is applied to every shard (K calls,
// admit N split as evenly as whole numbers go), the audit entry kept by
// each and read from shard 0, and the lines summed. A shard that cannot
// be reached fails the whole answer, naming it: a sum with a shard
// missing would look like a smaller room. An action is still tried on
// every other shard, and the failure (a *PartialError) names the shards
// that hold it; each shard's script keeps the action's id, so retrying
// it with the same id completes it and applies it nowhere twice.
//
// Arrival order holds within a shard. Across shards it holds within a
// bound: each shard calls its own line at its share of the rate, so a
// shard that received more arrivals than another falls behind it by the
// difference over its rate (see docs/rooms.md, "Sharded rooms").
package shard

import (
	"context"
	"errors"
	"fmt"
	"slices"
	"strconv"
	"time"

	"github.com/edgequeue/waitingroom/store"
)

// MaxShards bounds the shards of a room, as the room's setting does.
const MaxShards = 8

// Separator joins a room's name and a shard's number in the store's room
// name: room names hold a-z, 0-9, - and _ only, so no shard's name is
// another room's.
const Separator = "#"

// Backend is one database's store: the lines, and the history and audit
// log the operator reads (store.Upstash has them all).
type Backend interface {
	store.Store
	History(ctx context.Context, room string, from, to time.Time) ([]store.Minute, error)
	Audit(ctx context.Context, reads []store.AuditRead) ([][]store.AuditEntry, error)
}

// Store is a store.Store whose rooms run as Policy.Shards shards.
type Store struct {
	// Backends carry the shards: shard i is on Backends[i % len(Backends)].
	Backends []Backend
	// Shards is how many shards a room runs as, for the calls that carry
	// no Policy (History); nil is one for every room.
	Shards func(room string) int
}

// Name is the store's room name for shard i of room.
func Name(room string, i int) string {
	if i == 0 {
		return room
	}
	return room + Separator + strconv.Itoa(i)
}

// Of is the shard of shards an id (an arrival's, an invite's) belongs to:
// FNV-1a of id, modulo shards.
func Of(id string, shards int) int {
	if shards <= 1 {
		return 0
	}
	return int(fnv(id) % uint32(shards))
}

// Choices are the two shards of shards an arrival id may be sent to: Of's
// first, and a second other than it, from the hash's high bits (as
// independent of its low bits as FNV-1a gives), so the pairs spread
// evenly over the pairs of shards. In a room of one line both are 0.
// Sending each arrival to the shorter of its two lines keeps the lines
// within a few tickets of each other (the power of two choices), where
// the hash alone leaves them apart by about the square root of the
// arrivals; and where the lines are known only as they stood a moment
// ago, two choices herd no crowd into one line as the shortest of all
// would.
func Choices(id string, shards int) [2]int {
	if shards <= 1 {
		return [2]int{}
	}
	h, k := fnv(id), uint32(shards)
	first := h % k
	return [2]int{int(first), int((first + 1 + (h>>16)%(k-1)) % k)}
}

// fnv is the 32-bit FNV-1a hash of id.
func fnv(id string) uint32 {
	h := uint32(2166136261)
	for i := 0; i < len(id); i++ {
		h ^= uint32(id[i])
		h *= 16777619
	}
	return h
}

// Split is shard i's part of n split over shards: as even as whole numbers
// go, the first shards taking one more.
func Split(n int64, i, shards int) int64 {
	if shards <= 1 {
		return n
	}
	k := int64(shards)
	part := n / k
	if int64(i) < n%k {
		part++
	}
	return part
}

// count is how many shards policy p runs room as.
func count(p store.Policy) int { return max(p.Shards, 1) }

// ErrNoShard: a ticket or session names a shard the room no longer has
// (its shards were lowered).
var ErrNoShard = errors.New("no such shard")

// on is the backend, store room name and policy for shard i of room.
func (s *Store) on(room string, p store.Policy, i int) (Backend, string, store.Policy, error) {
	k := count(p)
	if i < 0 || i >= k {
		return nil, "", p, fmt.Errorf("room %s: %w: shard %d of %d", room, ErrNoShard, i, k)
	}
	if len(s.Backends) == 0 {
		return nil, "", p, fmt.Errorf("room %s: %w: no backend configured", room, store.ErrUnavailable)
	}
	p.Shards, p.Shard = k, i
	return s.Backends[i%len(s.Backends)], Name(room, i), p, nil
}

// failed names the shard a call failed on.
func failed(room string, i, k int, err error) error {
	if err == nil || k <= 1 {
		return err
	}
	return fmt.Errorf("room %s, shard %d of %d: %w", room, i, k, err)
}

// place calls shard i for a place and marks it with the shard.
func (s *Store) place(room string, p store.Policy, i int, call func(Backend, string, store.Policy) (store.Place, error)) (store.Place, error) {
	b, name, sp, err := s.on(room, p, i)
	if err != nil {
		return store.Place{Shard: i}, err
	}
	pl, err := call(b, name, sp)
	pl.Shard = i
	return pl, failed(room, i, count(p), err)
}

// Join implements store.Store: the shard the arrival names.
func (s *Store) Join(ctx context.Context, room string, p store.Policy, a store.Arrival, now time.Time) (store.Place, error) {
	return s.place(room, p, a.Shard, func(b Backend, name string, sp store.Policy) (store.Place, error) {
		return b.Join(ctx, name, sp, a, now)
	})
}

// JoinPriority implements store.Store: the invite's shard, so its uses
// are all counted in one place.
func (s *Store) JoinPriority(ctx context.Context, room string, p store.Policy, arrival string, inv store.Invite, now time.Time) (store.Place, error) {
	return s.place(room, p, Of(inv.ID, count(p)), func(b Backend, name string, sp store.Policy) (store.Place, error) {
		return b.JoinPriority(ctx, name, sp, arrival, inv, now)
	})
}

// Poll implements store.Store: the ticket's shard. A ticket of a shard
// the room no longer has is Lost, as a ticket of a line that was reset.
func (s *Store) Poll(ctx context.Context, room string, p store.Policy, t store.Ticket, now time.Time) (store.Place, error) {
	pl, err := s.place(room, p, t.Shard, func(b Backend, name string, sp store.Policy) (store.Place, error) {
		return b.Poll(ctx, name, sp, t, now)
	})
	if errors.Is(err, ErrNoShard) {
		return store.Place{Ticket: t.Number, Outcome: store.Lost, Shard: t.Shard}, nil
	}
	return pl, err
}

// Renew implements store.Store: the session's shard. A session of a shard
// the room no longer has is over.
func (s *Store) Renew(ctx context.Context, room string, p store.Policy, ref store.SessionRef, now time.Time) (bool, store.Line, error) {
	b, name, sp, err := s.on(room, p, ref.Shard)
	if errors.Is(err, ErrNoShard) {
		return false, store.Line{}, nil
	}
	if err != nil {
		return false, store.Line{}, err
	}
	ok, l, err := b.Renew(ctx, name, sp, ref, now)
	return ok, l, failed(room, ref.Shard, count(p), err)
}

// End implements store.Store: the session's shard. A session of a shard
// the room no longer has holds no place the room counts: nothing to end.
func (s *Store) End(ctx context.Context, room string, p store.Policy, ref store.SessionRef, now time.Time) (store.Line, error) {
	b, name, sp, err := s.on(room, p, ref.Shard)
	if errors.Is(err, ErrNoShard) {
		return store.Line{}, nil
	}
	if err != nil {
		return store.Line{}, err
	}
	l, err := b.End(ctx, name, sp, ref, now)
	return l, failed(room, ref.Shard, count(p), err)
}

// each calls every shard of room in turn, one call each, and sums their
// lines. A read (op "") ends at the first failure, naming its shard: a
// sum with a shard missing would look like a smaller room. An action (op
// its name) is tried on every shard whatever fails, so that one shard
// down leaves the others holding it, and the failures come back as a
// *PartialError naming the shards that hold it and those that do not.
func (s *Store) each(room string, p store.Policy, op string, call func(i int, b Backend, name string, sp store.Policy) (store.Line, error)) (store.Line, error) {
	k := count(p)
	var sum store.Line
	var partial PartialError
	for i := 0; i < k; i++ {
		b, name, sp, err := s.on(room, p, i)
		if err == nil {
			var l store.Line
			if l, err = call(i, b, name, sp); err == nil {
				sum = add(sum, l, i)
				partial.Done = append(partial.Done, i)
				continue
			}
		}
		if op == "" || k <= 1 {
			return store.Line{}, failed(room, i, k, err)
		}
		partial.Failed = append(partial.Failed, i)
		if partial.Err == nil {
			partial.Err = failed(room, i, k, err)
		}
	}
	if partial.Err != nil {
		partial.Room, partial.Op, partial.Shards = room, op, k
		return store.Line{}, &partial
	}
	return sum, nil
}

// PartialError is an action that failed on some of a room's shards: Done
// hold it, Failed do not (Err is the first of their failures, and what
// errors.Is sees through). Retrying the action with the same id
// (store.Action.ID) applies it on Failed only, and completes it.
type PartialError struct {
	Room, Op     string
	Shards       int
	Done, Failed []int
	Err          error
}

func (e *PartialError) Error() string {
	return fmt.Sprintf("room %s: %s holds on %s of %d, not on %s (retry the action with the same id to complete it): %v",
		e.Room, e.Op, shardList(e.Done), e.Shards, shardList(e.Failed), e.Err)
}

func (e *PartialError) Unwrap() error { return e.Err }

// shardList names shards for a person: "shards 0, 2", "shard 1", "no shard".
func shardList(shards []int) string {
	switch len(shards) {
	case 0:
		return "no shard"
	case 1:
		return "shard " + strconv.Itoa(shards[0])
	}
	b := []byte("shards ")
	for j, i := range shards {
		if j > 0 {
			b = append(b, ", "...)
		}
		b = strconv.AppendInt(b, int64(i), 10)
	}
	return string(b)
}

// add adds shard i's line l to sum: the counters add up; the epoch, the
// switches, the overrides and the event are shard 0's (an operator's
// action sets them on every shard alike), and the window of recent calls
// starts at the earliest shard's, so a pace read from the sum is never
// too fast.
func add(sum, l store.Line, i int) store.Line {
	if i == 0 {
		return l
	}
	sum.Issued += l.Issued
	sum.Admitted += l.Admitted
	sum.Active += l.Active
	sum.Called += l.Called
	sum.Recent += l.Recent
	sum.CalledNow += l.CalledNow
	sum.PriorityIssued += l.PriorityIssued
	sum.PriorityAdmitted += l.PriorityAdmitted
	if l.RecentSince.Before(sum.RecentSince) {
		sum.RecentSince = l.RecentSince
	}
	return sum
}

// Admit implements store.Store: n spread over the shards as Split spreads
// it.
func (s *Store) Admit(ctx context.Context, room string, p store.Policy, n int64, now time.Time) (store.Line, error) {
	if n < 0 || n > store.MaxCallsPerOp {
		return store.Line{}, fmt.Errorf("admit %s: %w: %d visitors at once, want 0 to %d (admit more in chunks)", room, store.ErrRejected, n, store.MaxCallsPerOp)
	}
	return s.each(room, p, store.OpAdmit, func(i int, b Backend, name string, sp store.Policy) (store.Line, error) {
		return b.Admit(ctx, name, sp, Split(n, i, sp.Shards), now)
	})
}

// Control implements store.Store: every shard.
func (s *Store) Control(ctx context.Context, room string, p store.Policy, c store.Control, now time.Time) (store.Line, error) {
	return s.each(room, p, string(c), func(_ int, b Backend, name string, sp store.Policy) (store.Line, error) {
		return b.Control(ctx, name, sp, c, now)
	})
}

// Operate implements store.Store: every shard, each keeping the entry in
// its audit log (shard 0's is the one read), and with it the action's id,
// so that a retry applies nothing where the action holds already. Admit N
// is spread over the shards as Split spreads it, the same parts on every
// attempt (a shard that holds its part is never given another, so the
// attempts together call N); a shard whose part is none is read (Stats),
// so the line summed is still the whole room's.
func (s *Store) Operate(ctx context.Context, room string, p store.Policy, a store.Action, now time.Time) (store.Line, error) {
	if a.Op == store.OpAdmit && (a.N < 1 || a.N > store.MaxCallsPerOp) {
		return store.Line{}, fmt.Errorf("admit %s: %w: %d visitors at once, want 1 to %d", room, store.ErrRejected, a.N, store.MaxCallsPerOp)
	}
	return s.each(room, p, a.Op, func(i int, b Backend, name string, sp store.Policy) (store.Line, error) {
		mine := a
		if a.Op == store.OpAdmit {
			if mine.N = Split(a.N, i, sp.Shards); mine.N == 0 {
				return b.Stats(ctx, name, sp, now)
			}
		}
		return b.Operate(ctx, name, sp, mine, now)
	})
}

// Stats implements store.Store: the shards' lines summed.
func (s *Store) Stats(ctx context.Context, room string, p store.Policy, now time.Time) (store.Line, error) {
	return s.each(room, p, "", func(_ int, b Backend, name string, sp store.Policy) (store.Line, error) {
		return b.Stats(ctx, name, sp, now)
	})
}

// ShardStats reads shard i's line alone, as a poll of that shard would
// hold it (its share of the room's policy): what a POP's snapshot of the
// shard keeps, which the room's sum (Stats) is not.
func (s *Store) ShardStats(ctx context.Context, room string, p store.Policy, i int, now time.Time) (store.Line, error) {
	b, name, sp, err := s.on(room, p, i)
	if err != nil {
		return store.Line{}, err
	}
	l, err := b.Stats(ctx, name, sp, now)
	return l, failed(room, i, count(p), err)
}

// History reads the room's history from every shard (Shards says how
// many) and sums it minute by minute: the counters add up, the epoch is
// shard 0's, and the moves span the earliest first and the latest last.
// A minute records the counters of the shards called in it: in a minute
// when a shard was not called, the sum lacks its part.
func (s *Store) History(ctx context.Context, room string, from, to time.Time) ([]store.Minute, error) {
	k := 1
	if s.Shards != nil {
		k = min(max(s.Shards(room), 1), MaxShards)
	}
	per := make([][]store.Minute, k)
	var starts []int64
	for i := 0; i < k; i++ {
		b, name, _, err := s.on(room, store.Policy{Shards: k}, i)
		if err != nil {
			return nil, err
		}
		minutes, err := b.History(ctx, name, from, to)
		if err != nil {
			return nil, failed(room, i, k, err)
		}
		slices.SortFunc(minutes, func(a, b store.Minute) int { return a.Start.Compare(b.Start) })
		per[i] = minutes
		for _, m := range minutes {
			starts = append(starts, m.Start.UnixMilli())
		}
	}
	slices.Sort(starts)
	starts = slices.Compact(starts)
	// A shard nobody called in a minute has no record of it, but its line
	// stood as its last record left it: its counters (issued, admitted,
	// active, waiting) count in the sum, with nothing added.
	out := make([]store.Minute, 0, len(starts))
	next, last := make([]int, k), make([]*store.Minute, k)
	for _, at := range starts {
		var sum store.Minute
		seen := false
		for i := 0; i < k; i++ {
			var m store.Minute
			switch {
			case next[i] < len(per[i]) && per[i][next[i]].Start.UnixMilli() == at:
				m, last[i] = per[i][next[i]], &per[i][next[i]]
				next[i]++
			case last[i] != nil:
				m = store.Minute{Start: time.UnixMilli(at), Epoch: last[i].Epoch, Issued: last[i].Issued,
					Admitted: last[i].Admitted, Active: last[i].Active, Waiting: last[i].Waiting,
					IssuedMoved: [2]time.Duration{-1, -1}, AdmittedMoved: [2]time.Duration{-1, -1}}
			default:
				continue
			}
			if !seen {
				sum, seen = m, true
				if i > 0 {
					// A minute shard 0 did not see: its epoch is not this line's.
					sum.Epoch = 0
				}
				continue
			}
			sum = addMinute(sum, m)
		}
		out = append(out, sum)
	}
	// A minute in which shard 0 was not called takes the epoch around it,
	// so the operator's charts read it as the same line.
	for j := range out {
		if out[j].Epoch == 0 && j > 0 {
			out[j].Epoch = out[j-1].Epoch
		}
	}
	for j := len(out) - 2; j >= 0; j-- {
		if out[j].Epoch == 0 {
			out[j].Epoch = out[j+1].Epoch
		}
	}
	return out, nil
}

// addMinute adds another shard's minute m to sum.
func addMinute(sum, m store.Minute) store.Minute {
	sum.Issued += m.Issued
	sum.Admitted += m.Admitted
	sum.Active += m.Active
	sum.Waiting += m.Waiting
	sum.Joins += m.Joins
	sum.Admissions += m.Admissions
	sum.Refusals += m.Refusals
	sum.IssuedMoved = span(sum.IssuedMoved, m.IssuedMoved)
	sum.AdmittedMoved = span(sum.AdmittedMoved, m.AdmittedMoved)
	return sum
}

// span is the moves of two shards in a minute: from the earliest first to
// the latest last, a negative one (no move) counting for nothing.
func span(a, b [2]time.Duration) [2]time.Duration {
	switch {
	case b[0] < 0:
		return a
	case a[0] < 0:
		return b
	}
	return [2]time.Duration{min(a[0], b[0]), max(a[1], b[1])}
}

// Audit reads the audit logs from the first backend: shard 0 of every
// room is there under the room's own name, and keeps every action.
func (s *Store) Audit(ctx context.Context, reads []store.AuditRead) ([][]store.AuditEntry, error) {
	if len(s.Backends) == 0 {
		return nil, fmt.Errorf("audit: %w: no backend configured", store.ErrUnavailable)
	}
	return s.Backends[0].Audit(ctx, reads)
}
