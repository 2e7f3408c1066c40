package integration

import (
	"context"
	"fmt"
	"testing"
	"time"

	"pgregory.net/rapid"

	"github.com/edgequeue/waitingroom/queue"
	"github.com/edgequeue/waitingroom/store"
)

// doorsRoom lets places lapse within seconds and limits joins to two a
// minute per client.
const doorsRoom = `{"paths":["/"],"max_active_users":1,"refresh":1,"claim_window":6,"queue_timeout":30,
	"inactivity_timeout":10,"joins_per_ip_per_minute":2,"priority_share":0.5}`

// minuteJoins is the edge's join limit by address as Edge Rate Limiting
// would count it, in whole minutes: Join counts one for the client and
// says whether it is still within the room's limit.
type minuteJoins struct {
	now    *time.Time
	counts map[string]int
}

func (j *minuteJoins) Join(room *queue.Room, v queue.Visitor) (string, error) {
	k := fmt.Sprint(v.Client, " in minute ", j.now.Unix()/60)
	j.counts[k]++
	if j.counts[k] > room.JoinsPerIPPerMinute {
		return "address", nil
	}
	return "", nil
}

func (j *minuteJoins) Joins(_ *queue.Room, client string) (int, error) {
	return j.counts[fmt.Sprint(client, " in minute ", j.now.Unix()/60)], nil
}

func (j *minuteJoins) Penalized(*queue.Room, queue.Visitor) (bool, error) { return false, nil }

// doors is what a model of the doors drives: the key set, room "r" as def
// defines it, and a store.
func doors(t *testing.T, def string) (*queue.KeySet, *queue.Room, *store.Upstash) {
	t.Helper()
	keys, err := queue.ParseKeySet(testKeySet)
	if err != nil {
		t.Fatal(err)
	}
	room, err := queue.ParseRoom("r", []byte(def))
	if err != nil {
		t.Fatal(err)
	}
	st, _ := newStore(t)
	return keys, room, st
}

// placeCounter is the store, counting the places each call hands out
// (tickets of either lane) for the client the test is serving.
type placeCounter struct {
	store.Store
	client  *string
	now     *time.Time
	regular map[string]int // by client and minute
	vip     int
}

func (c *placeCounter) count(pl store.Place, before store.Line) {
	if n := pl.Line.Issued - before.Issued; n > 0 && pl.Line.Epoch == before.Epoch {
		c.regular[fmt.Sprint(*c.client, " in minute ", c.now.Unix()/60)] += int(n)
	}
	if n := pl.Line.PriorityIssued - before.PriorityIssued; n > 0 && pl.Line.Epoch == before.Epoch {
		c.vip += int(n)
	}
}

// wrap runs a call that answers a place, counting what it handed out.
func (c *placeCounter) wrap(ctx context.Context, room string, p store.Policy, call func() (store.Place, error)) (store.Place, error) {
	before, err := c.Store.Stats(ctx, room, p, *c.now)
	if err != nil {
		return store.Place{}, err
	}
	pl, err := call()
	if err == nil {
		c.count(pl, before)
	}
	return pl, err
}

func (c *placeCounter) Join(ctx context.Context, room string, p store.Policy, a store.Arrival, now time.Time) (store.Place, error) {
	return c.wrap(ctx, room, p, func() (store.Place, error) { return c.Store.Join(ctx, room, p, a, now) })
}

func (c *placeCounter) JoinPriority(ctx context.Context, room string, p store.Policy, arrival string, inv store.Invite, now time.Time) (store.Place, error) {
	return c.wrap(ctx, room, p, func() (store.Place, error) { return c.Store.JoinPriority(ctx, room, p, arrival, inv, now) })
}

func (c *placeCounter) Poll(ctx context.Context, room string, p store.Policy, t store.Ticket, now time.Time) (store.Place, error) {
	return c.wrap(ctx, room, p, func() (store.Place, error) { return c.Store.Poll(ctx, room, p, t, now) })
}

// TestNoDoorPassesTheJoinLimit drives the gate over the real script with
// random requests of two clients that keep every pass they were ever
// given and replay any of them (arrival, ticket, session, lapsed or not),
// follow invites, let time pass, and an operator who resets and admits.
// However they come in, no client takes more regular places in a minute
// than its join limit, and the priority lane hands out no more places
// than the invites' uses. Before issue 23 a lapsed ticket's poll handed
// out a new place without a join, in either lane.
func TestNoDoorPassesTheJoinLimit(t *testing.T) {
	keys, room, st := doors(t, doorsRoom)
	rapid.Check(t, func(rt *rapid.T) {
		flush(t, st)
		now, client := t0, ""
		joins := &minuteJoins{now: &now, counts: map[string]int{}}
		places := &placeCounter{Store: st, client: &client, now: &now, regular: map[string]int{}}
		g := &queue.Gate{Store: places, Keys: keys, Joins: joins}
		clients := []string{"192.0.2.1", "192.0.2.2"}
		passes := map[string][]string{}
		uses := 0
		rt.Repeat(map[string]func(*rapid.T){
			"request": func(rt *rapid.T) {
				client = rapid.SampledFrom(clients).Draw(rt, "client")
				v := queue.Visitor{Client: client, Now: now}
				if held := passes[client]; len(held) > 0 && rapid.Bool().Draw(rt, "with a pass") {
					v.Passes = []string{rapid.SampledFrom(held).Draw(rt, "pass")}
				}
				if d := g.Decide(ctx, room, v); d.Pass != "" {
					passes[client] = append(passes[client], d.Pass)
				}
			},
			"invite": func(rt *rapid.T) {
				client = rapid.SampledFrom(clients).Draw(rt, "client")
				n := rapid.IntRange(1, 2).Draw(rt, "uses")
				inv := queue.Invite{ID: fmt.Sprint("inv", uses), Room: "r", Uses: n, To: "/", IssuedAt: now, Expires: now.Add(time.Hour)}
				uses += n
				if d, err := g.Invited(ctx, room, inv, queue.Visitor{Client: client, Now: now}); err == nil && d.Pass != "" {
					passes[client] = append(passes[client], d.Pass)
				}
			},
			"time passes": func(rt *rapid.T) {
				now = now.Add(time.Duration(rapid.IntRange(1, 40).Draw(rt, "seconds")) * time.Second)
			},
			"operator": func(rt *rapid.T) {
				client = "operator"
				op := rapid.SampledFrom([]string{store.OpAdmit, store.OpReset}).Draw(rt, "op")
				st.Operate(ctx, "r", room.Policy(now), store.Action{Op: op, N: 1, Actor: panel}, now)
			},
			"": func(rt *rapid.T) {
				for k, n := range places.regular {
					if n > room.JoinsPerIPPerMinute {
						rt.Fatalf("client %s took %d regular places, over the join limit of %d", k, n, room.JoinsPerIPPerMinute)
					}
				}
				if places.vip > uses {
					rt.Fatalf("the priority lane handed out %d places for invites of %d uses", places.vip, uses)
				}
			},
		})
	})
}
