// Where a request goes, decided by the rules alone: the edge's own paths,
// then the rooms and their bypass rules. The edge serves what Route
// decides, and `wrconfig explain` prints it, so the two never disagree.

package edge

import (
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
