// The gate's decision, the third stage: a request to a protected room
// meets the gate, and its decision becomes a forward, a page, a redirect
// or a refusal; a newcomer the room judges hostile is given a decoy's
// place.

package edge

import (
	"context"
	"net/netip"
	"strconv"
	"time"

	"github.com/edgequeue/waitingroom/match"
	"github.com/edgequeue/waitingroom/queue"
	"github.com/fastly/compute-sdk-go/fsthttp"
)

// enter runs a request to room through the line.
func (q *request) enter(ctx context.Context, w fsthttp.ResponseWriter, r *fsthttp.Request, room *queue.Room) {
	room = room.At(q.now)
	q.allowCORS(w.Header(), r, room)
	gate, ok := q.lineGate(w, "room "+room.Name)
	if !ok {
		return
	}
	v := q.visitor(r, room)
	d := gate.Decide(ctx, room, v)
	q.log.decided(d)
	if d.Pass != "" {
		q.givePass(w.Header(), room, d.Pass)
	}
	if len(v.Work) > 0 && q.asked.work == "" && (d.Action == queue.Wait || d.Action == queue.Admit || d.Action == queue.Decoy) {
		// The work page's cookie has served its join: kept, it would
		// be offered as the solution of the visitor's next arrival
		// pass (a place lost), and fail it. A decoy's is dropped too,
		// solved or not, as a real place's is: its answer must not
		// differ.
		w.Header().Add("Set-Cookie", workCookie(room)+"=; Path=/; Max-Age=0; SameSite=Lax")
	}
	switch d.Action {
	case queue.Admit:
		switch {
		case d.FailOpen:
			q.Logf("room %s: admit (%s): %v", room.Name, d.Why, d.Err)
			if unresolvable(d.Err) {
				q.Logf("setup: %v", backendUnresolvable("upstash", upstashExample))
			}
			r.Header.Set(FailOpenHeader, "store-unavailable")
		case d.Why != "session":
			q.Logf("room %s: admit (%s)%s", room.Name, d.Why, refusal(d.Err))
		}
		if q.asked.poll && q.asked.json {
			q.admitted(w, r, room, d)
			return
		}
		if q.marked && !q.asked.json && !q.asked.passHeader {
			q.unmark(w, r, room, d)
			return
		}
		q.forward(ctx, w, r, q.cookie(room, d), func(cmds []string) string {
			c := q.obey(ctx, gate, room, d, cmds)
			if c != "" {
				// forward keeps the edge's pass header over the origin's.
				q.givePass(w.Header(), room, "")
			}
			return c
		})
	case queue.Wait:
		q.Logf("room %s: wait (%s) ticket %d, now serving %d%s", room.Name, d.Why, d.Place.Ticket, d.Place.Admitted, refusal(d.Err))
		q.queuePage(w, r, room, d)
	case queue.Arrive, queue.Work:
		switch {
		case d.Action == queue.Work && d.Pass == "":
			// %.40q: the nonce is the visitor's to write, at any length.
			q.Logf("room %s: join refused: %v (offered %.40q); the challenge of %d bits is asked again", room.Name, d.Err, q.work(r, room), d.Challenge.Bits)
		case d.Err != nil:
			q.Logf("room %s: arrival%s", room.Name, refusal(d.Err))
		}
		q.arrival(w, r, room, d, gate.Keys)
	case queue.Decoy:
		q.Logf("room %s: decoy (%s), client %q", room.Name, d.Why, clientKey(r))
		q.decoy(w, r, room, d)
	case queue.Limited:
		q.Logf("room %s: join refused: %s (client %q, network %s)", room.Name, d.Why, clientKey(r), NetworkKey(clientAddr(clientIP(r))))
		q.limited(w, r, room)
	case queue.Closed:
		q.closed(w, r, room)
	default:
		q.Logf("room %s: busy (%s): %v", room.Name, d.Why, d.Err)
		if unresolvable(d.Err) {
			// Not an outage that retrying cures: the backend's address
			// is wrong, so say what to set rather than "busy".
			q.notSetUp(w, backendUnresolvable("upstash", upstashExample))
			return
		}
		q.busy(w, r, room)
	}
}

// visitor is what the gate needs to know of r for room.
func (q *request) visitor(r *fsthttp.Request, room *queue.Room) queue.Visitor {
	ip := clientIP(r)
	v := queue.Visitor{
		Passes: q.passValues(r, room),
		Bind:   queue.Binding(room.BindSession, r.Header.Get("User-Agent"), ip),
		Client: ClientKey(ip),
		Addr:   clientAddr(ip),
		Work:   q.work(r, room),
		Now:    q.now,
	}
	if room.Decoys() {
		// Only a room with a decoy line judges its newcomers.
		v.Hostile = q.hostile(room, v.Addr)
	}
	return v
}

// arrival sends a visitor without a pass straight back with an arrival
// pass: a browser follows at once with the cookie and joins; a client that
// drops cookies comes back with nothing, and has cost no place and no
// store call. When the room asks for work first (queue.Work), the work
// page sends the visitor back once it is done (workPage) instead. The URL
// it is sent back to carries the arrival mark, so a
// request that comes back marked and still without a pass is answered
// with the cookies page (noCookies) rather than another redirect: at most
// one redirect, never a loop. A mark that is not this client's, recent
// and this room's is ignored (logged), and the request is sent back
// freshly marked like any other.
//
// A client that keeps its pass in PassHeader would lose it along a
// redirect (a client library follows it without the header), so it gets
// 202 and the pass in the header, and asks again at once: the same round
// trip, and the same nothing for a client that drops it.
func (q *request) arrival(w fsthttp.ResponseWriter, r *fsthttp.Request, room *queue.Room, d queue.Decision, keys *queue.KeySet) {
	h := w.Header()
	h.Set("Cache-Control", "no-store")
	// Only a request with no pass at all is from a client that dropped
	// one: a pass refused, or a place lost (the gate sends its holder
	// here to join again), came back, so the client keeps cookies.
	if q.marked && !q.asked.passHeader && len(q.passValues(r, room)) == 0 {
		age, err := checkMark(keys, room.Name, r, q.mark, q.now)
		if err == nil {
			q.noCookies(w, r, room, age)
			return
		}
		// %.40q: the mark is the visitor's to write, at any length.
		q.Logf("room %s: arrival mark %.40q ignored: %v", room.Name, q.mark, err)
	}
	h.Set("Retry-After", "0")
	if d.Pass != "" {
		h.Add("Set-Cookie", q.cookie(room, d))
	}
	next := marked(r, MarkArrival(keys, room.Name, r.Header.Get("User-Agent"), clientIP(r), q.now))
	if d.Action == queue.Work {
		q.workPage(w, r, room, d.Challenge, next)
		return
	}
	if q.asked.passHeader {
		q.json(w, fsthttp.StatusAccepted, arrivalJSON{room.Name, "joining", 0, 0})
		return
	}
	h.Set("Location", next)
	if wantsJSON(r) {
		q.json(w, fsthttp.StatusTemporaryRedirect, arrivalJSON{room.Name, "joining", 0, 0})
		return
	}
	q.problem(w, fsthttp.StatusTemporaryRedirect, "Joining the line",
		"You are being taken to the waiting room. If this page stays, allow cookies for this site: the waiting room keeps your place in one.")
}

// admitted answers a poll (PollHeader) the gate admits, instead of
// forwarding it: the client goes on to url with the session pass, and
// the origin never sees the poll. url is the request's path in normal
// form (never "//host": see urlnorm) and query.
func (q *request) admitted(w fsthttp.ResponseWriter, r *fsthttp.Request, room *queue.Room, d queue.Decision) {
	h := w.Header()
	h.Set("Cache-Control", "no-store")
	if c := q.cookie(room, d); c != "" {
		h.Add("Set-Cookie", c)
	}
	q.json(w, fsthttp.StatusOK, admittedJSON{Room: room.Name, Status: "admitted", URL: r.URL.RequestURI()})
}

// ClosedRetry is how long the closed page asks a visitor to wait.
const ClosedRetry = 5 * time.Minute

// closed refuses a visitor without a session in a room that lets nobody
// new in (reject mode, or closed live by the operator).
func (q *request) closed(w fsthttp.ResponseWriter, r *fsthttp.Request, room *queue.Room) {
	if !wantsJSON(r) {
		q.closedPage(w, r, room) // in the visitor's language and the room's colours
		return
	}
	q.refuse(w, r, room, fsthttp.StatusServiceUnavailable, "closed", ClosedRetry, "", "")
}

// limited refuses a join from a client that joined too often.
func (q *request) limited(w fsthttp.ResponseWriter, r *fsthttp.Request, room *queue.Room) {
	q.refuse(w, r, room, fsthttp.StatusTooManyRequests, "limited", time.Minute, "Too many attempts to join",
		"Your network has joined this line many times in the last minute, so this attempt was not let in. Please wait a minute and try again; if you already hold a place, keep using the page that shows it.")
}

// refuse answers code with Retry-After: as JSON in state status, or as
// the problem page with title and message.
func (q *request) refuse(w fsthttp.ResponseWriter, r *fsthttp.Request, room *queue.Room, code int, status string, retry time.Duration,
	title, message string) {
	secs := int(retry / time.Second)
	w.Header().Set("Retry-After", strconv.Itoa(secs))
	if wantsJSON(r) {
		w.Header().Set("Cache-Control", "no-store")
		q.json(w, code, busyJSON{room.Name, status, secs})
		return
	}
	q.problem(w, code, title, message)
}

// refusal says, for a log line, why a pass the request offered was
// refused, or nothing.
func refusal(err error) string {
	if err == nil {
		return ""
	}
	return "; offered pass refused: " + err.Error()
}

// The decoy line (queue's Decoy): what only the edge knows to judge a
// newcomer hostile, the record that tells a replayed arrival from its
// first use, and the decoy's page.

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

// requestOrigin is r's Origin, when it sends exactly one.
func requestOrigin(r *fsthttp.Request) (string, bool) {
	v := r.Header.Values("Origin")
	if len(v) != 1 {
		return "", false
	}
	return v[0], true
}

// allowCORS lets a script on r's origin read room's answer, when room
// lists the origin. A room that lists any origin answers each origin
// differently, hence Vary: Origin on all its answers.
func (q *request) allowCORS(h fsthttp.Header, r *fsthttp.Request, room *queue.Room) {
	if len(room.CORSOrigins) == 0 {
		return
	}
	h.Add("Vary", "Origin")
	origin, ok := requestOrigin(r)
	if !ok || !room.AllowsOrigin(origin) {
		return
	}
	h.Set("Access-Control-Allow-Origin", origin)
	h.Set("Access-Control-Allow-Credentials", "true")
	h.Set("Access-Control-Expose-Headers", PassHeader+", Retry-After")
}
