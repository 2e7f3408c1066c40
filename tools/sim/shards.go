package sim

import (
	"slices"
	"sort"
	"time"

	"github.com/edgequeue/waitingroom/queue"
	"github.com/edgequeue/waitingroom/store/shard"
)

// Sharded is a policy whose room runs as several lines (Ours with a
// room's shards setting), which states how far it keeps arrival order
// across them.
type Sharded interface {
	// Shards is how many lines the room runs as.
	Shards() int
	// OrderBound is the most a visitor may be admitted after one who
	// arrived later, in another shard, when one shard had received at
	// most imbalance arrivals beyond another's, in an event cfg.
	OrderBound(imbalance int, cfg Config) time.Duration
}

// OrderBound implements Sharded with the bound docs/rooms.md states
// ("Sharded rooms") and the end-to-end suite's sharded-room test checks:
// (imbalance + a shard's burst) ÷ a shard's pace, plus, in a room with a
// capacity, the longest a visitor holds a place (a shard that has just
// filled frees none before its first visitor leaves, while a shard with
// fewer arrivals still lets newcomers in), plus one poll (the queue page's
// refresh). A shard's pace is the slower of its share of the rate and its
// share of the places over that hold: the longest stay, then the
// inactivity timeout of a visitor who goes without a beacon.
func (o *Ours) OrderBound(imbalance int, cfg Config) time.Duration {
	return OrderBound(o.Room, o.Shards(), imbalance, cfg)
}

// OrderBound is that bound for room run as k shards.
func OrderBound(r *queue.Room, k, imbalance int, cfg Config) time.Duration {
	var pace float64 // admissions a second
	if r.NewUsersPerMinute > 0 {
		pace = r.NewUsersPerMinute / 60 / float64(k)
	}
	var hold time.Duration
	if r.MaxActiveUsers > 0 {
		hold = cfg.StayMax + time.Duration(r.InactivityTimeout)*time.Second
		places := float64(shard.Split(int64(r.MaxActiveUsers), k-1, k)) / hold.Seconds()
		if pace == 0 || places < pace {
			pace = places
		}
	}
	if pace <= 0 {
		return 0
	}
	burst := max(1, shard.Split(int64(r.Burst), 0, k))
	return time.Duration((float64(imbalance)+float64(burst))/pace*float64(time.Second)) + hold + cfg.Refresh
}

// ShardFigures are a run's figures shard by shard. A policy of one line
// has one shard, the room itself.
type ShardFigures struct {
	Shards int
	// PeakPerSecond is each shard's most store calls in one second of
	// simulated time (its visitors' requests' calls).
	PeakPerSecond []int
	// Joined counts the visitors who joined each shard (at their first
	// join).
	Joined []int
	// Imbalance is the most first joins one shard had received beyond
	// another's, over every prefix of the arrivals in time order.
	Imbalance int
	// Bound is the policy's stated bound on a cross-shard inversion at
	// that imbalance (Sharded.OrderBound); 0 when it states none.
	Bound time.Duration
	// Across are the inversions between visitors of different shards,
	// Within those between visitors of the same shard.
	Across, Within Order
}

// BusiestPeak is the busiest shard's PeakPerSecond.
func (f ShardFigures) BusiestPeak() int {
	if len(f.PeakPerSecond) == 0 {
		return 0
	}
	return slices.Max(f.PeakPerSecond)
}

// Order is how far the admissions of the steady visitors (who polled
// until admitted and never lost their place) kept to arrival order, among
// a set of pairs of them. A pair is the earlier arrival a and the later b,
// at least a batch apart (arrivals closer may have reached the store at
// once, so neither came first).
type Order struct {
	// Pairs counts the pairs with a admitted more than one poll (the
	// queue page's refresh) after b.
	Pairs int64
	// Lag is the most any a was admitted after its b (0 if never), and
	// LagAt when that a arrived, into the event (the latest such a).
	Lag, LagAt time.Duration
	// Gap is the most seconds of arrival time between a and b in the
	// pairs counted.
	Gap time.Duration
}

// admission is a steady visitor's arrival and admission, and shard.
type admission struct {
	arrived, admitted time.Time
	shard             int
}

// order measures the pairs of adm within a shard and across shards, for
// shards shards: slack is one poll, simultaneous the batch.
func order(adm []admission, shards int, slack, simultaneous time.Duration) (across, within Order) {
	n := len(adm)
	if n == 0 {
		return
	}
	byArrival := slices.Clone(adm)
	sort.SliceStable(byArrival, func(i, j int) bool { return byArrival[i].arrived.Before(byArrival[j].arrived) })

	// Lag: scanning from the latest arrival, each shard's earliest
	// admission among the arrivals at least a batch after a.
	earliest := make([]time.Time, shards)
	for i, j := n-1, n; i >= 0; i-- {
		a := byArrival[i]
		for j > 0 && byArrival[j-1].arrived.Sub(a.arrived) >= simultaneous {
			j--
			b := byArrival[j]
			if e := earliest[b.shard]; e.IsZero() || b.admitted.Before(e) {
				earliest[b.shard] = b.admitted
			}
		}
		for s, e := range earliest {
			if e.IsZero() {
				continue
			}
			o := &across
			if s == a.shard {
				o = &within
			}
			if lag := a.admitted.Sub(e); lag > o.Lag {
				o.Lag, o.LagAt = lag, a.arrived.Sub(Start)
			}
		}
	}

	// Pairs: a Fenwick tree of admissions (by rank) over the later
	// arrivals, the room's and each shard's.
	times := make([]time.Time, n)
	for i, a := range byArrival {
		times[i] = a.admitted
	}
	slices.SortFunc(times, func(x, y time.Time) int { return x.Compare(y) })
	rank := func(t time.Time) int { // admissions strictly before t
		return sort.Search(n, func(k int) bool { return !times[k].Before(t) })
	}
	all := make(fenwick, n+1)
	per := make([]fenwick, shards)
	for s := range per {
		per[s] = make(fenwick, n+1)
	}
	var total, same int64
	for i, j := n-1, n; i >= 0; i-- {
		a := byArrival[i]
		for j > 0 && byArrival[j-1].arrived.Sub(a.arrived) >= simultaneous {
			j--
			r := rank(byArrival[j].admitted) + 1
			all.add(r)
			per[byArrival[j].shard].add(r)
		}
		before := rank(a.admitted.Add(-slack))
		total += all.sum(before)
		same += per[a.shard].sum(before)
	}
	across.Pairs, within.Pairs = total-same, same

	// Gap: scanning by admission, each shard's latest arrival among those
	// admitted more than a poll before a.
	byAdmission := slices.Clone(adm)
	sort.SliceStable(byAdmission, func(i, j int) bool { return byAdmission[i].admitted.Before(byAdmission[j].admitted) })
	latest := make([]time.Time, shards)
	for i, j := 0, 0; i < n; i++ {
		a := byAdmission[i]
		for j < n && a.admitted.Sub(byAdmission[j].admitted) > slack {
			b := byAdmission[j]
			if b.arrived.After(latest[b.shard]) {
				latest[b.shard] = b.arrived
			}
			j++
		}
		for s, l := range latest {
			if gap := l.Sub(a.arrived); !l.IsZero() && gap >= simultaneous {
				o := &across
				if s == a.shard {
					o = &within
				}
				o.Gap = max(o.Gap, gap)
			}
		}
	}
	return across, within
}

// fenwick counts items by rank (1-based).
type fenwick []int64

func (f fenwick) add(r int) {
	for ; r < len(f); r += r & -r {
		f[r]++
	}
}

// sum counts the items of rank 1 to r.
func (f fenwick) sum(r int) int64 {
	var n int64
	for ; r > 0; r -= r & -r {
		n += f[r]
	}
	return n
}

// imbalance is the most arrivals one shard had received beyond another's,
// over every prefix of joins in time order.
func imbalance(joins []admission, shards int) int {
	joins = slices.Clone(joins)
	sort.SliceStable(joins, func(i, j int) bool { return joins[i].arrived.Before(joins[j].arrived) })
	counts := make([]int, shards)
	worst := 0
	for _, j := range joins {
		counts[j.shard]++
		worst = max(worst, slices.Max(counts)-slices.Min(counts))
	}
	return worst
}
