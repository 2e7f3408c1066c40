package apitest

import (
	"bytes"
	"encoding/json"
	"net/http"
	"strings"
	"testing"

	"github.com/edgequeue/waitingroom/control"
)

// validBody is a body op accepts for room; a route not named is given
// the required fields of its operator action, if any (actionBody).
func validBody(op operation, room string) []byte {
	switch op.id {
	case "admit":
		return []byte(`{"n":2}`)
	case "reset":
		return []byte(`{"confirm":"` + room + `"}`)
	case "setLimits":
		return []byte(`{"max_active_users":3,"burst":2}`)
	}
	return actionBody(op, room)
}

// actionBody is a body of the required fields of the operator action
// whose route op is (control.Actions): a whole number or a number 1, a
// text the room's name, a choice the first. Nil for a route of no action
// or of no required field.
func actionBody(op operation, room string) []byte {
	for _, a := range control.Actions() {
		if a.Method != op.method || a.Path != op.path {
			continue
		}
		body := map[string]any{}
		for _, f := range a.Fields {
			switch {
			case f.Required == "":
			case f.Kind == control.Text:
				body[f.Name] = room
			case f.Kind == control.Choice:
				body[f.Name] = f.Choices[0]
			default:
				body[f.Name] = 1
			}
		}
		if len(body) > 0 {
			b, _ := json.Marshal(body)
			return b
		}
	}
	return nil
}

// clients are the API's clients the coverage needs: api, the operator's;
// stranger, one whose wrong tokens are not counted against api (a client
// of another address each time, where wrong tokens are limited); boxed,
// one in the penalty box for wrong tokens.
type clients struct{ api, stranger, boxed client }

// coverEveryAnswer sends a request for every answer the document lists
// for every route, checks each against the document, and then that none
// went unseen. storeDown(true) makes the store fail until
// storeDown(false). room is a room that queues, locked one configured
// with mode reject.
func coverEveryAnswer(t *testing.T, s *spec, c clients, storeDown func(bool), room, locked string) {
	api := c.api
	send := func(c client, op operation, path string, body []byte, want int, header ...string) {
		t.Helper()
		x := c(t, op.method, path, body, header...)
		s.check(t, x)
		if x.status != want {
			t.Errorf("%s: want %d", x, want)
		}
	}
	ops := s.operations(t)
	// Every route's success, the reset last: it voids the line.
	for _, last := range []bool{false, true} {
		for _, op := range ops {
			if (op.id == "reset") == last {
				send(api, op, roomPath(op, room), validBody(op, room), http.StatusOK)
			}
		}
	}
	for _, op := range ops {
		if op.path == "/openapi.json" {
			continue
		}
		path, body := roomPath(op, room), validBody(op, room)
		send(api, op, path, body, http.StatusUnauthorized, "Authorization", "")
		send(c.stranger, op, path, body, http.StatusUnauthorized, "Authorization", "Bearer not-the-token-not-the-token-not-the")
		send(c.boxed, op, path, body, http.StatusTooManyRequests)
		send(api, op, path+"?bogus=1", body, http.StatusBadRequest)
		if strings.Contains(op.path, "{room}") {
			send(api, op, roomPath(op, "no-such-room"), body, http.StatusNotFound)
		}
		if s.documents(t, op, http.StatusRequestEntityTooLarge) {
			send(api, op, path, append([]byte(`{"n":`+strings.Repeat(" ", 4096)), '1', '}'), http.StatusRequestEntityTooLarge)
			send(api, op, path, []byte(`{}`), http.StatusUnsupportedMediaType, "Content-Type", "text/plain")
		}
		switch op.id {
		case "reset":
			send(api, op, path, []byte(`{"confirm":"`+strings.ToUpper(room)+`"}`), http.StatusConflict)
		case "setLimits":
			send(api, op, roomPath(op, locked), body, http.StatusConflict)
		}
	}
	storeDown(true)
	for _, op := range ops {
		if op.path != "/openapi.json" {
			send(api, op, roomPath(op, room), validBody(op, room), http.StatusServiceUnavailable)
		}
	}
	storeDown(false)
	// What the document does not list: a path, a method.
	send(api, operation{method: http.MethodGet, path: "/rooms/" + room}, "/rooms/"+room, nil, http.StatusNotFound)
	send(api, operation{method: http.MethodPut, path: "/rooms/{room}/limits"}, "/rooms/"+room+"/limits", []byte(`{}`), http.StatusMethodNotAllowed)
	send(api, operation{method: http.MethodDelete, path: "/openapi.json"}, "/openapi.json", nil, http.StatusMethodNotAllowed)
	s.checkCoverage(t)
}

// checkServedDocument: the document the API serves is the repository's
// api/openapi.json, byte for byte.
func checkServedDocument(t *testing.T, served []byte, file []byte) {
	t.Helper()
	if !bytes.Equal(served, file) {
		t.Fatalf("the served document (%d bytes) is not api/openapi.json (%d bytes)", len(served), len(file))
	}
}
