// Package api is the waiting room's JSON admin API: the operator's live
// controls and readings (package control) for scripts, an origin's own
// software among them ("let N in when my load is low").
//
// It sits behind a bearer token from the secret store, compared in
// constant time; without a usable token it is disabled, never open. A
// client that tries wrong tokens is limited as the admin panel limits
// wrong passwords. Every answer is JSON (the audit log: JSON lines), never
// cached, and every refusal carries a stable code (see Error). The routes
// and their shapes are described by the OpenAPI document the package
// embeds and serves without a token (it is public, like this source).
package api

import (
	"context"
	"crypto/sha256"
	"crypto/subtle"
	"fmt"
	"strconv"
	"strings"
	"time"

	"github.com/edgequeue/waitingroom/control"
	"github.com/fastly/compute-sdk-go/fsthttp"
)

// Handler serves the API under Path for one request.
type Handler struct {
	// Path is where the API lives (api_path), e.g. /_wr/api.
	Path string
	// Token is the API's bearer token (the secret api_token); one that
	// Token().Problem refuses, an empty one included, disables the API.
	Token []byte
	// Disabled, when set, says why the API is off whatever Token holds:
	// the edge knows of problems with the secret that its value does not
	// show (a development value on a deployed service...).
	Disabled string
	// Guesses limits wrong tokens from the requesting client; nil limits
	// nothing.
	Guesses control.Guesses
	// Operator carries out the actions and readings; nil when the store
	// cannot be used, and then Unavailable says why.
	Operator    *control.Operator
	Unavailable string
	// Client names the requesting client in the audit log: a keyed hash
	// of its address, never the address.
	Client string
	// Logf records what clients did and every refusal.
	Logf func(format string, args ...any)
}

// Token is the secret that opens the API: a script holds it, nobody
// types it, so it can be long enough that no rate of guessing matters
// (openssl rand -base64 32 gives 44 characters).
func Token() control.Secret {
	return control.Secret{Name: "api_token", Opens: "the API", MinLength: 32, Make: "openssl rand -base64 32"}
}

// maxAuthorization bounds the Authorization header read: a token is far
// shorter, and hashing megabytes per guess costs the edge, not the guesser.
const maxAuthorization = 1024

// ServeHTTP answers one request to the API.
func (h *Handler) ServeHTTP(ctx context.Context, w fsthttp.ResponseWriter, r *fsthttp.Request) {
	w.Header().Set("Cache-Control", "no-store")
	rest := strings.TrimPrefix(r.URL.EscapedPath(), h.Path)
	if rest == docPath {
		h.serveDoc(w, r)
		return
	}
	problem := h.Disabled
	if problem == "" {
		problem = Token().Problem(h.Token)
	}
	if problem != "" {
		h.refuse(w, r, &Error{Status: fsthttp.StatusServiceUnavailable, Code: "api_disabled", Message: "the API is disabled: " + problem})
		return
	}
	// A client in the penalty box is refused before its token is
	// compared, so guessing on costs it nothing but time.
	if h.Guesses != nil {
		if retry, refused := h.Guesses.Refused(); refused {
			w.Header().Set("Retry-After", strconv.Itoa(int(retry/time.Second)))
			h.refuse(w, r, &Error{Status: fsthttp.StatusTooManyRequests, Code: "too_many_attempts",
				Message: fmt.Sprintf("too many wrong tokens from your address; try again in %d minutes", control.RetryMinutes(retry))})
			return
		}
	}
	if e := h.authorize(r); e != nil {
		w.Header().Set("WWW-Authenticate", `Bearer realm="waiting room API"`)
		h.refuse(w, r, e)
		return
	}
	h.route(ctx, w, r, rest)
}

// authorize checks the request's bearer token. Only a token tried and
// wrong counts as a guess: a request without one is a client not set up.
func (h *Handler) authorize(r *fsthttp.Request) *Error {
	auth := r.Header.Get("Authorization")
	if auth == "" {
		return &Error{Status: fsthttp.StatusUnauthorized, Code: "unauthorized",
			Message: "send the API token as Authorization: Bearer <api_token>"}
	}
	const prefix = "Bearer "
	token := ""
	if len(auth) > len(prefix) && len(auth) <= maxAuthorization && strings.EqualFold(auth[:len(prefix)], prefix) {
		token = strings.TrimSpace(auth[len(prefix):])
	}
	// Comparing digests keeps the comparison constant-time whatever the
	// lengths are.
	got, want := sha256.Sum256([]byte(token)), sha256.Sum256(h.Token)
	if token != "" && subtle.ConstantTimeCompare(got[:], want[:]) == 1 {
		return nil
	}
	if h.Guesses != nil {
		h.Guesses.Wrong()
	}
	return &Error{Status: fsthttp.StatusUnauthorized, Code: "unauthorized",
		Message: "wrong API token, or not sent as Authorization: Bearer <api_token>"}
}
