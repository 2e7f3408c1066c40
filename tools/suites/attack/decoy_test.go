package attack

import (
	"encoding/json"
	"net/http"
	"regexp"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/edgequeue/waitingroom/challenge"
	"github.com/edgequeue/waitingroom/edge"
)

// decoyRoom runs a decoy line: a proof of work whose top rung, 8 bits, is
// the way out (its base rung, 2 bits, is asked while no snapshot tells
// the pressure); two joins a minute per address; 127.0.7.0/24 sent to the
// decoy by the operator, and bad bots by bot detection.
const decoyRoom = `{"paths":["/"],"max_active_users":1,"refresh":5,"queue_timeout":300,"proof_of_work":8,"snapshot_ttl":0,
	"joins_per_ip_per_minute":2,"decoy_ips":["127.0.7.0/24"],"decoy_bad_bots":true}`

// roomAnswer is the room's JSON answer: a place (real or a decoy's), or
// the work state, with the challenge of either.
type roomAnswer struct {
	Status    string `json:"status"`
	Ticket    int64  `json:"ticket"`
	Ahead     int64  `json:"ahead"`
	Challenge *struct {
		Seed   string `json:"seed"`
		Bits   int    `json:"bits"`
		Header string `json:"header"`
	} `json:"challenge"`
}

// ask is v's JSON request to the room, the arrival step followed.
func (v *visitor) ask(t *testing.T, header ...string) (answer, roomAnswer) {
	t.Helper()
	a := v.get("/", append([]string{"Accept", "application/json"}, header...)...)
	var r roomAnswer
	if err := json.Unmarshal([]byte(a.body), &r); err != nil {
		t.Fatalf("%s: not the room's JSON: %v", a, err)
	}
	return a, r
}

// solve is the nonce that solves r's challenge.
func solve(t *testing.T, r roomAnswer) string {
	t.Helper()
	if r.Challenge == nil {
		t.Fatalf("no challenge in %+v", r)
	}
	nonce, _ := challenge.Challenge{Seed: r.Challenge.Seed, Bits: r.Challenge.Bits}.Solve()
	return nonce
}

// decoyed checks that v's join, sent with header, is answered with a place
// in the decoy line: a waiting visitor's JSON with the top rung's
// challenge and a pass that reads as a ticket's, logged with why, and no
// place taken in the real line. A newcomer comes as a real one does: asked
// the door's work, it joins with it done, and is judged there.
func decoyed(t *testing.T, e *env, v *visitor, why string, header ...string) roomAnswer {
	t.Helper()
	issued := e.line("shop").issued
	a, r := v.ask(t, header...)
	if r.Status == "work" {
		a, r = v.ask(t, append(header, edge.WorkHeader, solve(t, r))...)
	}
	if a.status != http.StatusOK || r.Status != "waiting" || r.Challenge == nil || r.Challenge.Bits != 8 || r.Ahead < 1 {
		t.Fatalf("%s: want a waiting visitor's answer with the top rung's challenge", a)
	}
	if n := e.line("shop").issued; n != issued {
		t.Errorf("the decoy took a place in the real line: %d issued, was %d", n, issued)
	}
	if c := claimsOf(t, v.cookies["wr_shop"]); c["knd"] != "ticket" {
		t.Errorf("the decoy's pass reads as a %v pass, want a ticket's", c["knd"])
	}
	if !strings.Contains(e.logs.String(), "decoy ("+why+")") {
		t.Errorf("no log line says the request was decoyed for %q", why)
	}
	return r
}

// TestTheDecoyLine: each kind of hostile newcomer is sent to the decoy
// line through the wasm (an operator's rule, a bad bot, a failed solution,
// a replayed one, a client in the join penalty box), at its join, where
// polls show a place that moves without arriving, taking none; the top rung's work
// takes a decoyed visitor to the real line; a verified bot and an
// accessibility tool are not decoyed; and the admin panel counts the
// decoyed requests.
func TestTheDecoyLine(t *testing.T) {
	e := start(t, shop(decoyRoom), nil)
	began, decoys := time.Now(), 0

	t.Run("an operator's rule, and the way out", func(t *testing.T) {
		v := &visitor{e: e, ip: clientIP(0, 7, 1)}
		first := decoyed(t, e, v, "decoy rule ip")
		again := decoyed(t, e, v, "decoyed")
		decoys += 2 // the place, then the poll
		if again.Ticket != first.Ticket || again.Ahead > first.Ahead || again.Challenge.Seed != first.Challenge.Seed {
			t.Errorf("polled again: ticket %d, %d ahead, seed %s; want ticket %d, at most %d ahead, the same challenge",
				again.Ticket, again.Ahead, again.Challenge.Seed, first.Ticket, first.Ahead)
		}
		// The room is empty: the way out leads to the origin.
		if a := v.get("/", edge.WorkHeader, solve(t, first)); !a.atOrigin() {
			t.Fatalf("the decoy's work done: %s, want the origin", a)
		}
		if c := claimsOf(t, v.cookies["wr_shop"]); c["knd"] != "ticket" && c["knd"] != "session" {
			t.Errorf("the way out left a %v pass, want a ticket or a session", c["knd"])
		}
		if n := e.upstashCalls(); n == 0 {
			t.Error("the way out made no store call: it took no place")
		}
	})

	t.Run("bot detection", func(t *testing.T) {
		bot := func(verified, category string) []string {
			return []string{"X-Fastly-Bot-Analyzed", "true", "X-Fastly-Bot-Detected", "true", "X-Fastly-Bot-Name", "ExampleBot",
				"X-Fastly-Bot-Category", category, "X-Fastly-Bot-Verified", verified}
		}
		decoyed(t, e, &visitor{e: e, ip: clientIP(0, 8, 1)}, "bad bot", bot("false", "suspected")...)
		decoys++
		for _, tc := range []struct{ name, verified, category string }{
			{"a verified crawler", "true", "search-engine-crawler"}, {"an accessibility tool", "false", "accessibility"},
		} {
			a, r := (&visitor{e: e, ip: clientIP(0, 8, 2)}).ask(t, bot(tc.verified, tc.category)...)
			if r.Status != "work" {
				t.Errorf("%s: %s, want the work asked of any newcomer", tc.name, a)
			}
		}
	})

	t.Run("a failed solution", func(t *testing.T) {
		v := &visitor{e: e, ip: clientIP(0, 9, 1)}
		_, w := v.ask(t)
		if w.Status != "work" || w.Challenge == nil || w.Challenge.Bits != 2 {
			t.Fatalf("a newcomer: %+v, want the base rung's work", w)
		}
		wrong := "0"
		for (challenge.Challenge{Seed: w.Challenge.Seed, Bits: 2}).Check(wrong) == nil {
			wrong += "0"
		}
		decoyed(t, e, v, "failed solution", edge.WorkHeader, wrong)
		decoys++
	})

	t.Run("a replayed solution", func(t *testing.T) {
		first := &visitor{e: e, ip: clientIP(0, 10, 1)}
		_, w := first.ask(t)
		nonce := solve(t, w)
		other := first.copyTo(clientIP(0, 10, 2), "")
		if _, r := first.ask(t, edge.WorkHeader, nonce); r.Status != "waiting" {
			t.Fatalf("the solution: %+v, want a place in the real line", r)
		}
		decoyed(t, e, other, "replayed arrival", edge.WorkHeader, nonce)
		decoys++
	})

	t.Run("the join penalty box", func(t *testing.T) {
		ip := clientIP(0, 11, 1)
		for i := 1; i <= 3; i++ {
			v := &visitor{e: e, ip: ip}
			_, w := v.ask(t)
			a, r := v.ask(t, edge.WorkHeader, solve(t, w))
			if limited := a.status == http.StatusTooManyRequests; limited != (i == 3) {
				t.Fatalf("join %d from one address: %s %+v; want only the third limited", i, a, r)
			}
		}
		decoyed(t, e, &visitor{e: e, ip: ip}, "joined beyond a limit")
		decoys++
	})

	page := e.adminAs("", http.MethodGet, "", nil, adminPassword)
	m := regexp.MustCompile(`Sent to the decoy line in the last minute \(this POP\)</dt><dd>(\d+)</dd>`).FindStringSubmatch(page.body)
	if m == nil {
		t.Fatalf("the admin panel does not count the decoyed requests: %s", page)
	}
	// The counter's window is the last minute: a slow run may have
	// let the first ones out of it.
	n, _ := strconv.Atoi(m[1])
	if exact := time.Since(began) < 50*time.Second; exact && n != decoys || !exact && (n < 1 || n > decoys) {
		t.Errorf("the admin panel counts %d decoyed requests in the last minute, want %d (the test took %v)", n, decoys, time.Since(began))
	}
}

// TestANetworkBeyondItsLimitBoxesNobody: in a room with a decoy line, a
// join refused because its /24 is beyond the joins per network is refused
// (429) and puts nobody in the penalty box: the address that happened to
// join next, on its first join, is asked the work again, not decoyed,
// so one bot behind a carrier's NAT cannot send everyone there to the
// decoy line. (Only an address beyond its own limit is boxed: see the
// penalty box in TestTheDecoyLine.)
func TestANetworkBeyondItsLimitBoxesNobody(t *testing.T) {
	room := `{"paths":["/"],"max_active_users":1,"refresh":5,"queue_timeout":300,"proof_of_work":8,"snapshot_ttl":0,
	"joins_per_network_per_minute":1}`
	e := start(t, shop(room), nil)
	first := &visitor{e: e, ip: clientIP(0, 12, 1)}
	_, w := first.ask(t)
	if a := first.get("/", "Accept", "application/json", edge.WorkHeader, solve(t, w)); !a.atOrigin() {
		t.Fatalf("the network's first join: %s, want it let in", a)
	}
	bystander := clientIP(0, 12, 2)
	v := &visitor{e: e, ip: bystander}
	_, w = v.ask(t)
	if a, r := v.ask(t, edge.WorkHeader, solve(t, w)); a.status != http.StatusTooManyRequests {
		t.Fatalf("the network's second join, from %s: %s %+v; want it refused (429)", bystander, a, r)
	}
	again := &visitor{e: e, ip: bystander}
	a, r := again.ask(t)
	if r.Challenge == nil || r.Challenge.Bits == 8 || r.Ahead != 0 {
		t.Errorf("the bystander's next arrival: %s; want the work of a newcomer, not the decoy's", a)
	}
	if c := claimsOf(t, again.cookies["wr_shop"]); c["knd"] == "decoy" {
		t.Errorf("the bystander was given a decoy pass for its network's joins")
	}
	if strings.Contains(e.logs.String(), "decoy (joined beyond a limit)") {
		t.Errorf("a join refused for its network's joins put its address in the penalty box")
	}
}
