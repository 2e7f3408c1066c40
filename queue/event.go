package queue

import (
	"bytes"
	"encoding/json"
	"fmt"
	"sort"
	"time"

	"github.com/edgequeue/waitingroom/store"
)

// Event is a scheduled sale in a room. From PrequeueFrom, arrivals get a
// countdown page and a place in the pre-queue; at Starts the pre-queue is
// drawn (its order is a keyed shuffle whose key is committed when the
// pre-queue opens and revealed after the draw) and later arrivals queue
// behind it; from PrequeueFrom until Ends, Overrides change the room's
// settings. The store makes each transition once, on the first request
// after its time: no scheduler runs.
type Event struct {
	// Name identifies the event with its schedule: the draw key is
	// derived from both, so a renamed event, or one scheduled again
	// under its name, is a new one.
	Name string
	// PrequeueFrom, Starts and Ends are the event's times, in UTC.
	PrequeueFrom, Starts, Ends time.Time
	// Overrides are the settings that differ during the event.
	Overrides Overrides
}

// Overrides are the room settings an event may change. A field left out
// keeps the room's own value.
type Overrides struct {
	MaxActiveUsers    *int     `json:"max_active_users"`
	NewUsersPerMinute *float64 `json:"new_users_per_minute"`
	Burst             *int     `json:"burst"`
	Mode              *Mode    `json:"mode"`
	RandomWindow      *int     `json:"random_window"`
	Template          *string  `json:"template"`
	QueueStatusCode   *int     `json:"queue_status_code"`
}

// MaxEvents bounds a room's events, so a mistaken config cannot make every
// request scan a long list.
const MaxEvents = 100

// eventJSON is an event as operators write it.
type eventJSON struct {
	Name         string          `json:"name"`
	PrequeueFrom string          `json:"prequeue_from"`
	Starts       string          `json:"starts"`
	Ends         string          `json:"ends"`
	Overrides    json.RawMessage `json:"overrides"`
}

// UnmarshalJSON reads an event as operators write it: times in RFC 3339 in
// UTC ("2026-12-01T09:00:00Z"), each checked with the field named.
func (e *Event) UnmarshalJSON(data []byte) error {
	var raw eventJSON
	dec := json.NewDecoder(bytes.NewReader(data))
	dec.DisallowUnknownFields()
	if err := dec.Decode(&raw); err != nil {
		return err
	}
	if err := checkName(raw.Name); err != nil {
		return fmt.Errorf("name: %q %v", raw.Name, err)
	}
	e.Name = raw.Name
	var err error
	if e.Starts, err = utc("starts", raw.Starts); err != nil {
		return err
	}
	if e.Ends, err = utc("ends", raw.Ends); err != nil {
		return err
	}
	e.PrequeueFrom = e.Starts
	if raw.PrequeueFrom != "" {
		if e.PrequeueFrom, err = utc("prequeue_from", raw.PrequeueFrom); err != nil {
			return err
		}
	}
	if len(raw.Overrides) > 0 {
		dec := json.NewDecoder(bytes.NewReader(raw.Overrides))
		dec.DisallowUnknownFields()
		if err := dec.Decode(&e.Overrides); err != nil {
			return fmt.Errorf("overrides: %v", err)
		}
	}
	return nil
}

// MarshalJSON writes the event as operators write it, so a room written
// back as JSON reads the same.
func (e Event) MarshalJSON() ([]byte, error) {
	overrides, err := json.Marshal(e.Overrides)
	if err != nil {
		return nil, err
	}
	return json.Marshal(eventJSON{Name: e.Name, PrequeueFrom: stamp(e.PrequeueFrom), Starts: stamp(e.Starts),
		Ends: stamp(e.Ends), Overrides: overrides})
}

// utc parses an RFC 3339 time in UTC; another offset is refused, so that a
// sale's time reads the same to every operator.
func utc(field, s string) (time.Time, error) {
	if s == "" {
		return time.Time{}, fmt.Errorf("%s: required (RFC 3339 in UTC, e.g. 2026-12-01T09:00:00Z)", field)
	}
	t, err := time.Parse(time.RFC3339, s)
	if err != nil {
		return time.Time{}, fmt.Errorf("%s: %q is not an RFC 3339 time (e.g. 2026-12-01T09:00:00Z)", field, s)
	}
	if _, offset := t.Zone(); offset != 0 || s[len(s)-1] != 'Z' {
		return time.Time{}, fmt.Errorf("%s: %q must be in UTC, ending in Z", field, s)
	}
	return t.UTC(), nil
}

// validateEvents checks each event's times and overrides, and that events
// do not overlap (one pre-queue at a time), sorting them by time.
func (r *Room) validateEvents() error {
	if len(r.Events) > MaxEvents {
		return fmt.Errorf("events: %d events, at most %d", len(r.Events), MaxEvents)
	}
	names := make(map[string]int, len(r.Events))
	for i, e := range r.Events {
		if j, dup := names[e.Name]; dup {
			return fmt.Errorf("events[%d].name: %q is also events[%d]'s name", i, e.Name, j)
		}
		names[e.Name] = i
		if e.PrequeueFrom.After(e.Starts) {
			return fmt.Errorf("events[%d].prequeue_from: %s is after starts (%s)", i, stamp(e.PrequeueFrom), stamp(e.Starts))
		}
		if !e.Ends.After(e.Starts) {
			return fmt.Errorf("events[%d].ends: %s is not after starts (%s)", i, stamp(e.Ends), stamp(e.Starts))
		}
		if m := e.Overrides.Mode; m != nil && (*m == Passthrough || *m == Reject) {
			return fmt.Errorf("events[%d].overrides.mode: an event is a line: fifo or random, got %q", i, *m)
		}
		if err := r.during(e).validate(); err != nil {
			return fmt.Errorf("events[%d].overrides: %v", i, err)
		}
	}
	sort.SliceStable(r.Events, func(i, j int) bool { return r.Events[i].PrequeueFrom.Before(r.Events[j].PrequeueFrom) })
	for i := 1; i < len(r.Events); i++ {
		if prev, e := r.Events[i-1], r.Events[i]; e.PrequeueFrom.Before(prev.Ends) {
			return fmt.Errorf("events: %q (pre-queue from %s) overlaps %q (ends %s): one event at a time",
				e.Name, stamp(e.PrequeueFrom), prev.Name, stamp(prev.Ends))
		}
	}
	return nil
}

func stamp(t time.Time) string { return t.UTC().Format(time.RFC3339Nano) }

// during is the room with e's overrides applied. A room closed (reject) or
// open to all (passthrough) outside its events queues first come, first
// served during them, unless the event says otherwise: an event is a line.
func (r *Room) during(e Event) *Room {
	c := *r
	c.Events, c.event = nil, &e
	o := e.Overrides
	if c.Mode == Reject || c.Mode == Passthrough {
		c.Mode = Fifo
	}
	set(&c.MaxActiveUsers, o.MaxActiveUsers)
	set(&c.NewUsersPerMinute, o.NewUsersPerMinute)
	set(&c.Burst, o.Burst)
	set(&c.Mode, o.Mode)
	set(&c.RandomWindow, o.RandomWindow)
	set(&c.Template, o.Template)
	set(&c.QueueStatusCode, o.QueueStatusCode)
	return &c
}

func set[T any](dst *T, v *T) {
	if v != nil {
		*dst = *v
	}
}

// At is the room as it stands at now: during an event (from its pre-queue
// to its end) with the event's overrides, otherwise as configured.
func (r *Room) At(now time.Time) *Room {
	for _, e := range r.Events {
		if !now.Before(e.PrequeueFrom) && now.Before(e.Ends) {
			return r.during(e)
		}
	}
	return r
}

// Event is the event the room is in (a room returned by At), or nil.
func (r *Room) Event() *Event { return r.event }

// storeEvent is the event as the store knows it.
func (r *Room) storeEvent() *store.Event {
	if r.event == nil {
		return nil
	}
	return &store.Event{ID: r.event.Name, PrequeueFrom: r.event.PrequeueFrom, Starts: r.event.Starts, Ends: r.event.Ends}
}

// EventPlace is a waiting visitor's standing in the room's event.
type EventPlace struct {
	Name   string
	Starts time.Time
	// Prequeue is true while the visitor's ticket is in the pre-queue and
	// not drawn yet: it has no place in line until Starts.
	Prequeue bool
	// Drawn is true when the visitor's ticket was in the drawn pre-queue:
	// their place is where the draw put them.
	Drawn bool
	// Commitment is the SHA-256 of the draw key, shown from the moment the
	// pre-queue opens; Key is the key, shown once the draw is made, so the
	// visitor can check it against the commitment and recompute the order
	// (package draw).
	Commitment, Key string
}

// eventPlace is the visitor's standing in the event the room is in, or nil
// when it is in none (or the store has not entered it).
func eventPlace(room *Room, pl store.Place) *EventPlace {
	e, st := room.Event(), pl.Line.Event
	if e == nil || st.Phase == store.NotEntered {
		return nil
	}
	return &EventPlace{Name: e.Name, Starts: e.Starts,
		Prequeue:   st.Phase == store.Prequeue && pl.Ticket >= st.First,
		Drawn:      st.Phase == store.Drawn && pl.Ticket >= st.DrawFirst && pl.Ticket <= st.DrawLast,
		Commitment: st.Commitment, Key: st.Key}
}

// prequeuePoll is how often a visitor in the pre-queue polls: at the
// room's refresh, since nobody is called before the start (no fast polls
// near the front), but at the start itself, so the opening is seen at once.
func prequeuePoll(room *Room, e *EventPlace, now time.Time) time.Duration {
	every := seconds(room.RefreshSeconds)
	if left := e.Starts.Sub(now).Truncate(time.Second); left < every {
		return max(left, time.Second)
	}
	return every
}
