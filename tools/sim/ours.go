package sim

import (
	"context"
	"errors"
	"fmt"
	"strconv"
	"sync"
	"time"

	"github.com/edgequeue/waitingroom/queue"
	"github.com/edgequeue/waitingroom/settings"
	"github.com/edgequeue/waitingroom/store"
	"github.com/edgequeue/waitingroom/store/shard"
	"github.com/edgequeue/waitingroom/tools/resp"
)

// Ours is the waiting room's own design, run as the edge runs it: each
// request goes through a queue.Gate (Decide for a join or a poll, Keep for
// an admitted visitor's request or heartbeat, End for a beacon, Admit for
// the operator's "admit N") over the production store client and its
// script, with the visitor's signed pass as their cookie and the simulated
// clock as the gate's time. A join, a poll and a heartbeat renewal are one
// store call each; an admitted visitor's other requests make none.
//
// Spread over POPs (NewOursPOPs), each POP keeps its own snapshot of the
// line, as the edge keeps one in each POP's cache, and the POP's gate
// answers far-from-front polls from it; concurrent polls in a POP wait for
// the one that fills it.
//
// A room of several shards (its shards setting) runs as the edge runs it:
// the gates ask store/shard's Store, every shard on the one database as a
// hash slot of its own, and each request's calls are counted by shard in
// the visitor's tally. A room of one shard asks Store itself, as before.
type Ours struct {
	Store *store.Upstash
	Room  *queue.Room
	// lines is the room as the operator reads and acts on it: Store, or
	// the shards over it.
	lines shard.Backend
	// Redis is the Redis behind Store, read for the per-minute counts.
	Redis *resp.Pool
	// keys sign and verify the visitors' passes.
	keys *queue.KeySet
	// farRoom is Room with a snapshot TTL, the default where Room has
	// none, for the far-from-the-front measure (see far).
	farRoom *queue.Room
	// pops are the POPs' snapshots; none is today's edge, whose every
	// poll asks the store.
	pops []*pop
}

// simKeys is the key set the simulated edge signs passes with.
const simKeys = "sim:c2ltdWxhdGVkLWVkZ2Utc2lnbmluZy1rZXktMzItYnl0ZXM="

// newOurs is Ours for room over st, with pops POPs.
func newOurs(st *store.Upstash, redis *resp.Pool, room *queue.Room, pops int) (*Ours, error) {
	keys, err := queue.ParseKeySet(simKeys)
	if err != nil {
		return nil, err
	}
	o := &Ours{Store: st, Room: room, Redis: redis, keys: keys, farRoom: room, lines: st}
	if k := o.Shards(); k > 1 {
		o.lines = &shard.Store{Backends: []shard.Backend{st}, Shards: func(string) int { return k }}
	}
	if room.SnapshotTTL() <= 0 {
		r := *room
		r.SnapshotTTLSeconds = settings.Get(settings.Room[:], "snapshot_ttl").Default
		o.farRoom = &r
	}
	for range pops {
		o.pops = append(o.pops, &pop{snaps: map[int]queue.Snapshot{}})
	}
	return o, nil
}

// pop is one POP's cache of the room's snapshots: one per shard, as the
// edge keeps one per room and shard (a room of one line has shard 0's).
type pop struct {
	mu    sync.Mutex
	snaps map[int]queue.Snapshot
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

// Shards is how many lines the room runs as.
func (o *Ours) Shards() int { return max(o.Room.Shards, 1) }

// gate is the gate of v's request, in v's POP, and what the request asks
// the store through it: in a sharded room, each shard's calls counted in
// v's tally.
func (o *Ours) gate(v *Visitor) (*queue.Gate, *calls) {
	c := &calls{st: o.Store}
	if k := o.Shards(); k > 1 {
		backends := make([]shard.Backend, k)
		for i := range backends {
			backends[i] = shardCalls{Backend: o.Store, i: i, t: &v.tally}
		}
		c.st = &shard.Store{Backends: backends}
	}
	g := &queue.Gate{Store: c, Keys: o.keys}
	if len(o.pops) > 0 {
		g.Snapshots = popSnapshots{o.pops[v.ID%len(o.pops)], c}
	}
	return g, c
}

// Join implements Policy: the visitor's first request gets an arrival
// pass (no store call), with which the browser comes back at once and
// joins.
func (o *Ours) Join(ctx context.Context, v *Visitor, now time.Time) (Answer, error) {
	g, _ := o.gate(v)
	d := g.Decide(ctx, o.Room, queue.Visitor{Now: now})
	if d.Action != queue.Arrive {
		return Answer{}, fmt.Errorf("a first request was answered %s (%s), want an arrival pass: %v", d.Action, d.Why, d.Err)
	}
	v.Pass = d.Pass
	return o.decide(ctx, v, now)
}

// Poll implements Policy: the visitor's ticket pass, through their POP's
// gate.
func (o *Ours) Poll(ctx context.Context, v *Visitor, now time.Time) (Answer, error) {
	return o.decide(ctx, v, now)
}

// decide is the gate's answer to v's pass at now. A place lost sends the
// visitor back with an arrival pass, which their browser follows at once:
// a newcomer again, through a join.
func (o *Ours) decide(ctx context.Context, v *Visitor, now time.Time) (Answer, error) {
	g, c := o.gate(v)
	d := g.Decide(ctx, o.Room, queue.Visitor{Passes: []string{v.Pass}, Now: now})
	if c.err != nil {
		return Answer{}, c.err
	}
	if d.Pass != "" {
		v.Pass = d.Pass
	}
	a := Answer{Held: -1, Calls: c.calls, Fills: c.fills}
	if c.asked {
		v.Ticket, v.Shard = c.place.Ticket, c.place.Shard
		if o.Shards() == 1 {
			// A shard's line holds only its share: the run sums the
			// shards' from the tally.
			a.Held = c.place.Line.Active + c.place.Line.Called
		}
	}
	switch d.Action {
	case queue.Admit:
		a.Admitted = true
	case queue.Wait:
		a.Next, a.Shown = d.Place.PollEvery, shownOf(d.Place)
		// No store call: the POP's snapshot answered.
		a.Snapshot = !c.asked
		a.Far = a.Snapshot || o.far(ctx, v, c.place.Line, now)
	case queue.Arrive:
		joined, err := o.decide(ctx, v, now)
		joined.Lost, joined.Calls, joined.Fills = true, joined.Calls+a.Calls, joined.Fills+a.Fills
		return joined, err
	default:
		return a, fmt.Errorf("the gate answered %s (%s): %v", d.Action, d.Why, d.Err)
	}
	return a, nil
}

// shownOf is the estimate the queue page shows for place.
func shownOf(place queue.Place) Shown {
	if !place.WaitKnown {
		return Shown{}
	}
	least, most := place.WaitRange()
	return Shown{Known: true, Least: least, Most: most}
}

// far says whether the store's answer leaves v far from the front by the
// snapshot's own measure: the gate would answer the pass it just gave v
// from a snapshot of that very line, taken now, without asking the store
// (at the room's snapshot TTL, or the default one where the room has
// none), with or without POPs, so that today's edge and the snapshot's are
// split alike.
func (o *Ours) far(ctx context.Context, v *Visitor, line store.Line, now time.Time) bool {
	c := &calls{refuse: true}
	g := &queue.Gate{Store: c, Keys: o.keys, Snapshots: fixedSnapshot{Line: line, At: now}}
	d := g.Decide(ctx, o.farRoom, queue.Visitor{Passes: []string{v.Pass}, Now: now})
	return d.Action == queue.Wait && c.calls == 0
}

// Visit implements Policy: the pass in the cookie admits the visitor, and
// once a heartbeat the gate renews the session in the store.
func (o *Ours) Visit(ctx context.Context, v *Visitor, now time.Time) (int, error) {
	g, c := o.gate(v)
	d := g.Keep(ctx, o.Room, queue.Visitor{Passes: []string{v.Pass}, Now: now})
	if c.err != nil {
		return c.calls, c.err
	}
	if d.Action != queue.Admit {
		return c.calls, fmt.Errorf("%w: %s: %v", errSessionLapsed, d.Why, d.Err)
	}
	if d.Pass != "" {
		v.Pass = d.Pass
	}
	return c.calls, nil
}

// Leave implements Policy.
func (o *Ours) Leave(ctx context.Context, v *Visitor, now time.Time) (int, error) {
	g, c := o.gate(v)
	ended, err := g.End(ctx, o.Room, queue.Visitor{Passes: []string{v.Pass}, Now: now})
	if err == nil && !ended {
		err = fmt.Errorf("%w: the beacon found no session pass", errSessionLapsed)
	}
	return c.calls, err
}

// Admit implements Admitter: the operator's "admit N", one store call,
// through the gate as the origin's admit=N goes. As at the edge, the POPs'
// snapshots are dropped, so far-from-front visitors learn of it at their
// next poll.
func (o *Ours) Admit(ctx context.Context, n int64, now time.Time) error {
	g := &queue.Gate{Store: o.lines, Keys: o.keys}
	if _, err := g.Admit(ctx, o.Room, n, store.Actor{Via: "api"}, now); err != nil {
		return err
	}
	for _, p := range o.pops {
		p.mu.Lock()
		clear(p.snaps)
		p.mu.Unlock()
	}
	return nil
}

// Held implements Policy: live sessions and called visitors.
func (o *Ours) Held(ctx context.Context, now time.Time) (int64, bool, error) {
	l, err := o.lines.Stats(ctx, o.Room.Name, o.Room.Policy(now), now)
	return l.Active + l.Called, true, err
}

// Lines implements ShardReader: each shard's line, read as the shard
// store reads it (its own stats, with its share of the limits).
func (o *Ours) Lines(ctx context.Context, now time.Time) ([]store.Line, error) {
	p := o.Room.Policy(now)
	p.Shards = o.Shards()
	lines := make([]store.Line, o.Shards())
	for i := range lines {
		sp := p
		sp.Shard = i
		l, err := o.Store.Stats(ctx, shard.Name(o.Room.Name, i), sp, now)
		if err != nil {
			return nil, fmt.Errorf("shard %d: %w", i, err)
		}
		lines[i] = l
	}
	return lines, nil
}

// Shares implements ShardReader: the room's places split as the store
// splits them (none for a room without a cap).
func (o *Ours) Shares() []int64 {
	shares := make([]int64, o.Shards())
	for i := range shares {
		shares[i] = shard.Split(int64(o.Room.MaxActiveUsers), i, o.Shards())
	}
	return shares
}

// Sessions implements SessionCounter: the sessions the store holds.
func (o *Ours) Sessions(ctx context.Context, now time.Time) (int64, error) {
	l, err := o.lines.Stats(ctx, o.Room.Name, o.Room.Policy(now), now)
	return l.Active, err
}

// CalledIn implements MinuteCounter: the admissions of the minute's
// record in the store's history.
func (o *Ours) CalledIn(ctx context.Context, minute time.Time) (int64, error) {
	ms, err := o.lines.History(ctx, o.Room.Name, minute, minute)
	if err != nil || len(ms) == 0 {
		return 0, err
	}
	return ms[0].Admissions, nil
}

// CalledTickets implements CalledLister. The script keeps the called
// tickets in its third key. A sharded room's tickets are numbered in each
// shard apart, so no one number names a bot's: it lists none.
func (o *Ours) CalledTickets(ctx context.Context) ([]int64, error) {
	if o.Shards() > 1 {
		return nil, errors.New("the bots' called tickets are not told apart in a sharded room")
	}
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

// errSessionLapsed says an admitted visitor's session was gone although
// they kept making requests: the room broke its promise.
var errSessionLapsed = errors.New("an active session lapsed")
