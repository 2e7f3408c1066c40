package sim

import (
	"context"
	"errors"
	"fmt"
	"sync"
	"time"

	"github.com/edgequeue/waitingroom/tools/resp"
)

// FairnessScenario is a room whose order of service is measured: first
// come, first served, random order within windows, or a scheduled event
// whose pre-queue is drawn.
type FairnessScenario struct {
	Name string
	// Order is the room's calling order in its settings ("" for first come,
	// first served); the capacity is the crowd's.
	Order string
	// Prequeue, when not 0, gives the room a scheduled event whose
	// pre-queue opens at Start, as the crowd starts arriving, and which
	// starts (is drawn) Prequeue later: everyone who arrives before then is
	// in the draw, everyone after it queues behind.
	Prequeue time.Duration
}

// FairnessScenarios are the rooms the benchmark measures.
var FairnessScenarios = []FairnessScenario{
	{Name: "first come, first served"},
	{Name: "random order, 60 s windows", Order: `"mode":"random","random_window":60`},
	{Name: "scheduled event, 5-minute pre-queue drawn", Prequeue: 5 * time.Minute},
}

// EventName is the scheduled event's name in a FairnessScenario's room.
const EventName = "sale"

// Settings is the scenario's room for cfg: its order, cfg's capacity and,
// with a pre-queue, the event (which ends a day after Start).
func (s FairnessScenario) Settings(cfg Config) string {
	settings := fmt.Sprintf(`"max_active_users":%d`, cfg.Capacity)
	if s.Order != "" {
		settings += "," + s.Order
	}
	if s.Prequeue > 0 {
		settings += fmt.Sprintf(`,"events":[{"name":%q,"prequeue_from":%q,"starts":%q,"ends":%q}]`, EventName,
			Start.Format(time.RFC3339), Start.Add(s.Prequeue).Format(time.RFC3339), Start.Add(24*time.Hour).Format(time.RFC3339))
	}
	return settings
}

// Fairness is what a run measured of the order a room served its
// visitors in.
type Fairness struct {
	Scenario FairnessScenario
	Report   Report
	// Parts are the groups measured: everyone, or for an event the
	// pre-queue and the arrivals after its start.
	Parts []FairnessPart
	// LaterCalledFirst counts, for an event, the tickets handed out after
	// its start that the store called in an earlier batch than some
	// pre-queue ticket: the draw must call the whole pre-queue first, so
	// anything but 0 is a defect. LaterAdmittedFirst counts the visitors
	// who arrived after the start and got in before the last of the
	// pre-queue did: their polls' timing, not the store's order.
	LaterCalledFirst, LaterAdmittedFirst int
}

// FairnessPart is one group's two orders, each against arrival order.
type FairnessPart struct {
	Name string
	// Called compares the order the store handed out tickets with the
	// order it called them (every ticket called, whether or not its holder
	// came): the room's own order. Admitted compares the order visitors
	// first reached the room with the order they got in (those admitted):
	// what visitors saw, their polls' timing included.
	Called, Admitted Tau
}

// Recorder is the waiting room's own policy, watched: it records when each
// ticket was handed out and called, batch by batch, and which visitors
// came, for Fairness. Before the first call of each batch it reads the
// store's set of called tickets, so a ticket called in one batch is seen
// before the next can claim it; a ticket called and claimed in the same
// batch is seen in the answer that claims it.
type Recorder struct {
	ours  *Ours
	batch time.Duration

	mu       sync.Mutex
	slot     int64 // the batch being played, counted from Start
	tickets  map[int64]*ticketLife
	visitors []*Visitor
}

// ticketLife is when a ticket was handed out and called, in batches from
// Start; called is -1 until it is.
type ticketLife struct{ issued, called int64 }

// NewRecorder watches ours, whose calls come in batches of the length
// given (Config.Batch).
func NewRecorder(ours *Ours, batch time.Duration) *Recorder {
	return &Recorder{ours: ours, batch: batch, slot: -1, tickets: map[int64]*ticketLife{}}
}

// Name implements Policy.
func (r *Recorder) Name() string { return r.ours.Name() }

// Join implements Policy.
func (r *Recorder) Join(ctx context.Context, v *Visitor, now time.Time) (Answer, error) {
	if err := r.enter(ctx, now); err != nil {
		return Answer{}, err
	}
	r.mu.Lock()
	r.visitors = append(r.visitors, v)
	r.mu.Unlock()
	a, err := r.ours.Join(ctx, v, now)
	r.saw(v, 0, a, now)
	return a, err
}

// Poll implements Policy.
func (r *Recorder) Poll(ctx context.Context, v *Visitor, now time.Time) (Answer, error) {
	if err := r.enter(ctx, now); err != nil {
		return Answer{}, err
	}
	before := v.Ticket
	a, err := r.ours.Poll(ctx, v, now)
	r.saw(v, before, a, now)
	return a, err
}

// Visit implements Policy.
func (r *Recorder) Visit(ctx context.Context, v *Visitor, now time.Time) (int, error) {
	if err := r.enter(ctx, now); err != nil {
		return 0, err
	}
	return r.ours.Visit(ctx, v, now)
}

// Leave implements Policy.
func (r *Recorder) Leave(ctx context.Context, v *Visitor, now time.Time) (int, error) {
	if err := r.enter(ctx, now); err != nil {
		return 0, err
	}
	return r.ours.Leave(ctx, v, now)
}

// Held implements Policy.
func (r *Recorder) Held(ctx context.Context, now time.Time) (int64, bool, error) {
	if err := r.enter(ctx, now); err != nil {
		return 0, false, err
	}
	return r.ours.Held(ctx, now)
}

// slotOf is the batch now falls in.
func (r *Recorder) slotOf(now time.Time) int64 { return int64(now.Sub(Start) / r.batch) }

// enter starts now's batch: the first call of a new batch reads the
// tickets the previous one called before anyone can claim them.
func (r *Recorder) enter(ctx context.Context, now time.Time) error {
	s := r.slotOf(now)
	r.mu.Lock()
	defer r.mu.Unlock()
	if s == r.slot {
		return nil
	}
	if s < r.slot {
		return fmt.Errorf("fairness: a call at %v came after batch %d had begun", now.Sub(Start), r.slot)
	}
	err := r.sweep(ctx)
	r.slot = s
	return err
}

// sweep records the called tickets not seen before as called in the
// current batch. The mutex is held.
func (r *Recorder) sweep(ctx context.Context) error {
	called, err := r.ours.CalledTickets(ctx)
	if err != nil {
		return fmt.Errorf("fairness: reading the called tickets: %w", err)
	}
	for _, t := range called {
		r.called(t)
	}
	return nil
}

// called records ticket t as called in the current batch, unless it was
// seen before. The mutex is held.
func (r *Recorder) called(t int64) {
	l := r.tickets[t]
	if l == nil {
		// Handed out before anything was recorded: cannot happen in a
		// run that starts on an empty line, and is left out if it does.
		return
	}
	if l.called < 0 {
		l.called = r.slot
	}
}

// saw records an answer to v: a new ticket (v's was before), and a ticket
// called if v got in.
func (r *Recorder) saw(v *Visitor, before int64, a Answer, now time.Time) {
	r.mu.Lock()
	defer r.mu.Unlock()
	if v.Ticket != before && r.tickets[v.Ticket] == nil {
		r.tickets[v.Ticket] = &ticketLife{issued: r.slotOf(now), called: -1}
	}
	if a.Admitted {
		r.called(v.Ticket)
	}
}

// errNoTickets says a fairness run recorded nothing to measure.
var errNoTickets = errors.New("fairness: no ticket was called")

// Measure reads the tickets the last batch called and measures the orders
// the room served in, for a run of s on cfg.
func (r *Recorder) Measure(ctx context.Context, s FairnessScenario, cfg Config, rep Report) (Fairness, error) {
	r.mu.Lock()
	defer r.mu.Unlock()
	if err := r.sweep(ctx); err != nil {
		return Fairness{}, err
	}
	f := Fairness{Scenario: s, Report: rep}
	// Every arrival is grouped by when its ticket was handed out (or the
	// visitor first reached the room); without an event, all in one group.
	group := func(slot int64) int { return 0 }
	names := []string{"everyone"}
	if s.Prequeue > 0 {
		if s.Prequeue%cfg.Batch != 0 {
			return f, fmt.Errorf("fairness: the pre-queue of %v is not a whole number of %v batches, so a batch could straddle the draw", s.Prequeue, cfg.Batch)
		}
		starts := int64(s.Prequeue / cfg.Batch)
		group = func(slot int64) int {
			if slot < starts {
				return 0
			}
			return 1
		}
		names = []string{"pre-queue", "arrivals after the start"}
	}
	called := make([][]Ranked, len(names))
	lastPre := int64(-1)
	for _, l := range r.tickets {
		if l.called < 0 {
			continue
		}
		g := group(l.issued)
		called[g] = append(called[g], Ranked{l.issued, l.called})
		if g == 0 {
			lastPre = max(lastPre, l.called)
		}
	}
	admitted := make([][]Ranked, len(names))
	lastPreAdmitted := int64(-1)
	for _, v := range r.visitors {
		if v.admitted.IsZero() {
			continue
		}
		a, in := r.slotOf(v.arrived), r.slotOf(v.admitted)
		g := group(a)
		admitted[g] = append(admitted[g], Ranked{a, in})
		if g == 0 {
			lastPreAdmitted = max(lastPreAdmitted, in)
		}
	}
	if len(names) > 1 {
		for _, t := range called[1] {
			if t.Second < lastPre {
				f.LaterCalledFirst++
			}
		}
		for _, v := range admitted[1] {
			if v.Second < lastPreAdmitted {
				f.LaterAdmittedFirst++
			}
		}
	}
	for g, name := range names {
		if len(called[g]) == 0 {
			return f, fmt.Errorf("%w in the group %q of %q", errNoTickets, name, s.Name)
		}
		f.Parts = append(f.Parts, FairnessPart{Name: name, Called: KendallTau(called[g]), Admitted: KendallTau(admitted[g])})
	}
	return f, nil
}

// RunFairness plays cfg in the scenario's room on the Redis at addr
// (which should hold nothing of the room) and measures the order its
// visitors were served in.
func RunFairness(ctx context.Context, cfg Config, s FairnessScenario, addr string) (Fairness, error) {
	room, err := Room(s.Settings(cfg))
	if err != nil {
		return Fairness{}, fmt.Errorf("fairness %q: %w", s.Name, err)
	}
	ours, err := NewOurs(addr, room)
	if err != nil {
		return Fairness{}, err
	}
	rec := NewRecorder(ours, cfg.Batch)
	rep, err := Run(ctx, cfg, rec, resp.NewPool(addr, 2))
	if err != nil {
		return Fairness{}, fmt.Errorf("fairness %q: %w", s.Name, err)
	}
	return rec.Measure(ctx, s, cfg, rep)
}
