package shard

import (
	"context"
	"errors"
	"fmt"
	"math/rand/v2"
	"strings"
	"testing"
	"time"

	"github.com/edgequeue/waitingroom/settings"
	"github.com/edgequeue/waitingroom/store"
)

func TestName(t *testing.T) {
	for _, tc := range []struct {
		room string
		i    int
		want string
	}{{"shop", 0, "shop"}, {"shop", 1, "shop#1"}, {"big-sale_2", 63, "big-sale_2#63"}} {
		if got := Name(tc.room, tc.i); got != tc.want {
			t.Errorf("Name(%q, %d) = %q, want %q", tc.room, tc.i, got, tc.want)
		}
	}
}

func TestOf(t *testing.T) {
	for _, tc := range []struct {
		id     string
		shards int
		want   int
	}{
		{"anything", 0, 0}, {"anything", 1, 0},
		// FNV-1a of "a" is 0xe40c292c, of "" the offset basis 0x811c9dc5.
		{"a", 4, 0xe40c292c % 4}, {"a", 7, 0xe40c292c % 7}, {"", 3, 0x811c9dc5 % 3},
	} {
		if got := Of(tc.id, tc.shards); got != tc.want {
			t.Errorf("Of(%q, %d) = %d, want %d", tc.id, tc.shards, got, tc.want)
		}
	}
	// Arrival ids are random hex: they spread evenly.
	const n, k = 40000, 8
	var counts [k]int
	for i := 0; i < n; i++ {
		counts[Of(fmt.Sprintf("%032x", uint64(i)*0x9e3779b97f4a7c15), k)]++
	}
	for i, c := range counts {
		if c < n/k*9/10 || c > n/k*11/10 {
			t.Errorf("shard %d got %d of %d ids, want about %d: %v", i, c, n, n/k, counts)
		}
	}
}

func TestSplit(t *testing.T) {
	for _, tc := range []struct {
		n      int64
		shards int
		want   []int64
	}{
		{10, 1, []int64{10}},
		{10, 0, []int64{10}},
		{10, 4, []int64{3, 3, 2, 2}},
		{3, 4, []int64{1, 1, 1, 0}},
		{8, 4, []int64{2, 2, 2, 2}},
		{0, 3, []int64{0, 0, 0}},
	} {
		var got []int64
		for i := range tc.want {
			got = append(got, Split(tc.n, i, tc.shards))
		}
		if fmt.Sprint(got) != fmt.Sprint(tc.want) {
			t.Errorf("Split(%d) over %d = %v, want %v", tc.n, tc.shards, got, tc.want)
		}
	}
}

// recorder is a backend that records what it is asked, answering each
// call with a line that says which room it was.
type recorder struct {
	name  string
	calls *[]string
	down  bool
	// waiting is how many wait in each shard (admit calls no more); nil
	// is as many as asked for.
	waiting []int64
}

// called is how many of n shard i of p calls in.
func (r recorder) called(p store.Policy, n int64) int64 {
	if r.waiting == nil {
		return n
	}
	return min(n, r.waiting[p.Shard])
}

func (r recorder) note(op, room string, p store.Policy, extra string) error {
	*r.calls = append(*r.calls, fmt.Sprintf("%s %s %s %d/%d%s", r.name, op, room, p.Shard, p.Shards, extra))
	if r.down {
		return fmt.Errorf("%s: %w", r.name, store.ErrUnavailable)
	}
	return nil
}

// line answers with counters that tell the shards apart.
func line(p store.Policy) store.Line {
	i := int64(p.Shard)
	return store.Line{Epoch: 100 + i, Issued: 10 + i, Admitted: 5 + i, Active: 1, Called: 2, Recent: 3,
		RecentSince: time.Unix(1000-i, 0), Paused: i == 0}
}

func (r recorder) Join(_ context.Context, room string, p store.Policy, a store.Arrival, _ time.Time) (store.Place, error) {
	return store.Place{Ticket: 1, Line: line(p)}, r.note("join", room, p, " "+a.ID)
}
func (r recorder) JoinPriority(_ context.Context, room string, p store.Policy, arrival string, inv store.Invite, _ time.Time) (store.Place, error) {
	return store.Place{Ticket: -1, Line: line(p)}, r.note("vip", room, p, " "+inv.ID)
}
func (r recorder) Poll(_ context.Context, room string, p store.Policy, tk store.Ticket, _ time.Time) (store.Place, error) {
	return store.Place{Ticket: tk.Number, Line: line(p)}, r.note("poll", room, p, "")
}
func (r recorder) Renew(_ context.Context, room string, p store.Policy, s store.SessionRef, _ time.Time) (bool, store.Line, error) {
	return true, line(p), r.note("renew", room, p, " "+s.ID)
}
func (r recorder) End(_ context.Context, room string, p store.Policy, s store.SessionRef, _ time.Time) (store.Line, error) {
	return line(p), r.note("end", room, p, " "+s.ID)
}
func (r recorder) Admit(_ context.Context, room string, p store.Policy, n int64, _ time.Time) (store.Line, error) {
	l := line(p)
	l.CalledNow = r.called(p, n)
	return l, r.note("admit", room, p, fmt.Sprintf(" n=%d", n))
}
func (r recorder) Control(_ context.Context, room string, p store.Policy, c store.Control, _ time.Time) (store.Line, error) {
	return line(p), r.note(string(c), room, p, "")
}
func (r recorder) Operate(_ context.Context, room string, p store.Policy, a store.Action, _ time.Time) (store.Line, error) {
	l := line(p)
	l.CalledNow = r.called(p, a.N)
	return l, r.note("operate", room, p, fmt.Sprintf(" %s n=%d%s", a.Op, a.N, strings.Repeat(" id="+a.ID, min(len(a.ID), 1))))
}
func (r recorder) Stats(_ context.Context, room string, p store.Policy, _ time.Time) (store.Line, error) {
	return line(p), r.note("stats", room, p, "")
}
func (r recorder) History(_ context.Context, room string, _, _ time.Time) ([]store.Minute, error) {
	i := int64(0)
	if _, n, ok := strings.Cut(room, Separator); ok {
		fmt.Sscan(n, &i)
	}
	start := time.Unix(600, 0)
	ms := []store.Minute{{Start: start.Add(time.Duration(i) * time.Minute), Epoch: 100 + i, Issued: 1, Joins: 1, Admissions: 1,
		IssuedMoved: [2]time.Duration{time.Duration(i) * time.Second, 50 * time.Second}, AdmittedMoved: [2]time.Duration{-1, -1}}}
	return ms, r.note("history", room, store.Policy{}, "")
}
func (r recorder) Audit(_ context.Context, reads []store.AuditRead) ([][]store.AuditEntry, error) {
	return make([][]store.AuditEntry, len(reads)), r.note("audit", reads[0].Room, store.Policy{}, "")
}

func TestRouting(t *testing.T) {
	ctx, now := context.Background(), time.Unix(2000, 0)
	arrival := "0123456789abcdef"
	four := store.Policy{Shards: 4}
	tests := []struct {
		name     string
		backends int
		waiting  []int64
		call     func(s *Store) (any, error)
		want     []string
	}{
		{"unsharded join keeps the room's name", 1, nil, func(s *Store) (any, error) {
			return s.Join(ctx, "shop", store.Policy{}, store.Arrival{ID: arrival}, now)
		}, []string{"db0 join shop 0/1 " + arrival}},
		{"join goes to the shard the arrival names", 2, nil, func(s *Store) (any, error) {
			pl, err := s.Join(ctx, "shop", four, store.Arrival{ID: arrival, Shard: 3}, now)
			return pl.Shard, err
		}, []string{"db1 join shop#3 3/4 " + arrival}},
		{"a join to a shard the room does not have fails, with no call", 1, nil, func(s *Store) (any, error) {
			_, err := s.Join(ctx, "shop", four, store.Arrival{ID: arrival, Shard: 4}, now)
			if errors.Is(err, ErrNoShard) {
				err = nil
			}
			return nil, err
		}, nil},
		{"an invite's arrivals go to the invite's shard", 1, nil, func(s *Store) (any, error) {
			pl, err := s.JoinPriority(ctx, "shop", four, arrival, store.Invite{ID: "inv7"}, now)
			return pl.Shard, err
		}, []string{fmt.Sprintf("db0 vip %s %d/4 inv7", Name("shop", Of("inv7", 4)), Of("inv7", 4))}},
		{"poll goes to the ticket's shard", 4, nil, func(s *Store) (any, error) {
			pl, err := s.Poll(ctx, "shop", four, store.Ticket{Number: 3, Shard: 3}, now)
			return pl.Shard, err
		}, []string{"db3 poll shop#3 3/4"}},
		{"a ticket of a shard the room lost is lost, with no call", 1, nil, func(s *Store) (any, error) {
			pl, err := s.Poll(ctx, "shop", four, store.Ticket{Number: 3, Shard: 4}, now)
			return pl.Outcome == store.Lost, err
		}, nil},
		{"renew and end go to the session's shard", 3, nil, func(s *Store) (any, error) {
			ok, _, err := s.Renew(ctx, "shop", four, store.SessionRef{ID: "1.2", Shard: 2}, now)
			if err != nil {
				return ok, err
			}
			_, err = s.End(ctx, "shop", four, store.SessionRef{ID: "1.2", Shard: 1}, now)
			return ok, err
		}, []string{"db2 renew shop#2 2/4 1.2", "db1 end shop#1 1/4 1.2"}},
		{"a session of a lost shard is over", 1, nil, func(s *Store) (any, error) {
			ok, _, err := s.Renew(ctx, "shop", four, store.SessionRef{ID: "1.2", Shard: 9}, now)
			return ok, err
		}, nil},
		{"admit n is split", 2, nil, func(s *Store) (any, error) {
			l, err := s.Admit(ctx, "shop", four, 6, now)
			return l.Issued, err
		}, []string{"db0 admit shop 0/4 n=2", "db1 admit shop#1 1/4 n=2", "db0 admit shop#2 2/4 n=1", "db1 admit shop#3 3/4 n=1"}},
		{"a shard's part is the same whatever the others call", 1, []int64{9, 0, 1, 9}, func(s *Store) (any, error) {
			l, err := s.Admit(ctx, "shop", four, 8, now)
			return l.CalledNow, err
		}, []string{"db0 admit shop 0/4 n=2", "db0 admit shop#1 1/4 n=2", "db0 admit shop#2 2/4 n=2", "db0 admit shop#3 3/4 n=2"}},
		{"operate admit reads a shard whose part is none", 1, nil, func(s *Store) (any, error) {
			_, err := s.Operate(ctx, "shop", four, store.Action{Op: store.OpAdmit, N: 2}, now)
			return nil, err
		}, []string{"db0 operate shop 0/4 admit n=1", "db0 operate shop#1 1/4 admit n=1", "db0 stats shop#2 2/4", "db0 stats shop#3 3/4"}},
		{"control reaches every shard", 1, nil, func(s *Store) (any, error) {
			_, err := s.Control(ctx, "shop", store.Policy{Shards: 2}, store.Pause, now)
			return nil, err
		}, []string{"db0 pause shop 0/2", "db0 pause shop#1 1/2"}},
		{"stats sum the shards", 1, nil, func(s *Store) (any, error) {
			l, err := s.Stats(ctx, "shop", four, now)
			return fmt.Sprintf("epoch %d issued %d admitted %d active %d recent %d since %d paused %v",
				l.Epoch, l.Issued, l.Admitted, l.Active, l.Recent, l.RecentSince.Unix(), l.Paused), err
		}, []string{"db0 stats shop 0/4", "db0 stats shop#1 1/4", "db0 stats shop#2 2/4", "db0 stats shop#3 3/4"}},
		{"a shard's stats are that shard's alone", 2, nil, func(s *Store) (any, error) {
			l, err := s.ShardStats(ctx, "shop", four, 1, now)
			return l.Issued, err
		}, []string{"db1 stats shop#1 1/4"}},
		{"history sums minute by minute", 2, nil, func(s *Store) (any, error) {
			ms, err := s.History(ctx, "shop", now.Add(-time.Hour), now)
			var got []string
			for _, m := range ms {
				got = append(got, fmt.Sprintf("%d:e%d,i%d,j%d,%v", m.Start.Unix(), m.Epoch, m.Issued, m.Joins, m.IssuedMoved))
			}
			return got, err
		}, []string{"db0 history shop 0/0", "db1 history shop#1 0/0"}},
		{"the audit log is shard 0's", 2, nil, func(s *Store) (any, error) {
			_, err := s.Audit(ctx, []store.AuditRead{{Room: "shop", Limit: 5}})
			return nil, err
		}, []string{"db0 audit shop 0/0"}},
	}
	answers := map[string]string{
		"join goes to the shard the arrival names":                "3",
		"an invite's arrivals go to the invite's shard":           fmt.Sprint(Of("inv7", 4)),
		"poll goes to the ticket's shard":                         "3",
		"a ticket of a shard the room lost is lost, with no call": "true",
		"a session of a lost shard is over":                       "false",
		"admit n is split":                                        fmt.Sprint(10 + 11 + 12 + 13),
		// 2 + 0 + 1 + 2: a part is fixed by n and the shard alone, so that
		// a retry gives a shard that applied its part no other.
		"a shard's part is the same whatever the others call": "5",
		"stats sum the shards":                                "epoch 100 issued 46 admitted 26 active 4 recent 12 since 997 paused true",
		"a shard's stats are that shard's alone":              "11",
		// Shard 0's minute at 600 s, shard 1's at 660 s (epoch taken from
		// the minute before), on a room History is told has two shards:
		// at 660 s shard 0's line stands as at 600 s (issued 1, no join).
		"history sums minute by minute": "[600:e100,i1,j1,[0s 50s] 660:e100,i2,j1,[1s 50s]]",
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			var calls []string
			s := &Store{Shards: func(string) int { return 2 }}
			for i := 0; i < tc.backends; i++ {
				s.Backends = append(s.Backends, recorder{name: fmt.Sprintf("db%d", i), calls: &calls, waiting: tc.waiting})
			}
			got, err := tc.call(s)
			if err != nil {
				t.Fatal(err)
			}
			if fmt.Sprint(calls) != fmt.Sprint(tc.want) {
				t.Errorf("calls\n%q\nwant\n%q", calls, tc.want)
			}
			if want, ok := answers[tc.name]; ok && fmt.Sprint(got) != want {
				t.Errorf("answer %v, want %s", got, want)
			}
		})
	}
}

// TestShardDown: an unreachable shard fails the room's stats, naming the
// shard, and a visitor's call to another shard still works.
func TestShardDown(t *testing.T) {
	ctx, now := context.Background(), time.Unix(2000, 0)
	var calls []string
	s := &Store{Backends: []Backend{recorder{name: "db0", calls: &calls}, recorder{name: "db1", calls: &calls, down: true}}}
	p := store.Policy{Shards: 4}
	_, err := s.Stats(ctx, "shop", p, now)
	if !errors.Is(err, store.ErrUnavailable) || !strings.Contains(err.Error(), "shard 1 of 4") {
		t.Fatalf("stats with shard 1 down: %v, want ErrUnavailable naming shard 1 of 4", err)
	}
	if _, err := s.Poll(ctx, "shop", p, store.Ticket{Number: 1, Shard: 2}, now); err != nil {
		t.Fatalf("poll on shard 2 (up): %v", err)
	}
	if _, err := s.Poll(ctx, "shop", p, store.Ticket{Number: 1, Shard: 3}, now); !strings.Contains(fmt.Sprint(err), "shard 3 of 4") {
		t.Fatalf("poll on shard 3 (down): %v, want an error naming it", err)
	}
}

// TestActionOnShardDown: an action is tried on every shard though one
// fails, the error names the shards that hold it and those that do not,
// and a retry carries the same id and the same parts to every shard (the
// script of a shard that holds it applies nothing: see the integration
// suite's TestActionRetry).
func TestActionOnShardDown(t *testing.T) {
	ctx, now := context.Background(), time.Unix(2000, 0)
	p := store.Policy{Shards: 4}
	for _, tc := range []struct {
		name string
		a    store.Action
		want []string
	}{
		{"pause", store.Action{Op: string(store.Pause), ID: "p1"}, []string{
			"db0 operate shop 0/4 pause n=0 id=p1", "db1 operate shop#1 1/4 pause n=0 id=p1",
			"db0 operate shop#2 2/4 pause n=0 id=p1", "db1 operate shop#3 3/4 pause n=0 id=p1"}},
		{"admit", store.Action{Op: store.OpAdmit, N: 6, ID: "a1"}, []string{
			"db0 operate shop 0/4 admit n=2 id=a1", "db1 operate shop#1 1/4 admit n=2 id=a1",
			"db0 operate shop#2 2/4 admit n=1 id=a1", "db1 operate shop#3 3/4 admit n=1 id=a1"}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			for attempt := range 2 {
				var calls []string
				s := &Store{Backends: []Backend{recorder{name: "db0", calls: &calls}, recorder{name: "db1", calls: &calls, down: attempt == 0}}}
				_, err := s.Operate(ctx, "shop", p, tc.a, now)
				if fmt.Sprint(calls) != fmt.Sprint(tc.want) {
					t.Errorf("attempt %d: calls\n%q\nwant\n%q", attempt, calls, tc.want)
				}
				if attempt == 1 {
					if err != nil {
						t.Errorf("the retry: %v", err)
					}
					continue
				}
				var partial *PartialError
				if !errors.As(err, &partial) || !errors.Is(err, store.ErrUnavailable) {
					t.Fatalf("%s with db1 down: %v, want a *PartialError wrapping ErrUnavailable", tc.a.Op, err)
				}
				if fmt.Sprint(partial.Done, partial.Failed) != "[0 2] [1 3]" {
					t.Errorf("done %v, failed %v; want [0 2] [1 3]", partial.Done, partial.Failed)
				}
				if want := "room shop: " + tc.a.Op + " holds on shards 0, 2 of 4, not on shards 1, 3"; !strings.HasPrefix(err.Error(), want) {
					t.Errorf("error %q, want it to start %q", err, want)
				}
			}
		})
	}
}

// TestMaxShardsIsTheSetting: the bound here is the room setting's.
func TestMaxShardsIsTheSetting(t *testing.T) {
	if s := settings.Get(settings.Room[:], "shards"); s.Max != MaxShards {
		t.Fatalf("the setting shards goes to %g, MaxShards is %d", s.Max, MaxShards)
	}
}

func TestChoices(t *testing.T) {
	for _, tc := range []struct {
		id     string
		shards int
		want   [2]int
	}{
		{"anything", 0, [2]int{0, 0}}, {"anything", 1, [2]int{0, 0}},
		// FNV-1a of "a" is 0xe40c292c, 4 mod 8 and 0 mod 4; its high
		// bits 0xe40c are 0 mod 7 and mod 3: the second is the first + 1.
		{"a", 8, [2]int{4, 5}},
		{"a", 4, [2]int{0, 1}},
		// Mod 2 the second is the other shard, always.
		{"a", 2, [2]int{0, 1}},
	} {
		if got := Choices(tc.id, tc.shards); got != tc.want {
			t.Errorf("Choices(%q, %d) = %v, want %v", tc.id, tc.shards, got, tc.want)
		}
	}
	// The first is the hash's, the second another; every ordered pair
	// is as likely as any other.
	const n, k = 56000, 8
	var pairs [k][k]int
	for i := 0; i < n; i++ {
		id := fmt.Sprintf("%032x", uint64(i)*0x9e3779b97f4a7c15)
		c := Choices(id, k)
		if c[0] != Of(id, k) || c[1] == c[0] || c[1] < 0 || c[1] >= k {
			t.Fatalf("Choices(%q, %d) = %v: the first is Of's (%d), the second another shard", id, k, c, Of(id, k))
		}
		pairs[c[0]][c[1]]++
	}
	for a := range pairs {
		for b, got := range pairs[a] {
			if want := n / (k * (k - 1)); a != b && (got < want*8/10 || got > want*12/10) {
				t.Errorf("pair %d, %d: %d of %d ids, want about %d", a, b, got, n, want)
			}
		}
	}
}

// TestIdleShare measures what a room's split leaves idle: as many
// arrivals as places, each sent to a shard, and the places of the shards
// that got fewer than their share, idle while the rest wait in another
// shard, as a share of the room's. By the hash, by the shorter of the two
// choices seen as they stand (every arrival sees the counts the ones
// before it left), and seen stale: as they stood up to a batch of
// arrivals before (a POP's snapshot, a second old, in a crowd that joins
// a batch a second). The ids are seeded: the figures are the same at
// every run. `go test -run TestIdleShare -v ./store/shard` prints them.
func TestIdleShare(t *testing.T) {
	const trials = 2000
	for _, tc := range []struct {
		capacity, shards int
		// most is the highest share of idle places two fresh choices may
		// leave.
		most float64
	}{
		{8, 8, 0.25}, {16, 8, 0.15}, {100, 4, 0.01}, {800, 8, 0.01}, {8000, 8, 0.01},
	} {
		rng := rand.New(rand.NewPCG(uint64(tc.capacity), uint64(tc.shards)))
		var hash, fresh, stale float64
		for range trials / max(1, tc.capacity/100) {
			ids := make([]string, tc.capacity)
			for i := range ids {
				ids[i] = fmt.Sprintf("%016x%016x", rng.Uint64(), rng.Uint64())
			}
			hash += idle(ids, tc.shards, -1)
			fresh += idle(ids, tc.shards, 1)
			stale += idle(ids, tc.shards, max(tc.capacity/20, 1))
		}
		n := float64(trials / max(1, tc.capacity/100))
		hash, fresh, stale = hash/n, fresh/n, stale/n
		t.Logf("capacity %d at K %d: idle %.1f%% by the hash, %.2f%% by two choices, %.2f%% by two choices a batch of %d stale",
			tc.capacity, tc.shards, 100*hash, 100*fresh, 100*stale, max(tc.capacity/20, 1))
		if fresh > tc.most || fresh >= hash || stale >= hash {
			t.Errorf("capacity %d at K %d: idle %.2f%% by two choices (%.2f%% stale), %.2f%% by the hash; want at most %.0f%%",
				tc.capacity, tc.shards, 100*fresh, 100*stale, 100*hash, 100*tc.most)
		}
	}
}

// idle sends ids, in turn, to the shards: by the hash (batch < 0), else
// to the shorter of their choices as the counts stood at the last batch
// boundary; and reports the share of the places left idle.
func idle(ids []string, shards, batch int) float64 {
	counts, seen := make([]int64, shards), make([]int64, shards)
	for i, id := range ids {
		if batch > 0 && i%batch == 0 {
			copy(seen, counts)
		}
		c := Choices(id, shards)
		to := c[0]
		if batch > 0 && seen[c[1]] < seen[c[0]] {
			to = c[1]
		}
		counts[to]++
	}
	var empty int64
	for i, n := range counts {
		empty += max(Split(int64(len(ids)), i, shards)-n, 0)
	}
	return float64(empty) / float64(len(ids))
}
