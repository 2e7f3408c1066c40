// An admitted visitor's session, beside the line: the heartbeat that keeps
// it while an origin page is visible, and the leave link that ends it.

package edge

import (
	"context"
	"fmt"
	"net/url"

	"github.com/edgequeue/waitingroom/heartbeat"
	"github.com/edgequeue/waitingroom/queue"
	"github.com/edgequeue/waitingroom/urlnorm"
	"github.com/fastly/compute-sdk-go/fsthttp"
)

// The heartbeat of origin pages (package heartbeat's script): it keeps an
// admitted reader's session while their page is visible, so a room's
// inactivity timeout can be short without throwing readers out.

// heartbeatJSON answers a heartbeat: the rooms whose pass the visitor
// sent, whether each still holds their session, when to ping next (the
// shortest heartbeat of those rooms; 0 when none is held: nothing to
// keep), and whether the page should send the departure beacon when left.
type heartbeatJSON struct {
	Rooms       []heartbeatRoom `json:"rooms"`
	NextSeconds int             `json:"next_seconds"`
	LeaveBeacon bool            `json:"leave_beacon"`
}

type heartbeatRoom struct {
	Room   string `json:"room"`
	Active bool   `json:"active"`
}

// heartbeatPing keeps the visitor's sessions in every room on this host
// whose pass they sent (queue.Gate.Keep): no store call inside a room's
// heartbeat, one when due, none for a visitor without a session. It never
// joins a line.
func (q *request) heartbeatPing(ctx context.Context, w fsthttp.ResponseWriter, r *fsthttp.Request) {
	w.Header().Set("Cache-Control", "no-store")
	if r.Method != fsthttp.MethodPost {
		q.Logf("heartbeat: refused: method %q, not POST", r.Method)
		w.Header().Set("Allow", "POST")
		plain(w, fsthttp.StatusMethodNotAllowed, "the heartbeat takes POST only\n")
		return
	}
	if why := crossSite(r); why != "" {
		// As for the departure beacon: another site must not learn, with
		// the visitor's cookie, whether they hold a place.
		q.Logf("heartbeat: refused: %s", why)
		plain(w, fsthttp.StatusForbidden, "the heartbeat is for this site's own pages\n")
		return
	}
	answer := heartbeatJSON{Rooms: []heartbeatRoom{}}
	var gate *queue.Gate
	for _, room := range q.settings.Rooms {
		if !room.Serves(r.Host) {
			continue
		}
		v := q.visitor(r, room)
		if len(v.Passes) == 0 {
			continue
		}
		if gate == nil {
			var err error
			if gate, err = q.gate(); err != nil {
				q.Logf("heartbeat: cannot run the line: %s", describe(err))
				w.Header().Set("Retry-After", "10")
				plain(w, fsthttp.StatusServiceUnavailable, "the waiting room cannot keep sessions at the moment\n")
				return
			}
		}
		d := gate.Keep(ctx, room, v)
		active := d.Action == queue.Admit
		answer.Rooms = append(answer.Rooms, heartbeatRoom{room.Name, active})
		switch {
		case d.Err != nil:
			q.Logf("room %s: heartbeat (%s): %v", room.Name, d.Why, d.Err)
		case d.Why != "session":
			q.Logf("room %s: heartbeat (%s)", room.Name, d.Why)
		}
		if !active {
			continue
		}
		if c := q.cookie(room, d); c != "" {
			w.Header().Add("Set-Cookie", c)
		}
		every := heartbeat.Every(room.At(q.now).Heartbeat())
		if answer.NextSeconds == 0 || every < answer.NextSeconds {
			answer.NextSeconds = every
		}
		answer.LeaveBeacon = answer.LeaveBeacon || room.LeaveBeacon
	}
	q.json(w, fsthttp.StatusOK, answer)
}

// heartbeatScript serves the heartbeat script with no store call: cached
// for a year when asked for by its version (a new script has a new one),
// for five minutes otherwise, so an unversioned tag picks up a new script
// soon.
func (q *request) heartbeatScript(w fsthttp.ResponseWriter, r *fsthttp.Request) {
	if r.Method != fsthttp.MethodGet && r.Method != fsthttp.MethodHead {
		q.Logf("heartbeat script: refused: method %q, not GET", r.Method)
		w.Header().Set("Allow", "GET, HEAD")
		plain(w, fsthttp.StatusMethodNotAllowed, "the heartbeat script takes GET or HEAD only\n")
		return
	}
	version := heartbeat.Version()
	h := w.Header()
	h.Set("Content-Type", "text/javascript; charset=utf-8")
	h.Set("ETag", `"`+version+`"`)
	if r.URL.Query().Get("v") == version {
		h.Set("Cache-Control", "public, max-age=31536000, immutable")
	} else {
		h.Set("Cache-Control", "public, max-age=300")
	}
	if r.Header.Get("If-None-Match") == `"`+version+`"` {
		w.WriteHeader(fsthttp.StatusNotModified)
		return
	}
	w.WriteHeader(fsthttp.StatusOK)
	if r.Method == fsthttp.MethodGet {
		w.Write([]byte(heartbeat.Script))
	}
}

// plain answers code with a short text saying why.
func plain(w fsthttp.ResponseWriter, code int, msg string) {
	w.Header().Set("Content-Type", "text/plain; charset=utf-8")
	w.WriteHeader(code)
	w.Write([]byte(msg))
}

// LeavePath is where pages send a departure beacon
// (navigator.sendBeacon("/_wr/leave")) to end the visitor's sessions at
// once, freeing their places for the next in line.
const LeavePath = "/_wr/leave"

// leave ends the visitor's sessions in every room on this host.
func (q *request) leave(ctx context.Context, w fsthttp.ResponseWriter, r *fsthttp.Request) {
	w.Header().Set("Cache-Control", "no-store")
	if r.Method != fsthttp.MethodPost {
		w.Header().Set("Allow", "POST")
		w.WriteHeader(fsthttp.StatusMethodNotAllowed)
		return
	}
	if why := crossSite(r); why != "" {
		// A page on another site must not end a visitor's session by
		// posting here with their cookie (SameSite=Lax would not stop a
		// top-level form post): only the site's own pages may.
		q.Logf("leave: refused: %s", why)
		w.WriteHeader(fsthttp.StatusForbidden)
		return
	}
	gate, err := q.gate()
	if err != nil {
		q.Logf("leave: cannot run the line: %s", describe(err))
		w.WriteHeader(fsthttp.StatusServiceUnavailable)
		return
	}
	for _, room := range q.settings.Rooms {
		if !room.Serves(r.Host) {
			continue
		}
		ended, err := gate.End(ctx, room, q.visitor(r, room))
		if err != nil {
			q.Logf("room %s: leave failed: %v", room.Name, err)
			continue
		}
		if ended {
			q.Logf("room %s: visitor left", room.Name)
			w.Header().Add("Set-Cookie", expired(room))
		}
	}
	w.WriteHeader(fsthttp.StatusNoContent)
}

// crossSite says why r comes from another site, or "" when it does not:
// the browser's Sec-Fetch-Site when it sends one, else the Origin header
// against the request's host. A request with neither (an old browser, or
// a script with the cookie, which could as well end the session from the
// site itself) is let through.
func crossSite(r *fsthttp.Request) string {
	switch site := r.Header.Get("Sec-Fetch-Site"); site {
	case "", "same-origin", "same-site", "none":
	default:
		return fmt.Sprintf("Sec-Fetch-Site %q", site)
	}
	origin := r.Header.Get("Origin")
	if origin == "" {
		return ""
	}
	u, err := url.Parse(origin)
	if err != nil || u.Host == "" || !sameHost(u.Host, r.Host) {
		return fmt.Sprintf("Origin %q is not the host %q", origin, r.Host)
	}
	return ""
}

// sameHost compares two hosts in normal form (case, port and trailing dot
// aside); a host that has none is nobody's.
func sameHost(a, b string) bool {
	na, errA := urlnorm.Host(a)
	nb, errB := urlnorm.Host(b)
	return errA == nil && errB == nil && na != "" && na == nb
}
