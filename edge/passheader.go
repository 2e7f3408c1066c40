// What a client asks of the line in the waiting room's own request
// headers, read before stripReserved removes them (the origin never sees
// them): the pass of an app without a cookie jar, and whether a request
// is the queue's poll.

package edge

import (
	"strconv"

	"github.com/edgequeue/waitingroom/queue"
	"github.com/fastly/compute-sdk-go/fsthttp"
)

// PassHeader carries a room's pass for a client that keeps no cookies (a
// native app, a script): in a request, the passes the client holds, as
// `name=pass` pairs separated by `;` as in a Cookie header, each name a
// room's cookie_name; in a response, the pass the edge issued,
// `name=pass`, or `name=` when the pass is withdrawn. Authorization is
// left to the origin.
const PassHeader = ReservedPrefix + "Pass"

// PollHeader marks a request as a poll of the visitor's place (the queue
// page's script sends "1"): when the gate admits it, the edge answers
// "admitted" itself instead of forwarding the poll to the origin.
const PollHeader = ReservedPrefix + "Poll"

// WorkHeader carries the solution of the proof of work a room asks of a
// newcomer (package challenge) for a client that is not the work page: the
// nonce found for the challenge the edge answered with ("work"), sent with
// the arrival pass. A browser's work page keeps it in the cookie named by
// workCookie instead.
const WorkHeader = ReservedPrefix + "Work"

// Bounds on PassHeader: a client holds one pass per room it is in, a few
// hundred bytes each. Beyond them the header is ignored (and logged), so a
// bloated one costs no more than a scan of its length.
const (
	maxPassLines = 4
	maxPassBytes = 8 << 10
)

// asked is what a request asked of the line in the reserved headers.
type asked struct {
	// passes are the PassHeader lines, when within bounds.
	passes []string
	// passHeader is true when the request carried PassHeader at all
	// (even empty, even oversized): the client reads passes there.
	passHeader bool
	// json is true when the request asked for JSON (Accept).
	json bool
	// poll is true for PollHeader: 1.
	poll bool
	// refused says why PassHeader was ignored, for the log, or is "".
	refused string
	// work is WorkHeader's value, "" without one.
	work string
}

// readAsked reads what r asks of the line, before the reserved headers
// are stripped.
func readAsked(r *fsthttp.Request) asked {
	a := asked{json: wantsJSON(r), poll: r.Header.Get(PollHeader) == "1", work: r.Header.Get(WorkHeader)}
	lines := r.Header.Values(PassHeader)
	a.passHeader = len(lines) > 0
	size := 0
	for _, l := range lines {
		size += len(l)
	}
	switch {
	case len(lines) > maxPassLines:
		a.refused = strconv.Itoa(len(lines)) + " lines, more than " + strconv.Itoa(maxPassLines)
	case size > maxPassBytes:
		a.refused = strconv.Itoa(size) + " bytes, more than " + strconv.Itoa(maxPassBytes)
	default:
		a.passes = lines
	}
	return a
}

// passValues are the values of room's pass a request offers: its cookies
// and, for a client without a cookie jar, its PassHeader. Both are read
// alike and bounded together (queue.CookieValues), and the gate verifies
// each for this room: a pass another room issued is refused as a forged
// one would be.
func (q *request) passValues(r *fsthttp.Request, room *queue.Room) []string {
	lines := r.Header.Values("Cookie")
	if len(q.asked.passes) > 0 {
		lines = append(lines[:len(lines):len(lines)], q.asked.passes...)
	}
	return queue.CookieValues(lines, room.CookieName)
}

// workCookie is the cookie in which room's work page keeps the solution
// of its proof of work.
func workCookie(room *queue.Room) string { return room.CookieName + "_work" }

// work is every solution of the proof of work r offers for room: its
// WorkHeader, then each value of its work page's cookie. All are tried,
// as passes are: a cookie planted from a sibling domain comes first, and
// must not hide the browser's own.
func (q *request) work(r *fsthttp.Request, room *queue.Room) []string {
	v := queue.CookieValues(r.Header.Values("Cookie"), workCookie(room))
	if q.asked.work != "" {
		v = append([]string{q.asked.work}, v...)
	}
	return v
}

// givePass sets PassHeader for a client that reads it (one that sent the
// header or asked for JSON): pass is room's new pass, or "" to withdraw
// it.
func (q *request) givePass(h fsthttp.Header, room *queue.Room, pass string) {
	if q.asked.passHeader || q.asked.json {
		h.Set(PassHeader, room.CookieName+"="+pass)
	}
}
