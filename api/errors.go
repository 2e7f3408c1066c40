package api

import (
	"bytes"
	"encoding/json"
	"errors"

	"github.com/edgequeue/waitingroom/control"
	"github.com/edgequeue/waitingroom/store/shard"
	"github.com/fastly/compute-sdk-go/fsthttp"
)

// Error is a refusal as the API answers it: the HTTP status, and a JSON
// body with a stable code a script can test, a message for a person, and
// the field (of the body or the query) at fault, when one is.
//
// The codes: 400 invalid_json, unknown_field, invalid_field,
// unknown_parameter, invalid_parameter; 401 unauthorized; 404
// no_such_route, no_such_room; 405 method_not_allowed; 409
// confirm_mismatch, mode_locked; 413 body_too_large; 415
// unsupported_media_type; 429 too_many_attempts; 500 internal (a bug);
// 503 api_disabled, store_unavailable, partially_applied (an action
// that holds on some of a sharded room's shards only).
type Error struct {
	Status  int    `json:"-"`
	Code    string `json:"error"`
	Message string `json:"message"`
	Field   string `json:"field,omitempty"`
}

func (e *Error) Error() string {
	if e.Field != "" {
		return e.Code + ": " + e.Field + ": " + e.Message
	}
	return e.Code + ": " + e.Message
}

// refusal is the API's answer to an error from package control.
func refusal(err error) *Error {
	var in *control.InputError
	var e *Error
	var partial *shard.PartialError
	switch {
	case errors.As(err, &e):
		return e
	case errors.As(err, &in):
		return &Error{Status: fsthttp.StatusBadRequest, Code: "invalid_field", Field: in.Field, Message: in.Message}
	case errors.Is(err, control.ErrNoRoom):
		return &Error{Status: fsthttp.StatusNotFound, Code: "no_such_room", Message: err.Error()}
	case errors.Is(err, control.ErrConfirm):
		return &Error{Status: fsthttp.StatusConflict, Code: "confirm_mismatch", Field: "confirm", Message: err.Error()}
	case errors.Is(err, control.ErrModeLocked):
		return &Error{Status: fsthttp.StatusConflict, Code: "mode_locked", Field: "mode", Message: err.Error()}
	case errors.As(err, &partial):
		return &Error{Status: fsthttp.StatusServiceUnavailable, Code: "partially_applied",
			Message: "the action did not apply on every shard (retry it with the same Idempotency-Key to complete it: it applies nowhere twice): " + err.Error()}
	case errors.Is(err, control.ErrBudget):
		// A page cut too large for one request: the API's fault.
		return &Error{Status: fsthttp.StatusInternalServerError, Code: "internal", Message: err.Error()}
	}
	// Whatever else failed is the store's (down, slow, refusing the
	// token...): the action may be tried again.
	return &Error{Status: fsthttp.StatusServiceUnavailable, Code: "store_unavailable",
		Message: "the store did not answer (an action may or may not have taken effect: read the room's stats before trying again): " + err.Error()}
}

// refuse answers e and logs it with the request it refuses.
func (h *Handler) refuse(w fsthttp.ResponseWriter, r *fsthttp.Request, e *Error) {
	h.Logf("api: refused %q %q: %d %v", r.Method, r.URL.EscapedPath(), e.Status, e)
	writeJSON(w, e.Status, e)
}

// internal is the answer when an answer cannot be encoded (a value JSON
// has no number for): a bug, never a client's fault.
const internal = `{"error":"internal","message":"the answer could not be written; see the log"}`

// writeJSON answers v as JSON with status code.
func writeJSON(w fsthttp.ResponseWriter, code int, v any) {
	body, err := encode(v)
	if err != nil {
		code, body = fsthttp.StatusInternalServerError, []byte(internal+"\n")
	}
	w.Header().Set("Content-Type", "application/json")
	w.WriteHeader(code)
	w.Write(body)
}

// encode is v as one line of JSON. Messages quote "<api_token>" and the
// like: they are written as they are, not as \u003c escapes, since no
// answer is ever read as HTML.
func encode(v any) ([]byte, error) {
	var b bytes.Buffer
	enc := json.NewEncoder(&b)
	enc.SetEscapeHTML(false)
	err := enc.Encode(v)
	return b.Bytes(), err
}
