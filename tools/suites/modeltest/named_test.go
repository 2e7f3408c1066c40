package modeltest

import (
	"encoding/base64"
	"fmt"
	"strings"
	"testing"
	"time"

	"github.com/edgequeue/waitingroom/queue"
	"github.com/edgequeue/waitingroom/store"
	"github.com/edgequeue/waitingroom/store/shard"
)

// TestShardedDefects replays, as named sequences, what TestShardedModel
// found against the sharded room before issue 34 (defects 5 and 7).
func TestShardedDefects(t *testing.T) {
	e := newEnv(t)
	rooms := 0
	// room is a paused room of k shards, capacity c, no rate limit, one
	// faulty backend per shard, and arrivals waiting in shard i.
	room := func(t *testing.T, k, c int, waiting []int) (string, store.Policy, *shard.Store, []*faulty) {
		rooms++
		name := fmt.Sprint("named-sharded-", rooms)
		p := basePolicy(c, 0, 1, 0)
		p.Shards, p.ClaimWindow, p.QueueTimeout = k, time.Hour, 24*time.Hour
		st := &shard.Store{Shards: func(string) int { return k }}
		fs := make([]*faulty, k)
		for i := range fs {
			fs[i] = &faulty{Backend: e.st}
			st.Backends = append(st.Backends, fs[i])
		}
		if _, err := st.Operate(ctx, name, p, store.Action{Op: string(store.Pause), ID: name + "-pause"}, t0); err != nil {
			t.Fatal(err)
		}
		for i, n := range waiting {
			for j := 0; j < n; j++ {
				a := fmt.Sprintf("%s-%d-%d", name, i, j)
				if _, err := st.Join(ctx, name, p, store.Arrival{ID: a, Shard: i}, t0); err != nil {
					t.Fatal(err)
				}
			}
		}
		return name, p, st, fs
	}
	for _, fail := range []struct {
		shard int
		when  string
	}{{1, "before"}, {1, "after"}, {0, "after"}} {
		// Defect 7: the shards before the failed one applied the admit,
		// and the retry applied it again.
		t.Run(fmt.Sprintf("an admit that failed %s shard %d applied it, retried, admits once", fail.when, fail.shard), func(t *testing.T) {
			name, p, st, fs := room(t, 2, 8, []int{2, 2})
			a := store.Action{Op: store.OpAdmit, N: 2, ID: name + "-admit"}
			fs[fail.shard].fail = fail.when
			if _, err := st.Operate(ctx, name, p, a, t0); err == nil {
				t.Fatalf("shard %d failed, and the answer says nothing of it", fail.shard)
			}
			fs[fail.shard].fail = ""
			if _, err := st.Operate(ctx, name, p, a, t0); err != nil {
				t.Fatal(err)
			}
			l, err := st.Stats(ctx, name, p, t0)
			if err != nil {
				t.Fatal(err)
			}
			if l.Admitted != 2 {
				t.Errorf("admit 2, failed once and retried, called %d", l.Admitted)
			}
		})
	}
	t.Run("a live capacity below the shard count leaves no shard without a place", func(t *testing.T) {
		// Defect 5: shard 1's share of a capacity of 1 was 0, and its
		// visitors waited for good.
		name, p, st, _ := room(t, 2, 2, nil)
		if _, err := st.Operate(ctx, name, p, store.Action{Op: string(store.Resume), ID: name + "-resume"}, t0); err != nil {
			t.Fatal(err)
		}
		c := 1
		if _, err := st.Operate(ctx, name, p, store.Action{Op: store.OpLimits, Set: store.Overrides{Capacity: &c}, ID: name + "-limits"}, t0); err != nil {
			t.Logf("refused: %v", err)
			return
		}
		pl, err := st.Join(ctx, name, p, store.Arrival{ID: name + "-1", Shard: 1}, t0)
		if err != nil {
			t.Fatal(err)
		}
		if pl.Outcome != store.Admitted {
			t.Errorf("capacity 1 accepted for 2 shards: the first arrival, in shard 1 of an empty room, %v", outcomeName(pl.Outcome))
		}
	})
}

// TestDoorDefects replays, as named sequences, what TestDoor found against
// the door before issue 34 (defects 1 and 2).
func TestDoorDefects(t *testing.T) {
	e := newEnv(t)
	keys, err := queue.ParseKeySet("k1:" + base64.StdEncoding.EncodeToString([]byte(strings.Repeat("k", 32))))
	if err != nil {
		t.Fatal(err)
	}
	rooms := 0
	door := func(t *testing.T) (*queue.Room, *queue.Gate, *pop, *doorStore) {
		rooms++
		room, err := queue.ParseRoom(fmt.Sprint("named-door", rooms), []byte(doorRoom))
		if err != nil {
			t.Fatal(err)
		}
		now := t0
		line := &pop{now: &now}
		st := &doorStore{Store: e.st, tickets: map[string]int64{}}
		return room, &queue.Gate{Store: st, Keys: keys, Joins: &recentJoins{now: &now, at: map[string][]time.Time{}}, Snapshots: line}, line, st
	}
	const client = "192.0.2.1"
	t.Run("a pass handed out while the line was calm pays the rung in force at the join", func(t *testing.T) {
		// Defect 1: the pass's own rung (none) was all the join asked.
		room, g, line, st := door(t)
		d := g.Decide(ctx, room, queue.Visitor{Client: client, Now: t0})
		line.pressure = 8 // the rush: rung 5
		st.joined = nil
		j := g.Decide(ctx, room, queue.Visitor{Passes: []string{d.Pass}, Client: client, Now: t0})
		if len(st.joined) > 0 {
			t.Errorf("the calm pass joined at rung 5 with no work: %v (%s)", j.Action, j.Why)
		}
	})
	t.Run("a solution buys one place: the pass whose place is gone takes no second", func(t *testing.T) {
		// Defect 2: join, called, leave, join again with the same pass.
		room, g, _, st := door(t)
		pass := g.Decide(ctx, room, queue.Visitor{Client: client, Now: t0}).Pass
		in := g.Decide(ctx, room, queue.Visitor{Passes: []string{pass}, Client: client, Now: t0})
		if in.Action != queue.Admit {
			t.Fatalf("the first join: %v (%s), want admitted to an empty room", in.Action, in.Why)
		}
		if _, err := g.End(ctx, room, queue.Visitor{Passes: []string{in.Pass}, Client: client, Now: t0}); err != nil {
			t.Fatal(err)
		}
		again := g.Decide(ctx, room, queue.Visitor{Passes: []string{pass}, Client: client, Now: t0.Add(time.Second)})
		if st.breach != "" {
			t.Errorf("%s: %v (%s)", st.breach, again.Action, again.Why)
		}
	})
}
