package modeltest

import (
	"context"
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

// faulty is one shard's backend, which fails every call while fail is
// set: "before" it reaches the store (nothing applied), or "after" (the
// store applied it, the answer was lost on the way back).
type faulty struct {
	shard.Backend
	fail string
}

func (f *faulty) Operate(ctx context.Context, room string, p store.Policy, a store.Action, now time.Time) (store.Line, error) {
	return f.call(func() (store.Line, error) { return f.Backend.Operate(ctx, room, p, a, now) })
}

func (f *faulty) Stats(ctx context.Context, room string, p store.Policy, now time.Time) (store.Line, error) {
	return f.call(func() (store.Line, error) { return f.Backend.Stats(ctx, room, p, now) })
}

func (f *faulty) call(do func() (store.Line, error)) (store.Line, error) {
	switch f.fail {
	case "before":
		return store.Line{}, fmt.Errorf("%w: the request never arrived", store.ErrUnavailable)
	case "after":
		do()
		return store.Line{}, fmt.Errorf("%w: the answer was lost", store.ErrUnavailable)
	}
	return do()
}

// TestShardedModel runs random sequences of arrivals (spread over the
// shards unevenly, as the hash may spread them), polls, departures, quiet
// spells and operator actions (pause, resume, admit, live limits, with a
// capacity below the shard count among them), some of which fail on one
// shard, before or after it applied them, and are retried with the same
// action id, against a room of 1 to 4 shards (package shard over the real
// script). It checks after every call, from each shard's own line:
//   - a visitor is in the shard its arrival hashes to, for good: every
//     answer about their ticket or session names it;
//   - capacity is never exceeded: no call takes the room (nor, while the
//     capacity covers every shard, a shard beyond its share) past the
//     capacity in force, except an operator's admit; a lowered capacity,
//     or an admit that called a shard beyond its share, leaves the places
//     held beyond it to drain, while no shard grows beyond its share;
//   - no shard starves while the room admits: with no rate limit, the
//     room not paused and a place free in it, no shard with tickets
//     waiting holds none (a live capacity below the shard count is
//     refused, or shared so that no shard is left with nothing for good);
//   - an action applies once: a retry applies it where it has not applied
//     yet, so after it every shard holds the action (the switch, the
//     limits), and admit N calls N in total over the attempts (as many as
//     wait, if fewer);
//   - a paused room calls nobody in, on any shard, but by an admit;
//   - within a shard, nobody is called before a ticket ahead of them;
//   - the room's stats are the sum of the shards' lines (issued, the
//     switch, and what is held), and every arrival was issued one ticket;
//   - an ended session is never renewed.
func TestShardedModel(t *testing.T) {
	e := newEnv(t)
	knobs := readKnobs(t)
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
		backends := make([]*faulty, k)
		st := &shard.Store{Shards: func(string) int { return k }}
		for i := range backends {
			backends[i] = &faulty{Backend: e.st}
			st.Backends = append(st.Backends, backends[i])
		}
		capacity := p.Capacity
		var override *int // the live capacity in force, nil: none
		now := t0
		paused := false
		actions := 0
		var vs []*shardVisitor
		// held and shardHeld are what the room and each shard held at the
		// last check: more is allowed only within the capacity.
		held, shardHeld := int64(0), make([]int64, k)
		// overShares: a shard may have held more than its share in this
		// sequence: the capacity was lowered, or an operator's admit
		// called beyond a shard's share (in a room of shards). A shard
		// drains that on its own, while another fills its share (the
		// split has no view across shards), so the room may then hold
		// more than the capacity for a while; no shard grows beyond its
		// share meanwhile (the check of each shard).
		overShares := false
		// breach fails the sequence for rule, the same for every breach
		// of it, so that rapid shrinks it as one failure.
		breach := func(rule, format string, args ...any) {
			rt.Logf("BREACH: "+format, args...)
			rt.Fatalf("%s", rule)
		}
		// check reads every shard's line apart and holds it to the rules;
		// admitted says an operator's admit was made, which may call
		// beyond the capacity.
		check := func(what string, admitted bool) {
			var issued, sumHeld int64
			var seen []string
			starving := -1
			for i := 0; i < k; i++ {
				sp := p
				sp.Shard = i
				l, err := e.st.Stats(ctx, shard.Name(room, i), sp, now)
				if err != nil {
					rt.Fatal(err)
				}
				h := l.Active + l.Called
				if share := shard.Split(int64(capacity), i, k); !admitted && capacity >= k && h > max(share, shardHeld[i]) {
					breach("capacity never exceeded: no shard holds more than its share",
						"after %s: shard %d holds %d+%d, over its share %d of %d", what, i, l.Active, l.Called, share, capacity)
				}
				if l.Paused != paused {
					breach("an action applies on every shard", "after %s: shard %d paused %v, want %v", what, i, l.Paused, paused)
				}
				if got := l.Overrides.Capacity; (got == nil) != (override == nil) || (got != nil && *got != *override) {
					breach("an action applies on every shard", "after %s: shard %d's live capacity %s, want %s",
						what, i, overridesString(l.Overrides), overridesString(store.Overrides{Capacity: override}))
				}
				if l.Issued > l.Admitted && h == 0 && starving < 0 {
					starving = i
				}
				shardHeld[i] = h
				issued += l.Issued
				sumHeld += h
				seen = append(seen, fmt.Sprintf("shard %d: issued %d admitted %d active %d called %d", i, l.Issued, l.Admitted, l.Active, l.Called))
			}
			if issued != int64(len(vs)) {
				rt.Fatalf("after %s: the shards issued %d tickets to %d arrivals", what, issued, len(vs))
			}
			if !admitted && !overShares && sumHeld > max(int64(capacity), held) {
				breach("capacity never exceeded", "after %s: the room holds %d, over its capacity %d: %q", what, sumHeld, capacity, seen)
			}
			if starving >= 0 && p.PerMinute == 0 && !paused && sumHeld < int64(capacity) {
				breach("no shard starves while the room admits",
					"after %s: shard %d has tickets waiting and holds no place, with no rate limit, capacity %d: %q", what, starving, capacity, seen)
			}
			sum, err := st.Stats(ctx, room, p, now)
			if err != nil {
				rt.Fatal(err)
			}
			// Every call may call someone in (the line's clock catches up
			// a step at a time), so the sum read after the shards holds
			// as many or more, within the capacity; issued is settled.
			if sum.Issued != issued || sum.Active+sum.Called < sumHeld || (!admitted && !overShares && sum.Active+sum.Called > max(int64(capacity), sumHeld)) || sum.Paused != paused {
				rt.Fatalf("after %s: stats %d issued, %d held (%d admitted), paused %v; the shards %d, %d, %v: %q", what, sum.Issued, sum.Active+sum.Called, sum.Admitted, sum.Paused, issued, sumHeld, paused, seen)
			}
			held = max(sumHeld, sum.Active+sum.Called)
		}
		// operate applies a, failing first on shard fail (-1: none) in
		// mode, then retried with the same id; it reports the error of
		// the last attempt.
		operate := func(rt *rapid.T, a store.Action) error {
			actions++
			a.ID, a.Actor = fmt.Sprint(room, "-action-", actions), store.Actor{Via: "api", Client: "modeltest"}
			fail := rapid.IntRange(-1, k-1).Draw(rt, "fails on shard (-1: none)")
			if fail < 0 {
				_, err := st.Operate(ctx, room, p, a, now)
				return err
			}
			backends[fail].fail = rapid.SampledFrom([]string{"before", "after"}).Draw(rt, "failing")
			_, err := st.Operate(ctx, room, p, a, now)
			backends[fail].fail = ""
			if err == nil {
				breach("a shard's failure is reported", "%s: shard %d failed, and the answer says nothing of it", a.Op, fail)
			}
			_, err = st.Operate(ctx, room, p, a, now)
			return err
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
		acts := map[string]func(*rapid.T){
			"join": func(rt *rapid.T) {
				if len(vs) >= 16 {
					rt.Skip("enough visitors")
				}
				// An arrival whose id hashes to the shard drawn: rapid
				// spreads them as unevenly as it likes. The id names no
				// room (each sequence's room keeps its own arrivals), so
				// that its second choice of shard is the same however
				// many sequences ran before: a failure replays.
				to := rapid.IntRange(0, k-1).Draw(rt, "to shard")
				v := &shardVisitor{}
				for n := 0; v.arrival == "" || shard.Of(v.arrival, k) != to; n++ {
					v.arrival = fmt.Sprintf("arrival-%d-%d", len(vs), n)
				}
				vs = append(vs, v)
				// The edge sends an arrival to either of its two shards
				// (the shorter line in its POP's snapshots): either here.
				v.shard = shard.Choices(v.arrival, k)[rapid.IntRange(0, 1).Draw(rt, "choice")]
				pl, err := st.Join(ctx, room, p, store.Arrival{ID: v.arrival, Shard: v.shard}, now)
				answer(v, pl, err, "join "+v.arrival)
				check("join", false)
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
				check("poll", false)
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
				check("renew", false)
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
				check("end", false)
			},
			"wait": func(rt *rapid.T) {
				// Steps within a refresh, so the line's clock runs in full.
				now = now.Add(time.Duration(rapid.IntRange(1, 8).Draw(rt, "seconds")) * time.Second)
				check("wait", false)
			},
			"pause": func(rt *rapid.T) {
				if err := operate(rt, store.Action{Op: string(store.Pause)}); err != nil {
					rt.Fatal(err)
				}
				paused = true
				check("pause", false)
			},
			"resume": func(rt *rapid.T) {
				if err := operate(rt, store.Action{Op: string(store.Resume)}); err != nil {
					rt.Fatal(err)
				}
				paused = false
				check("resume", false)
			},
			"admit": func(rt *rapid.T) {
				n := int64(rapid.IntRange(1, 4).Draw(rt, "n"))
				// enough: every shard has its even part of n waiting, so
				// none leaves part of n to another.
				var before int64
				enough := true
				for i := 0; i < k; i++ {
					sp := p
					sp.Shard = i
					l, err := e.st.Stats(ctx, shard.Name(room, i), sp, now)
					if err != nil {
						rt.Fatal(err)
					}
					before += l.Admitted
					enough = enough && l.Issued-l.Admitted >= shard.Split(n, 0, k)
				}
				if err := operate(rt, store.Action{Op: store.OpAdmit, N: n}); err != nil {
					rt.Fatal(err)
				}
				var after int64
				for i := 0; i < k; i++ {
					sp := p
					sp.Shard = i
					l, err := e.st.Stats(ctx, shard.Name(room, i), sp, now)
					if err != nil {
						rt.Fatal(err)
					}
					after += l.Admitted
				}
				// Paused, only the admit calls anyone: N at most over the
				// attempts, and N when every shard had its part waiting.
				if called := after - before; paused && (called > n || (enough && called < n)) {
					breach("an action applies once: admit N calls N over its attempts",
						"admit %d called %d over its attempts, every shard having its part waiting: %v", n, called, enough)
				}
				overShares = overShares || k > 1
				check("admit", true)
			},
			"limits": func(rt *rapid.T) {
				// Any capacity, lowered or raised, below the shard count
				// too, or lifted (0).
				c := rapid.IntRange(0, 9).Draw(rt, "capacity override")
				err := operate(rt, store.Action{Op: store.OpLimits, Set: store.Overrides{Capacity: &c}})
				switch {
				case err == nil:
					overShares = overShares || (c > 0 && c < capacity)
					override, capacity = &c, c
					if c == 0 {
						capacity = 1 << 30
					}
				case c == 0 || c >= k:
					breach("a live capacity of at least the shard count is applied", "a capacity of %d for %d shards refused: %v", c, k, err)
				default:
					rt.Logf("a capacity of %d for %d shards refused: %v", c, k, err)
				}
				check("limits", false)
			},
		}
		for name := range acts {
			if knobs.actions != nil && !knobs.actions[name] {
				delete(acts, name)
			}
		}
		rt.Repeat(acts)
	})
}
