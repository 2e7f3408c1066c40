package queue

import (
	"strings"
	"testing"
	"time"

	"github.com/edgequeue/waitingroom/store"
)

// sale is a closed room with one event: a pre-queue from 09:00, the sale
// from 10:00 to 12:00 at 100 a minute in random order.
const sale = `{"paths":["/"],"mode":"reject","events":[{"name":"drop","prequeue_from":"2026-12-01T09:00:00Z",
	"starts":"2026-12-01T10:00:00Z","ends":"2026-12-01T12:00:00Z",
	"overrides":{"new_users_per_minute":100,"mode":"random","random_window":30,"template":"drop.html","queue_status_code":202}}]}`

func TestParseEvents(t *testing.T) {
	ev := func(fields string) string {
		return `{"paths":["/"],"max_active_users":10,"events":[{"name":"e",` + fields + `}]}`
	}
	times := `"prequeue_from":"2026-12-01T09:00:00Z","starts":"2026-12-01T10:00:00Z","ends":"2026-12-01T12:00:00Z"`
	tests := []struct{ name, json, wantErr string }{
		{"sale", sale, ""},
		{"no pre-queue", ev(`"starts":"2026-12-01T10:00:00Z","ends":"2026-12-01T12:00:00Z"`), ""},
		{"no overrides", ev(times), ""},
		{"missing starts", ev(`"ends":"2026-12-01T12:00:00Z"`), "starts: required"},
		{"missing ends", ev(`"starts":"2026-12-01T10:00:00Z"`), "ends: required"},
		{"not RFC 3339", ev(`"starts":"1 Dec 2026 10:00","ends":"2026-12-01T12:00:00Z"`), `starts: "1 Dec 2026 10:00" is not an RFC 3339 time`},
		{"an offset", ev(`"starts":"2026-12-01T10:00:00+01:00","ends":"2026-12-01T12:00:00Z"`), "starts: \"2026-12-01T10:00:00+01:00\" must be in UTC"},
		{"+00:00 is not Z", ev(`"starts":"2026-12-01T10:00:00+00:00","ends":"2026-12-01T12:00:00Z"`), "must be in UTC, ending in Z"},
		{"pre-queue after start", ev(`"prequeue_from":"2026-12-01T10:00:01Z","starts":"2026-12-01T10:00:00Z","ends":"2026-12-01T12:00:00Z"`), "events[0].prequeue_from: 2026-12-01T10:00:01Z is after starts"},
		{"ends at start", ev(`"starts":"2026-12-01T10:00:00Z","ends":"2026-12-01T10:00:00Z"`), "events[0].ends: 2026-12-01T10:00:00Z is not after starts"},
		{"bad name", `{"paths":["/"],"max_active_users":1,"events":[{"name":"Black Friday",` + times + `}]}`, `name: "Black Friday" may only hold`},
		{"unknown field", ev(times + `,"start":"x"`), `unknown field "start"`},
		{"unknown override", ev(times + `,"overrides":{"capacity":5}`), `overrides: json: unknown field "capacity"`},
		{"override out of range", ev(times + `,"overrides":{"max_active_users":-5}`), "events[0].overrides: max_active_users: must be between"},
		{"passthrough event", ev(times + `,"overrides":{"mode":"passthrough"}`), "events[0].overrides.mode: an event is a line"},
		{"closed room, event without a limit", `{"paths":["/"],"mode":"reject","events":[{"name":"e",` + times + `}]}`, "events[0].overrides: new_users_per_minute or max_active_users: set at least one"},
		{"bad template override", ev(times + `,"overrides":{"template":"../x"}`), "events[0].overrides: template"},
		{"duplicate names", `{"paths":["/"],"max_active_users":1,"events":[{"name":"e",` + times + `},{"name":"e","starts":"2026-12-02T10:00:00Z","ends":"2026-12-02T12:00:00Z"}]}`, `events[1].name: "e" is also events[0]'s name`},
		{"overlap", `{"paths":["/"],"max_active_users":1,"events":[{"name":"a",` + times + `},{"name":"b","prequeue_from":"2026-12-01T11:59:59Z","starts":"2026-12-01T13:00:00Z","ends":"2026-12-01T14:00:00Z"}]}`, `"b" (pre-queue from 2026-12-01T11:59:59Z) overlaps "a"`},
		{"back to back", `{"paths":["/"],"max_active_users":1,"events":[{"name":"b","prequeue_from":"2026-12-01T12:00:00Z","starts":"2026-12-01T13:00:00Z","ends":"2026-12-01T14:00:00Z"},{"name":"a",` + times + `}]}`, ""},
		{"too many", `{"paths":["/"],"max_active_users":1,"events":[` + strings.Repeat(`{"name":"e",`+times+`},`, MaxEvents) + `{"name":"e",` + times + `}]}`, "events: 101 events, at most 100"},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			_, err := ParseRoom("shop", []byte(tc.json))
			switch {
			case tc.wantErr == "" && err != nil:
				t.Fatal(err)
			case tc.wantErr != "" && (err == nil || !strings.Contains(err.Error(), tc.wantErr)):
				t.Fatalf("error %v, want one containing %q", err, tc.wantErr)
			}
		})
	}
}

// TestRoomAtEachMoment: the room's settings a millisecond either side of
// each of the event's times.
func TestRoomAtEachMoment(t *testing.T) {
	r, err := ParseRoom("shop", []byte(sale))
	if err != nil {
		t.Fatal(err)
	}
	at := func(s string, d time.Duration) time.Time {
		v, _ := time.Parse(time.RFC3339, s)
		return v.Add(d)
	}
	ms := time.Millisecond
	tests := []struct {
		name  string
		now   time.Time
		mode  Mode
		event bool
	}{
		{"before the pre-queue", at("2026-12-01T09:00:00Z", -ms), Reject, false},
		{"the pre-queue opens", at("2026-12-01T09:00:00Z", 0), Random, true},
		{"just before the start", at("2026-12-01T10:00:00Z", -ms), Random, true},
		{"the start", at("2026-12-01T10:00:00Z", 0), Random, true},
		{"just before the end", at("2026-12-01T12:00:00Z", -ms), Random, true},
		{"the end", at("2026-12-01T12:00:00Z", 0), Reject, false},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			room := r.At(tc.now)
			p := r.Policy(tc.now)
			if room.Mode != tc.mode || (room.Event() != nil) != tc.event || (p.Event != nil) != tc.event {
				t.Fatalf("mode %s, event %v, policy event %v; want %s, %v", room.Mode, room.Event(), p.Event, tc.mode, tc.event)
			}
			if !tc.event {
				if room != r {
					t.Fatal("outside the event, At returned a copy")
				}
				return
			}
			want := store.Event{ID: "drop", PrequeueFrom: at("2026-12-01T09:00:00Z", 0), Starts: at("2026-12-01T10:00:00Z", 0), Ends: at("2026-12-01T12:00:00Z", 0)}
			if *p.Event != want || p.PerMinute != 100 || p.RandomWindow != 30*time.Second ||
				room.Template != "drop.html" || room.QueueStatusCode != 202 || room.At(tc.now) != room {
				t.Fatalf("during the event: policy %+v, room %+v", p, room)
			}
		})
	}
	if r.Mode != Reject || r.NewUsersPerMinute != 0 {
		t.Fatal("At changed the room it was called on")
	}
}

func TestEventPlace(t *testing.T) {
	r, _ := ParseRoom("shop", []byte(sale))
	start, _ := time.Parse(time.RFC3339, "2026-12-01T10:00:00Z")
	during := r.At(start)
	line := func(phase store.EventPhase) store.Line {
		return store.Line{Event: store.EventState{Phase: phase, First: 10, DrawFirst: 10, DrawLast: 20, Commitment: "c", Key: "k"}}
	}
	tests := []struct {
		name            string
		room            *Room
		ticket          int64
		phase           store.EventPhase
		want            bool
		prequeue, drawn bool
	}{
		{"no event", r, 12, store.Prequeue, false, false, false},
		{"not entered", during, 12, store.NotEntered, false, false, false},
		{"before the pre-queue", during, 9, store.Prequeue, true, false, false},
		{"in the pre-queue", during, 10, store.Prequeue, true, true, false},
		{"drawn", during, 20, store.Drawn, true, false, true},
		{"after the draw", during, 21, store.Drawn, true, false, false},
		{"the priority lane", during, -1, store.Drawn, true, false, false},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			e := eventPlace(tc.room, store.Place{Ticket: tc.ticket, Line: line(tc.phase)})
			if (e != nil) != tc.want || e != nil && (e.Prequeue != tc.prequeue || e.Drawn != tc.drawn || e.Name != "drop" || !e.Starts.Equal(start)) {
				t.Fatalf("%+v", e)
			}
		})
	}
}
