package control

import (
	"context"
	"reflect"
	"testing"

	"github.com/edgequeue/waitingroom/queue"
	"github.com/edgequeue/waitingroom/store"
)

// TestEveryActionMapsToItsStoreOperation: each action of Actions, run with its fields
// as a surface reads them, asks the store for the operation it maps to,
// as the actor; and every action has a row here.
func TestEveryActionMapsToItsStoreOperation(t *testing.T) {
	who := store.Actor{Via: "api", Client: "c0ffee"}
	cases := []struct {
		action string
		in     Input
		want   store.Action
	}{
		{"admit", Input{"n": 3}, store.Action{Op: store.OpAdmit, N: 3}},
		{"pause", Input{}, store.Action{Op: string(store.Pause)}},
		{"queue_all", Input{}, store.Action{Op: string(store.QueueAll)}},
		{"resume", Input{}, store.Action{Op: string(store.Resume)}},
		{"limits", Input{"burst": 2, "mode": "random"}, store.Action{Op: store.OpLimits, Set: store.Overrides{Burst: intp(2), Mode: queue.Random}}},
		{"clear", Input{}, store.Action{Op: store.OpClear}},
		{"reset", Input{"confirm": "r"}, store.Action{Op: store.OpReset}},
	}
	tested := map[string]bool{}
	for _, tc := range cases {
		t.Run(tc.action, func(t *testing.T) {
			tested[tc.action] = true
			a, ok := ActionNamed(tc.action)
			if !ok {
				t.Fatalf("no action %q", tc.action)
			}
			rec := &recorder{}
			o := &Operator{Rooms: []*queue.Room{room(t, "r", `{"max_active_users": 5}`)}, Store: rec, Now: t0, ActionID: "id-1"}
			if _, err := a.Run(context.Background(), o, "r", tc.in, who); err != nil {
				t.Fatal(err)
			}
			tc.want.Actor, tc.want.ID = who, "id-1"
			if len(rec.acts) != 1 || !reflect.DeepEqual(rec.acts[0], tc.want) {
				t.Fatalf("the store was asked %+v, want %+v", rec.acts, tc.want)
			}
		})
	}
	for _, a := range Actions() {
		if !tested[a.Name] {
			t.Errorf("action %q has no case here", a.Name)
		}
	}
}

// TestActionsAreOneEach: no two actions share a name (the panel's form)
// or a route (the API's).
func TestActionsAreOneEach(t *testing.T) {
	names, routes := map[string]bool{}, map[string]bool{}
	for _, a := range Actions() {
		if names[a.Name] || routes[a.Method+" "+a.Path] {
			t.Errorf("%s (%s %s) is not alone", a.Name, a.Method, a.Path)
		}
		names[a.Name], routes[a.Method+" "+a.Path] = true, true
	}
}
