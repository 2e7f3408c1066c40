package admin

import (
	"context"
	"errors"
	"fmt"
	"io"
	"net/url"
	"strconv"
	"strings"

	"github.com/edgequeue/waitingroom/control"
	"github.com/edgequeue/waitingroom/store/shard"
	"github.com/fastly/compute-sdk-go/fsthttp"
)

// maxForm bounds a form body: the panel's forms hold a few short fields.
const maxForm = 8 << 10

// readForm reads a's fields from its posted form, as control.Kind says
// the panel reads each, and says what was typed in them, for the log.
func readForm(a control.Action, form url.Values) (control.Input, []string, error) {
	in := control.Input{}
	var typed []string
	for _, f := range a.Fields {
		v := form.Get(f.Name)
		if f.Kind == control.Text {
			in[f.Name] = v
			continue
		}
		if v = strings.TrimSpace(v); v == "" && f.Required == "" {
			continue
		}
		if len(a.Fields) > 1 {
			typed = append(typed, f.Name+"="+v)
		} else {
			typed = append(typed, v)
		}
		var err error
		switch f.Kind {
		case control.Whole:
			in[f.Name], err = strconv.Atoi(v)
		case control.Number:
			in[f.Name], err = strconv.ParseFloat(v, 64)
		default:
			in[f.Name] = v
		}
		if err != nil {
			return nil, nil, &control.InputError{Field: f.Name, Message: fmt.Sprintf("must be %s, not %q", wanted(f), v)}
		}
	}
	return in, typed, nil
}

// wanted is what f's value must be, as the panel says it.
func wanted(f control.Field) string {
	switch {
	case f.Want != "":
		return f.Want
	case f.Kind == control.Whole:
		return "a whole number"
	}
	return "a number"
}

// run carries out a with what its form holds, and says what it did, for
// the log.
func (p *Panel) run(ctx context.Context, a control.Action, room string, form url.Values) (string, error) {
	in, typed, err := readForm(a, form)
	if err != nil {
		return "", err
	}
	done := a.Form.Log
	if len(typed) > 0 {
		done += " " + strings.Join(typed, " ")
	}
	_, err = a.Run(ctx, p.Op, room, in, p.Actor)
	return done, err
}

// act carries out one posted form, then sends the browser back to the
// room on the panel, or shows why nothing was done.
func (p *Panel) act(ctx context.Context, w fsthttp.ResponseWriter, r *fsthttp.Request, a control.Action) {
	name := a.Name
	body, err := io.ReadAll(io.LimitReader(r.Body, maxForm+1))
	if err != nil || len(body) > maxForm {
		p.failed(w, r, fsthttp.StatusBadRequest, "Not done", "The form is missing or too large.")
		return
	}
	form, err := url.ParseQuery(string(body))
	if err != nil {
		p.failed(w, r, fsthttp.StatusBadRequest, "Not done", "The form was not understood: "+err.Error())
		return
	}
	if !p.csrfValid(form.Get("csrf")) {
		p.Logf("admin: refused %s: missing or stale CSRF token", name)
		p.failed(w, r, fsthttp.StatusForbidden, "Not done",
			"The form has expired or did not come from this panel. Go back, reload the panel and try again.")
		return
	}
	room := form.Get("room")
	if p.SetActionID != nil {
		p.SetActionID(form.Get("id"))
	}
	done, err := p.run(ctx, a, room, form)
	if err != nil {
		p.Logf("admin: %s in room %q by %s %s refused: %v", name, room, p.Actor.Via, p.Actor.Client, err)
		code, msg := refusal(err, room)
		p.failed(w, r, code, "Not done: "+name+" in room "+room, msg)
		return
	}
	p.Logf("admin: %s in room %s by %s %s", done, room, p.Actor.Via, p.Actor.Client)
	i := p.roomIndex(room)
	w.Header().Set("Location", p.link(view{refreshOff: refreshOff(r), roomsPage: pageOf(p.pages(), i)})+"#"+roomAnchor(i))
	w.WriteHeader(fsthttp.StatusSeeOther)
}

// refusal is the status and the sentence for an action that was not
// done.
func refusal(err error, room string) (int, string) {
	var input *control.InputError
	var partial *shard.PartialError
	switch {
	case errors.As(err, &partial):
		return fsthttp.StatusServiceUnavailable, "Done in part: " + err.Error() + ". Send the form again (go back and submit it) to complete it: it applies nowhere twice."
	case errors.As(err, &input):
		return fsthttp.StatusBadRequest, "Check the field " + input.Error()
	case errors.Is(err, control.ErrConfirm):
		return fsthttp.StatusBadRequest, "The room was not reset: the confirmation must be the room's name, " + strconv.Quote(room) + ", exactly."
	case errors.Is(err, control.ErrNoRoom):
		return fsthttp.StatusNotFound, "There is no room " + strconv.Quote(room) + "."
	case errors.Is(err, control.ErrModeLocked):
		return fsthttp.StatusConflict, "No live value can be set: " + err.Error() + "."
	case errors.Is(err, control.ErrBudget):
		return fsthttp.StatusInternalServerError, "The panel asked more of the store than one request may (" + err.Error() + "): a bug. Nothing was done."
	}
	return fsthttp.StatusServiceUnavailable, "The store did not answer (" + err.Error() + "), so the action may not have been done. Check the room on the panel before trying again."
}

// roomIndex is the room's place in Rooms, which names its section on the
// page; -1 for none.
func (p *Panel) roomIndex(name string) int {
	for i, r := range p.Rooms {
		if r.Name == name {
			return i
		}
	}
	return -1
}
