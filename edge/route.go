// The room, the second stage: where a request goes, decided by the rules
// alone (the edge's own paths, then the rooms and their bypass rules), and
// the CORS preflight a room's listed origins get at the edge. The edge
// serves what Route decides, and `wrconfig explain` prints it, so the two
// never disagree.

package edge

import (
	"strconv"
	"strings"

	"github.com/edgequeue/waitingroom/heartbeat"
	"github.com/edgequeue/waitingroom/match"
	"github.com/edgequeue/waitingroom/queue"
	"github.com/fastly/compute-sdk-go/fsthttp"
)

// BypassHeader tells the origin that a request reached it by a bypass
// rule, and which ("ip", "global:method", ...; see match.Bypass.Match),
// so the origin can tell a health checker's request from a visitor's. It
// is under ReservedPrefix: a visitor's own is removed.
const BypassHeader = ReservedPrefix + "Bypass"

// Destination is where the rules send a request.
type Destination int

// The destinations, in the order Route tries them.
const (
	// ToAdmin is the admin panel (admin_path and below).
	ToAdmin Destination = iota
	// ToAPI is the admin API (api_path and below).
	ToAPI
	// ToLeave is the departure beacon (LeavePath).
	ToLeave
	// ToInvite is an invite link into a room's priority lane (InvitePath).
	ToInvite
	// ToHeartbeat is an origin page's heartbeat (heartbeat.Path).
	ToHeartbeat
	// ToHeartbeatScript is the heartbeat script (heartbeat.ScriptPath).
	ToHeartbeatScript
	// ToLine is a room's line: the request needs a place in it.
	ToLine
	// ToBypass is the origin, by a bypass rule of the request's room or
	// the global ones: no place, no count, no store call.
	ToBypass
	// ToOrigin is the origin, untouched: the request is in no room.
	ToOrigin
	// ToUnavailable is a 503: the request is in no valid room while some
	// room is broken, which may have been meant to hold it.
	ToUnavailable
)

var destinationNames = [...]string{"admin panel", "admin API", "departure beacon", "invite link", "heartbeat", "heartbeat script", "line", "bypass", "origin", "unavailable"}

// String names the destination, for explanations and logs.
func (d Destination) String() string {
	if d < 0 || int(d) >= len(destinationNames) {
		return "unknown"
	}
	return destinationNames[d]
}

// Route decides where req goes under these settings. The admin panel, the admin
// API, the departure beacon, invite links and the heartbeat are matched on the literal path
// (req.Paths[0]); then
// match.Judge places it among the rooms. The judgement says which room and
// bypass rule; err is the platform's failures Judge worked around, for
// the log.
func (s Settings) Route(req *match.Request) (Destination, match.Judgement[*queue.Room], error) {
	if len(req.Paths) == 0 {
		return ToOrigin, match.Judgement[*queue.Room]{}, nil
	}
	path := req.Paths[0]
	switch {
	case path == s.AdminPath || strings.HasPrefix(path, s.AdminPath+"/"):
		return ToAdmin, match.Judgement[*queue.Room]{}, nil
	case s.APIPath != "" && (path == s.APIPath || strings.HasPrefix(path, s.APIPath+"/")):
		return ToAPI, match.Judgement[*queue.Room]{}, nil
	case path == LeavePath:
		return ToLeave, match.Judgement[*queue.Room]{}, nil
	case path == InvitePath:
		return ToInvite, match.Judgement[*queue.Room]{}, nil
	case path == heartbeat.Path:
		return ToHeartbeat, match.Judgement[*queue.Room]{}, nil
	case path == heartbeat.ScriptPath:
		return ToHeartbeatScript, match.Judgement[*queue.Room]{}, nil
	}
	j, err := match.Judge(s.Rooms, s.Bypass, req)
	switch {
	case j.Protected:
		return ToLine, j, err
	case j.Bypass != "":
		return ToBypass, j, err
	case s.RoomsBroken:
		return ToUnavailable, j, err
	}
	return ToOrigin, j, err
}

// rulesRequest is what the rules see of r, whose target is t.
func (q *request) rulesRequest(r *fsthttp.Request, t target) *match.Request {
	return &match.Request{
		Host:   t.host,
		Paths:  []string{t.path.Literal, t.path.Loose},
		Method: r.Method,
		Header: r.Header.Values,
		Cookie: func(name string) (string, bool) {
			v := queue.CookieValues(r.Header.Values("Cookie"), name)
			if len(v) == 0 {
				return "", false
			}
			return v[0], true
		},
		IP:    clientAddr(clientIP(r)),
		Facts: facts{q},
	}
}

// Cross-origin reads of a room's answers: scripts on the origins a room
// lists in cors_origins may read its JSON (and pages) with the visitor's
// credentials, and their preflights are answered here, at the edge.

// Bounds on a preflight's Access-Control-Request-Headers: a browser names
// the few non-simple headers the script sets.
const (
	maxPreflightHeaders     = 32
	maxPreflightHeaderBytes = 2048
)

// PreflightMaxAge is how long (seconds) a browser may reuse the edge's
// answer to a preflight.
const PreflightMaxAge = "600"

// preflight answers a CORS preflight (OPTIONS with Origin and
// Access-Control-Request-Method) for room j.Room, and reports whether it
// did. Preflights carry no credentials, so in the line they could only
// ever get an arrival redirect, which browsers treat as a failure; and
// forwarding them would let an OPTIONS flood reach the origin without a
// place. So:
//   - from an origin the room lists: 204 with the CORS headers, to a
//     protected path or one a bypass rule lets through (the operator
//     listed the origin for the room's clients);
//   - from any other origin to a protected path: 403 without CORS
//     headers;
//   - from any other origin to a bypassed path: not answered here; the
//     bypass rule sends it to the origin, whose own CORS it is.
//
// Either way the edge asks no store and sends nothing to the origin.
func (q *request) preflight(w fsthttp.ResponseWriter, r *fsthttp.Request, dest Destination, room *queue.Room) bool {
	if r.Method != fsthttp.MethodOptions || room == nil || dest != ToLine && dest != ToBypass ||
		len(r.Header.Values("Access-Control-Request-Method")) == 0 {
		return false
	}
	origin, ok := requestOrigin(r)
	listed := ok && room.AllowsOrigin(origin)
	if !listed && dest != ToLine {
		return false
	}
	h := w.Header()
	h.Set("Cache-Control", "no-store")
	h.Add("Vary", "Origin, Access-Control-Request-Method, Access-Control-Request-Headers")
	if !listed {
		q.Logf("room %s: preflight refused: Origin %q is not in cors_origins", room.Name, strings.Join(r.Header.Values("Origin"), ", "))
		w.WriteHeader(fsthttp.StatusForbidden)
		return true
	}
	method, allow, why := preflightAsks(r.Header)
	if why != "" {
		q.Logf("room %s: preflight from %q refused: %s", room.Name, origin, why)
		q.problem(w, fsthttp.StatusBadRequest, "Bad request", "This preflight cannot be answered: its "+why+".")
		return true
	}
	h.Set("Access-Control-Allow-Origin", origin)
	h.Set("Access-Control-Allow-Credentials", "true")
	h.Set("Access-Control-Allow-Methods", method)
	h.Set("Access-Control-Allow-Headers", allow)
	h.Set("Access-Control-Max-Age", PreflightMaxAge)
	w.WriteHeader(fsthttp.StatusNoContent)
	return true
}

// preflightAsks reads a preflight's request: the method, and the headers
// to allow (those asked for, and always the waiting room's own), or why
// they cannot be answered.
func preflightAsks(h fsthttp.Header) (method, allow, why string) {
	methods := h.Values("Access-Control-Request-Method")
	if len(methods) != 1 || !match.IsToken(methods[0]) {
		return "", "", "Access-Control-Request-Method is not one method name"
	}
	asked := h.Values("Access-Control-Request-Headers")
	size := 0
	for _, l := range asked {
		size += len(l)
	}
	if size > maxPreflightHeaderBytes {
		return "", "", "Access-Control-Request-Headers is longer than " + strconv.Itoa(maxPreflightHeaderBytes) + " bytes"
	}
	names := []string{PassHeader, PollHeader}
	for _, l := range asked {
		for _, name := range strings.Split(l, ",") {
			name = strings.TrimSpace(name)
			switch {
			case name == "":
				continue
			case !match.IsToken(name):
				return "", "", "Access-Control-Request-Headers holds " + strconv.Quote(name[:min(len(name), 40)]) + ", which is not a header name"
			case len(names) == maxPreflightHeaders:
				return "", "", "Access-Control-Request-Headers names more than " + strconv.Itoa(maxPreflightHeaders-2) + " headers"
			case !hasFold(names, name):
				names = append(names, strings.ToLower(name))
			}
		}
	}
	return methods[0], strings.Join(names, ", "), ""
}

// hasFold reports whether names holds name in any case.
func hasFold(names []string, name string) bool {
	for _, n := range names {
		if strings.EqualFold(n, name) {
			return true
		}
	}
	return false
}
