package attack

import (
	"encoding/json"
	"fmt"
	"regexp"
	"sort"
	"strings"
	"testing"

	"github.com/edgequeue/waitingroom/edge"
)

// TestADecoyLooksLikeAPlace: what a client can see of a place in the
// decoy line, it sees alike of a place in the real line, through the
// wasm: the status, the response's header names, each cookie's name and
// attributes, the pass's claims (their names, and each value's type,
// read without the key as any client can), the JSON answer's fields and
// types, the queue page's markup but for its numbers and seeds, and the
// store calls the answer waited on (its time, but for the network's
// noise); on the place's first answer and on a poll.
func TestADecoyLooksLikeAPlace(t *testing.T) {
	e := start(t, shop(decoyRoom), nil)
	// joined takes a place in the real line from ip: the base rung's
	// work, then the join; its answer, as accept asks for it.
	joined := func(ip string, accept string) (*visitor, answer, int) {
		v := &visitor{e: e, ip: ip}
		_, w := v.ask(t)
		if w.Status != "work" {
			t.Fatalf("a newcomer from %s: %+v, want the work asked of any newcomer", ip, w)
		}
		e.upstashCalls()
		a := v.get("/", "Accept", accept, edge.WorkHeader, solve(t, w))
		return v, a, e.upstashCalls()
	}
	// counted is get's answer and the store calls it waited on.
	counted := func(v *visitor, accept string) (answer, int) {
		e.upstashCalls()
		a := v.get("/", "Accept", accept)
		return a, e.upstashCalls()
	}
	// The room's one place is taken, and a few wait: the visitor
	// compared is well behind the front, as a decoy's place is.
	if _, a, _ := joined(clientIP(0, 20, 1), "text/html"); !a.atOrigin() {
		t.Fatalf("the first visitor: %s, want the origin", a)
	}
	for i := 1; i <= 6; i++ {
		joined(clientIP(0, 21, i), "application/json")
	}

	for _, tc := range []struct{ name, accept string }{
		{"JSON", "application/json"},
		{"the page", "text/html"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			realV, realFirst, realCalls := joined(clientIP(0, 22, len(tc.name)), tc.accept)
			// The decoyed newcomer comes as the real one does, and
			// is judged at its join.
			decoyV, decoyFirst, decoyCalls := joined(clientIP(0, 7, len(tc.name)), tc.accept)
			if !strings.Contains(e.logs.String(), "decoy (decoy rule ip)") {
				t.Fatalf("the visitor from the decoy's range was not decoyed: %s", decoyFirst)
			}
			realPoll, realPollCalls := counted(realV, tc.accept)
			decoyPoll, decoyPollCalls := counted(decoyV, tc.accept)
			for _, step := range []struct {
				name                  string
				real, decoyed         answer
				realCalls, decoyCalls int
			}{
				{"the place's first answer", realFirst, decoyFirst, realCalls, decoyCalls},
				{"a poll", realPoll, decoyPoll, realPollCalls, decoyPollCalls},
			} {
				r, d := seenByClient(t, step.real), seenByClient(t, step.decoyed)
				r["store calls"], d["store calls"] = fmt.Sprint(step.realCalls), fmt.Sprint(step.decoyCalls)
				for _, part := range []string{"status", "headers", "cookies", "body", "store calls"} {
					if r[part] != d[part] {
						t.Errorf("%s, %s:\n real place: %s\n      decoy: %s", step.name, part, r[part], d[part])
					}
				}
			}
		})
	}
}

var (
	// seedShaped and numbers are what the markup compares without: the
	// values that differ from place to place.
	seedShaped = regexp.MustCompile(`[0-9a-f]{32}`)
	numbers    = regexp.MustCompile(`\d+([,.\x{202f}\x{a0}]\d+)*`)
)

// seenByClient is what a client can tell of a answer, by part, with the
// values that differ from place to place left out.
func seenByClient(t *testing.T, a answer) map[string]string {
	t.Helper()
	seen := map[string]string{"status": fmt.Sprint(a.status)}
	var names []string
	for name := range a.header {
		names = append(names, name)
	}
	sort.Strings(names)
	seen["headers"] = strings.Join(names, " ")
	var cookies []string
	for _, c := range readSetCookies(a.header) {
		value := "(empty)"
		if strings.Count(c.Value, ".") == 2 {
			value = shapes(claimsOf(t, c.Value))
		} else if c.Value != "" {
			value = "(a value)"
		}
		cookies = append(cookies, fmt.Sprintf("%s=%s; Path=%s; Max-Age>0=%v; HttpOnly=%v; Secure=%v; SameSite=%v",
			c.Name, value, c.Path, c.MaxAge > 0, c.HttpOnly, c.Secure, c.SameSite))
	}
	sort.Strings(cookies)
	seen["cookies"] = strings.Join(cookies, "\n")
	var doc any
	if json.Unmarshal([]byte(a.body), &doc) == nil {
		seen["body"] = shapes(doc)
	} else {
		seen["body"] = numbers.ReplaceAllString(seedShaped.ReplaceAllString(a.body, "SEED"), "N")
	}
	return seen
}

// shapes is a JSON value's shape: an object's names and their values'
// shapes, sorted; an array's elements' shapes; a scalar's type (and a
// pass's kind, which a client reads as a word).
func shapes(v any) string {
	switch v := v.(type) {
	case map[string]any:
		var fields []string
		for k, x := range v {
			s := shapes(x)
			if k == "knd" || k == "status" {
				s = fmt.Sprintf("%q", x)
			}
			fields = append(fields, k+":"+s)
		}
		sort.Strings(fields)
		return "{" + strings.Join(fields, ",") + "}"
	case []any:
		var elems []string
		for _, x := range v {
			elems = append(elems, shapes(x))
		}
		return "[" + strings.Join(elems, ",") + "]"
	case nil:
		return "null"
	}
	return fmt.Sprintf("%T", v)
}
