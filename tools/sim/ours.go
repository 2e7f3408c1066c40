package sim

import (
	"context"
	"fmt"
	"strconv"
	"strings"
	"time"

	"github.com/edgequeue/waitingroom/queue"
	"github.com/edgequeue/waitingroom/store"
	"github.com/edgequeue/waitingroom/tools/resp"
)

// Ours is the waiting room's own design: the production store client and
// its script, with the room's poll intervals and heartbeat as the edge uses
// them. A join, a poll and a heartbeat renewal are one call each; an
// admitted visitor's other requests make none.
type Ours struct {
	Store *store.Upstash
	Room  *queue.Room
	// Redis is the Redis behind Store, read for the per-minute counts.
	Redis *resp.Pool
}

// Name implements Policy.
func (o *Ours) Name() string { return "edge waiting room" }

// Join implements Policy. The visitor's own id is their arrival id; the
// store names the session when they are admitted.
func (o *Ours) Join(ctx context.Context, v *Visitor, now time.Time) (Answer, error) {
	pl, err := o.Store.Join(ctx, o.Room.Name, o.Room.Policy(now), v.Session, now)
	return o.answer(v, pl, now), err
}

// Poll implements Policy.
func (o *Ours) Poll(ctx context.Context, v *Visitor, now time.Time) (Answer, error) {
	pl, err := o.Store.Poll(ctx, o.Room.Name, o.Room.Policy(now), store.Ticket{Number: v.Ticket, Epoch: v.Epoch}, now)
	return o.answer(v, pl, now), err
}

func (o *Ours) answer(v *Visitor, pl store.Place, now time.Time) Answer {
	v.Ticket, v.Epoch = pl.Ticket, pl.Line.Epoch
	a := Answer{Admitted: pl.Outcome == store.Admitted, Lost: pl.Outcome == store.Rejoined, Held: pl.Line.Active + pl.Line.Called, Calls: 1}
	if a.Admitted {
		v.Session, v.Renewed = pl.Session, now
	} else {
		a.Next = queue.PlaceOf(o.Room, pl, now).PollEvery
	}
	return a
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
