// The JSON answers the edge writes for clients that ask for JSON (an
// Accept header naming application/json): single-page sites, apps, and
// the queue page's own script. Each state a client can meet has its
// document here.

package edge

import (
	"encoding/json"
	"strings"
	"time"

	"github.com/edgequeue/waitingroom/queue"
	"github.com/fastly/compute-sdk-go/fsthttp"
)

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
