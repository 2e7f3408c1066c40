package modeltest

import (
	"fmt"
	"testing"
	"time"

	"github.com/edgequeue/waitingroom/store"
	"github.com/edgequeue/waitingroom/store/shard"
	"pgregory.net/rapid"
)

// shardVisitor is one visitor of a sharded room, as its passes keep it.
type shardVisitor struct {
	arrival string
	// shard is the one of the arrival's two it was sent to.
	shard   int
	ticket  store.Ticket
	session store.SessionRef
	ended   bool
}

// TestShardedModel runs random sequences of arrivals, polls, departures,
// quiet spells and operator actions (pause, resume, limits) against a room
// of 1 to 4 shards (package shard over the real script), and checks after
// every call, from each shard's own line:
//   - a visitor is in the shard its arrival hashes to, for good: every
//     answer about their ticket or session names it;
//   - no shard holds more than its share of the capacity in force, so the
//     room never holds more than its capacity;
//   - a paused room calls nobody in, on any shard;
//   - within a shard, nobody is called before a ticket ahead of them;
//   - the room's stats are the sum of the shards' lines (issued, the
//     switch, and what is held within the capacity), and every arrival
//     was issued one ticket;
//   - an ended session is never renewed.
func TestShardedModel(t *testing.T) {
	e := newEnv(t)
	rooms := 0
	rapid.Check(t, func(rt *rapid.T) {
		rooms++
		room := fmt.Sprintf("sharded-%d", rooms)
		k := rapid.IntRange(1, 4).Draw(rt, "shards")
		p := basePolicy(rapid.IntRange(k, 8).Draw(rt, "capacity"),
			rapid.SampledFrom([]float64{0, 6, 60}).Draw(rt, "per minute"), rapid.IntRange(1, 3).Draw(rt, "burst"), 0)
		p.Shards = k
		// Nobody here loses a place by waiting: the places are what is
		// checked, not the timeouts (TestModel checks those).
		p.ClaimWindow, p.QueueTimeout = time.Hour, 24*time.Hour
		st := &shard.Store{Backends: []shard.Backend{e.st}, Shards: func(string) int { return k }}
		capacity := p.Capacity
		now := t0
		paused := false
		var vs []*shardVisitor
		// check reads every shard's line apart and holds it to the rules.
		check := func(what string) {
			var issued, held int64
			var seen []string
			for i := 0; i < k; i++ {
				sp := p
				sp.Shard = i
				l, err := e.st.Stats(ctx, shard.Name(room, i), sp, now)
				if err != nil {
					rt.Fatal(err)
				}
				if share := shard.Split(int64(capacity), i, k); l.Active+l.Called > share {
					rt.Fatalf("after %s: shard %d holds %d+%d, over its share %d of %d", what, i, l.Active, l.Called, share, capacity)
				}
				issued += l.Issued
				held += l.Active + l.Called
				seen = append(seen, fmt.Sprintf("shard %d: issued %d admitted %d active %d called %d", i, l.Issued, l.Admitted, l.Active, l.Called))
			}
			if issued != int64(len(vs)) {
				rt.Fatalf("after %s: the shards issued %d tickets to %d arrivals", what, issued, len(vs))
			}
			sum, err := st.Stats(ctx, room, p, now)
			if err != nil {
				rt.Fatal(err)
			}
			// Every call may call someone in (the line's clock catches up
			// a step at a time), so the sum read after the shards holds
			// as many or more, within the capacity; issued is settled.
			if sum.Issued != issued || sum.Active+sum.Called < held || sum.Active+sum.Called > int64(capacity) || sum.Paused != paused {
				rt.Fatalf("after %s: stats %d issued, %d held (%d admitted), paused %v; the shards %d, %d, %v: %q", what, sum.Issued, sum.Active+sum.Called, sum.Admitted, sum.Paused, issued, held, paused, seen)
			}
		}
		answer := func(v *shardVisitor, pl store.Place, err error, what string) {
			if err != nil {
				rt.Fatalf("%s: %v", what, err)
			}
			if pl.Shard != v.shard {
				rt.Fatalf("%s: answered from shard %d, the arrival was sent to %d", what, pl.Shard, v.shard)
			}
			if pl.Outcome == store.Lost {
				rt.Fatalf("%s: ticket %d of shard %d lost its place", what, pl.Ticket, pl.Shard)
			}
			if paused && pl.Line.CalledNow > 0 {
				rt.Fatalf("%s: a paused room called %d", what, pl.Line.CalledNow)
			}
			v.ticket = store.Ticket{Number: pl.Ticket, Epoch: pl.Line.Epoch, Shard: pl.Shard}
			if pl.Outcome == store.Admitted && v.session.ID == "" {
				// Within the shard, every ticket ahead was called first.
				for _, o := range vs {
					if o != v && o.ticket.Shard == v.ticket.Shard && o.ticket.Number > 0 && o.ticket.Number < v.ticket.Number &&
						o.ticket.Number > pl.Line.Admitted {
						rt.Fatalf("%s: ticket %d called before ticket %d of the same shard", what, v.ticket.Number, o.ticket.Number)
					}
				}
				v.session = store.SessionRef{ID: pl.Session, Epoch: pl.Line.Epoch, Shard: pl.Shard}
			}
		}
		rt.Repeat(map[string]func(*rapid.T){
			"join": func(rt *rapid.T) {
				if len(vs) >= 16 {
					rt.Skip("enough visitors")
				}
				v := &shardVisitor{arrival: fmt.Sprintf("%s-arrival-%d", room, len(vs))}
				vs = append(vs, v)
				// The edge sends an arrival to either of its two shards
				// (the shorter line in its POP's snapshots): either here.
				v.shard = shard.Choices(v.arrival, k)[rapid.IntRange(0, 1).Draw(rt, "choice")]
				pl, err := st.Join(ctx, room, p, store.Arrival{ID: v.arrival, Shard: v.shard}, now)
				answer(v, pl, err, "join "+v.arrival)
				check("join")
			},
			"poll": func(rt *rapid.T) {
				var waiting []*shardVisitor
				for _, v := range vs {
					if v.session.ID == "" {
						waiting = append(waiting, v)
					}
				}
				if len(waiting) == 0 {
					rt.Skip("nobody waits")
				}
				v := rapid.SampledFrom(waiting).Draw(rt, "who")
				pl, err := st.Poll(ctx, room, p, v.ticket, now)
				answer(v, pl, err, "poll "+v.arrival)
				check("poll")
			},
			"renew": func(rt *rapid.T) {
				var in []*shardVisitor
				for _, v := range vs {
					if v.session.ID != "" {
						in = append(in, v)
					}
				}
				if len(in) == 0 {
					rt.Skip("nobody inside")
				}
				v := rapid.SampledFrom(in).Draw(rt, "who")
				ref := v.session
				ref.UsableUntil = now.Add(heartbeat)
				ok, _, err := st.Renew(ctx, room, p, ref, now)
				if err != nil {
					rt.Fatal(err)
				}
				if ok && v.ended {
					rt.Fatalf("renew %s: an ended session was renewed", v.arrival)
				}
				check("renew")
			},
			"end": func(rt *rapid.T) {
				var in []*shardVisitor
				for _, v := range vs {
					if v.session.ID != "" && !v.ended {
						in = append(in, v)
					}
				}
				if len(in) == 0 {
					rt.Skip("nobody inside")
				}
				v := rapid.SampledFrom(in).Draw(rt, "who")
				ref := v.session
				ref.UsableUntil = now
				if _, err := st.End(ctx, room, p, ref, now); err != nil {
					rt.Fatal(err)
				}
				v.ended = true
				check("end")
			},
			"wait": func(rt *rapid.T) {
				// Steps within a refresh, so the line's clock runs in full.
				now = now.Add(time.Duration(rapid.IntRange(1, 8).Draw(rt, "seconds")) * time.Second)
				check("wait")
			},
			"pause": func(rt *rapid.T) {
				if _, err := st.Operate(ctx, room, p, store.Action{Op: string(store.Pause)}, now); err != nil {
					rt.Fatal(err)
				}
				paused = true
				check("pause")
			},
			"resume": func(rt *rapid.T) {
				if _, err := st.Operate(ctx, room, p, store.Action{Op: string(store.Resume)}, now); err != nil {
					rt.Fatal(err)
				}
				paused = false
				check("resume")
			},
			"limits": func(rt *rapid.T) {
				// Raised, or lifted (0): a lowered capacity leaves places
				// held beyond it until they drain, which is not a breach.
				if capacity > 8 {
					rt.Skip("no cap already")
				}
				c := rapid.IntRange(capacity, 9).Draw(rt, "capacity override")
				if c == 9 {
					c = 0
				}
				if _, err := st.Operate(ctx, room, p, store.Action{Op: store.OpLimits, Set: store.Overrides{Capacity: &c}}, now); err != nil {
					rt.Fatal(err)
				}
				capacity = c
				if c == 0 {
					capacity = 1 << 30
				}
				check("limits")
			},
		})
	})
}
