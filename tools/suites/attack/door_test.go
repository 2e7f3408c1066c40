package attack

import (
	"fmt"
	"net/http"
	"strconv"
	"testing"

	"github.com/edgequeue/waitingroom/challenge"
	"github.com/edgequeue/waitingroom/edge"
)

// doorRoom is decoyRoom with more joins allowed per address, so that one
// client's joins raise its rung without reaching the join limit.
const doorRoom = `{"paths":["/"],"max_active_users":1,"refresh":5,"queue_timeout":300,"proof_of_work":8,"snapshot_ttl":0,
	"joins_per_ip_per_minute":20,"decoy_ips":["127.0.7.0/24"]}`

// TestTheDoorThroughTheWasm (issue 34, defects 1, 2, 3 and 10): the work
// a join must show is the rung in force when it joins, not when its pass
// was handed out; a place that is gone is never bought again with the
// same pass and solution, through an arrival pass or the decoy's way
// out; an empty, calm room asks no work; and a planted work cookie ahead
// of the browser's own decoys nobody.
func TestTheDoorThroughTheWasm(t *testing.T) {
	t.Run("the work is priced at the join", func(t *testing.T) {
		e := start(t, shop(doorRoom), nil)
		ip := clientIP(0, 21, 1)
		// Three passes collected at once, each asking the base rung
		// (2 bits: no snapshot, no joins yet).
		vs := make([]*visitor, 3)
		asked := make([]roomAnswer, 3)
		for i := range vs {
			vs[i] = &visitor{e: e, ip: ip}
			_, asked[i] = vs[i].ask(t)
			if asked[i].Status != "work" || asked[i].Challenge.Bits != 2 {
				t.Fatalf("pass %d: %+v, want the base rung's work", i, asked[i])
			}
		}
		for i := 0; i < 2; i++ {
			if a := vs[i].get("/", "Accept", "application/json", edge.WorkHeader, solve(t, asked[i])); a.status != http.StatusOK {
				t.Fatalf("join %d: %s, want a place", i, a)
			}
		}
		// Two joins since: the third pass is asked the rung in force,
		// two bits more, not the one it was handed out with; its own
		// lower challenge solved is more work to do, not a failed
		// solution (no decoy).
		claims := claimsOf(t, vs[2].cookies["wr_shop"])
		arrival, bind := fmt.Sprint(claims["arr"]), ""
		if claims["bnd"] != nil {
			bind = fmt.Sprint(claims["bnd"])
		}
		low, high := challenge.For("shop", arrival, bind, 2), challenge.For("shop", arrival, bind, 4)
		if low.Seed != asked[2].Challenge.Seed {
			t.Fatalf("the pass's challenge is not challenge.For's: %+v", low)
		}
		a, r := vs[2].ask(t, edge.WorkHeader, lowOnly(low, high))
		if r.Status != "work" || r.Challenge.Bits != 4 || r.Challenge.Seed != high.Seed {
			t.Fatalf("the third pass after two joins, with its own 2-bit solution: %s %+v, want 4 bits of work", a, r)
		}
		if c := claimsOf(t, vs[2].cookies["wr_shop"]); c["knd"] != "arrival" || c["arr"] != claims["arr"] {
			t.Fatalf("the third visitor holds %v, want its arrival pass", c)
		}
		if _, r := vs[2].ask(t, edge.WorkHeader, solve(t, r)); r.Status != "waiting" {
			t.Fatalf("the third pass with the 4 bits done: %+v, want a place", r)
		}
	})

	t.Run("a solution buys one place", func(t *testing.T) {
		for _, tc := range []struct {
			name  string
			ip    string
			decoy bool
			want  string // what the same pass and solution get once the place is gone
		}{
			{"an arrival pass", clientIP(0, 22, 1), false, "work"},
			{"the decoy's way out", clientIP(0, 7, 22), true, "work"},
		} {
			e := start(t, shop(doorRoom), nil)
			v := &visitor{e: e, ip: tc.ip}
			_, w := v.ask(t)
			if w.Challenge == nil {
				t.Fatalf("%s: %+v, want a challenge", tc.name, w)
			}
			if tc.decoy {
				// Judged at its join: the decoy's place, and its way out.
				if _, w = v.ask(t, edge.WorkHeader, solve(t, w)); w.Status != "waiting" || w.Challenge == nil {
					t.Fatalf("%s: %+v, want the decoy's place and its way out", tc.name, w)
				}
			}
			nonce, pass := solve(t, w), v.cookies["wr_shop"]
			if a := v.get("/", edge.WorkHeader, nonce); !a.atOrigin() {
				t.Fatalf("%s, solved, in an empty room: %s, want the origin", tc.name, a)
			}
			// The origin ends the session: the place is gone.
			v.get("/command?c=revoke")
			for i := 0; i < 2; i++ {
				v.cookies["wr_shop"] = pass
				a, r := v.ask(t, edge.WorkHeader, nonce)
				c := claimsOf(t, v.cookies["wr_shop"])
				// The first replay is a newcomer again; the rung has
				// risen with that join, so the next is asked more work.
				if r.Status != tc.want || c["knd"] == "ticket" || c["knd"] == "session" || i == 0 && c["arr"] == claimsOf(t, pass)["arr"] {
					t.Fatalf("%s, its place gone, replayed (%d): %s, a %v pass; want %q with a new arrival", tc.name, i, a, c["knd"], tc.want)
				}
			}
		}
	})

	t.Run("an empty, calm room asks no work", func(t *testing.T) {
		// A sharded room's POP learns it from shard 0's line alone.
		for i, shards := range []int{1, 2} {
			e := start(t, shop(fmt.Sprintf(`{"paths":["/"],"max_active_users":5,"refresh":5,"proof_of_work":18,"snapshot_ttl":10,"shards":%d}`, shards)), nil)
			for j := 0; j < 2; j++ {
				v := &visitor{e: e, ip: clientIP(0, 23, 2*i+j+1)}
				if a := v.get("/"); !a.atOrigin() {
					t.Fatalf("newcomer %d to an empty room of %d shards: %s, want the origin with no work\n%s", j, shards, a, e.logs.String())
				}
			}
		}
	})

	t.Run("a planted work cookie", func(t *testing.T) {
		e := start(t, shop(doorRoom), nil)
		for _, tc := range []struct {
			name string
			ip   string
		}{
			{"an arrival pass", clientIP(0, 24, 1)},
			{"the decoy's way out", clientIP(0, 7, 24)},
		} {
			v := &visitor{e: e, ip: tc.ip}
			_, w := v.ask(t)
			c := challenge.Challenge{Seed: w.Challenge.Seed, Bits: w.Challenge.Bits}
			wrong := "zz"
			for c.Check(wrong) == nil {
				wrong += "z"
			}
			nonce, _ := c.Solve()
			a := v.get("/", "Cookie", "wr_shop_work="+wrong+"; wr_shop_work="+nonce)
			if k := claimsOf(t, v.cookies["wr_shop"])["knd"]; k != "ticket" && k != "session" {
				t.Fatalf("%s, a planted cookie ahead of the solution: %s, a %v pass; want a place in the real line", tc.name, a, k)
			}
			v.get("/command?c=revoke")
		}
	})
}

// lowOnly is a nonce that solves low but not high.
func lowOnly(low, high challenge.Challenge) string {
	for n := int64(0); ; n++ {
		if nonce := strconv.FormatInt(n, 36); low.Check(nonce) == nil && high.Check(nonce) != nil {
			return nonce
		}
	}
}
