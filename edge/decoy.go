// The decoy line (queue's Decoy): what only the edge knows to judge a
// newcomer hostile, the record that tells a replayed arrival from its
// first use, and the decoy's page.

package edge

import (
	"net/netip"
	"time"

	"github.com/edgequeue/waitingroom/match"
	"github.com/edgequeue/waitingroom/queue"
	"github.com/fastly/compute-sdk-go/fsthttp"
)

// DecoyCounter is the rate counter of decoyed requests, one entry per
// room: the admin panel and the API read its last minute.
const DecoyCounter = "wr_decoys"

// hostile is queue.Visitor.Hostile for the request, from addr, in room:
// the operator's decoy rules (decoy_ips, decoy_acl), then bot detection
// (decoy_bad_bots). A fault in asking the platform is logged and judges
// nothing.
func (q *request) hostile(room *queue.Room, addr netip.Addr) func() string {
	return func() string {
		if room.Decoy.Any() {
			rule, ok, err := room.Decoy.Match(&match.Request{IP: addr, Facts: facts{q}})
			if err != nil {
				q.Logf("room %s: decoy rules: %v", room.Name, err)
			}
			if ok {
				return "decoy rule " + rule
			}
		}
		if room.DecoyBadBots && q.Bots != nil {
			bad, err := q.Bots.Bad(q.sent)
			if err != nil {
				q.Logf("room %s: bot detection failed, so the request is not judged a bad bot: %v", room.Name, err)
			}
			if bad {
				return "bad bot"
			}
		}
		return ""
	}
}

// solutions is queue.Solutions in the POP's cache: the first client to
// join with an arrival (or decoy) pass is kept under its id for as long as
// such a pass lives. Another POP keeps its own record, so a replay is
// caught where it is made through the same POP, as bots sharing a solved
// pass from one place do.
type solutions struct{ cache Cache }

func (s solutions) Spend(room *queue.Room, arrival, client string) (string, error) {
	b, err := s.cache.GetOrSet("wr-solved/"+room.Name+"/"+arrival, func() ([]byte, time.Duration, error) {
		return []byte(client), queue.DecoyTTL, nil
	})
	return string(b), err
}

// decoy answers a request judged hostile with its place in the decoy line:
// the room's queue page (or JSON) as a waiting visitor's, whose script
// does the way out's work and comes back, counted in DecoyCounter.
func (q *request) decoy(w fsthttp.ResponseWriter, r *fsthttp.Request, room *queue.Room, d queue.Decision) {
	if q.Limits != nil {
		if _, err := q.Limits.Count(DecoyCounter, room.Name); err != nil {
			q.Logf("room %s: decoy not counted: %v", room.Name, err)
		}
	}
	q.queuePage(w, r, room, d)
}
