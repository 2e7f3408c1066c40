package e2e

import (
	"encoding/json"
	"net/http"
	"strings"
	"testing"

	"github.com/edgequeue/waitingroom/challenge"
	"github.com/edgequeue/waitingroom/edge"
)

// workRoom asks for work: no snapshot, so no pressure known, and a
// newcomer is asked the ladder's base rung (16 - 6 = 10 bits), two more
// for each doubling of their joins in the last minute.
const workRoom = `{"paths":["/"],"max_active_users":1,"refresh":5,"queue_timeout":300,"proof_of_work":16,"snapshot_ttl":0}`

// workAnswer is the "work" state's JSON.
type workAnswer struct {
	Status    string `json:"status"`
	Challenge struct {
		Seed   string `json:"seed"`
		Bits   int    `json:"bits"`
		Header string `json:"header"`
	} `json:"challenge"`
}

// TestProofOfWorkThroughTheWasm: an app (its pass in PassHeader) is
// answered with the challenge, 202, at no store call; a missing solution
// is answered with the same challenge again, and a wrong one with the
// decoy line, logged, at a join's store call; the solution in WorkHeader joins
// the line (one call). The rung rises with the client's joins. A browser without JSON gets the work
// page, whose cookie carries the solution as the header does.
func TestProofOfWorkThroughTheWasm(t *testing.T) {
	e := startRoom(t, loadTimeout, workRoom)
	e.restCalls()
	arrive := func(v *visitor, header ...string) workAnswer {
		t.Helper()
		a := v.do1(http.MethodGet, "/", nil, append([]string{edge.PassHeader, "", "Accept", "application/json"}, header...)...)
		var w workAnswer
		if err := json.Unmarshal([]byte(a.body), &w); a.status != http.StatusAccepted || err != nil || w.Status != "work" {
			t.Fatalf("%d %q, want 202 and the work state", a.status, a.body)
		}
		if v.cookie == "" {
			v.cookie = passOf(t, a)
		}
		return w
	}
	for i, wantBits := range []int{10, 10, 12, 12, 14} {
		v := &visitor{e: e}
		w := arrive(v)
		if w.Challenge.Bits != wantBits || w.Challenge.Header != edge.WorkHeader || len(w.Challenge.Seed) != 32 {
			t.Fatalf("newcomer %d: challenge %+v, want %d bits answered in %s", i, w.Challenge, wantBits, edge.WorkHeader)
		}
		if n := e.restCalls(); n != 0 {
			t.Errorf("newcomer %d: %d store calls before any work, want none", i, n)
		}
		arrival := v.cookie
		c := challenge.Challenge{Seed: w.Challenge.Seed, Bits: w.Challenge.Bits}
		nonce, _ := c.Solve()
		wrong := "0"
		for c.Check(wrong) == nil {
			wrong += "0"
		}
		if again := arrive(v, edge.PassHeader, "wr_shop="+v.cookie, edge.WorkHeader, ""); again.Challenge != w.Challenge {
			t.Errorf("newcomer %d offering nothing: challenge %+v, want the same again", i, again.Challenge)
		}
		// A solution that fails is hostile: its client is shown the
		// decoy line's place, whose way out is the top rung's work.
		for _, bad := range []string{wrong, strings.Repeat("z", 40)} {
			a := v.do1(http.MethodGet, "/", nil, edge.PassHeader, "wr_shop="+v.cookie, "Accept", "application/json", edge.WorkHeader, bad)
			var d workAnswer
			if err := json.Unmarshal([]byte(a.body), &d); err != nil || d.Status != "waiting" || d.Challenge.Bits != 16 {
				t.Errorf("newcomer %d offering %q: %d %.200q, want the decoy's place and the top rung's work", i, bad, a.status, a.body)
			}
		}
		// Each decoyed join asks the store once, as a real join does
		// (a decoy takes as long); the first join's pricing may fill
		// the POP's snapshot.
		if n := e.restCalls(); n < 2 || n > 3 {
			t.Errorf("newcomer %d: %d store calls for two unsolved joins, want one each (and a snapshot's fill)", i, n)
		}
		// The arrival pass still joins with its solution: the decoy
		// holds only a client that keeps the decoy's pass.
		v.cookie = arrival
		offer := []string{"Accept", "application/json", edge.WorkHeader, nonce}
		if i == 0 {
			// The first is admitted at once: its work page's cookie,
			// which carries the solution, is cleared beside the
			// origin's answer.
			offer = []string{"Accept", "application/json", "Cookie", "wr_shop_work=" + nonce}
		}
		joined := v.do1(http.MethodGet, "/", nil, offer...)
		if joined.status != http.StatusOK || !strings.Contains(joined.body, `"status":"waiting"`) && i > 0 {
			t.Fatalf("newcomer %d with the solution: %d %q", i, joined.status, joined.body)
		}
		if i == 0 && !clearsWork(joined) {
			t.Errorf("newcomer 0, admitted: the work cookie is not cleared: %q", joined.header.Values("Set-Cookie"))
		}
		// The first call also loads the script into the fresh Redis.
		if n := e.restCalls(); n != 1 && !(i == 0 && n == 2) {
			t.Errorf("newcomer %d: %d store calls to join, want 1", i, n)
		}
	}
	if !strings.Contains(e.logs.String(), "decoy (failed solution)") {
		t.Error("no log line says a failed solution was decoyed")
	}
	// A browser, the same client's sixth: the work page, its policy
	// letting its worker run; the cookie carries the solution.
	v := &visitor{e: e}
	page := v.do1(http.MethodGet, "/shoes?size=42", nil, "Accept", "text/html")
	seed, bits, next := attr(page.body, "data-seed"), attr(page.body, "data-bits"), attr(page.body, "data-next")
	if page.status != http.StatusOK || seed == "" || bits != "14" || !strings.HasPrefix(next, "/shoes?size=42&amp;"+edge.ArrivalMark+"=") ||
		!strings.Contains(page.header.Get("Content-Security-Policy"), "worker-src blob:") || attr(page.body, "data-cookie") != "wr_shop_work" {
		t.Fatalf("the work page: %d, seed %q, %s bits, next %q, policy %q:\n%.600s", page.status, seed, bits, next, page.header.Get("Content-Security-Policy"), page.body)
	}
	nonce, _ := challenge.Challenge{Seed: seed, Bits: 14}.Solve()
	if a := v.do1(http.MethodGet, "/shoes?size=42", nil, "Cookie", "wr_shop_work="+nonce); a.status != http.StatusOK || !strings.Contains(a.body, "You are in line") || !clearsWork(a) {
		t.Fatalf("the browser with the solution: %d %q %.300q, want the queue page and the work cookie cleared", a.status, a.header.Values("Set-Cookie"), a.body)
	}
}

// clearsWork reports whether a clears the work page's cookie.
func clearsWork(a answer) bool {
	for _, c := range (&http.Response{Header: a.header}).Cookies() {
		if c.Name == "wr_shop_work" && c.Value == "" && c.MaxAge < 0 {
			return true
		}
	}
	return false
}

// passOf is the room's pass an answer gives in PassHeader.
func passOf(t *testing.T, a answer) string {
	t.Helper()
	v, ok := strings.CutPrefix(a.header.Get(edge.PassHeader), "wr_shop=")
	if !ok || v == "" {
		t.Fatalf("no pass in %s: %q", edge.PassHeader, a.header.Get(edge.PassHeader))
	}
	return v
}

// attr is the value of the first attribute name="…" in page.
func attr(page, name string) string {
	_, rest, ok := strings.Cut(page, name+`="`)
	if !ok {
		return ""
	}
	v, _, _ := strings.Cut(rest, `"`)
	return v
}
