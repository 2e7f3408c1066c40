// The pages and JSON answers the edge writes itself.

package edge

import (
	"errors"
	"fmt"
	"io"
	"strconv"
	"time"

	"github.com/edgequeue/waitingroom/queue"
	"github.com/edgequeue/waitingroom/templates"
	"github.com/fastly/compute-sdk-go/fsthttp"
)

// BusyRetry is how long the busy page asks a visitor to wait.
const BusyRetry = 5 * time.Second

// pagePolicy is the Content-Security-Policy of the pages the edge writes
// (queue, busy, problem, closed, setup) and of its other answers. The
// built-in pages have inline style and no script; an operator's template
// may also use the site's own stylesheets, images and fonts (under a
// bypass path), and data: images. No script runs, no form is sent, and no
// other site may frame the page.
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
func (s *Service) notSetUp(w fsthttp.ResponseWriter, e *SetupError) {
	s.Logf("setup: %v", e)
	w.Header().Set("Retry-After", "60")
	s.problem(w, fsthttp.StatusServiceUnavailable, "Not set up yet",
		"This site's waiting room is not configured yet, so nobody can be let in. Please try again later. "+
			"(For the site's operator: set "+e.Setting+"; the service's log says how.)")
}

func refusal(err error) string {
	if err == nil {
		return ""
	}
	return "; offered pass refused: " + err.Error()
}

func (s *Service) queuePage(w fsthttp.ResponseWriter, r *fsthttp.Request, room *queue.Room, d queue.Decision) {
	pl := d.Place
	h := w.Header()
	h.Set("Cache-Control", "no-store")
	refresh := strconv.Itoa(int(pl.PollEvery / time.Second))
	h.Set("Refresh", refresh)
	if c := s.cookie(room, d); c != "" {
		h.Add("Set-Cookie", c)
	}
	if e := pl.Event; e != nil && e.Prequeue {
		s.prequeuePage(w, r, room, d, refresh)
		return
	}
	status := "The site is busy, so visitors are let in in the order they arrived."
	switch e := pl.Event; {
	case e != nil && e.Drawn:
		status = fmt.Sprintf("The sale opened at %s. Everyone in its pre-queue was given a place in line by a random draw; your turn comes somewhere in that range.",
			e.Starts.Format("15:04 UTC, 2 January"))
	case pl.Random:
		status = fmt.Sprintf("The site is busy. Visitors who arrived within the same %d seconds form a group and are let in in a random order; %s ahead of yours.",
			room.RandomWindow, plural(pl.GroupsAhead, "group is", "groups are"))
	}
	if pl.Priority {
		status = priorityStatus(room)
	}
	if pl.Paused {
		status = "Entry is paused for the moment; your place is kept."
	}
	if wantsJSON(r) {
		doc := placeJSON{Room: room.Name, Status: "waiting", Ticket: pl.Ticket, Position: pl.Ahead + 1, Ahead: pl.Ahead,
			NowServing: pl.Admitted, Issued: pl.Issued, Paused: pl.Paused, RefreshSeconds: int(pl.PollEvery / time.Second),
			Event: eventDoc(pl.Event, s.Now)}
		doc.Priority = pl.Priority
		if pl.WaitKnown {
			secs := int64(pl.WaitMin / time.Second)
			doc.EstimatedWaitSeconds = &secs
		}
		if pl.Random || pl.Event != nil && pl.Event.Drawn {
			doc.Random, doc.AheadMax, doc.GroupsAhead = true, &pl.AheadMax, &pl.GroupsAhead
			if pl.WaitKnown {
				secs := int64(pl.Wait / time.Second)
				doc.EstimatedWaitMaxSeconds = &secs
			}
		}
		s.json(w, room.QueueStatusCode, doc)
		return
	}
	ahead, position := strconv.FormatInt(pl.Ahead, 10), strconv.FormatInt(pl.Ahead+1, 10)
	if pl.AheadMax > pl.Ahead {
		ahead = fmt.Sprintf("between %d and %d", pl.Ahead, pl.AheadMax)
		position = fmt.Sprintf("%d–%d", pl.Ahead+1, pl.AheadMax+1)
	}
	ticket, serving := laneNumbers(pl)
	s.page(w, room.QueueStatusCode, room.Template, templates.Queue, map[string]string{
		"room": room.Name, "ticket": ticket,
		"position": position, "ahead": ahead,
		"now_serving": serving, "issued": strconv.FormatInt(pl.Issued, 10),
		"wait": describeWait(pl), "refresh_seconds": refresh, "status": status, "draw": drawNote(pl.Event),
	})
}

// placeDisplay is a waiting visitor's place as the queue page words it,
// in the page's language.
type placeDisplay struct {
	Position string `json:"position"`
	Ahead    string `json:"ahead"`
	Wait     string `json:"wait"`
	Status   string `json:"status"`
}

// drawNote publishes a drawn sale's key beside its commitment, so a
// visitor can check the draw.
func drawNote(e *queue.EventPlace) string {
	if e == nil || e.Key == "" {
		return ""
	}
	return "The draw's key was " + e.Key + "; its SHA-256, published before the sale, is " + e.Commitment + "."
}

// prequeuePage counts down to the sale for a visitor in its pre-queue.
func (s *Service) prequeuePage(w fsthttp.ResponseWriter, r *fsthttp.Request, room *queue.Room, d queue.Decision, refresh string) {
	e := d.Place.Event
	if wantsJSON(r) {
		s.json(w, room.QueueStatusCode, placeJSON{Room: room.Name, Status: "prequeue", Ticket: d.Place.Ticket,
			NowServing: d.Place.Admitted, Issued: d.Place.Issued, Paused: d.Place.Paused,
			RefreshSeconds: int(d.Place.PollEvery / time.Second), Event: eventDoc(e, s.Now)})
		return
	}
	s.page(w, room.QueueStatusCode, templates.Prequeue.Name, templates.Prequeue, map[string]string{
		"room": room.Name, "event": e.Name, "starts": e.Starts.Format("15:04 UTC on 2 January 2006"),
		"opens_in": countdown(e.Starts.Sub(s.Now)), "refresh_seconds": refresh, "commitment": e.Commitment,
	})
}

// countdown says how long until a start, to the minute (to the second in
// the last minute).
func countdown(d time.Duration) string {
	switch {
	case d <= 0:
		return "any moment now"
	case d < time.Minute:
		return plural(int64((d+time.Second-1)/time.Second), "second", "seconds")
	case d < time.Hour:
		return plural(int64((d+time.Minute-1)/time.Minute), "minute", "minutes")
	case d < 48*time.Hour:
		return fmt.Sprintf("%d h %02d min", int64(d/time.Hour), int64(d%time.Hour/time.Minute))
	}
	return plural(int64(d/(24*time.Hour)), "day", "days")
}

// describeWait says the estimate in words a visitor reads at a glance: a
// range when the visitor's turn comes somewhere in a shuffled group.
func describeWait(p queue.Place) string {
	switch {
	case !p.WaitKnown && p.Paused:
		return "unknown while entry is paused"
	case !p.WaitKnown:
		return "not known yet: nobody has been let in during the last few minutes"
	}
	least, most := aboutDuration(p.WaitMin), aboutDuration(p.Wait)
	if least == most {
		return most
	}
	return "between " + least + " and " + most
}

// aboutDuration rounds d to what a visitor reads at a glance.
func aboutDuration(d time.Duration) string {
	switch {
	case d < time.Minute:
		return "less than a minute"
	case d < 2*time.Minute:
		return "about 1 minute"
	case d < 2*time.Hour:
		return fmt.Sprintf("about %d minutes", int((d+30*time.Second)/time.Minute))
	}
	return fmt.Sprintf("about %d hours", int((d+30*time.Minute)/time.Hour))
}

// plural writes n with the singular or plural words after it.
func plural(n int64, one, many string) string {
	if n == 1 {
		return "1 " + one
	}
	return strconv.FormatInt(n, 10) + " " + many
}

func (s *Service) busy(w fsthttp.ResponseWriter, r *fsthttp.Request, room *queue.Room) {
	secs := strconv.Itoa(int(BusyRetry / time.Second))
	w.Header().Set("Retry-After", secs)
	w.Header().Set("Cache-Control", "no-store")
	if wantsJSON(r) {
		s.json(w, fsthttp.StatusServiceUnavailable, busyJSON{room.Name, "busy", int(BusyRetry / time.Second)})
		return
	}
	s.page(w, fsthttp.StatusServiceUnavailable, templates.Busy.Name, templates.Busy, map[string]string{"room": room.Name, "retry_seconds": secs})
}

func (s *Service) problem(w fsthttp.ResponseWriter, code int, title, message string) {
	w.Header().Set("Cache-Control", "no-store")
	s.page(w, code, templates.Problem.Name, templates.Problem, map[string]string{"title": title, "message": message})
}

// page renders a page from the operator's template called name in the KV
// store, or from the embedded default when there is none or it is broken.
func (s *Service) page(w fsthttp.ResponseWriter, code int, name string, kind templates.Page, values map[string]string) {
	t := s.template(name, kind)
	w.Header().Set("Content-Type", "text/html; charset=utf-8")
	w.WriteHeader(code)
	if t == nil {
		io.WriteString(w, "The waiting room cannot show this page; see the log.\n")
		return
	}
	io.WriteString(w, t.Render(values))
}

func (s *Service) template(name string, kind templates.Page) *templates.Template {
	src, err := s.Templates.Get(name)
	switch {
	case err == nil:
		t, perr := kind.Parse(src)
		if perr == nil {
			return t
		}
		s.Logf("template %s from the KV store: %v; serving the default", name, perr)
	case errors.Is(err, ErrNotFound):
		if name != kind.Name {
			s.Logf("template %s: not in the KV store; serving the default %s", name, kind.Name)
		}
	default:
		s.Logf("template %s: %v; serving the default", name, err)
	}
	t, err := kind.Default()
	if err != nil {
		s.Logf("%v", err)
		return nil
	}
	return t
}
