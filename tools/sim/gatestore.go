package sim

import (
	"context"
	"errors"
	"time"

	"github.com/edgequeue/waitingroom/queue"
	"github.com/edgequeue/waitingroom/store"
	"github.com/edgequeue/waitingroom/store/shard"
)

// calls is the store as one request's gate sees it: the real store (st),
// counted. The simulator learns from it what the request cost and, of the
// store's last answer to a join or a poll, the ticket and the line, which
// the gate's decision does not carry. A refusing one asks nothing and
// answers store.ErrUnavailable.
type calls struct {
	st     store.Store
	refuse bool
	// calls counts the store calls, fills those that filled the POP's
	// snapshot; err is the first call's error.
	calls, fills int
	err          error
	// place is the store's last answer to a join or a poll; asked says
	// there was one.
	place store.Place
	asked bool
}

// errRefused is a refusing calls' answer.
var errRefused = errors.Join(store.ErrUnavailable, errors.New("the far-from-front measure asks no store"))

// ask counts a call; it reports false for a refusing one.
func (c *calls) ask() bool {
	c.calls++
	return !c.refuse
}

// done records a call's error.
func (c *calls) done(err error) {
	if c.err == nil {
		c.err = err
	}
}

// placed records a call's answer about a ticket.
func (c *calls) placed(pl store.Place, err error) (store.Place, error) {
	c.done(err)
	c.place, c.asked = pl, true
	return pl, err
}

func (c *calls) Join(ctx context.Context, room string, p store.Policy, a store.Arrival, now time.Time) (store.Place, error) {
	if !c.ask() {
		return store.Place{}, errRefused
	}
	return c.placed(c.st.Join(ctx, room, p, a, now))
}

func (c *calls) JoinPriority(ctx context.Context, room string, p store.Policy, arrival string, inv store.Invite, now time.Time) (store.Place, error) {
	if !c.ask() {
		return store.Place{}, errRefused
	}
	return c.placed(c.st.JoinPriority(ctx, room, p, arrival, inv, now))
}

func (c *calls) Poll(ctx context.Context, room string, p store.Policy, t store.Ticket, now time.Time) (store.Place, error) {
	if !c.ask() {
		return store.Place{}, errRefused
	}
	return c.placed(c.st.Poll(ctx, room, p, t, now))
}

func (c *calls) Renew(ctx context.Context, room string, p store.Policy, s store.SessionRef, now time.Time) (bool, store.Line, error) {
	if !c.ask() {
		return false, store.Line{}, errRefused
	}
	ok, l, err := c.st.Renew(ctx, room, p, s, now)
	c.done(err)
	return ok, l, err
}

func (c *calls) End(ctx context.Context, room string, p store.Policy, s store.SessionRef, now time.Time) (store.Line, error) {
	return c.line(func() (store.Line, error) { return c.st.End(ctx, room, p, s, now) })
}

func (c *calls) Admit(ctx context.Context, room string, p store.Policy, n int64, now time.Time) (store.Line, error) {
	return c.line(func() (store.Line, error) { return c.st.Admit(ctx, room, p, n, now) })
}

func (c *calls) Control(ctx context.Context, room string, p store.Policy, ctl store.Control, now time.Time) (store.Line, error) {
	return c.line(func() (store.Line, error) { return c.st.Control(ctx, room, p, ctl, now) })
}

func (c *calls) Operate(ctx context.Context, room string, p store.Policy, a store.Action, now time.Time) (store.Line, error) {
	return c.line(func() (store.Line, error) { return c.st.Operate(ctx, room, p, a, now) })
}

func (c *calls) Stats(ctx context.Context, room string, p store.Policy, now time.Time) (store.Line, error) {
	return c.line(func() (store.Line, error) { return c.st.Stats(ctx, room, p, now) })
}

// line is a counted call that answers the line.
func (c *calls) line(call func() (store.Line, error)) (store.Line, error) {
	if !c.ask() {
		return store.Line{}, errRefused
	}
	l, err := call()
	c.done(err)
	return l, err
}

// popSnapshots is a POP's snapshot as one request's gate reads it
// (queue.Snapshots): the POP's copy of the shard's line while it is
// younger than the room's snapshot TTL, else filled by the request's own
// poll. The POP's lock,
// held over the fill, collapses its concurrent misses into one, as the
// edge's cache does; a failed fill leaves the POP without a snapshot.
type popSnapshots struct {
	p *pop
	c *calls
}

func (s popSnapshots) Get(room *queue.Room, i int, now time.Time, fill func() (queue.Snapshot, error)) (queue.Snapshot, error) {
	s.p.mu.Lock()
	defer s.p.mu.Unlock()
	if snap, ok := s.p.snaps[i]; ok && now.Sub(snap.At) < room.SnapshotTTL() {
		return snap, nil
	}
	s.c.fills++
	snap, err := fill()
	if err != nil {
		delete(s.p.snaps, i)
	} else {
		s.p.snaps[i] = snap
	}
	return snap, err
}

// Peek implements queue.Snapshots: the POP's copy, whatever its age
// (the gate judges that).
func (s popSnapshots) Peek(_ *queue.Room, i int) (queue.Snapshot, error) {
	s.p.mu.Lock()
	defer s.p.mu.Unlock()
	if snap, ok := s.p.snaps[i]; ok {
		return snap, nil
	}
	return queue.Snapshot{}, queue.ErrNoSnapshot
}

// fixedSnapshot is always the same snapshot, never filled.
type fixedSnapshot queue.Snapshot

func (s fixedSnapshot) Get(*queue.Room, int, time.Time, func() (queue.Snapshot, error)) (queue.Snapshot, error) {
	return queue.Snapshot(s), nil
}

func (s fixedSnapshot) Peek(*queue.Room, int) (queue.Snapshot, error) {
	return queue.Snapshot(s), nil
}

// shardTally is what one request asked each shard of a sharded room:
// calls[i] the store calls shard i took, held[i] the places (sessions and
// called visitors) shard i's line held at its last answer, -1 when it did
// not answer. Nil slices: the room is one line.
type shardTally struct {
	calls []int
	held  []int64
}

// record counts a call to shard i and, when it succeeded, the line it
// answered with.
func (t *shardTally) record(i int, l store.Line, err error) {
	for len(t.calls) <= i {
		t.calls, t.held = append(t.calls, 0), append(t.held, -1)
	}
	t.calls[i]++
	if err == nil {
		t.held[i] = l.Active + l.Called
	}
}

// shardCalls is shard i's backend as one request of a sharded room sees
// it: the real one, each call counted in the request's tally.
type shardCalls struct {
	shard.Backend
	i int
	t *shardTally
}

func (s shardCalls) placed(pl store.Place, err error) (store.Place, error) {
	s.t.record(s.i, pl.Line, err)
	return pl, err
}

func (s shardCalls) lined(l store.Line, err error) (store.Line, error) {
	s.t.record(s.i, l, err)
	return l, err
}

func (s shardCalls) Join(ctx context.Context, room string, p store.Policy, a store.Arrival, now time.Time) (store.Place, error) {
	return s.placed(s.Backend.Join(ctx, room, p, a, now))
}

func (s shardCalls) JoinPriority(ctx context.Context, room string, p store.Policy, arrival string, inv store.Invite, now time.Time) (store.Place, error) {
	return s.placed(s.Backend.JoinPriority(ctx, room, p, arrival, inv, now))
}

func (s shardCalls) Poll(ctx context.Context, room string, p store.Policy, t store.Ticket, now time.Time) (store.Place, error) {
	return s.placed(s.Backend.Poll(ctx, room, p, t, now))
}

func (s shardCalls) Renew(ctx context.Context, room string, p store.Policy, ref store.SessionRef, now time.Time) (bool, store.Line, error) {
	ok, l, err := s.Backend.Renew(ctx, room, p, ref, now)
	s.t.record(s.i, l, err)
	return ok, l, err
}

func (s shardCalls) End(ctx context.Context, room string, p store.Policy, ref store.SessionRef, now time.Time) (store.Line, error) {
	return s.lined(s.Backend.End(ctx, room, p, ref, now))
}

func (s shardCalls) Admit(ctx context.Context, room string, p store.Policy, n int64, now time.Time) (store.Line, error) {
	return s.lined(s.Backend.Admit(ctx, room, p, n, now))
}

func (s shardCalls) Control(ctx context.Context, room string, p store.Policy, c store.Control, now time.Time) (store.Line, error) {
	return s.lined(s.Backend.Control(ctx, room, p, c, now))
}

func (s shardCalls) Operate(ctx context.Context, room string, p store.Policy, a store.Action, now time.Time) (store.Line, error) {
	return s.lined(s.Backend.Operate(ctx, room, p, a, now))
}

func (s shardCalls) Stats(ctx context.Context, room string, p store.Policy, now time.Time) (store.Line, error) {
	return s.lined(s.Backend.Stats(ctx, room, p, now))
}
