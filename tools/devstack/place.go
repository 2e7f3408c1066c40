package devstack

import (
	"encoding/json"
	"net/url"
	"strings"

	"github.com/edgequeue/waitingroom/challenge"
	"github.com/edgequeue/waitingroom/edge"
)

// OriginReached is what the demo origin's pages say: an answer holding it
// came from the origin, not from the waiting room.
const OriginReached = "You reached the origin"

// Place is what a test reads of the room's JSON answer to a visitor:
// waiting with a ticket and how many are ahead, busy, or (from the
// origin's page) "admitted".
type Place struct {
	Status string `json:"status"`
	Ticket int64  `json:"ticket"`
	Ahead  int64  `json:"ahead"`
	// Challenge is the proof of work a "work" answer asks, or the way out
	// of the decoy line a doubted "waiting" answer offers.
	Challenge *Challenge `json:"challenge"`
}

// Challenge is a "work" answer's challenge: the nonce that solves it goes
// in Header.
type Challenge struct {
	Seed   string `json:"seed"`
	Bits   int    `json:"bits"`
	Header string `json:"header"`
}

// Solve finds the nonce that solves c, as an app does.
func (c Challenge) Solve() string {
	nonce, _ := challenge.Challenge{Seed: c.Seed, Bits: c.Bits}.Solve()
	return nonce
}

// ReadPlace reads an answer to a request made with Accept:
// application/json: the demo origin's page is Status "admitted".
func ReadPlace(body string) (Place, error) {
	if strings.Contains(body, OriginReached) {
		return Place{Status: "admitted"}, nil
	}
	var p Place
	err := json.Unmarshal([]byte(body), &p)
	return p, err
}

// Unmarked is location without the arrival mark (edge.ArrivalMark) the
// arrival redirect adds: the path and query a test asked for, when the
// answer sends the client back to it. A location that does not parse is
// returned as it is.
func Unmarked(location string) string {
	u, err := url.Parse(location)
	if err != nil {
		return location
	}
	edge.TakeArrivalMark(u)
	return u.RequestURI()
}
