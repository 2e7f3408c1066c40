// The door's proof of work (package challenge): the page a newcomer's
// browser works on before it joins, and the same challenge as JSON for a
// client that is not a browser.

package edge

import (
	"strconv"
	"time"

	"github.com/edgequeue/waitingroom/challenge"
	"github.com/edgequeue/waitingroom/locale"
	"github.com/edgequeue/waitingroom/queue"
	"github.com/edgequeue/waitingroom/templates"
	"github.com/fastly/compute-sdk-go/fsthttp"
)

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
