// The answer, the last stage for a visitor who waits: the pages the edge
// writes itself, the JSON documents of the same states for clients that
// ask for JSON, and the door's work page. An admitted visitor's answer is
// the origin's (forward.go).

package edge

import (
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"strconv"
	"strings"
	"time"

	"github.com/edgequeue/waitingroom/challenge"
	"github.com/edgequeue/waitingroom/locale"
	"github.com/edgequeue/waitingroom/queue"
	"github.com/edgequeue/waitingroom/templates"
	"github.com/fastly/compute-sdk-go/fsthttp"
)

// BusyRetry is how long the busy page asks a visitor to wait.
const BusyRetry = 5 * time.Second

// pagePolicy is the Content-Security-Policy of the edge's answers that
// are not pages (redirects, JSON, refusals without a body); a page sets
// its template's own (templates.Template.Policy), which allows its inline
// script and styles by hash.
const pagePolicy = "default-src 'none'; style-src 'self' 'unsafe-inline'; img-src 'self' data:; font-src 'self'; " +
	"form-action 'none'; frame-ancestors 'none'; base-uri 'none'"

// secure sets the headers every answer the edge writes itself carries:
// the browser must not guess another content type, send the page's
// address (it may hold a ticket's URL) to other sites, or run or frame
// more than policy allows. ServeHTTP sets them first for every request;
// forward replaces them with the origin's own headers, and the admin
// panel with its policy.
func secure(h fsthttp.Header, policy string) {
	h.Set("X-Content-Type-Options", "nosniff")
	h.Set("Referrer-Policy", "no-referrer")
	h.Set("Content-Security-Policy", policy)
}

// notSetUp refuses a request the waiting room cannot handle until its
// operator sets something: every visitor gets the same 503 page, naming the
// setting (never its value), and every request logs what to set and how.
func (q *request) notSetUp(w fsthttp.ResponseWriter, e *SetupError) {
	q.Logf("setup: %v", e)
	w.Header().Set("Retry-After", "60")
	q.problem(w, fsthttp.StatusServiceUnavailable, "Not set up yet",
		"This site's waiting room is not configured yet, so nobody can be let in. Please try again later. "+
			"(For the site's operator: set "+e.Setting+"; the service's log says how.)")
}

// speak picks the language of a page (or JSON display) for r in room, and
// says that the answer depends on Accept-Language.
func speak(w fsthttp.ResponseWriter, r *fsthttp.Request, room *queue.Room) string {
	w.Header().Add("Vary", "Accept-Language")
	return locale.Negotiate(r.Header.Get("Accept-Language"), room.Look.Language)
}

// theme is the room's colours as CSS custom properties, for the pages'
// {{theme}} style: text picked black or white for each background.
func theme(room *queue.Room) string {
	bg, brand, text, onBrand := room.Look.Colours()
	return ":root{--wr-bg:" + bg.Hex() + ";--wr-fg:" + text.Hex() + ";--wr-brand:" + brand.Hex() + ";--wr-on-brand:" + onBrand.Hex() + "}"
}

// queuePage shows a waiting visitor their place: the page, or for a
// client that asks for JSON, the facts and the page's words for them. No
// Refresh header: the page's script polls, and only a page without
// scripting reloads itself (its <noscript> refresh).
func (q *request) queuePage(w fsthttp.ResponseWriter, r *fsthttp.Request, room *queue.Room, d queue.Decision) {
	pl := d.Place
	h := w.Header()
	h.Set("Cache-Control", "no-store")
	if c := q.cookie(room, d); c != "" {
		h.Add("Set-Cookie", c)
	}
	lang := speak(w, r, room)
	refresh := strconv.Itoa(int(pl.PollEvery / time.Second))
	if e := pl.Event; e != nil && e.Prequeue {
		q.prequeuePage(w, r, room, d, lang, refresh)
		return
	}
	disp := display(lang, room, pl)
	if wantsJSON(r) {
		doc := placeJSON{Room: room.Name, Status: "waiting", Ticket: pl.Ticket, Position: pl.Ahead + 1, Ahead: pl.Ahead,
			NowServing: pl.Admitted, Issued: pl.Issued, Paused: pl.Paused, RefreshSeconds: int(pl.PollEvery / time.Second),
			Event: eventDoc(pl.Event, q.now), Display: &disp}
		doc.Priority = pl.Priority
		if pl.WaitKnown {
			secs := int64(pl.WaitMin / time.Second)
			doc.EstimatedWaitSeconds = &secs
		}
		if c := d.Challenge; c.Bits > 0 {
			doc.Challenge = &challengeJSON{c.Seed, c.Bits, WorkHeader}
		}
		if pl.Random || pl.Event != nil && pl.Event.Drawn {
			doc.Random, doc.AheadMax, doc.GroupsAhead = true, &pl.AheadMax, &pl.GroupsAhead
			if pl.WaitKnown {
				secs := int64(pl.Wait / time.Second)
				doc.EstimatedWaitMaxSeconds = &secs
			}
		}
		q.json(w, room.QueueStatusCode, doc)
		return
	}
	ticket, serving := laneNumbers(pl)
	values := map[string]string{
		"room": room.Name, "ticket": ticket, "position": disp.Position, "ahead": disp.Ahead,
		"now_serving": serving, "serving": disp.NowServing, "issued": strconv.FormatInt(pl.Issued, 10),
		"wait": disp.Wait, "refresh_seconds": refresh, "status": disp.Status, "draw": drawNote(lang, pl.Event),
		"announce": disp.Announce, "position_number": strconv.FormatInt(pl.Ahead+1, 10),
		"progress": strconv.FormatInt(*disp.Progress, 10), "progress_max": strconv.FormatInt(*disp.ProgressMax, 10),
		"updated": q.now.UTC().Format("15:04:05") + " UTC", "updated_iso": q.now.UTC().Format(time.RFC3339),
		"label_place": locale.Text(lang, locale.LabelPlace), "label_ahead": locale.Text(lang, locale.LabelAhead),
		"label_wait": locale.Text(lang, locale.LabelWait), "label_ticket": locale.Text(lang, locale.LabelTicket),
		"label_serving": locale.Text(lang, locale.LabelServing), "label_updated": locale.Text(lang, locale.LabelUpdated),
		"label_progress": locale.Text(lang, locale.LabelProgress), "turn_note": room.Look.Text(lang, "turn"),
	}
	brand(values, lang, room)
	t := q.template(room.Template, templates.Queue)
	if c := d.Challenge; c.Bits > 0 {
		// The way out of the decoy line, which every place of a room
		// with one shows alike (queue.Decision's Challenge): the page's
		// script (work.js) does the work and keeps its solution for the
		// page's next poll. A template of the operator's without that
		// script gives way to the built-in one, for every place, so
		// that a decoy's page looks like a real one's.
		values["work_seed"], values["work_bits"], values["work_cookie"] = c.Seed, strconv.Itoa(c.Bits), workCookie(room)
		if t != nil && !t.Solves() {
			t = q.defaultTemplate(templates.Queue)
		}
	}
	q.render(w, room.QueueStatusCode, t, values)
}

// brand adds what every page of a room shows the same way: its language,
// title, message, logo, support link, colours and the live-update notes.
func brand(values map[string]string, lang string, room *queue.Room) {
	values["lang"] = lang
	values["title"] = room.Look.Text(lang, "title")
	values["message"] = room.Look.Text(lang, "message")
	values["logo_url"] = room.Look.LogoURL
	values["theme"] = theme(room)
	values["keep_note"] = room.Look.Text(lang, "keep")
	values["live_note"] = locale.Text(lang, locale.Live)
	values["refresh_label"] = locale.Text(lang, locale.RefreshNow)
	if room.Look.SupportLink != "" {
		values["support_link"] = room.Look.SupportLink
		values["support_label"] = room.Look.Text(lang, "support")
	}
}

// placeDisplay is a waiting visitor's place as the queue page words it,
// in the page's language: the page's script puts these texts in place of
// the ones the page was rendered with. A pre-queue's has only Language,
// Status and OpensIn; a place's has all the others (display sets them).
type placeDisplay struct {
	// Language is the language of the texts (the page's lang).
	Language string `json:"language,omitempty"`
	// Position and Ahead are the place and the people ahead, with the
	// language's digit grouping; a range ("12–15") in a shuffled group.
	Position string `json:"position,omitempty"`
	Ahead    string `json:"ahead,omitempty"`
	// Wait is the estimate as a range ("8–12 minutes"), or why there is
	// none.
	Wait string `json:"wait,omitempty"`
	// Status says how the line moves (in order, in random groups, by a
	// draw, in the priority lane); a pause is said by Announce.
	Status string `json:"status,omitempty"`
	// Announce is the short sentence the page's live region reads out
	// when the place changes ("You are now number 12 in line."), or
	// that entry is paused.
	Announce string `json:"announce,omitempty"`
	// Ticket and NowServing are the numbers as the page shows them
	// ("#48213", "#P3" in the priority lane; "nobody yet" before the
	// lane's first call).
	Ticket     string `json:"ticket,omitempty"`
	NowServing string `json:"now_serving,omitempty"`
	// Progress of ProgressMax is how far the visitor has come since the
	// ticket was issued (ProgressMax people were ahead then).
	Progress    *int64 `json:"progress,omitempty"`
	ProgressMax *int64 `json:"progress_max,omitempty"`
	// OpensIn counts down to the sale in a pre-queue.
	OpensIn string `json:"opens_in,omitempty"`
}

// display words pl in lang.
func display(lang string, room *queue.Room, pl queue.Place) placeDisplay {
	position, ahead := locale.Number(lang, pl.Ahead+1), locale.Number(lang, pl.Ahead)
	if pl.AheadMax > pl.Ahead {
		span := locale.Text(lang, locale.Range)
		ahead = locale.Fill(locale.Fill(span, "a", ahead), "b", locale.Number(lang, pl.AheadMax))
		position = locale.Fill(locale.Fill(span, "a", position), "b", locale.Number(lang, pl.AheadMax+1))
	}
	ticket, serving := laneNumbers(pl)
	d := placeDisplay{Language: lang, Position: position, Ahead: ahead, Wait: describeWait(lang, pl),
		Status: statusNote(lang, room, pl), Announce: locale.Fill(locale.Text(lang, locale.Announce), "n", position),
		Ticket: "#" + ticket, NowServing: "#" + serving}
	if pl.Paused {
		// Said once, where a screen reader hears it: the note below
		// keeps saying how the line moves once entry resumes.
		d.Announce = locale.Text(lang, locale.Paused)
	}
	if pl.Admitted == 0 {
		d.NowServing = locale.Text(lang, locale.NobodyYet)
	}
	// Nobody was ahead: no way has been come yet, and the bar stays
	// empty until the turn comes (a full one reads as "your turn").
	progress, most := int64(0), int64(1)
	if pl.StartAhead > 0 {
		progress, most = max(pl.StartAhead-pl.Ahead, 0), pl.StartAhead
	}
	d.Progress, d.ProgressMax = &progress, &most
	return d
}

// statusNote says how the line moves for pl.
func statusNote(lang string, room *queue.Room, pl queue.Place) string {
	switch e := pl.Event; {
	case pl.Priority:
		return locale.Fill(locale.Text(lang, locale.Priority), "share", strconv.Itoa(int(room.PriorityShare*100+0.5)))
	case e != nil && e.Drawn:
		return locale.Fill(locale.Text(lang, locale.Drawn), "starts", locale.Moment(e.Starts))
	case pl.Random:
		note := locale.Fill(locale.Text(lang, locale.Random), "seconds", strconv.Itoa(room.RandomWindow))
		return locale.Fill(note, "groups", locale.Number(lang, pl.GroupsAhead))
	}
	return locale.Text(lang, locale.Fifo)
}

// drawNote publishes a drawn sale's key beside its commitment, so a
// visitor can check the draw.
func drawNote(lang string, e *queue.EventPlace) string {
	if e == nil || e.Key == "" {
		return ""
	}
	return locale.Fill(locale.Fill(locale.Text(lang, locale.DrawNote), "key", e.Key), "commitment", e.Commitment)
}

// prequeuePage counts down to the sale for a visitor in its pre-queue.
func (q *request) prequeuePage(w fsthttp.ResponseWriter, r *fsthttp.Request, room *queue.Room, d queue.Decision, lang, refresh string) {
	e := d.Place.Event
	opens := locale.Countdown(lang, e.Starts.Sub(q.now))
	intro := locale.Fill(locale.Fill(locale.Text(lang, locale.PrequeueIntro), "event", e.Name), "starts", locale.Moment(e.Starts))
	if wantsJSON(r) {
		q.json(w, room.QueueStatusCode, placeJSON{Room: room.Name, Status: "prequeue", Ticket: d.Place.Ticket,
			NowServing: d.Place.Admitted, Issued: d.Place.Issued, Paused: d.Place.Paused,
			RefreshSeconds: int(d.Place.PollEvery / time.Second), Event: eventDoc(e, q.now),
			Display: &placeDisplay{Language: lang, Status: intro, OpensIn: opens}})
		return
	}
	values := map[string]string{
		"room": room.Name, "event": e.Name, "starts": locale.Moment(e.Starts),
		"opens_in": opens, "refresh_seconds": refresh, "commitment": e.Commitment,
		"intro": intro, "label_opens": locale.Text(lang, locale.OpensIn),
		"draw_note":       locale.Text(lang, locale.PrequeueDraw),
		"commitment_note": locale.Fill(locale.Text(lang, locale.PrequeueCommit), "commitment", e.Commitment),
	}
	brand(values, lang, room)
	values["title"] = locale.Text(lang, locale.PrequeueTitle)
	q.page(w, room.QueueStatusCode, templates.Prequeue.Name, templates.Prequeue, values)
}

// laneNumbers are pl's ticket and now-serving numbers as the queue page
// shows them: in the priority lane, whose tickets the store numbers -1,
// -2, ..., "P1", "P2", ...
func laneNumbers(pl queue.Place) (ticket, serving string) {
	if pl.Priority {
		return "P" + strconv.FormatInt(-pl.Ticket, 10), "P" + strconv.FormatInt(pl.Admitted, 10)
	}
	return strconv.FormatInt(pl.Ticket, 10), strconv.FormatInt(pl.Admitted, 10)
}

// describeWait says the estimate in words a visitor reads at a glance,
// as a range (queue.Place.WaitRange), or why there is none.
func describeWait(lang string, p queue.Place) string {
	switch {
	case p.WaitKnown:
		least, most := p.WaitRange()
		return locale.WaitRange(lang, least, most)
	case p.Unknown == queue.UnknownPaused || p.Paused:
		return locale.Text(lang, locale.WaitPaused)
	case p.Unknown == queue.UnknownBeforeStart:
		return locale.Text(lang, locale.WaitBeforeStart)
	}
	return locale.Text(lang, locale.WaitUnknown)
}

func (q *request) busy(w fsthttp.ResponseWriter, r *fsthttp.Request, room *queue.Room) {
	retry := int64(BusyRetry / time.Second)
	secs := strconv.FormatInt(retry, 10)
	w.Header().Set("Retry-After", secs)
	w.Header().Set("Cache-Control", "no-store")
	if wantsJSON(r) {
		q.json(w, fsthttp.StatusServiceUnavailable, busyJSON{room.Name, "busy", int(retry)})
		return
	}
	lang := speak(w, r, room)
	values := map[string]string{"room": room.Name, "retry_seconds": secs,
		"text": locale.Fill(locale.Text(lang, locale.BusyText), "in", locale.Count(lang, retry, locale.Seconds))}
	brand(values, lang, room)
	values["title"] = room.Look.Text(lang, "busy_title")
	q.page(w, fsthttp.StatusServiceUnavailable, templates.Busy.Name, templates.Busy, values)
}

// closedPage tells a visitor that room is closed, in their language and
// the room's colours.
func (q *request) closedPage(w fsthttp.ResponseWriter, r *fsthttp.Request, room *queue.Room) {
	w.Header().Set("Cache-Control", "no-store")
	w.Header().Set("Retry-After", strconv.Itoa(int(ClosedRetry/time.Second)))
	lang := speak(w, r, room)
	q.page(w, fsthttp.StatusServiceUnavailable, templates.Problem.Name, templates.Problem, map[string]string{
		"title": room.Look.Text(lang, "closed_title"), "message": room.Look.Text(lang, "closed_text"),
		"lang": lang, "theme": theme(room),
	})
}

// problem explains, in English, why the service cannot serve a request
// (these pages are about the site's setup or the request, not a room).
func (q *request) problem(w fsthttp.ResponseWriter, code int, title, message string) {
	w.Header().Set("Cache-Control", "no-store")
	q.page(w, code, templates.Problem.Name, templates.Problem, map[string]string{"title": title, "message": message, "lang": locale.Default})
}

// page renders a page from the operator's template called name in the KV
// store, or from the embedded default when there is none or it is broken,
// under the template's Content-Security-Policy (its inline scripts and
// styles by hash, and the theme's).
func (q *request) page(w fsthttp.ResponseWriter, code int, name string, kind templates.Page, values map[string]string) {
	q.render(w, code, q.template(name, kind), values)
}

// render writes t with values, or says in a line that it cannot (t nil:
// not even the default parsed, which the log says).
func (q *request) render(w fsthttp.ResponseWriter, code int, t *templates.Template, values map[string]string) {
	w.Header().Set("Content-Type", "text/html; charset=utf-8")
	if t != nil {
		w.Header().Set("Content-Security-Policy", t.Policy(values["theme"]))
	}
	w.WriteHeader(code)
	if t == nil {
		io.WriteString(w, "The waiting room cannot show this page; see the log.\n")
		return
	}
	io.WriteString(w, t.Render(values))
}

func (q *request) template(name string, kind templates.Page) *templates.Template {
	src, err := q.templates.Get(name)
	switch {
	case err == nil:
		t, perr := q.parseTemplate(kind, name, src)
		if perr == nil {
			return t
		}
		q.Logf("template %s from the KV store: %v; serving the default", name, perr)
	case errors.Is(err, ErrNotFound):
		if name != kind.Name {
			q.Logf("template %s: not in the KV store; serving the default %s", name, kind.Name)
		}
	default:
		q.Logf("template %s: %v; serving the default", name, err)
	}
	return q.defaultTemplate(kind)
}

// defaultTemplate is kind's built-in template, or nil (logged) when it
// does not parse.
func (q *request) defaultTemplate(kind templates.Page) *templates.Template {
	t, err := kind.Default()
	if err != nil {
		q.Logf("%v", err)
		return nil
	}
	return t
}

// The JSON answers the edge writes for clients that ask for JSON (an
// Accept header naming application/json): single-page sites, apps, and
// the queue page's own script. Each state a client can meet has its
// document here.

// placeJSON is the queue page's facts for clients that ask for JSON.
type placeJSON struct {
	Room                 string `json:"room"`
	Status               string `json:"status"`
	Ticket               int64  `json:"ticket"`
	Position             int64  `json:"position"`
	Ahead                int64  `json:"ahead"`
	NowServing           int64  `json:"now_serving"`
	Issued               int64  `json:"issued"`
	Paused               bool   `json:"paused"`
	EstimatedWaitSeconds *int64 `json:"estimated_wait_seconds"`
	RefreshSeconds       int    `json:"refresh_seconds"`
	// Priority marks a place in the priority lane (an invite's): its
	// ticket is below zero, and now_serving and issued count that lane.
	Priority bool `json:"priority,omitempty"`
	// A random room calls the visitor's group in a shuffled order: the
	// figures above are then the earliest, these the latest.
	Random                  bool   `json:"random,omitempty"`
	AheadMax                *int64 `json:"ahead_max,omitempty"`
	GroupsAhead             *int64 `json:"groups_ahead,omitempty"`
	EstimatedWaitMaxSeconds *int64 `json:"estimated_wait_max_seconds,omitempty"`
	// Event is the scheduled sale the room is in.
	Event *eventJSON `json:"event,omitempty"`
	// Display is the same place in the visitor's language, as the queue
	// page shows it: the page's script swaps these texts in.
	Display *placeDisplay `json:"display,omitempty"`
	// Challenge, when set, is work the client may do to be placed anew
	// (a place the edge doubts: see the decoy line in docs/security.md).
	Challenge *challengeJSON `json:"challenge,omitempty"`
}

// eventJSON is a scheduled sale as a waiting visitor's client sees it.
// Commitment is the SHA-256 (hex) of the draw key, published when the
// pre-queue opens; Key is published once the pre-queue is drawn, so a
// client can check the draw (package draw recomputes the order).
type eventJSON struct {
	Name       string `json:"name"`
	Starts     string `json:"starts"`
	Phase      string `json:"phase"`
	InPrequeue bool   `json:"in_prequeue"`
	Drawn      bool   `json:"drawn_place"`
	Commitment string `json:"draw_commitment"`
	Key        string `json:"draw_key,omitempty"`
	// OpensInSeconds counts down to the start while in the pre-queue.
	OpensInSeconds *int64 `json:"opens_in_seconds,omitempty"`
}

func eventDoc(e *queue.EventPlace, now time.Time) *eventJSON {
	if e == nil {
		return nil
	}
	doc := &eventJSON{Name: e.Name, Starts: e.Starts.Format(time.RFC3339), Phase: "drawn",
		InPrequeue: e.Prequeue, Drawn: e.Drawn, Commitment: e.Commitment, Key: e.Key}
	if e.Key == "" {
		doc.Phase = "prequeue"
	}
	if e.Prequeue {
		secs := int64(max(e.Starts.Sub(now), 0) / time.Second)
		doc.OpensInSeconds = &secs
	}
	return doc
}

// busyJSON is the busy, closed and limited pages for clients that ask
// for JSON: Status says which.
type busyJSON struct {
	Room              string `json:"room"`
	Status            string `json:"status"`
	RetryAfterSeconds int    `json:"retry_after_seconds"`
}

func wantsJSON(r *fsthttp.Request) bool {
	return strings.Contains(r.Header.Get("Accept"), "application/json")
}

func (q *request) json(w fsthttp.ResponseWriter, code int, v any) {
	body, err := json.Marshal(v)
	if err != nil {
		q.Logf("json: %v", err)
		code, body = fsthttp.StatusInternalServerError, []byte(`{"status":"error"}`)
	}
	w.Header().Set("Content-Type", "application/json")
	w.WriteHeader(code)
	w.Write(append(body, '\n'))
}

// arrivalJSON is the arrival's body ("joining") for clients that ask for
// JSON or keep their pass in PassHeader: ask again after
// retry_after_seconds (0: at once) with the pass.
type arrivalJSON struct {
	Room              string `json:"room"`
	Status            string `json:"status"`
	RefreshSeconds    int    `json:"refresh_seconds"`
	RetryAfterSeconds int    `json:"retry_after_seconds"`
}

// cookiesJSON answers a client that came back from the arrival redirect
// without its pass ("cookies"): the line needs Cookie, or for a client
// without a cookie jar, Header; URL is its request's, unmarked, to ask
// again.
type cookiesJSON struct {
	Room   string `json:"room"`
	Status string `json:"status"`
	Cookie string `json:"cookie"`
	Header string `json:"header"`
	URL    string `json:"url"`
}

// admittedJSON answers a poll (PollHeader) the gate admits: the client
// goes on to URL, its own request's path and query, with the pass.
type admittedJSON struct {
	Room   string `json:"room"`
	Status string `json:"status"`
	URL    string `json:"url"`
}

// The door's proof of work (package challenge): the page a newcomer's
// browser works on before it joins, and the same challenge as JSON for a
// client that is not a browser.

// workJSON is the "work" state: solve challenge, then ask again with the
// pass and the nonce in WorkHeader.
type workJSON struct {
	Room              string        `json:"room"`
	Status            string        `json:"status"`
	Challenge         challengeJSON `json:"challenge"`
	RetryAfterSeconds int           `json:"retry_after_seconds"`
}

// challengeJSON is a challenge as a client solves it: the nonce, counted
// in base 36, whose SHA-256 with seed (seed ":" nonce) begins with bits
// zero bits, sent back in header.
type challengeJSON struct {
	Seed   string `json:"seed"`
	Bits   int    `json:"bits"`
	Header string `json:"header"`
}

// workPage answers a newcomer whom room asks for the work c before they
// join: a page whose script does it and goes on to next (a client that
// asks for JSON or keeps its pass in PassHeader gets the challenge, 202).
// The page is the room's queue page's kind of answer, with its status
// code: it is where the line begins. At the ladder's lowest working rung
// a browser without JavaScript is taken on after queue.NoScriptWait.
func (q *request) workPage(w fsthttp.ResponseWriter, r *fsthttp.Request, room *queue.Room, c challenge.Challenge, next string) {
	q.log.explain("work " + strconv.Itoa(c.Bits))
	if q.asked.passHeader || q.asked.json {
		q.json(w, fsthttp.StatusAccepted, workJSON{Room: room.Name, Status: "work", Challenge: challengeJSON{c.Seed, c.Bits, WorkHeader}})
		return
	}
	lang := speak(w, r, room)
	values := map[string]string{"room": room.Name, "seed": c.Seed, "bits": strconv.Itoa(c.Bits), "next_url": next,
		"cookie": workCookie(room), "retry_label": locale.Text(lang, locale.TryAgain)}
	brand(values, lang, room)
	values["title"], values["text"] = locale.Text(lang, locale.WorkTitle), locale.Text(lang, locale.WorkText)
	values["progress_label"], values["progress_note"] = locale.Text(lang, locale.WorkLabel), locale.Text(lang, locale.WorkProgress)
	values["done_note"], values["noscript_note"] = locale.Text(lang, locale.WorkDone), locale.Text(lang, locale.WorkNoScript)
	if queue.NoScript(room, c) {
		// A second more than the gate asks: the pass's issue time is
		// in whole seconds.
		values["noscript_refresh"] = strconv.Itoa(int(queue.NoScriptWait/time.Second)+1) + "; url=" + next
		values["noscript_note"] = locale.Text(lang, locale.WorkWait)
	}
	q.page(w, room.QueueStatusCode, templates.Work.Name, templates.Work, values)
}

// expired is a cookie that deletes the room's pass.
func expired(room *queue.Room) string {
	return room.CookieName + "=; Path=/; Max-Age=0; HttpOnly; Secure; SameSite=Lax"
}

// cookie renders the decision's pass as a Set-Cookie value, or "".
func (q *request) cookie(room *queue.Room, d queue.Decision) string {
	if d.Pass == "" {
		return ""
	}
	return fmt.Sprintf("%s=%s; Path=/; Max-Age=%d; HttpOnly; Secure; SameSite=Lax",
		room.CookieName, d.Pass, int(d.PassTTL/time.Second))
}

// workCookie is the cookie in which room's work page keeps the solution
// of its proof of work.
func workCookie(room *queue.Room) string { return room.CookieName + "_work" }

// givePass sets PassHeader for a client that reads it (one that sent the
// header or asked for JSON): pass is room's new pass, or "" to withdraw
// it.
func (q *request) givePass(h fsthttp.Header, room *queue.Room, pass string) {
	if q.asked.passHeader || q.asked.json {
		h.Set(PassHeader, room.CookieName+"="+pass)
	}
}
