package control

import (
	"context"
	"errors"
	"fmt"
	"strings"
	"testing"
	"time"

	"github.com/edgequeue/waitingroom/queue"
	"github.com/edgequeue/waitingroom/store"
	"github.com/edgequeue/waitingroom/store/shard"
)

// database is one database behind a shard.Store: it counts the store
// calls that reach it, and answers them as an empty one would. Only what
// an Operator asks of a shard.Store is answered: the visitors' calls are
// the embedded nil Store's, never made here.
type database struct {
	store.Store
	calls int
}

func (d *database) Stats(context.Context, string, store.Policy, time.Time) (store.Line, error) {
	d.calls++
	return store.Line{}, nil
}

func (d *database) Operate(context.Context, string, store.Policy, store.Action, time.Time) (store.Line, error) {
	d.calls++
	return store.Line{}, nil
}

func (d *database) History(context.Context, string, time.Time, time.Time) ([]store.Minute, error) {
	d.calls++
	return nil, nil
}

func (d *database) Audit(_ context.Context, reads []store.AuditRead) ([][]store.AuditEntry, error) {
	d.calls++
	return make([][]store.AuditEntry, len(reads)), nil
}

// sharded is an Operator over rooms run as their shards say (package
// store/shard) on n databases, and the databases, whose calls are what
// goes to the backends.
func sharded(rooms []*queue.Room, n int) (*Operator, []*database) {
	dbs := make([]*database, n)
	backends := make([]shard.Backend, n)
	for i := range dbs {
		dbs[i] = &database{}
		backends[i] = dbs[i]
	}
	o := &Operator{Rooms: rooms, Now: t0}
	o.Store = &shard.Store{Backends: backends, Shards: o.shardsOf}
	return o, dbs
}

// sent is how many store calls reached the databases.
func sent(dbs []*database) int {
	n := 0
	for _, d := range dbs {
		n += d.calls
	}
	return n
}

// shardedRoom is a room of k shards.
func shardedRoom(t *testing.T, name string, k int) *queue.Room {
	return room(t, name, fmt.Sprintf(`{"max_active_users": 100, "shards": %d}`, k))
}

// TestBudgetCountsEveryShard: what the budget counts is what reaches the
// databases, K calls for a room of K shards, and the audit log one.
func TestBudgetCountsEveryShard(t *testing.T) {
	who := store.Actor{Via: "api", Client: "ab"}
	for _, k := range []int{1, 3, 8} {
		for _, tc := range []struct {
			name string
			do   func(o *Operator) error
			cost int // in shards
		}{
			{"stats", func(o *Operator) error { _, err := o.Stats(ctx, "r"); return err }, StatsCalls},
			{"overview", func(o *Operator) error { _, _, err := o.Overview(ctx, "r", time.Hour); return err }, StatsCalls},
			{"history", func(o *Operator) error { _, err := o.History(ctx, "r", time.Hour); return err }, 1},
			{"admit", func(o *Operator) error { _, err := o.Admit(ctx, "r", 5, who); return err }, 1},
			{"pause", func(o *Operator) error { _, err := o.Control(ctx, "r", store.Pause, who); return err }, 1},
			{"limits, which reads the line first", func(o *Operator) error {
				_, err := o.SetLimits(ctx, "r", Limits{MaxActiveUsers: intp(50)}, who)
				return err
			}, 2},
			{"clear", func(o *Operator) error { _, err := o.ClearOverrides(ctx, "r", who); return err }, 1},
			{"reset", func(o *Operator) error { _, err := o.Reset(ctx, "r", "r", who); return err }, 1},
		} {
			t.Run(fmt.Sprintf("%s of %d shards", tc.name, k), func(t *testing.T) {
				o, dbs := sharded([]*queue.Room{shardedRoom(t, "r", k)}, 2)
				if err := tc.do(o); err != nil {
					t.Fatal(err)
				}
				if want := tc.cost * k; sent(dbs) != want || o.store().used != want {
					t.Errorf("%d store calls sent, %d counted; want %d", sent(dbs), o.store().used, want)
				}
			})
		}
	}
	t.Run("the audit log of sharded rooms", func(t *testing.T) {
		o, dbs := sharded([]*queue.Room{shardedRoom(t, "a", 8), shardedRoom(t, "b", 3)}, 3)
		if _, err := o.Audit(ctx, "", 20); err != nil {
			t.Fatal(err)
		}
		if sent(dbs) != 1 || o.store().used != 1 || dbs[0].calls != 1 {
			t.Errorf("%d store calls sent (%d to the first database), %d counted; want 1, to shard 0's", sent(dbs), dbs[0].calls, o.store().used)
		}
	})
}

func TestBudgetRefusesTheCallPastMaxStoreCalls(t *testing.T) {
	rooms := []*queue.Room{room(t, "shop", `{"max_active_users": 100}`), shardedRoom(t, "big", 8), shardedRoom(t, "mid", 3)}
	who := store.Actor{Via: "api", Client: "ab"}
	tests := []struct {
		name string
		// before is spent first; then last must fail with ErrBudget.
		before, last func(o *Operator) error
	}{
		{"stats of a room of 8 shards and of one of one, then one more", func(o *Operator) error {
			for _, r := range []string{"big", "shop"} {
				if _, err := o.Stats(ctx, r); err != nil {
					return err
				}
			}
			return nil
		}, func(o *Operator) error { _, err := o.Stats(ctx, "shop"); return err }},
		{"overviews, then an action", func(o *Operator) error {
			for _, r := range []string{"big", "shop"} {
				if _, _, err := o.Overview(ctx, r, time.Hour); err != nil {
					return err
				}
			}
			return nil
		}, func(o *Operator) error { _, err := o.Admit(ctx, "shop", 1, who); return err }},
		{"actions, then limits (which reads the line first)", func(o *Operator) error {
			for i := 0; i < MaxStoreCalls-1; i++ {
				if _, err := o.Control(ctx, "shop", store.Pause, who); err != nil {
					return err
				}
			}
			_, err := o.History(ctx, "shop", time.Hour)
			return err
		}, func(o *Operator) error {
			_, err := o.SetLimits(ctx, "shop", Limits{MaxActiveUsers: intp(5)}, who)
			return err
		}},
		{"fewer calls left than a room's shards: none of them is made", func(o *Operator) error {
			_, _, err := o.Overview(ctx, "big", time.Hour)
			return err
		}, func(o *Operator) error { _, err := o.Control(ctx, "mid", store.Pause, who); return err }},
		{"a history of more shards than are left", func(o *Operator) error {
			_, err := o.Stats(ctx, "big")
			return err
		}, func(o *Operator) error { _, err := o.History(ctx, "mid", time.Hour); return err }},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			o, dbs := sharded(rooms, 2)
			var logged []string
			o.Logf = func(f string, a ...any) { logged = append(logged, fmt.Sprintf(f, a...)) }
			if err := tc.before(o); err != nil {
				t.Fatalf("within the budget: %v", err)
			}
			before := sent(dbs)
			err := tc.last(o)
			if !errors.Is(err, ErrBudget) {
				t.Fatalf("after %d store calls: %v, want ErrBudget", before, err)
			}
			if sent(dbs) != before || o.store().used != before || before > MaxStoreCalls {
				t.Errorf("%d store calls sent before, %d after, %d counted; the refused call must send none", before, sent(dbs), o.store().used)
			}
			if len(logged) == 0 || !strings.Contains(logged[0], "control.MaxStoreCalls") {
				t.Errorf("logged %q, want a line naming the budget", logged)
			}
		})
	}
}

// TestPagesOfShardedRooms: pages of rooms of mixed shards, cut by Page as
// the panel and the API cut them, read every room once, each page within
// the budget and as full as it allows, and a room of 8 shards has a page.
func TestPagesOfShardedRooms(t *testing.T) {
	surfaces := []struct {
		name string
		most int
		// calls is what the page's rooms may spend; kept the rest.
		calls, kept int
		read        func(o *Operator, room string) error
	}{
		{"the API's stats", RoomsPerPage, MaxStoreCalls, 0, func(o *Operator, room string) error { _, err := o.Stats(ctx, room); return err }},
		{"the panel's overviews and audit log", 3, MaxStoreCalls - 2, 2, func(o *Operator, room string) error {
			_, _, err := o.Overview(ctx, room, MaxHistory)
			return err
		}},
	}
	for _, tc := range []struct {
		shards []int
		// The rooms of each page, the API's and the panel's.
		pages [2]string
	}{
		{[]int{1, 1, 1, 1, 1, 1, 1}, [2]string{"0 1 2 3|4 5 6", "0 1 2|3 4 5|6"}},
		{[]int{8}, [2]string{"0", "0"}},
		{[]int{8, 8, 8}, [2]string{"0|1|2", "0|1|2"}},
		{[]int{1, 8, 1, 1}, [2]string{"0 1|2 3", "0|1|2 3"}},
		{[]int{3, 3, 3, 1, 2, 8, 1, 4, 4}, [2]string{"0 1 2|3 4|5 6|7 8", "0 1|2 3 4|5|6 7|8"}},
		{[]int{7, 1, 8, 2, 2, 2, 2, 5}, [2]string{"0 1|2|3 4 5 6|7", "0 1|2|3 4 5|6 7"}},
	} {
		for j, s := range surfaces {
			t.Run(fmt.Sprintf("%s, shards %v", s.name, tc.shards), func(t *testing.T) {
				var rooms []*queue.Room
				for i, k := range tc.shards {
					rooms = append(rooms, shardedRoom(t, fmt.Sprintf("r%d", i), k))
				}
				var pages []string
				for from := 0; from < len(rooms); {
					to := Page(rooms, from, s.most, s.calls)
					if to <= from || to > len(rooms) {
						t.Fatalf("the page from room %d ends at %d", from, to)
					}
					o, dbs := sharded(rooms, 3)
					var names []string
					for _, r := range rooms[from:to] {
						if err := s.read(o, r.Name); err != nil {
							t.Fatalf("rooms %d to %d: %v", from, to-1, err)
						}
						names = append(names, strings.TrimPrefix(r.Name, "r"))
					}
					if s.kept > 0 {
						if _, err := o.Audit(ctx, "", 20); err != nil {
							t.Fatalf("rooms %d to %d, then the audit log: %v", from, to-1, err)
						}
					}
					if sent(dbs) > MaxStoreCalls || sent(dbs) > s.calls+s.kept {
						t.Errorf("rooms %d to %d: %d store calls sent, more than %d", from, to-1, sent(dbs), s.calls+s.kept)
					}
					// Full: the next room would pass the calls, or the most rooms.
					if to < len(rooms) && to-from < s.most && sent(dbs)-s.kept+StatsCost(rooms[to]) <= s.calls {
						t.Errorf("rooms %d to %d leave room for room %d", from, to-1, to)
					}
					pages = append(pages, strings.Join(names, " "))
					from = to
				}
				var all []string
				for _, p := range pages {
					all = append(all, strings.Fields(p)...)
				}
				if len(all) != len(rooms) {
					t.Errorf("pages %q: %d rooms read, want each of %d once", pages, len(all), len(rooms))
				}
				if strings.Join(pages, "|") != tc.pages[j] {
					t.Errorf("pages %q, want %s", pages, tc.pages[j])
				}
			})
		}
	}
}
