package e2e

import (
	"context"
	"fmt"
	"net/http"
	"net/url"
	"regexp"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/edgequeue/waitingroom/queue"
	"github.com/edgequeue/waitingroom/store"
	"github.com/edgequeue/waitingroom/store/shard"
	"github.com/edgequeue/waitingroom/tools/devstack"
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

// TestArrivalsGoToTheShorterLine: through the real wasm, an arrival is
// sent to the shorter of its two shards' lines as the POP's snapshots
// show them, its arrival pass records which, its join goes there, and a
// replay of the same arrival pass finds the ticket it took.
//
// Shards 0 and 1 are seeded with 30 waiting each, shards 2 and 3 with one
// (each shard's one place taken), and a poll of a waiting ticket in each
// shard fills the POP's snapshot of it (for 10 s): then an arrival whose
// two shards are a long and a short line goes to the short one, and one
// whose two are alike to the first, the hash's.
func TestArrivalsGoToTheShorterLine(t *testing.T) {
	const room = `{"paths":["/"],"max_active_users":4,"shards":4,"snapshot_ttl":10,"refresh":2,"queue_timeout":300,` +
		`"claim_window":3600,"inactivity_timeout":600,"session_duration":600,"joins_per_ip_per_minute":0}`
	e := startRoom(t, loadTimeout, room)
	r, err := queue.ParseRoom("shop", []byte(room))
	if err != nil {
		t.Fatal(err)
	}
	db := e.stack.Store()
	// The binding of this test's client, which a pass must carry.
	newcomer := &visitor{e: e}
	newcomer.do1(http.MethodGet, "/", nil)
	bound, err := e.keys.Verify("shop", newcomer.cookie, time.Now())
	if err != nil {
		t.Fatal(err)
	}
	waiting := []int{30, 30, 1, 1}
	now := time.Now()
	for i, n := range waiting {
		p := r.Policy(now)
		p.Shard = i
		var last store.Place
		for j := 0; j <= n; j++ {
			if last, err = db.Join(context.Background(), shard.Name("shop", i), p, store.Arrival{ID: fmt.Sprintf("seed-%d-%d", i, j)}, now); err != nil {
				t.Fatal(err)
			}
		}
		// The POP's snapshot of shard i, filled by its last ticket's poll.
		tok, err := e.keys.Sign(queue.Pass{Kind: queue.Ticket, Room: "shop", Number: last.Ticket, Epoch: last.Line.Epoch, Shard: i,
			Bind: bound.Bind, Joined: now, Seen: now, IssuedAt: now, Expires: now.Add(time.Hour)})
		if err != nil {
			t.Fatal(err)
		}
		v := &visitor{e: e, cookie: tok}
		a := v.do1(http.MethodGet, "/", nil, "Accept", "application/json")
		if pl, err := devstack.ReadPlace(a.body); err != nil || pl.Status != "waiting" {
			t.Fatalf("shard %d's seeded ticket %d: %d %s (%v), want waiting", i, last.Ticket, a.status, a.body, err)
		}
	}

	short := func(i int) bool { return waiting[i] < 30 }
	sentTo := make([]int, len(waiting))
	var arrivals []queue.Pass
	var tokens []string
	for len(arrivals) < 24 {
		v := &visitor{e: e}
		a := v.do1(http.MethodGet, "/", nil, "Accept", "application/json")
		p, err := e.keys.Verify("shop", v.cookie, time.Now())
		if err != nil || p.Kind != queue.Arrival {
			t.Fatalf("a newcomer: %d %s, pass %+v (%v); want an arrival pass", a.status, a.body, p, err)
		}
		c := shard.Choices(p.ArrivalID, 4)
		want := c[0]
		if !short(c[0]) && short(c[1]) {
			want = c[1]
		}
		if got := c[min(max(p.Shard, 0), 1)]; got != want || p.Shard > 1 {
			t.Fatalf("arrival %s (shards %v) sent to shard %d (pass records %d), want %d, the shorter line", p.ArrivalID, c, got, p.Shard, want)
		}
		sentTo[want]++
		arrivals, tokens = append(arrivals, p), append(tokens, v.cookie)
	}
	if sentTo[2]+sentTo[3] <= sentTo[0]+sentTo[1] {
		t.Errorf("arrivals by shard %v: want most in shards 2 and 3, the short lines", sentTo)
	}

	// The joins, and a replay of each arrival pass, land in its shard on
	// the same ticket.
	for i, tok := range tokens[:6] {
		var got [2]queue.Pass
		for k := range got {
			v := &visitor{e: e, cookie: tok}
			a := v.get("/", "Accept", "application/json")
			if got[k], err = e.keys.Verify("shop", v.cookie, time.Now()); err != nil || got[k].Kind != queue.Ticket {
				t.Fatalf("arrival %d, join %d: %d %s, pass %+v (%v); want a ticket", i, k, a.status, a.body, got[k], err)
			}
		}
		want := shard.Choices(arrivals[i].ArrivalID, 4)[arrivals[i].Shard]
		if got[0].Shard != want || got[1].Shard != want || got[0].Number != got[1].Number {
			t.Errorf("arrival %d: joined shard %d ticket %d, replayed shard %d ticket %d; want shard %d, one ticket",
				i, got[0].Shard, got[0].Number, got[1].Shard, got[1].Number, want)
		}
	}
}

// TestPanelRefusesACapacityBelowTheShards: the panel, through the wasm,
// refuses a live capacity below a sharded room's shards with a message
// that says why, and applies none of it; and each of its forms names its
// action, so that a form sent twice applies once.
func TestPanelRefusesACapacityBelowTheShards(t *testing.T) {
	e := startRoom(t, loadTimeout, shardedRoom)
	page := e.admin(http.MethodGet, "", nil, adminPassword)
	m := csrfField.FindStringSubmatch(page.body)
	if m == nil {
		t.Fatalf("no CSRF token on the admin panel: %d %s", page.status, page.body)
	}
	a := e.admin(http.MethodPost, "/limits", url.Values{"room": {"shop"}, "max_active_users": {"3"}, "csrf": {m[1]}}, adminPassword)
	if a.status != http.StatusBadRequest || !strings.Contains(a.body, "3 is below the room&#39;s 4 shards: each shard needs at least one place") {
		t.Fatalf("a live capacity of 3 over 4 shards: %d %s", a.status, a.body)
	}
	if page := e.admin(http.MethodGet, "", nil, adminPassword); strings.Contains(page.body, "max_active_users=3") {
		t.Fatal("the refused capacity shows in the audit log")
	}
	id := regexp.MustCompile(`name="id" value="([^"]+\.pause)"`).FindStringSubmatch(page.body)
	if id == nil {
		t.Fatal("the pause form names no action")
	}
	form := url.Values{"room": {"shop"}, "csrf": {m[1]}, "id": {id[1]}}
	if a := e.admin(http.MethodPost, "/pause", form, adminPassword); a.status != http.StatusSeeOther {
		t.Fatalf("pause: %d %s", a.status, a.body)
	}
	// The same form sent again: known by its id, it applies nothing more.
	if a := e.admin(http.MethodPost, "/pause", form, adminPassword); a.status != http.StatusSeeOther {
		t.Fatalf("pause sent again: %d %s", a.status, a.body)
	}
	// The panel reads the audit log in a call of its own: on a loaded
	// machine that read may time out, which the page says; read again.
	for try := 1; ; try++ {
		body := e.admin(http.MethodGet, "", nil, adminPassword).body
		if strings.Contains(body, "store did not answer") || strings.Contains(body, "The store did not answer") {
			if try < 5 {
				t.Logf("read %d of the panel: the store did not answer; reading again", try)
				continue
			}
		}
		if n := strings.Count(body, "<td>pause</td>"); n != 1 {
			t.Errorf("the audit log shows %d pauses for one form sent twice, want 1: %s", n, body)
		}
		break
	}
}
