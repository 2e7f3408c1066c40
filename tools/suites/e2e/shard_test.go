package e2e

import (
	"context"
	"fmt"
	"net/http"
	"sync"
	"testing"
	"time"

	"github.com/edgequeue/waitingroom/queue"
	"github.com/edgequeue/waitingroom/store/shard"
)

// shardedRoom is a room of four shards on the one local database: 2
// visitors a second (each shard half a visitor a second) and 12 places
// (3 a shard); a session nobody renews ends 10 s after its last request.
const shardedRoom = `{"paths":["/"],"new_users_per_minute":120,"burst":4,"max_active_users":12,"shards":4,` +
	`"refresh":2,"queue_timeout":300,"claim_window":3600,"inactivity_timeout":10,"session_duration":10,"joins_per_ip_per_minute":0}`

// TestShardedRoomEndToEnd runs a room of four shards through the real
// wasm: 60 visitors arrive, spread over every shard by their arrival, and
// poll until admitted. At every round, what each shard holds (read from
// the database) stays within its share of the capacity, and the room
// within its capacity.
//
// Order: each shard calls its own line in arrival order at its own pace,
// so across shards a visitor may be admitted after one who arrived later,
// by at most the arrival imbalance between the shards (the most arrivals
// one shard took beyond another's, over any prefix of the arrivals) plus
// a shard's burst, over a shard's pace (its share of the rate, or of the
// places over how long each is held, whichever is slower), plus how late
// a poll sees the call (one round of polls). The test states that bound
// from the arrivals it made, and fails if any inversion exceeds it.
func TestShardedRoomEndToEnd(t *testing.T) {
	e := startRoom(t, loadTimeout, shardedRoom)
	r, err := queue.ParseRoom("shop", []byte(shardedRoom))
	if err != nil {
		t.Fatal(err)
	}
	db := e.stack.Store()
	// held checks each shard's line against its share, and the room's.
	held := func(when string) {
		t.Helper()
		var sum int64
		for i := 0; i < r.Shards; i++ {
			p := r.Policy(time.Now())
			p.Shard = i
			l, err := db.Stats(context.Background(), shard.Name("shop", i), p, time.Now())
			if err != nil {
				t.Fatal(err)
			}
			if share := shard.Split(int64(r.MaxActiveUsers), i, r.Shards); l.Active+l.Called > share {
				t.Fatalf("%s: shard %d holds %d+%d, over its share %d", when, i, l.Active, l.Called, share)
			}
			sum += l.Active + l.Called
		}
		if sum > int64(r.MaxActiveUsers) {
			t.Fatalf("%s: the shards hold %d, over the room's %d", when, sum, r.MaxActiveUsers)
		}
	}

	const n = 60
	visitors := make([]*visitor, n)
	shardOf := make([]int, n)
	arrived := make([]time.Time, n)
	admitted := make([]time.Time, n)
	for i := range visitors {
		v := &visitor{e: e}
		visitors[i] = v
		arrived[i] = time.Now()
		a := v.get("/", "Accept", "application/json")
		for tries := 1; a.status == http.StatusServiceUnavailable && tries < 20; tries++ {
			a = v.get("/", "Accept", "application/json")
		}
		p, err := e.keys.Verify("shop", v.cookie, time.Now())
		if err != nil {
			t.Fatalf("visitor %d: %d %s: %v", i, a.status, a.body, err)
		}
		shardOf[i] = p.Shard
		if p.Kind == queue.Session {
			admitted[i] = time.Now()
		}
	}
	perShard := make([]int, r.Shards)
	for _, s := range shardOf {
		perShard[s]++
	}
	for i, c := range perShard {
		if c == 0 {
			t.Fatalf("shard %d took none of %d arrivals: %v", i, n, perShard)
		}
	}
	held("after the arrivals")

	var wg sync.WaitGroup
	sem := make(chan struct{}, 8)
	var longestRound time.Duration
	deadline := time.Now().Add(3 * time.Minute)
	for round := 1; ; round++ {
		began := time.Now()
		left := 0
		for i, v := range visitors {
			if !admitted[i].IsZero() {
				continue
			}
			left++
			wg.Add(1)
			go func(i int, v *visitor) {
				defer wg.Done()
				sem <- struct{}{}
				defer func() { <-sem }()
				if p := v.poll(); p.Status == "admitted" {
					admitted[i] = time.Now()
				}
			}(i, v)
		}
		wg.Wait()
		longestRound = max(longestRound, time.Since(began))
		held(fmt.Sprintf("round %d", round))
		if left == 0 {
			break
		}
		if time.Now().After(deadline) {
			t.Fatalf("%d of %d visitors still wait after 3 minutes", left, n)
		}
		time.Sleep(250 * time.Millisecond)
	}

	// The bound, from the arrivals made: the largest imbalance between two
	// shards' arrivals over any prefix, plus a shard's burst, over a
	// shard's pace, plus how long a place is held (a shard that has just
	// filled frees none before its first visitor leaves, while another
	// still lets newcomers in), plus a round of polls. A shard's pace is
	// its share of the rate, or, when its places are full, its share of
	// the places over how long each is held: from the call to the claim (a
	// round at most) and then the inactivity timeout, as nobody here
	// renews.
	hold := time.Duration(r.InactivityTimeout)*time.Second + longestRound
	shardRate := min(r.NewUsersPerMinute/60/float64(r.Shards),
		float64(shard.Split(int64(r.MaxActiveUsers), r.Shards-1, r.Shards))/hold.Seconds()) // per second
	counts := make([]int, r.Shards)
	imbalance := 0
	for i := range visitors {
		counts[shardOf[i]]++
		lo, hi := counts[0], counts[0]
		for _, c := range counts {
			lo, hi = min(lo, c), max(hi, c)
		}
		imbalance = max(imbalance, hi-lo)
	}
	burst := float64(shard.Split(int64(r.Burst), 0, r.Shards))
	bound := time.Duration((float64(imbalance)+burst)/shardRate*float64(time.Second)) + hold + longestRound
	var worst time.Duration
	for a := range visitors {
		for b := a + 1; b < n; b++ {
			if lag := admitted[a].Sub(admitted[b]); lag > worst {
				worst = lag
			}
		}
	}
	t.Logf("arrivals per shard %v, largest imbalance %d; a shard's pace %.3f/s; longest round %v; worst inversion %v, bound %v",
		perShard, imbalance, shardRate, longestRound.Round(time.Millisecond), worst.Round(time.Millisecond), bound.Round(time.Millisecond))
	if worst > bound {
		t.Fatalf("a visitor was admitted %v after one who arrived later, beyond the bound %v", worst, bound)
	}
	// Within a shard, arrival order holds to a round of polls.
	for a := range visitors {
		for b := a + 1; b < n; b++ {
			if shardOf[a] == shardOf[b] && admitted[a].Sub(admitted[b]) > longestRound {
				t.Fatalf("in shard %d, visitor %d was admitted %v after visitor %d, who arrived later", shardOf[a], a, admitted[a].Sub(admitted[b]), b)
			}
		}
	}
	// The room's line, summed over the shards, issued every arrival once.
	l, err := (&shard.Store{Backends: []shard.Backend{db}}).Stats(context.Background(), "shop", r.Policy(time.Now()), time.Now())
	if err != nil {
		t.Fatal(err)
	}
	if l.Issued != n {
		t.Fatalf("the shards issued %d tickets for %d arrivals", l.Issued, n)
	}
}
