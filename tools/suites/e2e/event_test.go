package e2e

import (
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"fmt"
	"net/http"
	"strings"
	"testing"
	"time"

	"github.com/edgequeue/waitingroom/draw"
	"github.com/edgequeue/waitingroom/tools/devstack"
)

// eventRoom is a room closed outside its one event, whose pre-queue opened
// an hour ago; starts is when the sale opens.
func eventRoom(now, starts time.Time) string {
	stamp := func(t time.Time) string { return t.UTC().Truncate(time.Second).Format(time.RFC3339) }
	return fmt.Sprintf(`{"paths":["/"],"mode":"reject","refresh":5,"queue_timeout":300,"events":[{"name":"drop",
		"prequeue_from":%q,"starts":%q,"ends":%q,"overrides":{"max_active_users":1}}]}`,
		stamp(now.Add(-time.Hour)), stamp(starts), stamp(now.Add(48*time.Hour)))
}

// eventPlace is the queue JSON of a room in an event.
type eventPlace struct {
	Status string `json:"status"`
	Ticket int64  `json:"ticket"`
	Event  *struct {
		Phase      string `json:"phase"`
		InPrequeue bool   `json:"in_prequeue"`
		Drawn      bool   `json:"drawn_place"`
		Commitment string `json:"draw_commitment"`
		Key        string `json:"draw_key"`
	} `json:"event"`
}

func (v *visitor) eventPoll() (eventPlace, bool) {
	v.e.t.Helper()
	a := v.get("/", "Accept", "application/json")
	if strings.Contains(a.body, origin) {
		return eventPlace{}, true
	}
	var p eventPlace
	if err := json.Unmarshal([]byte(a.body), &p); err != nil || p.Event == nil {
		v.e.t.Fatalf("event poll: %d %q: %v", a.status, a.body, err)
	}
	return p, false
}

// TestScheduledSaleThroughTheWasm runs a sale's pre-queue and start
// through the real service: visitors in the pre-queue see a countdown and
// the draw's commitment, and nobody gets in; once the start has come (the
// operator's config says so, so the test waits for no clock), the first
// visitor let in is the one the revealed key puts first, and the key
// matches the commitment shown before.
func TestScheduledSaleThroughTheWasm(t *testing.T) {
	t.Parallel()
	now := time.Now()
	e := startRoom(t, loadTimeout, eventRoom(now, now.Add(24*time.Hour)))
	reader := &visitor{e: e}
	page := reader.get("/")
	if page.status != 200 || !strings.Contains(page.body, "The sale opens soon") || !strings.Contains(page.body, "in 23 h") && !strings.Contains(page.body, "23 h 59 min") {
		t.Fatalf("the pre-queue page: %d %s", page.status, page.body)
	}
	visitors := []*visitor{reader}
	for i := 0; i < 5; i++ {
		visitors = append(visitors, &visitor{e: e})
	}
	tickets := map[int64]*visitor{}
	var commitment string
	for i, v := range visitors {
		p, in := v.eventPoll()
		switch {
		case in:
			t.Fatalf("visitor %d got in during the pre-queue", i)
		case p.Status != "prequeue" || !p.Event.InPrequeue || p.Event.Key != "" || len(p.Event.Commitment) != 64:
			t.Fatalf("visitor %d in the pre-queue: %+v %+v", i, p, *p.Event)
		case commitment != "" && p.Event.Commitment != commitment:
			t.Fatalf("two commitments: %s and %s", commitment, p.Event.Commitment)
		}
		commitment = p.Event.Commitment
		tickets[p.Ticket] = v
	}
	if !strings.Contains(page.body, commitment) {
		t.Fatal("the pre-queue page does not show the commitment")
	}
	if a := e.admin(http.MethodGet, "", nil, adminPassword); !strings.Contains(a.body, "Event drop: pre-queue open") || !strings.Contains(a.body, commitment) {
		t.Fatalf("the admin panel does not show the open pre-queue and its commitment: %s", a.body)
	}

	// The sale opens. No request is in flight while the config changes.
	e.stack.Manifest.ConfigStores[devstack.ConfigStore]["room.shop"] = eventRoom(now, time.Now().Add(-time.Second))
	var key string
	admitted := []int64{}
	for ticket, v := range tickets {
		p, in := v.eventPoll()
		if in {
			admitted = append(admitted, ticket)
			continue
		}
		if p.Event.Phase != "drawn" || !p.Event.Drawn || p.Event.Commitment != commitment || p.Event.Key == "" {
			t.Fatalf("after the start: %+v %+v", p, *p.Event)
		}
		key = p.Event.Key
	}
	sum := sha256.Sum256([]byte(key))
	if hex.EncodeToString(sum[:]) != commitment {
		t.Fatalf("the revealed key %q does not hash to the commitment %s", key, commitment)
	}
	var first, last int64 = 1 << 62, 0
	for ticket := range tickets {
		first, last = min(first, ticket), max(last, ticket)
	}
	if a := e.admin(http.MethodGet, "", nil, adminPassword); !strings.Contains(a.body, fmt.Sprintf("Drawn tickets %d to %d; draw key %s", first, last, key)) {
		t.Fatalf("the admin panel does not show the draw: %s", a.body)
	}
	order, err := draw.Order(key, first, last)
	if err != nil {
		t.Fatal(err)
	}
	if len(admitted) != 1 || admitted[0] != order[0] {
		t.Fatalf("let in %v after the start, want exactly the draw's first, ticket %d (order %v)", admitted, order[0], order)
	}
}

// weeklyRoom is a room closed outside its event "weekly", scheduled from
// pq to ends with its start at starts.
func weeklyRoom(pq, starts, ends time.Time) string {
	stamp := func(t time.Time) string { return t.UTC().Truncate(time.Second).Format(time.RFC3339) }
	return fmt.Sprintf(`{"paths":["/"],"mode":"reject","refresh":5,"queue_timeout":300,"events":[{"name":"weekly",
		"prequeue_from":%q,"starts":%q,"ends":%q,"overrides":{"max_active_users":5}}]}`, stamp(pq), stamp(starts), stamp(ends))
}

// TestAReusedEventNameOpensANewPrequeue runs "weekly" through its
// pre-queue, draw and end, then schedules it again under the same name,
// its pre-queue open and its start an hour away: a newcomer waits in the
// new pre-queue, committed to a new key, and reaches nothing. Before issue
// 23 the store took the new "weekly" for the drawn one and let every
// newcomer through at once.
func TestAReusedEventNameOpensANewPrequeue(t *testing.T) {
	t.Parallel()
	now := time.Now()
	e := startRoom(t, loadTimeout, weeklyRoom(now.Add(-time.Hour), now.Add(time.Hour), now.Add(48*time.Hour)))
	early := &visitor{e: e}
	p, in := early.eventPoll()
	if in || p.Status != "prequeue" {
		t.Fatalf("the first weekly's pre-queue: %+v, in %v", p, in)
	}
	first := p.Event.Commitment
	config := e.stack.Manifest.ConfigStores[devstack.ConfigStore]
	config["room.shop"] = weeklyRoom(now.Add(-time.Hour), time.Now().Add(-time.Second), now.Add(48*time.Hour))
	if _, in := early.eventPoll(); !in {
		t.Fatal("the only visitor of the first weekly was not let in at its start")
	}
	// It ends; the room is closed; a week later (here: now) weekly again.
	config["room.shop"] = weeklyRoom(now.Add(-time.Hour), now.Add(-time.Minute), time.Now().Add(-time.Second))
	if a := (&visitor{e: e}).get("/"); a.status != http.StatusServiceUnavailable && a.status != http.StatusOK || strings.Contains(a.body, origin) {
		t.Fatalf("the closed room between the events: %d %s", a.status, a.body)
	}
	later := time.Now()
	config["room.shop"] = weeklyRoom(later.Add(-time.Minute), later.Add(time.Hour), later.Add(48*time.Hour))
	for i := 0; i < 3; i++ {
		p, in := (&visitor{e: e}).eventPoll()
		if in {
			t.Fatalf("newcomer %d to the second weekly reached the origin an hour before its start", i+1)
		}
		if p.Status != "prequeue" || !p.Event.InPrequeue || p.Event.Commitment == first || p.Event.Key != "" {
			t.Fatalf("newcomer %d to the second weekly: %+v %+v; want held in a new pre-queue with a new commitment", i+1, p, *p.Event)
		}
	}
}
