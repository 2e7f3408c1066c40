package e2e

import (
	"context"
	"net/http"
	"strings"
	"testing"
	"time"

	"github.com/edgequeue/waitingroom/queue"
	"github.com/edgequeue/waitingroom/store"
)

// TestLiveModes: an operator's live mode, set in the store, is what the
// edge serves on the next request, and clearing it restores the config.
func TestLiveModes(t *testing.T) {
	t.Parallel()
	const config = `{"paths":["/"],"max_active_users":1,"refresh":1,"claim_window":6,"inactivity_timeout":30}`
	e := startRoom(t, loadTimeout, config)
	room, err := queue.ParseRoom("shop", []byte(config))
	if err != nil {
		t.Fatal(err)
	}
	st := e.stack.Store()
	set := func(a store.Action) {
		t.Helper()
		a.Actor = store.Actor{Via: "api", Client: "test"}
		if _, err := st.Operate(context.Background(), "shop", room.Policy(time.Now()), a, time.Now()); err != nil {
			t.Fatalf("%s: %v", a.Op, err)
		}
	}
	a, b := &visitor{e: e}, &visitor{e: e}
	if !a.in("/") || b.in("/") {
		t.Fatal("capacity 1: the first visitor should be in and the second wait")
	}

	set(store.Action{Op: store.OpLimits, Set: store.Overrides{Mode: store.Reject}})
	closed := b.get("/")
	if closed.status != http.StatusServiceUnavailable || !strings.Contains(closed.body, "Closed") {
		t.Fatalf("a waiting visitor in a room closed live: %d %.200q", closed.status, closed.body)
	}
	if c := (&visitor{e: e}).get("/"); c.status != http.StatusServiceUnavailable || !strings.Contains(c.body, "Closed") {
		t.Fatalf("a newcomer in a room closed live: %d %.200q", c.status, c.body)
	}
	if !a.in("/") {
		t.Fatal("a live session was turned away by a live reject")
	}

	set(store.Action{Op: store.OpLimits, Set: store.Overrides{Mode: store.Passthrough}})
	if !eventually(func() bool { return b.in("/") }) {
		t.Fatal("the waiting visitor did not get in once the room was set to passthrough")
	}
	if !(&visitor{e: e}).in("/") {
		t.Fatal("a newcomer waited in a room set to passthrough")
	}

	set(store.Action{Op: store.OpClear})
	if (&visitor{e: e}).in("/") {
		t.Fatal("with the overrides cleared, a newcomer got in past the configured capacity")
	}
	set(store.Action{Op: store.OpLimits, Set: store.Overrides{Capacity: intp(10)}})
	if !(&visitor{e: e}).in("/") {
		t.Fatal("with the capacity raised live to 10, a newcomer still waited")
	}
}

func intp(v int) *int { return &v }
