package sim

import (
	"context"
	"fmt"
	"strconv"
	"sync"
	"time"

	"github.com/edgequeue/waitingroom/tools/resp"
)

// The two models below are other designs, built from their descriptions to
// run on the same visitors: simple on purpose, and labelled as models in
// every report. They talk RESP to Redis directly: what they are measured
// by is how many calls they make, not how those calls travel.

// TwoCounter models the classic two-counter queue (the pattern of Fastly's
// JavaScript queuing starter kit): a newcomer takes a position from one
// counter and reserves it; every request reads the cursor, the other
// counter, and is let through when the cursor has reached its position.
// A waiting request also counts itself in the current period, and the
// first to do so in a new period advances the cursor by Quantity: up to six
// calls for a newcomer at a period boundary, and one for every request of
// an admitted visitor.
type TwoCounter struct {
	Redis *resp.Pool
	// Period and Quantity are the admission rate: Quantity more positions
	// every Period, while someone waits.
	Period   time.Duration
	Quantity int
	// Refresh is how often the queue page reloads.
	Refresh time.Duration
	// Reservation is how long a position reservation lives (the cookie's
	// life).
	Reservation time.Duration
}

// Name implements Policy.
func (c *TwoCounter) Name() string { return "two-counter (model)" }

// Join implements Policy: take a position, reserve it, then ask.
func (c *TwoCounter) Join(ctx context.Context, v *Visitor, now time.Time) (Answer, error) {
	pos, err := do(c.Redis, "INCR", "tc:length")
	if err != nil {
		return Answer{}, err
	}
	v.Ticket = pos.Int
	if _, err := do(c.Redis, "SET", "tc:qp:"+v.Session, strconv.FormatInt(pos.Int, 10), "PX",
		strconv.FormatInt(c.Reservation.Milliseconds(), 10), "NX"); err != nil {
		return Answer{}, err
	}
	a, err := c.ask(v, now)
	a.Calls += 2
	return a, err
}

// Poll implements Policy.
func (c *TwoCounter) Poll(ctx context.Context, v *Visitor, now time.Time) (Answer, error) {
	return c.ask(v, now)
}

func (c *TwoCounter) ask(v *Visitor, now time.Time) (Answer, error) {
	a := Answer{Held: -1, Next: c.Refresh, Calls: 1}
	cursor, err := c.cursor()
	if err != nil || cursor >= v.Ticket {
		a.Admitted = err == nil
		return a, err
	}
	// Far: the cursor's next two advances would not reach the position.
	a.Far = v.Ticket-cursor > 2*int64(c.Quantity)
	period := "tc:auto:" + strconv.FormatInt(now.UnixNano()/int64(c.Period), 10)
	n, err := do(c.Redis, "INCR", period)
	a.Calls++
	if err != nil || n.Int != 1 {
		return a, err
	}
	if _, err := do(c.Redis, "EXPIRE", period, strconv.Itoa(int(c.Period.Seconds()))); err != nil {
		return a, err
	}
	next, err := do(c.Redis, "INCRBY", "tc:cursor", strconv.Itoa(c.Quantity))
	a.Calls += 2
	a.Admitted = err == nil && next.Int >= v.Ticket
	return a, err
}

func (c *TwoCounter) cursor() (int64, error) {
	v, err := do(c.Redis, "GET", "tc:cursor")
	if err != nil || v.Kind == resp.Nil {
		return 0, err
	}
	return strconv.ParseInt(v.Str, 10, 64)
}

// Visit implements Policy: every request reads the cursor.
func (c *TwoCounter) Visit(ctx context.Context, v *Visitor, now time.Time) (int, error) {
	cursor, err := c.cursor()
	if err == nil && cursor < v.Ticket {
		err = fmt.Errorf("cursor %d went back behind admitted position %d", cursor, v.Ticket)
	}
	return 1, err
}

// Leave implements Policy: the design has no notion of leaving.
func (c *TwoCounter) Leave(ctx context.Context, v *Visitor, now time.Time) (int, error) {
	return 0, nil
}

// Held implements Policy: the design counts nobody on the origin.
func (c *TwoCounter) Held(ctx context.Context, now time.Time) (int64, bool, error) {
	return 0, false, nil
}

// UnorderedGate models a capacity gate without order: it counts live
// sessions (a sorted set scored by expiry) and lets in whoever asks while
// the count is under the capacity. Every request is one atomic script
// call, which enters, or renews, the visitor's session when there is room.
type UnorderedGate struct {
	Redis    *resp.Pool
	Capacity int
	// Inactivity ends a session with no request for this long.
	Inactivity time.Duration
	// Refresh is how often the waiting page reloads.
	Refresh time.Duration

	load sync.Once
	sha  string
	err  error
}

// gateScript enters or renews ARGV[4]'s session when it holds one or there
// is room, and answers {entered, sessions}. Op "count" only counts, "leave"
// ends the session.
const gateScript = `
local now, expiry, cap, id, op = tonumber(ARGV[1]), tonumber(ARGV[2]), tonumber(ARGV[3]), ARGV[4], ARGV[5]
redis.call('ZREMRANGEBYSCORE', KEYS[1], '-inf', now)
if op == 'leave' then redis.call('ZREM', KEYS[1], id) end
local n = redis.call('ZCARD', KEYS[1])
if op ~= 'enter' then return {0, n} end
if redis.call('ZSCORE', KEYS[1], id) or n < cap then
  if redis.call('ZADD', KEYS[1], expiry, id) == 1 then n = n + 1 end
  return {1, n}
end
return {0, n}`

// Name implements Policy.
func (g *UnorderedGate) Name() string { return "unordered gate (model)" }

func (g *UnorderedGate) run(v *Visitor, now time.Time, op string) (entered bool, held int64, err error) {
	g.load.Do(func() {
		sha, err := do(g.Redis, "SCRIPT", "LOAD", gateScript)
		g.sha, g.err = sha.Str, err
	})
	if g.err != nil {
		return false, 0, g.err
	}
	id := ""
	if v != nil {
		id = v.Session
	}
	r, err := do(g.Redis, "EVALSHA", g.sha, "1", "gate:sessions", strconv.FormatInt(now.UnixMilli(), 10),
		strconv.FormatInt(now.Add(g.Inactivity).UnixMilli(), 10), strconv.Itoa(g.Capacity), id, op)
	if err != nil {
		return false, 0, err
	}
	if len(r.Array) != 2 {
		return false, 0, fmt.Errorf("gate script answered %+v", r)
	}
	return r.Array[0].Int == 1, r.Array[1].Int, nil
}

// Join implements Policy.
func (g *UnorderedGate) Join(ctx context.Context, v *Visitor, now time.Time) (Answer, error) {
	return g.Poll(ctx, v, now)
}

// Poll implements Policy. Without an order, no visitor left waiting is
// nearer the front than another: all count as far from it.
func (g *UnorderedGate) Poll(ctx context.Context, v *Visitor, now time.Time) (Answer, error) {
	in, held, err := g.run(v, now, "enter")
	return Answer{Admitted: in, Far: !in, Held: held, Next: g.Refresh, Calls: 1}, err
}

// Visit implements Policy.
func (g *UnorderedGate) Visit(ctx context.Context, v *Visitor, now time.Time) (int, error) {
	in, held, err := g.run(v, now, "enter")
	if err == nil && !in {
		err = fmt.Errorf("an active session was refused with %d sessions live", held)
	}
	return 1, err
}

// Leave implements Policy.
func (g *UnorderedGate) Leave(ctx context.Context, v *Visitor, now time.Time) (int, error) {
	_, _, err := g.run(v, now, "leave")
	return 1, err
}

// Held implements Policy.
func (g *UnorderedGate) Held(ctx context.Context, now time.Time) (int64, bool, error) {
	_, held, err := g.run(nil, now, "count")
	return held, true, err
}

// do runs one command and turns a Redis error reply into an error.
func do(p *resp.Pool, args ...string) (resp.Value, error) {
	v, err := p.Do(args...)
	if err == nil && v.Kind == resp.Error {
		err = fmt.Errorf("redis: %s: %s", args[0], v.Str)
	}
	return v, err
}
