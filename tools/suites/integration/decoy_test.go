package integration

import (
	"context"
	"fmt"
	"testing"
	"time"

	"pgregory.net/rapid"

	"github.com/edgequeue/waitingroom/challenge"
	"github.com/edgequeue/waitingroom/queue"
	"github.com/edgequeue/waitingroom/store"
)

// decoyDoorsRoom is doorsRoom with a decoy line: a proof of work of one
// bit at the base rung (no snapshot: the pressure is unknown) and four at
// the top, the decoy's way out.
const decoyDoorsRoom = `{"paths":["/"],"max_active_users":1,"refresh":1,"claim_window":6,"queue_timeout":30,
	"inactivity_timeout":10,"joins_per_ip_per_minute":2,"proof_of_work":4,"snapshot_ttl":0}`

// boxedJoins is minuteJoins with the edge's penalty box: a client that
// joins beyond the limit is boxed for edge.JoinPenalty's minute.
type boxedJoins struct {
	minuteJoins
	boxed map[string]time.Time
}

func (j *boxedJoins) Join(room *queue.Room, v queue.Visitor) (string, error) {
	over, err := j.minuteJoins.Join(room, v)
	if over != "" {
		j.boxed[v.Client] = j.now.Add(time.Minute)
	}
	return over, err
}

func (j *boxedJoins) Penalized(_ *queue.Room, v queue.Visitor) (bool, error) {
	return j.now.Before(j.boxed[v.Client]), nil
}

// spentSolutions is the POP's record of the first client to join with each
// solution.
type spentSolutions map[string]string

func (s spentSolutions) Spend(room *queue.Room, arrival, client string) (string, error) {
	if first, ok := s[room.Name+"/"+arrival]; ok {
		return first, nil
	}
	s[room.Name+"/"+arrival] = client
	return client, nil
}

// callCounter is the store, counting its calls that take or keep a place
// (Join, Poll, Renew): not Stats, a read.
type callCounter struct {
	store.Store
	calls int
}

func (c *callCounter) Join(ctx2 context.Context, room string, p store.Policy, a store.Arrival, now time.Time) (store.Place, error) {
	c.calls++
	return c.Store.Join(ctx2, room, p, a, now)
}

func (c *callCounter) Poll(ctx2 context.Context, room string, p store.Policy, t store.Ticket, now time.Time) (store.Place, error) {
	c.calls++
	return c.Store.Poll(ctx2, room, p, t, now)
}

func (c *callCounter) Renew(ctx2 context.Context, room string, p store.Policy, s store.SessionRef, now time.Time) (bool, store.Line, error) {
	c.calls++
	return c.Store.Renew(ctx2, room, p, s, now)
}

// TestTheDecoyHoldsNoPlace drives the gate over the real script with
// random requests of two people and a bot the edge judges hostile, who
// keep every pass they were given, swap them among themselves, offer the
// right solution, a wrong one or none, and let time pass. However they
// come in: a decoyed newcomer joins, polls and renews nothing in the store
// (it reads the line, Stats, which this does not count); the bot takes a place
// only through the decoy's way out (its pass, with the top rung's
// solution); no arrival's place goes to two clients (a replayed solution
// is decoyed); a decoy pass never admits; and nobody takes more regular
// places in a minute than the join limit.
func TestTheDecoyHoldsNoPlace(t *testing.T) {
	keys, room, st := doors(t, decoyDoorsRoom)
	rapid.Check(t, func(rt *rapid.T) {
		flush(t, st)
		now, client := t0, ""
		joins := &boxedJoins{minuteJoins{now: &now, counts: map[string]int{}}, map[string]time.Time{}}
		places := &placeCounter{Store: st, client: &client, now: &now, regular: map[string]int{}}
		calls := &callCounter{Store: places}
		g := &queue.Gate{Store: calls, Keys: keys, Joins: joins, Solutions: spentSolutions{}}
		clients := []string{"192.0.2.1", "192.0.2.2", "198.51.100.66"}
		const bot = "198.51.100.66"
		var passes []string
		placeOf := map[string]string{} // arrival id: the client whose join placed it
		rt.Repeat(map[string]func(*rapid.T){
			"request": func(rt *rapid.T) {
				client = rapid.SampledFrom(clients).Draw(rt, "client")
				v := queue.Visitor{Client: client, Now: now}
				if client == bot {
					v.Hostile = func() string { return "bad bot" }
				}
				var p queue.Pass
				if len(passes) > 0 && rapid.Bool().Draw(rt, "with a pass") {
					token := rapid.SampledFrom(passes).Draw(rt, "pass")
					v.Passes = []string{token}
					p, _ = keys.Verify("r", token, now)
				}
				solved := false
				switch rapid.SampledFrom([]string{"none", "solution", "wrong"}).Draw(rt, "work") {
				case "solution":
					if p.Kind == queue.Arrival || p.Kind == queue.DecoyKind {
						nonce, _ := challenge.For("r", p.ArrivalID, p.Bind, p.Work).Solve()
						v.Work = []string{nonce}
						solved = true
					}
				case "wrong":
					v.Work = []string{"zz"}
					if p.Kind != "" && challenge.For("r", p.ArrivalID, p.Bind, p.Work).Check("zz") == nil {
						v.Work = []string{"z!"}
					}
				}
				before, issued := calls.calls, places.regular[fmt.Sprint(client, " in minute ", now.Unix()/60)]
				d := g.Decide(ctx, room, v)
				if d.Pass != "" {
					passes = append(passes, d.Pass)
				}
				// A ticket or session met the store before its holder
				// was found to need a place again; so did the way out of
				// a decoy pass whose place is gone (one solution, one
				// place: its holder is judged again, as a newcomer).
				if d.Action == queue.Decoy && calls.calls != before && p.Kind != queue.Ticket && p.Kind != queue.Session && !(p.Kind == queue.DecoyKind && solved) {
					rt.Fatalf("a decoyed request with a %q pass made %d store calls that take or keep a place", p.Kind, calls.calls-before)
				}
				placed := places.regular[fmt.Sprint(client, " in minute ", now.Unix()/60)] > issued
				if placed && client == bot && !(p.Kind == queue.DecoyKind && solved) {
					rt.Fatalf("the bot took a place with a %q pass (solved %v): %v (%s)", p.Kind, solved, d.Action, d.Why)
				}
				if p.Kind == queue.DecoyKind && !solved && (d.Action == queue.Admit || d.Action == queue.Wait) {
					rt.Fatalf("a decoy pass without the way out's solution was answered %v (%s)", d.Action, d.Why)
				}
				if (p.Kind == queue.Arrival || p.Kind == queue.DecoyKind) && (d.Action == queue.Wait || d.Action == queue.Admit) {
					if first, ok := placeOf[p.ArrivalID]; ok && first != client {
						rt.Fatalf("arrival %s placed %s and then %s", p.ArrivalID, first, client)
					}
					placeOf[p.ArrivalID] = client
				}
			},
			"time passes": func(rt *rapid.T) {
				now = now.Add(time.Duration(rapid.IntRange(1, 40).Draw(rt, "seconds")) * time.Second)
			},
			"": func(rt *rapid.T) {
				for k, n := range places.regular {
					if n > room.JoinsPerIPPerMinute {
						rt.Fatalf("client %s took %d regular places, over the join limit of %d", k, n, room.JoinsPerIPPerMinute)
					}
				}
			},
		})
	})
}
