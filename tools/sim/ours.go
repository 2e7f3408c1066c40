package sim

import (
	"context"
	"fmt"
	"strconv"
	"strings"
	"sync"
	"time"

	"github.com/edgequeue/waitingroom/queue"
	"github.com/edgequeue/waitingroom/settings"
	"github.com/edgequeue/waitingroom/store"
	"github.com/edgequeue/waitingroom/tools/resp"
)

// Ours is the waiting room's own design: the production store client and
// its script, with the room's poll intervals and heartbeat as the edge uses
// them. A join, a poll and a heartbeat renewal are one call each; an
// admitted visitor's other requests make none.
//
// Spread over POPs (NewOursPOPs), each POP keeps its own snapshot of the
// line, as the edge keeps one in each POP's cache, and a poll goes through
// it as queue.Gate's does (see Poll); concurrent polls in a POP wait for
// the one that fills it.
type Ours struct {
	Store *store.Upstash
	Room  *queue.Room
	// Redis is the Redis behind Store, read for the per-minute counts.
	Redis *resp.Pool
	// pops are the POPs' snapshots; none is today's edge, whose every
	// poll asks the store.
	pops []*pop
}

// pop is one POP's cache of the room's snapshot.
type pop struct {
	mu     sync.Mutex
	snap   queue.Snapshot
	filled bool
}

// get is the POP's snapshot at now, filled by fill when the POP has none
// younger than ttl. The lock held over the fill collapses the POP's
// concurrent misses into one, as the cache's GetOrSet does; a failed fill
// leaves the POP without a snapshot.
func (p *pop) get(now time.Time, ttl time.Duration, fill func() (queue.Snapshot, error)) (snap queue.Snapshot, filled bool, err error) {
	p.mu.Lock()
	defer p.mu.Unlock()
	if p.filled && now.Sub(p.snap.At) < ttl {
		return p.snap, false, nil
	}
	s, err := fill()
	if err != nil {
		p.filled = false
		return s, true, err
	}
	p.snap, p.filled = s, true
	return s, true, nil
}

// Name implements Policy.
func (o *Ours) Name() string {
	switch len(o.pops) {
	case 0:
		return "edge waiting room"
	case 1:
		return "edge waiting room, snapshot, 1 POP"
	}
	return fmt.Sprintf("edge waiting room, snapshot, %d POPs", len(o.pops))
}

// Join implements Policy. The visitor's own id is their arrival id; the
// store names the session when they are admitted.
func (o *Ours) Join(ctx context.Context, v *Visitor, now time.Time) (Answer, error) {
	pl, err := o.Store.Join(ctx, o.Room.Name, o.Room.Policy(now), v.Session, now)
	return o.answer(v, pl, now), err
}

// Poll implements Policy as queue.Gate's poll does: a visitor spread over
// POPs whom the store saw lately is answered from their POP's snapshot
// when it is fresh and queue.FromSnapshot may; a stale snapshot is filled
// by the visitor's own poll, whose answer holds the line, so a fill costs
// no call of its own; any other poll asks the store, as today.
func (o *Ours) Poll(ctx context.Context, v *Visitor, now time.Time) (Answer, error) {
	room := o.Room.At(now)
	var polled *store.Place
	ask := func() (store.Place, error) {
		pl, err := o.Store.Poll(ctx, room.Name, room.Policy(now), store.Ticket{Number: v.Ticket, Epoch: v.Epoch}, now)
		polled = &pl
		return pl, err
	}
	var err error
	filled := false
	if len(o.pops) > 0 && queue.MaySnapshot(room, v.Ticket, v.Seen, now) {
		var snap queue.Snapshot
		snap, filled, err = o.pops[v.ID%len(o.pops)].get(now, room.SnapshotTTL(), func() (queue.Snapshot, error) {
			pl, err := ask()
			return queue.Snapshot{Line: pl.Line, At: now}, err
		})
		if place, ok := queue.FromSnapshot(room, v.Ticket, v.Epoch, v.Seen, snap, now); polled == nil && ok {
			return Answer{Snapshot: true, Far: true, Next: place.PollEvery, Held: -1, Shown: shownOf(place)}, nil
		}
	}
	if polled == nil {
		_, err = ask()
	}
	if err == nil && polled.Outcome == store.Lost {
		// As at the edge: a newcomer again, through a join (the
		// visitor's arrival id, whose place is gone, takes a new one).
		a, err := o.Join(ctx, v, now)
		a.Lost, a.Calls = true, 2
		return a, err
	}
	a := o.answer(v, *polled, now)
	if filled {
		a.Fills = 1
	}
	return a, err
}

func (o *Ours) answer(v *Visitor, pl store.Place, now time.Time) Answer {
	v.Ticket, v.Epoch = pl.Ticket, pl.Line.Epoch
	// The pass the gate signs after a store call carries when the store saw
	// the ticket, in the whole seconds of its claims.
	v.Seen = time.Unix(now.Unix(), 0)
	a := Answer{Admitted: pl.Outcome == store.Admitted, Held: pl.Line.Active + pl.Line.Called, Calls: 1}
	if a.Admitted {
		v.Session, v.Renewed = pl.Session, now
	} else {
		place := queue.PlaceOf(o.Room, pl, now)
		a.Next, a.Shown = place.PollEvery, shownOf(place)
		a.Far = o.far(pl, now)
	}
	return a
}

// shownOf is the estimate the queue page shows for place.
func shownOf(place queue.Place) Shown {
	if !place.WaitKnown {
		return Shown{}
	}
	least, most := place.WaitRange()
	return Shown{Known: true, Least: least, Most: most}
}

// far says whether the store's answer pl leaves its visitor far from the
// front by the snapshot's own measure: queue.FromSnapshot would answer
// them from a snapshot of that very line (at the room's snapshot TTL, or
// the default one where the room has none), with or without POPs, so that
// today's edge and the snapshot's are split alike.
func (o *Ours) far(pl store.Place, now time.Time) bool {
	room := o.Room.At(now)
	if room.SnapshotTTL() <= 0 {
		r := *room
		r.SnapshotTTLSeconds = settings.Get(settings.Room[:], "snapshot_ttl").Default
		room = &r
	}
	_, ok := queue.FromSnapshot(room, pl.Ticket, pl.Line.Epoch, now, queue.Snapshot{Line: pl.Line, At: now}, now)
	return ok
}

// Visit implements Policy: the pass in the cookie admits the visitor, and
// once a heartbeat the session is renewed in the store.
func (o *Ours) Visit(ctx context.Context, v *Visitor, now time.Time) (int, error) {
	if now.Sub(v.Renewed) < o.Room.Heartbeat() {
		return 0, nil
	}
	ok, _, err := o.Store.Renew(ctx, o.Room.Name, o.Room.Policy(now), o.session(v), now)
	if err == nil && !ok {
		err = errSessionLapsed(now.Sub(v.Renewed))
	}
	v.Renewed = now
	return 1, err
}

// Leave implements Policy.
func (o *Ours) Leave(ctx context.Context, v *Visitor, now time.Time) (int, error) {
	_, err := o.Store.End(ctx, o.Room.Name, o.Room.Policy(now), o.session(v), now)
	return 1, err
}

// session is v's session as the pass in their cookie names it: issued at
// the last renewal, admitting without the store for a heartbeat.
func (o *Ours) session(v *Visitor) store.SessionRef {
	return store.SessionRef{ID: v.Session, Epoch: v.Epoch, UsableUntil: v.Renewed.Add(o.Room.Heartbeat())}
}

// Admit implements Admitter: the operator's "admit N", one store call.
func (o *Ours) Admit(ctx context.Context, n int64, now time.Time) error {
	_, err := o.Store.Admit(ctx, o.Room.Name, o.Room.Policy(now), n, now)
	return err
}

// Held implements Policy: live sessions and called visitors.
func (o *Ours) Held(ctx context.Context, now time.Time) (int64, bool, error) {
	l, err := o.Store.Stats(ctx, o.Room.Name, o.Room.Policy(now), now)
	return l.Active + l.Called, true, err
}

// Sessions implements SessionCounter: the sessions the store holds.
func (o *Ours) Sessions(ctx context.Context, now time.Time) (int64, error) {
	l, err := o.Store.Stats(ctx, o.Room.Name, o.Room.Policy(now), now)
	return l.Active, err
}

// CalledIn implements MinuteCounter. The script keeps each minute's count
// in slot m<minute%5> as "minute:count".
func (o *Ours) CalledIn(ctx context.Context, minute time.Time) (int64, error) {
	m := minute.Unix() / 60
	v, err := o.Redis.Do("HGET", o.Store.Keys(o.Room.Name)[0], "m"+strconv.FormatInt(m%5, 10))
	if err != nil {
		return 0, err
	}
	if at, count, ok := strings.Cut(v.Str, ":"); ok && at == strconv.FormatInt(m, 10) {
		return strconv.ParseInt(count, 10, 64)
	}
	return 0, nil
}

// CalledTickets implements CalledLister. The script keeps the called
// tickets in its third key.
func (o *Ours) CalledTickets(ctx context.Context) ([]int64, error) {
	return calledTickets(o.Redis, o.Store.Keys(o.Room.Name)[2])
}

// calledTickets reads the script's set of called tickets, at key.
func calledTickets(redis *resp.Pool, key string) ([]int64, error) {
	v, err := do(redis, "ZRANGE", key, "0", "-1")
	if err != nil {
		return nil, err
	}
	tickets := make([]int64, 0, len(v.Array))
	for _, m := range v.Array {
		t, err := strconv.ParseInt(m.Str, 10, 64)
		if err != nil {
			return tickets, fmt.Errorf("called ticket %q: %w", m.Str, err)
		}
		tickets = append(tickets, t)
	}
	return tickets, nil
}

// errSessionLapsed says an admitted visitor's session was gone from the
// store although they kept making requests: the room broke its promise.
type errSessionLapsed time.Duration

func (e errSessionLapsed) Error() string {
	return fmt.Sprintf("an active session lapsed (renewed %v before)", time.Duration(e))
}
