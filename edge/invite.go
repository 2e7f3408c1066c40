// Invite links: GET /_wr/invite?code=… seats the visitor in a room's
// priority lane and sends them on to the invite's page.

package edge

import (
	"context"
	"errors"
	"fmt"
	"strconv"
	"time"

	"github.com/edgequeue/waitingroom/match"
	"github.com/edgequeue/waitingroom/queue"
	"github.com/edgequeue/waitingroom/urlnorm"
	"github.com/fastly/compute-sdk-go/fsthttp"
)

// InvitePath is where invite links point: InvitePath + "?code=" + a code
// from queue.KeySet.MintInvite.
const InvitePath = "/_wr/invite"

// Refused invites: more than maxBadInvites in a minute from one client
// (ClientKey) put it in the penalty box for badInvitePenalty, where every
// invite link it follows is refused before its code is read. Codes are
// signed, so guessing one is hopeless anyway; the box makes a flood of
// them cost an Edge Rate Limiting lookup each, not an HMAC (nor, for a
// used-up code replayed, a store call).
const (
	maxBadInvites    = 10
	badInvitePenalty = 5 * time.Minute
	// badInvites names the counter and the penalty box in Limits.
	badInvites = "invite_refused"
)

// invite answers an invite link: a valid code gets the room's pass
// cookie for a place in its priority lane (as the line sets it) and a 303
// to the invite's path; anything else, a page saying what is wrong with
// the link and a log line saying why.
func (q *request) invite(ctx context.Context, w fsthttp.ResponseWriter, r *fsthttp.Request, t target) {
	w.Header().Set("Cache-Control", "no-store")
	if r.Method != fsthttp.MethodGet {
		// Not even HEAD: link checkers send it, and must not take a use.
		w.Header().Set("Allow", "GET")
		w.WriteHeader(fsthttp.StatusMethodNotAllowed)
		return
	}
	if !q.guard(w, r, t) {
		return
	}
	client := clientKey(r)
	if q.boxedForInvites(client) {
		q.Logf("invite: refused: client %q followed more than %d bad invite links in a minute", client, maxBadInvites)
		w.Header().Set("Retry-After", strconv.Itoa(int(badInvitePenalty/time.Second)))
		q.problem(w, fsthttp.StatusTooManyRequests, "Too many invalid invitation links",
			"This network has followed many invitation links that were not valid. Please wait a few minutes and try again.")
		return
	}
	gate, ok := q.lineGate(w, "invite")
	if !ok {
		return
	}
	inv, err := gate.Keys.ParseInvite(r.URL.Query().Get("code"), q.now)
	if err != nil {
		q.inviteRefused(w, client, err)
		return
	}
	room := q.inviteRoom(r, t, inv)
	if room == nil {
		if q.settings.RoomsBroken {
			q.problem(w, fsthttp.StatusServiceUnavailable, "Temporarily unavailable",
				"This site's waiting room is being set up. Please try the link again in a minute.")
			return
		}
		q.inviteRefused(w, client, fmt.Errorf("%w: %w: no room %q takes %q on host %q", queue.ErrBadInvite, queue.ErrInviteWrongRoom, inv.Room, inv.To, t.host))
		return
	}
	d, err := gate.Invited(ctx, room, inv, q.visitor(r, room))
	if err != nil {
		q.inviteRefused(w, client, err)
		return
	}
	switch d.Action {
	case queue.Admit, queue.Wait:
		if d.FailOpen {
			q.Logf("room %s: invite %s (%s): %v", room.Name, inv.ID, d.Why, d.Err)
			if unresolvable(d.Err) {
				q.Logf("setup: %v", backendUnresolvable("upstash", upstashExample))
			}
		} else {
			q.Logf("room %s: invite %s: %s (%s)", room.Name, inv.ID, d.Action, d.Why)
		}
		if c := q.cookie(room, d); c != "" {
			w.Header().Add("Set-Cookie", c)
		}
		w.Header().Set("Location", inv.To)
		q.problem(w, fsthttp.StatusSeeOther, "Taking you to your place", "You are being taken to the site.")
	case queue.Closed:
		w.Header().Set("Retry-After", "300")
		q.problem(w, fsthttp.StatusServiceUnavailable, "Closed for now",
			"This part of the site is closed at the moment. Please come back later; your invitation has not been used.")
	default:
		q.Logf("room %s: invite %s: busy (%s): %v", room.Name, inv.ID, d.Why, d.Err)
		if unresolvable(d.Err) {
			q.notSetUp(w, backendUnresolvable("upstash", upstashExample))
			return
		}
		// The busy page refreshes itself, following the link again.
		q.busy(w, r, room)
	}
}

// inviteRoom is the room inv opens for the visitor of r: its own, when the
// rules would put the visitor's request for inv's path (on this host) in
// that room's line (a more specific room on the same paths would take the
// request, and a bypass rule needs no place); else nil.
func (q *request) inviteRoom(r *fsthttp.Request, t target, inv queue.Invite) *queue.Room {
	p, err := urlnorm.ParsePath(inv.To)
	if err != nil {
		return nil
	}
	req := q.rulesRequest(r, t)
	req.Method, req.Paths = fsthttp.MethodGet, []string{p.Literal, p.Loose}
	j, err := match.Judge(q.settings.Rooms, q.settings.Bypass, req)
	if err != nil {
		q.Logf("invite: rules: %v", err)
	}
	if !j.Protected || j.Room.Name != inv.Room {
		return nil
	}
	return j.Room
}

// boxedForInvites reports whether client is in the penalty box for bad
// invite links. A Limits that fails limits nothing, and says so.
func (h *Handler) boxedForInvites(client string) bool {
	if h.Limits == nil || client == "" {
		return false
	}
	in, err := h.Limits.Penalized(badInvites, client)
	if err != nil {
		h.Logf("invite: %v; bad invite links not limited", err)
	}
	return in
}

// inviteRefused answers a refused invite link with a page saying what is
// wrong with it in the visitor's terms, logs the reason in the operator's,
// and counts it against the client.
func (q *request) inviteRefused(w fsthttp.ResponseWriter, client string, err error) {
	q.Logf("invite: refused for %q: %v", client, err)
	q.countBadInvite(client)
	switch {
	case errors.Is(err, queue.ErrInviteExpired):
		q.problem(w, fsthttp.StatusGone, "This invitation has expired",
			"The invitation link you followed is no longer valid. Ask whoever sent it for a new one.")
	case errors.Is(err, queue.ErrInviteSpent):
		q.problem(w, fsthttp.StatusGone, "This invitation has been used",
			"Every place this invitation offered has been taken. If you used it before, go back to the page it took you to in the same browser.")
	case errors.Is(err, queue.ErrInviteNotYetValid):
		q.problem(w, fsthttp.StatusForbidden, "This invitation is not valid yet",
			"The invitation link you followed opens later. Please follow it again at the time you were given.")
	case errors.Is(err, queue.ErrInviteWrongRoom), errors.Is(err, queue.ErrInvitePath), errors.Is(err, queue.ErrNoPriorityLane):
		q.problem(w, fsthttp.StatusNotFound, "This invitation is not valid here",
			"The invitation link you followed is not for this part of the site, or this site no longer takes invitations.")
	default:
		q.problem(w, fsthttp.StatusBadRequest, "This invitation link is not valid",
			"The invitation link you followed is incomplete or was changed. Copy the whole link, or ask whoever sent it for a new one.")
	}
}

// countBadInvite counts a refused invite link against client, and puts a
// client over maxBadInvites a minute in the penalty box.
func (h *Handler) countBadInvite(client string) {
	if h.Limits == nil || client == "" {
		return
	}
	n, err := h.Limits.Count(badInvites, client)
	if err == nil && n > maxBadInvites {
		err = h.Limits.Penalize(badInvites, client, badInvitePenalty)
		if err == nil {
			h.Logf("invite: %d bad invite links in a minute from %s: refused for %v", n, client, badInvitePenalty)
		}
	}
	if err != nil {
		h.Logf("invite: %v; bad invite links not limited", err)
	}
}
