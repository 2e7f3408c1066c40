package integration

import (
	"context"
	"errors"
	"fmt"
	"net/http"
	"strings"
	"testing"
	"time"

	"github.com/edgequeue/waitingroom/control"
	"github.com/edgequeue/waitingroom/edge"
	"github.com/edgequeue/waitingroom/queue"
	"github.com/edgequeue/waitingroom/settings"
	"github.com/edgequeue/waitingroom/store"
	"github.com/edgequeue/waitingroom/store/shard"
	"github.com/edgequeue/waitingroom/tools/native"
	"github.com/edgequeue/waitingroom/tools/redistest"
)

// shardedRoom is a room of four shards over two real databases (shards 0
// and 2 on the first, 1 and 3 on the second), as the edge builds it.
func shardedRoom(t *testing.T, capacity int) (*shard.Store, []*store.Upstash, *queue.Room) {
	t.Helper()
	db0, _ := newStore(t)
	db1, _ := newStore(t)
	r, err := queue.ParseRoom("big", []byte(fmt.Sprintf(`{"paths":["/"],"new_users_per_minute":300,"burst":4,"max_active_users":%d,`+
		`"refresh":10,"inactivity_timeout":12,"session_duration":600,"shards":4}`, capacity)))
	if err != nil {
		t.Fatal(err)
	}
	st := &shard.Store{Backends: []shard.Backend{db0, db1}, Shards: func(string) int { return r.Shards }}
	return st, []*store.Upstash{db0, db1}, r
}

// shardLines reads each shard's line from its own database, apart from
// package shard's sum.
func shardLines(t *testing.T, dbs []*store.Upstash, r *queue.Room, now time.Time) []store.Line {
	t.Helper()
	var lines []store.Line
	for i := 0; i < r.Shards; i++ {
		p := r.Policy(now)
		p.Shard = i
		l, err := dbs[i%len(dbs)].Stats(ctx, shard.Name(r.Name, i), p, now)
		if err != nil {
			t.Fatal(err)
		}
		lines = append(lines, l)
	}
	return lines
}

// TestShardedRoomOnTheRealStore: 600 visitors over four shards on two
// databases. At every second, what each shard holds stays within its
// share of the capacity, so the room within its capacity; every shard
// admits; the operator's pause, limits and admit reach every shard, the
// audit entry is on each, and the stats and history are the shards'
// sums.
func TestShardedRoomOnTheRealStore(t *testing.T) {
	const capacity = 10
	st, dbs, r := shardedRoom(t, capacity)
	type visitor struct {
		ticket  store.Ticket
		session store.SessionRef
		until   time.Time
		done    bool
	}
	var visitors []*visitor
	admitted := make([]int, r.Shards)
	now := t0
	step := func(arrivals int) {
		p := r.Policy(now)
		for i := 0; i < arrivals; i++ {
			id := fmt.Sprintf("arrival-%04d", len(visitors))
			pl, err := st.Join(ctx, r.Name, p, store.Arrival{ID: id, Shard: shard.Of(id, r.Shards)}, now)
			if err != nil {
				t.Fatal(err)
			}
			if pl.Shard != shard.Of(id, r.Shards) {
				t.Fatalf("%s joined shard %d, want %d", id, pl.Shard, shard.Of(id, r.Shards))
			}
			v := &visitor{ticket: store.Ticket{Number: pl.Ticket, Epoch: pl.Line.Epoch, Shard: pl.Shard}}
			if pl.Outcome == store.Admitted {
				v.session, v.until = store.SessionRef{ID: pl.Session, Epoch: pl.Line.Epoch, Shard: pl.Shard}, now.Add(3*time.Second)
				admitted[pl.Shard]++
			}
			visitors = append(visitors, v)
		}
		for _, v := range visitors {
			switch {
			case v.done:
			case v.session.ID != "" && !now.Before(v.until):
				if _, err := st.End(ctx, r.Name, p, v.session, now); err != nil {
					t.Fatal(err)
				}
				v.done = true
			case v.session.ID == "" && now.Unix()%2 == v.ticket.Number%2:
				pl, err := st.Poll(ctx, r.Name, p, v.ticket, now)
				if err != nil {
					t.Fatal(err)
				}
				if pl.Shard != v.ticket.Shard {
					t.Fatalf("ticket of shard %d polled in shard %d", v.ticket.Shard, pl.Shard)
				}
				switch pl.Outcome {
				case store.Admitted:
					v.session, v.until = store.SessionRef{ID: pl.Session, Epoch: pl.Line.Epoch, Shard: pl.Shard}, now.Add(3*time.Second)
					admitted[pl.Shard]++
				case store.Lost:
					t.Fatalf("ticket %+v lost its place", v.ticket)
				}
			}
		}
	}
	// held checks every shard against its share, and the room against the
	// capacity, from each shard's own database, and the sum package shard
	// reads against them.
	held := func(capacity int) {
		t.Helper()
		var sum int64
		for i, l := range shardLines(t, dbs, r, now) {
			share := shard.Split(int64(capacity), i, r.Shards)
			if l.Active+l.Called > share {
				t.Fatalf("%v: shard %d holds %d+%d, over its share %d of %d", now.Sub(t0), i, l.Active, l.Called, share, capacity)
			}
			sum += l.Active + l.Called
		}
		if sum > int64(capacity) {
			t.Fatalf("%v: the shards hold %d, over the capacity %d", now.Sub(t0), sum, capacity)
		}
		l, err := st.Stats(ctx, r.Name, r.Policy(now), now)
		if err != nil {
			t.Fatal(err)
		}
		if l.Active+l.Called != sum {
			t.Fatalf("%v: stats say %d held, the shards %d", now.Sub(t0), l.Active+l.Called, sum)
		}
	}
	for s := 0; s < 60; s++ {
		step(10)
		held(capacity)
		now = now.Add(time.Second)
	}
	for i, n := range admitted {
		if n == 0 {
			t.Fatalf("shard %d admitted nobody in a minute: %v", i, admitted)
		}
	}
	t.Logf("admitted per shard in the first minute: %v", admitted)

	// The operator, through package control as the panel and the API:
	// an Operator per request.
	op := func() *control.Operator { return &control.Operator{Rooms: []*queue.Room{r}, Store: st, Now: now} }
	who := store.Actor{Via: "api", Client: "ab"}
	if _, err := op().Control(ctx, r.Name, store.Pause, who); err != nil {
		t.Fatal(err)
	}
	if _, err := op().SetLimits(ctx, r.Name, control.Limits{MaxActiveUsers: intp(2 * capacity)}, who); err != nil {
		t.Fatal(err)
	}
	for i, l := range shardLines(t, dbs, r, now) {
		if !l.Paused || l.Overrides.Capacity == nil || *l.Overrides.Capacity != 2*capacity {
			t.Fatalf("shard %d after pause and limits: paused %v, capacity override %v", i, l.Paused, l.Overrides.Capacity)
		}
	}
	before, err := st.Stats(ctx, r.Name, r.Policy(now), now)
	if err != nil {
		t.Fatal(err)
	}
	for s := 0; s < 10; s++ {
		step(0)
		now = now.Add(time.Second)
	}
	after, err := st.Stats(ctx, r.Name, r.Policy(now), now)
	if err != nil {
		t.Fatal(err)
	}
	if after.Admitted != before.Admitted {
		t.Fatalf("paused, the shards called %d", after.Admitted-before.Admitted)
	}
	if _, err := op().Control(ctx, r.Name, store.Resume, who); err != nil {
		t.Fatal(err)
	}
	for s := 0; s < 30; s++ {
		step(2)
		held(2 * capacity)
		now = now.Add(time.Second)
	}
	// Admit 6: 2, 2, 1 and 1.
	perShard := shardLines(t, dbs, r, now)
	line, err := op().Admit(ctx, r.Name, 6, who)
	if err != nil {
		t.Fatal(err)
	}
	if line.CalledNow != 6 {
		t.Fatalf("admit 6 called %d", line.CalledNow)
	}
	for i, l := range shardLines(t, dbs, r, now) {
		if got, want := l.Admitted-perShard[i].Admitted, shard.Split(6, i, r.Shards); got != want {
			t.Errorf("shard %d called %d of admit 6, want %d", i, got, want)
		}
	}
	// Every shard keeps the entry; shard 0's log is the room's.
	for i := 0; i < r.Shards; i++ {
		pages, err := dbs[i%2].Audit(ctx, []store.AuditRead{{Room: shard.Name(r.Name, i), Limit: 10}})
		if err != nil {
			t.Fatal(err)
		}
		var ops []string
		for _, e := range pages[0] {
			ops = append(ops, e.Action)
		}
		if strings.Join(ops, ",") != "admit,resume,limits,pause" {
			t.Errorf("shard %d's audit log: %v", i, ops)
		}
	}
	page, err := op().Audit(ctx, "", 10)
	if err != nil || len(page.Entries) != 4 {
		t.Fatalf("the room's audit log: %+v, %v; want its 4 entries once", page, err)
	}
	// Stats and history are the shards' sums.
	s, err := op().Stats(ctx, r.Name)
	if err != nil {
		t.Fatal(err)
	}
	var issued int64
	for _, l := range shardLines(t, dbs, r, now) {
		issued += l.Issued
	}
	if s.Issued != int64(len(visitors)) || issued != s.Issued {
		t.Fatalf("stats: %d issued, the shards %d, visitors %d", s.Issued, issued, len(visitors))
	}
	points, err := op().History(ctx, r.Name, 5*time.Minute)
	if err != nil {
		t.Fatal(err)
	}
	var joins int64
	for _, p := range points {
		joins += p.Joins
	}
	if joins != int64(len(visitors)) {
		t.Fatalf("history: %d joins, want %d", joins, len(visitors))
	}
}

// TestShardDownIsNamed: with one database unreachable, the room's stats
// fail naming the shard, and visitors of the other database's shards are
// still served.
func TestShardDownIsNamed(t *testing.T) {
	st, _, r := shardedRoom(t, 10)
	st.Backends[1] = &store.Upstash{URL: "http://127.0.0.1:1", Token: "x", Transport: native.Upstash{}, Timeout: time.Second}
	_, err := st.Stats(ctx, r.Name, r.Policy(t0), t0)
	if !errors.Is(err, store.ErrUnavailable) || !strings.Contains(err.Error(), "shard 1 of 4") {
		t.Fatalf("stats with shard 1's database down: %v", err)
	}
	served := 0
	for i := 0; i < 20; i++ {
		id := fmt.Sprintf("a%d", i)
		_, err := st.Join(ctx, r.Name, r.Policy(t0), store.Arrival{ID: id, Shard: shard.Of(id, 4)}, t0)
		switch up := shard.Of(id, 4)%2 == 0; {
		case up && err != nil:
			t.Fatalf("join on shard %d (up): %v", shard.Of(id, 4), err)
		case !up && !errors.Is(err, store.ErrUnavailable):
			t.Fatalf("join on shard %d (down): %v", shard.Of(id, 4), err)
		case up:
			served++
		}
	}
	if served == 0 {
		t.Fatal("no arrival went to a shard that is up")
	}
}

// backend plays a Fastly backend that knows where its database is: the
// edge addresses a database beyond the first by the backend's name
// (edge.UpstashBackendURL), and the backend sends it to its database.
type backend struct{ url string }

func (b backend) RoundTrip(ctx context.Context, req store.Request) (store.Response, error) {
	req.URL = b.url + strings.TrimPrefix(req.URL, edge.UpstashBackendURL)
	return native.Upstash{}.RoundTrip(ctx, req)
}

// TestShardsOverTwoDatabasesAtTheEdge: with upstash_databases 2, the edge
// keeps shards 0 and 2 of a room in the first database and 1 and 3 in the
// second (the backend upstash_1, its token the secret upstash_token_1);
// without that secret, the line is not set up, and the page says so.
func TestShardsOverTwoDatabasesAtTheEdge(t *testing.T) {
	e := newEnv(t)
	second, url := redistest.Upstash(t)
	e.databases = []string{url}
	e.config[edge.KeyRooms] = "shop"
	e.config[edge.KeyRoomPrefix+"shop"] = `{"hosts":["shop.test"],"paths":["/"],"new_users_per_minute":60,"burst":4,"max_active_users":8,"shards":4,"joins_per_ip_per_minute":0}`
	e.config[settings.KeyUpstashDatabases] = "2"
	e.secrets[edge.SecretUpstashTokenOf(1)] = redistest.Token
	keys, err := queue.ParseKeySet(testKeySet)
	if err != nil {
		t.Fatal(err)
	}
	perShard := make([]int64, 4)
	for i := 0; i < 24; i++ {
		w := e.get(shop + "/")
		p, err := keys.Verify("shop", pass(t, w), e.now)
		if err != nil {
			t.Fatalf("visitor %d: %d %s: %v", i, w.Code, w.Body, err)
		}
		perShard[p.Shard]++
	}
	dbs := []*store.Upstash{
		{URL: e.config[edge.KeyUpstashURL], Token: redistest.Token, Transport: native.Upstash{}},
		{URL: url, Token: redistest.Token, Transport: native.Upstash{}},
	}
	for i, want := range perShard {
		p := store.Policy{Shards: 4, Shard: i, PerMinute: 60, Burst: 4, Capacity: 8}
		for j, db := range dbs {
			l, err := db.Stats(ctx, shard.Name("shop", i), p, e.now)
			if err != nil {
				t.Fatal(err)
			}
			if got := map[bool]int64{true: want}[j == i%2]; l.Issued != got {
				t.Errorf("shard %d in database %d issued %d, want %d (arrivals per shard %v)", i, j, l.Issued, got, perShard)
			}
		}
	}
	if second.Stats().Requests == nil {
		t.Fatal("the second database was never asked")
	}
	delete(e.secrets, edge.SecretUpstashTokenOf(1))
	if w := e.get(shop + "/"); w.Code == http.StatusOK || !strings.Contains(w.Body.String(), edge.SecretUpstashTokenOf(1)) {
		t.Fatalf("without upstash_token_1: %d %s", w.Code, w.Body)
	}
}

// TestActionRetryAppliesOnce: an action that fails on some shards (their
// database down) still applies on the others, the error names both, and
// its retry with the same id applies it only where it had not: admit 6
// over four shards calls 2, 2, 1, 1 over the attempts, and a third
// attempt calls nobody more. Each shard's script keeps the id in its
// audit entry and knows the retry by it.
func TestActionRetryAppliesOnce(t *testing.T) {
	st, dbs, r := shardedRoom(t, 100)
	p := r.Policy(t0)
	operate := func(a store.Action) (store.Line, error) {
		a.Actor = panel
		return st.Operate(ctx, r.Name, p, a, t0)
	}
	if _, err := operate(store.Action{Op: string(store.Pause), ID: "pause-1"}); err != nil {
		t.Fatal(err)
	}
	for i := 0; i < 20; i++ {
		if _, err := st.Join(ctx, r.Name, p, store.Arrival{ID: fmt.Sprintf("a%d", i), Shard: i % 4}, t0); err != nil {
			t.Fatal(err)
		}
	}
	down := &store.Upstash{URL: "http://127.0.0.1:1", Token: "x", Transport: native.Upstash{}, Timeout: time.Second}
	admit := store.Action{Op: store.OpAdmit, N: 6, ID: "admit-1"}
	for _, step := range []struct {
		name     string
		db1Down  bool
		admitted []int64
	}{
		{"shards 1 and 3 down", true, []int64{2, 0, 1, 0}},
		{"the retry", false, []int64{2, 2, 1, 1}},
		{"a retry of an answer lost", false, []int64{2, 2, 1, 1}},
	} {
		st.Backends[1] = dbs[1]
		if step.db1Down {
			st.Backends[1] = down
		}
		_, err := operate(admit)
		var partial *shard.PartialError
		switch {
		case step.db1Down && (!errors.As(err, &partial) || !errors.Is(err, store.ErrUnavailable) ||
			!strings.Contains(err.Error(), "admit holds on shards 0, 2 of 4, not on shards 1, 3")):
			t.Fatalf("%s: %v, want a *shard.PartialError naming the shards", step.name, err)
		case !step.db1Down && err != nil:
			t.Fatalf("%s: %v", step.name, err)
		}
		var got []int64
		for _, l := range shardLines(t, dbs, r, t0) {
			got = append(got, l.Admitted)
		}
		if fmt.Sprint(got) != fmt.Sprint(step.admitted) {
			t.Errorf("%s: admitted per shard %v, want %v", step.name, got, step.admitted)
		}
	}
	// A switch half on is completed by its retry, and the audit log keeps
	// the action once.
	st.Backends[1] = down
	if _, err := operate(store.Action{Op: string(store.Resume), ID: "resume-1"}); err == nil {
		t.Fatal("resume with shards 1 and 3 down: no error")
	}
	st.Backends[1] = dbs[1]
	if _, err := operate(store.Action{Op: string(store.Resume), ID: "resume-1"}); err != nil {
		t.Fatal(err)
	}
	for i, l := range shardLines(t, dbs, r, t0) {
		if l.Paused {
			t.Errorf("shard %d still paused after the resume's retry", i)
		}
	}
	pages, err := st.Audit(ctx, []store.AuditRead{{Room: r.Name, Limit: 10}})
	if err != nil {
		t.Fatal(err)
	}
	var ids []string
	for _, e := range pages[0] {
		ids = append(ids, e.ID)
	}
	if fmt.Sprint(ids) != "[resume-1 admit-1 pause-1]" {
		t.Errorf("shard 0's audit log holds %v, want each action once", ids)
	}
}

// TestLiveCapacityBelowTheShardsIsRefused: the script refuses a live
// capacity that would leave a shard without a place (whichever surface
// sends it), on every shard, and nothing changes.
func TestLiveCapacityBelowTheShardsIsRefused(t *testing.T) {
	st, dbs, r := shardedRoom(t, 8)
	p := r.Policy(t0)
	_, err := st.Operate(ctx, r.Name, p, store.Action{Op: store.OpLimits, Set: store.Overrides{Capacity: intp(2)}, Actor: panel, ID: "limits-1"}, t0)
	if !errors.Is(err, store.ErrRejected) || !strings.Contains(err.Error(), "max_active_users 2 is below the room's 4 shards") {
		t.Fatalf("a live capacity of 2 over 4 shards: %v", err)
	}
	for i, l := range shardLines(t, dbs, r, t0) {
		if l.Overrides.Capacity != nil {
			t.Errorf("shard %d took the refused capacity: %d", i, *l.Overrides.Capacity)
		}
	}
	if _, err := st.Operate(ctx, r.Name, p, store.Action{Op: store.OpLimits, Set: store.Overrides{Capacity: intp(4)}, Actor: panel, ID: "limits-2"}, t0); err != nil {
		t.Fatalf("a live capacity of 4 over 4 shards: %v", err)
	}
}
