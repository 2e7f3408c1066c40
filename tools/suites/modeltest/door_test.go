package modeltest

import (
	"context"
	"encoding/base64"
	"fmt"
	"math"
	"strings"
	"testing"
	"time"

	"github.com/edgequeue/waitingroom/challenge"
	"github.com/edgequeue/waitingroom/queue"
	"github.com/edgequeue/waitingroom/store"
	"pgregory.net/rapid"
)

// doorRoom has one place, places that go within seconds, and a ladder
// whose top is 8 bits (2^8 hashes: cheap to solve here); its join limit is
// far above what the clients do, so the ladder counts their joins and the
// limit refuses none.
const doorRoom = `{"paths":["/"],"max_active_users":1,"refresh":1,"claim_window":6,"queue_timeout":30,
	"inactivity_timeout":10,"proof_of_work":8,"snapshot_ttl":2,"joins_per_ip_per_minute":1000}`

// pressures are the lines the POP's snapshot shows, by their pressure (the
// minutes the waiting take to be called): calm, rising, a rush, and a line
// nobody is called from.
var pressures = []float64{0, 2, 8, 64, math.Inf(1)}

// pop is the POP's snapshot of the line: always fresh, showing the
// pressure drawn (60 called in the last five minutes, 12 a minute, and as
// many waiting as make it). A poll finds no snapshot to answer from, and
// asks the store.
type pop struct {
	now      *time.Time
	pressure float64
}

func (p *pop) Peek(*queue.Room, int) (queue.Snapshot, error) {
	l := store.Line{Epoch: 1, Admitted: 1000, Issued: 1000 + int64(p.pressure*12), Recent: 60, RecentSince: p.now.Add(-5 * time.Minute)}
	if math.IsInf(p.pressure, 1) {
		l.Issued, l.Recent = 1010, 0
	}
	return queue.Snapshot{Line: l, At: *p.now}, nil
}

func (p *pop) Get(*queue.Room, int, time.Time, func() (queue.Snapshot, error)) (queue.Snapshot, error) {
	return queue.Snapshot{}, queue.ErrNoSnapshot
}

// recentJoins counts each client's joins over the last minute, as the
// edge's rate counter would, and refuses none.
type recentJoins struct {
	now *time.Time
	at  map[string][]time.Time
}

func (j *recentJoins) Join(_ *queue.Room, v queue.Visitor) (string, error) {
	j.at[v.Client] = append(j.at[v.Client], *j.now)
	return "", nil
}

func (j *recentJoins) Joins(_ *queue.Room, client string) (int, error) {
	n := 0
	for _, t := range j.at[client] {
		if j.now.Sub(t) < time.Minute {
			n++
		}
	}
	return n, nil
}

func (j *recentJoins) Penalized(*queue.Room, queue.Visitor) (bool, error) { return false, nil }

// doorStore is the store, noting the arrivals the gate joined with and the
// ticket each was given: a second ticket for one arrival is a place that
// came back without a new arrival.
type doorStore struct {
	store.Store
	joined  []string
	tickets map[string]int64
	breach  string
}

func (s *doorStore) Join(ctx context.Context, room string, p store.Policy, a store.Arrival, now time.Time) (store.Place, error) {
	pl, err := s.Store.Join(ctx, room, p, a, now)
	arrival := a.ID
	s.joined = append(s.joined, arrival)
	if err == nil && (pl.Outcome == store.Waiting || pl.Outcome == store.Admitted) {
		if had, ok := s.tickets[arrival]; ok && had != pl.Ticket {
			s.breach = fmt.Sprintf("arrival %s, given ticket %d, was given ticket %d", arrival, had, pl.Ticket)
		}
		s.tickets[arrival] = pl.Ticket
	}
	return pl, err
}

// doorClient is a client that keeps every pass it was ever given and may
// present any of them, with the solution of the work last asked of it or
// without: a bot that collects passes while the line is calm, and one that
// comes back with the pass whose place is gone.
type doorClient struct {
	addr   string
	passes []string
	work   map[string]challenge.Challenge
}

// TestDoor drives the door (queue.Gate, over the real script) with two
// clients as above, a line whose pressure the POP sees rise and fall,
// time passing and sessions ended by the departure beacon, and checks
// every join the gate lets through to the store:
//   - a join never shows less work than the rung in force: the work it
//     offers is at least the rung the ladder gives at the moment of the
//     join, for the pressure then and the client's joins then (a browser
//     without script that waited NoScriptWait shows the lowest rung);
//   - a place that is gone never comes back without a new arrival: no
//     arrival is given a second ticket.
func TestDoor(t *testing.T) {
	e := newEnv(t)
	keys, err := queue.ParseKeySet("k1:" + base64.StdEncoding.EncodeToString([]byte(strings.Repeat("k", 32))))
	if err != nil {
		t.Fatal(err)
	}
	knobs := readKnobs(t)
	rooms := 0
	rapid.Check(t, func(rt *rapid.T) {
		rooms++
		room, err := queue.ParseRoom(fmt.Sprint("door", rooms), []byte(doorRoom))
		if err != nil {
			rt.Fatal(err)
		}
		now := t0
		line := &pop{now: &now}
		joins := &recentJoins{now: &now, at: map[string][]time.Time{}}
		st := &doorStore{Store: e.st, tickets: map[string]int64{}}
		g := &queue.Gate{Store: st, Keys: keys, Joins: joins, Snapshots: line}
		clients := []*doorClient{{addr: "192.0.2.1"}, {addr: "192.0.2.2"}}
		for _, c := range clients {
			c.work = map[string]challenge.Challenge{}
		}
		ladder := challenge.Ladder{Top: room.ProofOfWork}
		breach := func(rule, format string, args ...any) {
			rt.Logf("BREACH: "+format, args...)
			rt.Fatalf("%s", rule)
		}
		acts := map[string]func(*rapid.T){
			"request": func(rt *rapid.T) {
				c := rapid.SampledFrom(clients).Draw(rt, "client")
				v := queue.Visitor{Client: c.addr, Now: now}
				what := "no pass"
				var offered challenge.Challenge
				var issued time.Time
				var arrival, bind string
				if len(c.passes) > 0 && rapid.Bool().Draw(rt, "with a pass") {
					pass := c.passes[rapid.IntRange(0, len(c.passes)-1).Draw(rt, "pass (oldest first)")]
					v.Passes = []string{pass}
					p, err := keys.Verify(room.Name, pass, now)
					what = fmt.Sprintf("a %s pass (%v)", p.Kind, err)
					issued, arrival, bind = p.IssuedAt, p.ArrivalID, p.Bind
					if w := c.work[pass]; w.Bits > 0 && rapid.Bool().Draw(rt, "solved") {
						nonce, _ := w.Solve()
						v.Work = []string{nonce}
						offered = w
						what += fmt.Sprintf(" with the solution of %d bits", w.Bits)
					}
				}
				n, _ := joins.Joins(room, c.addr)
				rung := ladder.Bits(line.pressure, n)
				st.joined = nil
				d := g.Decide(ctx, room, v)
				rt.Logf("%s %s presents %s: %v (%s); the rung in force %d (pressure %g, %d joins)",
					clock(now.UnixMilli()), c.addr, what, d.Action, d.Why, rung, line.pressure, n)
				switch {
				case d.Pass != "":
					c.passes = append(c.passes, d.Pass)
					c.work[d.Pass] = d.Challenge
				case d.Action == queue.Work:
					c.work[v.Passes[0]] = d.Challenge
				}
				if st.breach != "" {
					breach("a place that is gone never comes back without a new arrival", "%s", st.breach)
				}
				if len(st.joined) == 0 {
					return
				}
				shown := 0
				switch {
				case len(v.Work) > 0:
					shown = offered.Bits
					// A nonce solves a harder rung's challenge (its
					// seed is another) by luck, one time in 2^bits:
					// it shows that work then.
					for b := offered.Bits + 1; b <= ladder.Top; b++ {
						if challenge.For(room.Name, arrival, bind, b).Check(v.Work[0]) == nil {
							shown = b
						}
					}
				case !issued.IsZero() && !now.Before(issued.Add(queue.NoScriptWait)):
					shown = ladder.Base() // the wait of a browser without script
				}
				if shown < rung {
					breach("a join never shows less work than the rung in force",
						"%s joined showing %d bits of work, at rung %d", c.addr, shown, rung)
				}
			},
			"leave": func(rt *rapid.T) {
				c := rapid.SampledFrom(clients).Draw(rt, "client")
				var sessions []string
				for _, pass := range c.passes {
					if p, err := keys.Verify(room.Name, pass, now); err == nil && p.Kind == queue.Session {
						sessions = append(sessions, pass)
					}
				}
				if len(sessions) == 0 {
					rt.Skip("no session")
				}
				pass := rapid.SampledFrom(sessions).Draw(rt, "session")
				ended, err := g.End(ctx, room, queue.Visitor{Passes: []string{pass}, Client: c.addr, Now: now})
				rt.Logf("%s %s ends its session: %v %v", clock(now.UnixMilli()), c.addr, ended, err)
			},
			"pressure": func(rt *rapid.T) {
				line.pressure = rapid.SampledFrom(pressures).Draw(rt, "pressure")
				rt.Logf("%s the POP sees a line of %g minutes", clock(now.UnixMilli()), line.pressure)
			},
			"time passes": func(rt *rapid.T) {
				now = now.Add(time.Duration(rapid.IntRange(1, 40).Draw(rt, "seconds")) * time.Second)
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
