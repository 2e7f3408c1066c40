package edge

import (
	"time"

	"github.com/fastly/compute-sdk-go/fsthttp"
)

// request is one request while a Handler serves it: the Handler's ports,
// and what is this request's alone. The answers to it are its methods.
type request struct {
	*Handler

	// now is the time of the request.
	now time.Time
	// settings are the config store's, as read for this request.
	settings Settings
	// secrets and templates are the Handler's stores as this request
	// reads them: through Kept, when the Handler keeps one. Read these,
	// not the Handler's Secrets and Templates.
	secrets   Secrets
	templates Templates
	// sent is the request as the platform handed it over, for the
	// platform's verdicts on it (Bots).
	sent *fsthttp.Request
	// log gathers the request's structured line, when one is written.
	log *requestLog
	// asked is what the request asked in the reserved headers, read
	// before they are stripped.
	asked asked
	// mark is the request's arrival mark (ArrivalMark), taken off its
	// URL as it arrived; marked is true when it carried one at all.
	mark   string
	marked bool
}

// newRequest begins serving r: its time, what it asks in the reserved
// headers (before they are stripped), and the settings.
func (h *Handler) newRequest(r *fsthttp.Request) *request {
	q := &request{Handler: h, now: h.now(), sent: r, asked: readAsked(r)}
	q.keep()
	q.settings = q.loadSettings()
	return q
}
