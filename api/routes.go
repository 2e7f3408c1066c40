package api

import (
	"context"
	"errors"
	"fmt"
	"net/url"
	"sort"
	"strconv"
	"strings"
	"time"

	"github.com/edgequeue/waitingroom/control"
	"github.com/edgequeue/waitingroom/store"
	"github.com/fastly/compute-sdk-go/fsthttp"
)

// Route is one method and path the API serves, the path below api_path
// with {room} standing for a room's name, as the OpenAPI document writes
// them.
type Route struct{ Method, Path string }

// Routes lists every route the API serves, the OpenAPI document's
// included, so a test can hold the document to them.
func Routes() []Route {
	all := []Route{{fsthttp.MethodGet, docPath}}
	for _, rt := range routes() {
		all = append(all, Route{rt.method, rt.path})
	}
	return all
}

// route is a Route and how it is served.
type route struct {
	method, path string
	// query names the query parameters the route takes; any other is
	// refused.
	query []string
	serve func(h *Handler, c *call) error
}

// call is one authorized request to a route.
type call struct {
	ctx   context.Context
	w     fsthttp.ResponseWriter
	r     *fsthttp.Request
	room  string // the room the path names, one that exists
	query url.Values
}

// roomParam is where a route's path names a room.
const roomParam = "{room}"

// routes is the API's routes, in a function rather than a package-level
// table: the edge module initialises package-level variables with
// literals only (see package main).
// The operator's actions are control.Actions' routes.
func routes() []route {
	all := []route{
		{fsthttp.MethodGet, "/rooms", []string{"cursor"}, (*Handler).rooms},
		{fsthttp.MethodGet, "/rooms/{room}/stats", nil, (*Handler).stats},
		{fsthttp.MethodGet, "/rooms/{room}/history", []string{"minutes"}, (*Handler).history},
	}
	for _, a := range control.Actions() {
		all = append(all, route{a.Method, a.Path, nil, func(h *Handler, c *call) error { return h.act(c, a) }})
	}
	return append(all, route{fsthttp.MethodGet, "/audit", []string{"cursor", "limit"}, (*Handler).audit})
}

// match reports whether path (escaped, below Handler.Path) is rt's, and
// the room segment it holds, still escaped.
func (rt route) match(path string) (room string, ok bool) {
	want, got := strings.Split(rt.path, "/"), strings.Split(path, "/")
	if len(want) != len(got) {
		return "", false
	}
	for i, w := range want {
		switch {
		case w == roomParam && got[i] != "":
			room = got[i]
		case w != got[i]:
			return "", false
		}
	}
	return room, true
}

// route serves an authorized request for path, below Handler.Path.
func (h *Handler) route(ctx context.Context, w fsthttp.ResponseWriter, r *fsthttp.Request, path string) {
	var allow []string
	for _, rt := range routes() {
		room, ok := rt.match(path)
		switch {
		case !ok:
			continue
		case rt.method != r.Method:
			allow = append(allow, rt.method)
			continue
		}
		c := &call{ctx: ctx, w: w, r: r}
		if err := h.prepare(c, rt, room); err != nil {
			h.refuse(w, r, refusal(err))
			return
		}
		if err := rt.serve(h, c); err != nil {
			h.refuse(w, r, refusal(err))
		}
		return
	}
	if len(allow) > 0 {
		w.Header().Set("Allow", strings.Join(allow, ", "))
		h.refuse(w, r, &Error{Status: fsthttp.StatusMethodNotAllowed, Code: "method_not_allowed",
			Message: fmt.Sprintf("%s takes %s, not %q", path, strings.Join(allow, " or "), r.Method)})
		return
	}
	h.refuse(w, r, &Error{Status: fsthttp.StatusNotFound, Code: "no_such_route",
		Message: fmt.Sprintf("the API has no route %s (see %s%s)", quote(path), h.Path, docPath)})
}

// prepare checks what every route needs before it runs: the store, the
// room its path names, and its query parameters.
func (h *Handler) prepare(c *call, rt route, room string) error {
	if h.Operator == nil {
		return &Error{Status: fsthttp.StatusServiceUnavailable, Code: "store_unavailable",
			Message: "the waiting room's store cannot be used: " + h.Unavailable}
	}
	if strings.Contains(rt.path, roomParam) {
		name, err := url.PathUnescape(room)
		if err == nil {
			_, err = h.Operator.Room(name)
		}
		if err != nil {
			return &Error{Status: fsthttp.StatusNotFound, Code: "no_such_room", Field: "room",
				Message: fmt.Sprintf("there is no room %s", quote(room))}
		}
		c.room = name
	}
	q, err := url.ParseQuery(c.r.URL.RawQuery)
	if err != nil {
		return &Error{Status: fsthttp.StatusBadRequest, Code: "invalid_parameter", Message: "the query cannot be read: " + err.Error()}
	}
	// In name order, so that a query with two faults always gets the
	// same answer.
	names := make([]string, 0, len(q))
	for name := range q {
		names = append(names, name)
	}
	sort.Strings(names)
	for _, name := range names {
		switch {
		case !contains(rt.query, name):
			return &Error{Status: fsthttp.StatusBadRequest, Code: "unknown_parameter", Field: name,
				Message: fmt.Sprintf("%s takes no query parameter %s", rt.path, quote(name))}
		case len(q[name]) > 1:
			return &Error{Status: fsthttp.StatusBadRequest, Code: "invalid_parameter", Field: name, Message: "is given more than once"}
		}
	}
	c.query = q
	// A client that retries an action after an answer it did not get (a
	// timeout, a 503) sends the same key, so that the action applies only
	// where it has not yet (control.Operator.ActionID).
	h.Operator.ActionID = c.r.Header.Get(IdempotencyHeader)
	return nil
}

// IdempotencyHeader names an action, so that its retries are known as
// one: at most 64 of A-Z a-z 0-9 . _ : - (store.Action.ID).
const IdempotencyHeader = "Idempotency-Key"

// quote quotes a client's text for a message, cut to a length that keeps
// the message readable.
func quote(s string) string {
	const most = 80
	if len(s) > most {
		return fmt.Sprintf("%q…", s[:most])
	}
	return fmt.Sprintf("%q", s)
}

func contains(list []string, s string) bool {
	for _, v := range list {
		if v == s {
			return true
		}
	}
	return false
}

// actor is who the audit log says acted.
func (h *Handler) actor() store.Actor { return store.Actor{Via: "api", Client: h.Client} }

// RoomList is what GET /rooms answers: a page of the rooms' stats, in
// the order of the config's room index.
type RoomList struct {
	Rooms []control.Stats `json:"rooms"`
	// Next is the next page's address (path and query), null on the last.
	Next *string `json:"next"`
}

// rooms answers a page of rooms from the cursor, the index of the first:
// up to control.RoomsPerPage, as many as one request's store calls can
// read at their shards' cost (control.Page).
func (h *Handler) rooms(c *call) error {
	all := h.Operator.Rooms
	from, err := intParam(c.query, "cursor", 0, 0, len(all))
	if err != nil {
		return err
	}
	list := RoomList{Rooms: []control.Stats{}}
	to := control.Page(all, from, control.RoomsPerPage, control.MaxStoreCalls)
	for _, room := range all[from:to] {
		st, err := h.Operator.Stats(c.ctx, room.Name)
		if err != nil {
			return err
		}
		list.Rooms = append(list.Rooms, st)
	}
	if to < len(all) {
		list.Next = h.next("/rooms", url.Values{"cursor": {strconv.Itoa(to)}})
	}
	writeJSON(c.w, fsthttp.StatusOK, list)
	return nil
}

// next is the address of a route's next page.
func (h *Handler) next(route string, q url.Values) *string {
	s := h.Path + route + "?" + q.Encode()
	return &s
}

func (h *Handler) stats(c *call) error {
	st, err := h.Operator.Stats(c.ctx, c.room)
	if err != nil {
		return err
	}
	writeJSON(c.w, fsthttp.StatusOK, st)
	return nil
}

// History is what GET /rooms/{room}/history answers.
type History struct {
	Room string `json:"room"`
	// Minutes has one entry per minute of the span, oldest first.
	Minutes []control.Point `json:"minutes"`
}

func (h *Handler) history(c *call) error {
	minutes, err := intParam(c.query, "minutes", 60, 1, int(control.MaxHistory/time.Minute))
	if err != nil {
		return err
	}
	points, err := h.Operator.History(c.ctx, c.room, time.Duration(minutes)*time.Minute)
	if err != nil {
		return err
	}
	if points == nil {
		points = []control.Point{}
	}
	writeJSON(c.w, fsthttp.StatusOK, History{Room: c.room, Minutes: points})
	return nil
}

// Result is what an action answers: the room's line just after it.
type Result struct {
	Room   string `json:"room"`
	Action string `json:"action"`
	// CalledNow is how many waiting visitors the action's store call
	// called in: admit's, and any the rate let in at the same moment.
	CalledNow      int64 `json:"called_now"`
	Epoch          int64 `json:"epoch"`
	Issued         int64 `json:"issued"`
	NowServing     int64 `json:"now_serving"`
	ActiveSessions int64 `json:"active_sessions"`
	Called         int64 `json:"called"`
	Paused         bool  `json:"paused"`
	QueueAll       bool  `json:"queue_all"`
	// Overrides are the live values in force, only those set.
	Overrides control.Limits `json:"overrides"`
}

// done answers the line after action, and logs it.
func (h *Handler) done(c *call, action string, l store.Line, err error) error {
	if err != nil {
		return err
	}
	h.Logf("api: %s in room %s by client %s: now serving %d of %d, %d active, paused %v, queue_all %v",
		action, c.room, h.Client, l.Admitted, l.Issued, l.Active, l.Paused, l.QueueAll)
	writeJSON(c.w, fsthttp.StatusOK, Result{Room: c.room, Action: action, CalledNow: l.CalledNow,
		Epoch: l.Epoch, Issued: l.Issued, NowServing: l.Admitted, ActiveSessions: l.Active, Called: l.Called,
		Paused: l.Paused, QueueAll: l.QueueAll, Overrides: control.OverridesOf(l.Overrides)})
	return nil
}

// act carries out a with the fields of the request's body (a JSON
// object of them, required when a has any; see readInput).
func (h *Handler) act(c *call, a control.Action) error {
	in, err := readInput(c.r, a.Fields)
	if err != nil {
		return err
	}
	l, err := a.Run(c.ctx, h.Operator, c.room, in, h.actor())
	return h.done(c, a.Name, l, err)
}

// AuditPage is what GET /audit answers: a page of the merged audit log.
type AuditPage struct {
	// Entries are newest first.
	Entries []store.AuditEntry `json:"entries"`
	// Next is the next page's address (path and query), null when the
	// log ends here.
	Next *string `json:"next"`
}

func (h *Handler) audit(c *call) error {
	limit, err := intParam(c.query, "limit", 100, 1, store.MaxAuditPage)
	if err != nil {
		return err
	}
	page, err := h.Operator.Audit(c.ctx, c.query.Get("cursor"), limit)
	var bad *control.InputError
	if errors.As(err, &bad) {
		return &Error{Status: fsthttp.StatusBadRequest, Code: "invalid_parameter", Field: bad.Field, Message: bad.Message}
	}
	if err != nil {
		return err
	}
	out := AuditPage{Entries: page.Entries}
	if page.Next != "" {
		out.Next = h.next("/audit", url.Values{"cursor": {page.Next}, "limit": {strconv.Itoa(limit)}})
	}
	writeJSON(c.w, fsthttp.StatusOK, out)
	return nil
}
