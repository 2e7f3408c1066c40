package control

import (
	"context"
	"strconv"
	"strings"

	"github.com/edgequeue/waitingroom/settings"
	"github.com/edgequeue/waitingroom/store"
)

// The operator actions, in one table: the admin panel draws a form for
// each and the admin API serves a route for each, both from its row, so
// that an action is added in one place (docs/development.md, "How to add an
// operator action"). The audit log needs no row of its own: the store
// records each action under its store operation, with the room's state
// before and after.

// Kind is what a field of an action holds.
type Kind int

// The kinds of field. The panel reads a Whole, Number or Choice trimmed,
// and leaves out a blank one unless it is Required (a blank Whole or
// Number is then refused); a Text it takes as typed, blank included. The
// API takes a Whole as a JSON whole number, a Number as a JSON number, a
// Text or Choice as a JSON string. A Whole is an int, which is 32 bits in
// the TinyGo build: a larger one is refused as not a whole number.
const (
	Whole Kind = iota + 1
	Number
	Text
	Choice
)

// Field is one input of an action, named as the panel's form and the
// API's JSON body name it.
type Field struct {
	Name string
	Kind Kind
	// Required, when set, is what the field is for, which the API says
	// of a body without it ("is required: " + Required) and which makes
	// the panel's input required.
	Required string
	// Want is what the panel says a value it cannot read must be; ""
	// says it by Kind ("a whole number", "a number").
	Want string
	// Label is the field's label on the panel.
	Label string
	// Attrs are the panel's input's HTML attributes beyond its id, name
	// and type, written as they are.
	Attrs string
	// Choices are a Choice's values; the panel offers a blank one too
	// (left as it is) unless the field is Required.
	Choices []string
}

// Form is how the admin panel shows an action: a form of the action's
// fields and one button, posted to the panel's path and the action's
// name. Its texts are HTML written as they are (none holds a client's
// text); {room} in Intro stands for the room's name, in bold.
type Form struct {
	// Heading, when set, is a heading (h3) before the form.
	Heading string
	// Intro, when set, is a paragraph before the form that its inputs
	// refer to (aria-describedby).
	Intro string
	// Legend, when set, groups the fields in a fieldset with this legend.
	Legend string
	// Button is the button's label. After it comes For and the room's
	// name, for screen readers only (the room's section names it); with
	// no For, the room's name shows.
	Button, For string
	// Danger marks a button that cannot be undone.
	Danger bool
	// Hint, when set, is a paragraph after the form.
	Hint string
	// Log is how the panel's log names the action: it follows with what
	// was typed in its fields (but a Text), each as name=value when the
	// action has several fields.
	Log string
}

// Action is one operator action.
type Action struct {
	// Name names the action: the panel's form posts to Path/Name, the
	// API answers it as its "action", and both log it by it.
	Name string
	// Method and Path are the action's API route, the path below api_path
	// with {room} for the room's name. The API takes a JSON body of the
	// action's fields, required when it has any.
	Method, Path string
	Fields       []Field
	Form         Form
	// Run carries out the action with what was given of its fields (a
	// field left out has no entry in the Input); the operator checks
	// what it is given.
	Run func(ctx context.Context, o Acts, room string, in Input, who store.Actor) (store.Line, error)
}

// Acts is what an action's Run may call: *Operator has it, and the
// panel's tests record it.
type Acts interface {
	Admit(ctx context.Context, room string, n int64, who store.Actor) (store.Line, error)
	Control(ctx context.Context, room string, c store.Control, who store.Actor) (store.Line, error)
	SetLimits(ctx context.Context, room string, l Limits, who store.Actor) (store.Line, error)
	ClearOverrides(ctx context.Context, room string, who store.Actor) (store.Line, error)
	Reset(ctx context.Context, room, confirm string, who store.Actor) (store.Line, error)
}

// Input is what was given of an action's fields, by name: an int for a
// Whole, a float64 for a Number, a string for a Text or a Choice.
type Input map[string]any

// given is the field name as a T, or nil when it was not given.
func given[T any](in Input, name string) *T {
	if v, ok := in[name].(T); ok {
		return &v
	}
	return nil
}

// or0 is what p points to, or T's zero value for nil: a required field
// the surface let through without a value (it never does) is then one
// the operator refuses.
func or0[T any](p *T) (v T) {
	if p != nil {
		v = *p
	}
	return v
}

// Actions is every operator action, in the order the panel shows them.
// (A function, not a package-level table: TinyGo computes initializers
// at compile time, and the edge module keeps none; see tools/edgerules.)
func Actions() []Action {
	most := strconv.Itoa(store.MaxCallsPerOp)
	switchTo := func(c store.Control, button, hint string) Action {
		return Action{Name: string(c), Method: "POST", Path: "/rooms/{room}/" + string(c),
			Form: Form{Button: button, For: "room", Hint: hint, Log: string(c)},
			Run: func(ctx context.Context, o Acts, room string, _ Input, who store.Actor) (store.Line, error) {
				return o.Control(ctx, room, c, who)
			}}
	}
	return []Action{
		{Name: "admit", Method: "POST", Path: "/rooms/{room}/admit",
			Fields: []Field{{Name: "n", Kind: Whole, Required: "how many visitors to let in, 1 to " + most,
				Want: "a whole number from 1 to " + most, Label: "Visitors to admit now", Attrs: `min="1" max="` + most + `" value="10"`}},
			Form: Form{Heading: "Controls", Button: "Admit", For: "in room", Log: "admit"},
			Run: func(ctx context.Context, o Acts, room string, in Input, who store.Actor) (store.Line, error) {
				return o.Admit(ctx, room, int64(or0(given[int](in, "n"))), who)
			}},
		switchTo(store.Pause, "Pause", ""),
		switchTo(store.QueueAll, "Queue all", ""),
		switchTo(store.Resume, "Resume", "Pause: nobody new is called (admit still works). Queue all: nobody enters, called visitors are held without losing their turn. Resume undoes both."),
		{Name: "limits", Method: "PATCH", Path: "/rooms/{room}/limits",
			Fields: []Field{
				{Name: "max_active_users", Kind: Whole, Label: "Capacity (0: no cap)", Attrs: `min="0" step="1"`},
				{Name: "new_users_per_minute", Kind: Number, Label: "Rate per minute (0: no rate)", Attrs: `min="0" step="any"`},
				{Name: "burst", Kind: Whole, Label: "Burst", Attrs: `min="0" step="1"`},
				{Name: "mode", Kind: Choice, Label: "Mode", Choices: strings.Split(settings.Get(settings.Room[:], "mode").Choices, "|")},
			},
			Form: Form{Legend: "Set live values (a blank field is left as it is)", Button: "Set live values", For: "of room", Log: "set"},
			Run: func(ctx context.Context, o Acts, room string, in Input, who store.Actor) (store.Line, error) {
				return o.SetLimits(ctx, room, Limits{MaxActiveUsers: given[int](in, "max_active_users"),
					NewUsersPerMinute: given[float64](in, "new_users_per_minute"), Burst: given[int](in, "burst"), Mode: given[string](in, "mode")}, who)
			}},
		{Name: "clear", Method: "DELETE", Path: "/rooms/{room}/limits",
			Form: Form{Button: "Clear all overrides", For: "of room", Log: "clear overrides"},
			Run: func(ctx context.Context, o Acts, room string, _ Input, who store.Actor) (store.Line, error) {
				return o.ClearOverrides(ctx, room, who)
			}},
		{Name: "reset", Method: "POST", Path: "/rooms/{room}/reset",
			Fields: []Field{{Name: "confirm", Kind: Text, Required: "the room's name, typed out, to confirm that everyone in line starts again",
				Label: "Room name, to confirm the reset", Attrs: `autocomplete="off" spellcheck="false"`}},
			Form: Form{Heading: "Reset", Intro: "A reset starts the line afresh: everyone waiting or inside goes back to a new, empty line. Type the room's name, {room}, to confirm.",
				Button: "Reset room", Danger: true, Log: "reset"},
			Run: func(ctx context.Context, o Acts, room string, in Input, who store.Actor) (store.Line, error) {
				return o.Reset(ctx, room, or0(given[string](in, "confirm")), who)
			}},
	}
}

// ActionNamed is the action of that name, if there is one.
func ActionNamed(name string) (Action, bool) {
	for _, a := range Actions() {
		if a.Name == name {
			return a, true
		}
	}
	return Action{}, false
}
