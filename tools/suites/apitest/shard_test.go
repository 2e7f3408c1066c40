package apitest

import (
	"encoding/json"
	"net/http"
	"strings"
	"testing"
)

// TestShardedRoomThroughTheWasm: in a room of four shards, a live
// capacity below the shards is refused with a message that says why (it
// would leave a shard no place, and nobody in it would ever be called),
// and an admit retried with the same Idempotency-Key applies once: the
// retry calls nobody more.
func TestShardedRoomThroughTheWasm(t *testing.T) {
	e := startWasmRooms(t, [2]string{"big", `{"paths":["/"],"max_active_users":8,"shards":4}`})
	api := e.client(from("127.0.0.1"))
	doc := api(t, http.MethodGet, "/openapi.json", nil, "Authorization", "")
	s := newSpec(t, doc.body)

	x := api(t, http.MethodPatch, "/rooms/big/limits", []byte(`{"max_active_users":2}`))
	s.check(t, x)
	var refused struct{ Error, Field, Message string }
	if err := json.Unmarshal(x.body, &refused); err != nil || x.status != http.StatusBadRequest ||
		refused.Error != "invalid_field" || refused.Field != "max_active_users" ||
		!strings.Contains(refused.Message, "2 is below the room's 4 shards: each shard needs at least one place") {
		t.Fatalf("a live capacity of 2 over 4 shards: %s", x)
	}
	var r result
	call(t, s, api, http.MethodGet, "/rooms/big/stats", "", &r)
	if len(r.Overrides) != 0 {
		t.Fatalf("the refused capacity was applied: %+v", r)
	}

	// Paused, eight visitors wait; admit 8 under one key calls some, and
	// its retry none.
	call(t, s, api, http.MethodPost, "/rooms/big/pause", "", nil)
	for i := 1; i <= 8; i++ {
		if p := e.visitor(i, "/").place(t); p.Status == "admitted" {
			t.Fatalf("visitor %d admitted in a paused room", i)
		}
	}
	admit := func() result {
		t.Helper()
		x := api(t, http.MethodPost, "/rooms/big/admit", []byte(`{"n":8}`), "Idempotency-Key", "admit-8.1")
		s.check(t, x)
		var r result
		if err := json.Unmarshal(x.body, &r); err != nil || x.status != http.StatusOK {
			t.Fatalf("admit 8: %s", x)
		}
		return r
	}
	first := admit()
	if first.CalledNow < 1 {
		t.Fatalf("admit 8 with 8 waiting called nobody: %+v", first)
	}
	if again := admit(); again.CalledNow != 0 || again.NowServing != first.NowServing {
		t.Fatalf("admit 8 retried with the same key: %+v after %+v, want nobody more called", again, first)
	}
	x = api(t, http.MethodPost, "/rooms/big/admit", []byte(`{"n":8}`), "Idempotency-Key", `bad key`)
	s.check(t, x)
	if x.status != http.StatusBadRequest || !strings.Contains(string(x.body), `"field":"id"`) {
		t.Fatalf("admit with a key the store cannot keep: %s", x)
	}
}
