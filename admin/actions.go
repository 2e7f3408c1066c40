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
	"github.com/edgequeue/waitingroom/store"
	"github.com/edgequeue/waitingroom/store/shard"
	"github.com/fastly/compute-sdk-go/fsthttp"
)

// maxForm bounds a form body: the panel's forms hold a few short fields.
const maxForm = 8 << 10

// action is one of the panel's forms, posted to Path/<name>: it reads its
// fields and asks the operator to act, and says what it did, for the log.
type action func(ctx context.Context, p *Panel, room string, form url.Values) (done string, err error)

// actionNamed is the panel's form of that name, or nil. (A function, not
// a package-level map: TinyGo computes initializers at compile time, and
// the edge module keeps none; see tools/edgerules.)
func actionNamed(name string) action {
	switch name {
	case "admit":
		return admit
	case "pause":
		return switchTo(store.Pause)
	case "queue_all":
		return switchTo(store.QueueAll)
	case "resume":
		return switchTo(store.Resume)
	case "limits":
		return setLimits
	case "clear":
		return clearOverrides
	case "reset":
		return reset
	}
	return nil
}

func admit(ctx context.Context, p *Panel, room string, form url.Values) (string, error) {
	n, err := strconv.ParseInt(strings.TrimSpace(form.Get("n")), 10, 64)
	if err != nil {
		return "", &control.InputError{Field: "n", Message: fmt.Sprintf("must be a whole number from 1 to %d, not %q", store.MaxCallsPerOp, form.Get("n"))}
	}
	_, err = p.Op.Admit(ctx, room, n, p.Actor)
	return "admit " + strconv.FormatInt(n, 10), err
}

func switchTo(c store.Control) action {
	return func(ctx context.Context, p *Panel, room string, _ url.Values) (string, error) {
		_, err := p.Op.Control(ctx, room, c, p.Actor)
		return string(c), err
	}
}

// setLimits sets the live values the form gives; a blank field leaves its
// value as it is.
func setLimits(ctx context.Context, p *Panel, room string, form url.Values) (string, error) {
	var l control.Limits
	var set []string
	field := func(name string) (string, bool) {
		v := strings.TrimSpace(form.Get(name))
		if v != "" {
			set = append(set, name+"="+v)
		}
		return v, v != ""
	}
	whole := func(name string, to **int) error {
		v, ok := field(name)
		if !ok {
			return nil
		}
		n, err := strconv.Atoi(v)
		if err != nil {
			return &control.InputError{Field: name, Message: fmt.Sprintf("must be a whole number, not %q", v)}
		}
		*to = &n
		return nil
	}
	if err := whole("max_active_users", &l.MaxActiveUsers); err != nil {
		return "", err
	}
	if v, ok := field("new_users_per_minute"); ok {
		f, err := strconv.ParseFloat(v, 64)
		if err != nil {
			return "", &control.InputError{Field: "new_users_per_minute", Message: fmt.Sprintf("must be a number, not %q", v)}
		}
		l.NewUsersPerMinute = &f
	}
	if err := whole("burst", &l.Burst); err != nil {
		return "", err
	}
	if v, ok := field("mode"); ok {
		l.Mode = &v
	}
	_, err := p.Op.SetLimits(ctx, room, l, p.Actor)
	return "set " + strings.Join(set, " "), err
}

func clearOverrides(ctx context.Context, p *Panel, room string, _ url.Values) (string, error) {
	_, err := p.Op.ClearOverrides(ctx, room, p.Actor)
	return "clear overrides", err
}

func reset(ctx context.Context, p *Panel, room string, form url.Values) (string, error) {
	_, err := p.Op.Reset(ctx, room, form.Get("confirm"), p.Actor)
	return "reset", err
}

// act carries out one posted form, then sends the browser back to the
// room on the panel, or shows why nothing was done.
func (p *Panel) act(ctx context.Context, w fsthttp.ResponseWriter, r *fsthttp.Request, name string) {
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
	done, err := actionNamed(name)(ctx, p, room, form)
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
