package integration

import (
	"errors"
	"strings"
	"testing"
	"time"

	"github.com/edgequeue/waitingroom/edge"
	"github.com/edgequeue/waitingroom/queue"
	"github.com/edgequeue/waitingroom/store"
	"github.com/edgequeue/waitingroom/tools/devstack"
	"github.com/edgequeue/waitingroom/tools/native"
	"github.com/edgequeue/waitingroom/tools/redistest"
)

// The operator's actions on the real script: overrides, reset, the live
// modes, the audit log and the per-minute history.

var panel = store.Actor{Via: "panel", Client: "c0ffee"}

func (l *line) operate(a store.Action, now time.Time) store.Line {
	l.t.Helper()
	l.at(now)
	if a.Actor == (store.Actor{}) {
		a.Actor = panel
	}
	ln, err := l.st.Operate(ctx, "r", l.p, a, now)
	if err != nil {
		l.t.Fatalf("%s: %v", a.Op, err)
	}
	return ln
}

func intp(v int) *int           { return &v }
func floatp(v float64) *float64 { return &v }

func TestOverridesReplaceTheConfiguredLimits(t *testing.T) {
	st, _ := newStore(t)
	l := newLine(t, st, policy(0, 1, 5)) // capacity 5, no rate
	for i := 0; i < 5; i++ {
		if pl := l.join(t0); pl.Outcome != store.Admitted {
			t.Fatalf("visitor %d of 5 waits under a capacity of 5", i+1)
		}
	}
	ln := l.operate(store.Action{Op: store.OpLimits, Set: store.Overrides{Capacity: intp(7)}}, t0)
	if ln.Overrides.Capacity == nil || *ln.Overrides.Capacity != 7 || ln.Overrides.PerMinute != nil || ln.Overrides.Mode != "" {
		t.Fatalf("overrides after setting the capacity: %+v", ln.Overrides)
	}
	var outcomes []store.Outcome
	for i := 0; i < 3; i++ {
		outcomes = append(outcomes, l.join(t0).Outcome)
	}
	if outcomes[0] != store.Admitted || outcomes[1] != store.Admitted || outcomes[2] != store.Waiting {
		t.Fatalf("with the capacity raised live to 7, the next three got %v, want admitted, admitted, waiting", outcomes)
	}
	// Setting one value keeps the others; clearing restores the config.
	ln = l.operate(store.Action{Op: store.OpLimits, Set: store.Overrides{PerMinute: floatp(0.5)}}, t0)
	if ln.Overrides.Capacity == nil || *ln.Overrides.Capacity != 7 || ln.Overrides.PerMinute == nil || *ln.Overrides.PerMinute != 0.5 {
		t.Fatalf("overrides after setting the rate too: %+v", ln.Overrides)
	}
	ln = l.operate(store.Action{Op: store.OpClear}, t0)
	if !ln.Overrides.Empty() {
		t.Fatalf("overrides after clearing: %+v", ln.Overrides)
	}
	if pl := l.join(t0); pl.Outcome != store.Waiting || pl.Line.Active+pl.Line.Called != 7 {
		t.Fatalf("after clearing, a newcomer %v with %d active: the configured capacity of 5 should hold them", pl.Outcome, pl.Line.Active)
	}
}

func TestOverriddenModes(t *testing.T) {
	st, _ := newStore(t)
	l := newLine(t, st, policy(0, 1, 1))
	first := l.join(t0)
	waiting := l.join(t0)
	if first.Outcome != store.Admitted || waiting.Outcome != store.Waiting {
		t.Fatalf("capacity 1: %v, %v", first.Outcome, waiting.Outcome)
	}
	l.operate(store.Action{Op: store.OpLimits, Set: store.Overrides{Mode: store.Reject}}, t0)
	if pl := l.join(t0); pl.Outcome != store.Closed || pl.Ticket != 0 || pl.Line.Issued != 2 {
		t.Fatalf("a newcomer in a room closed live: %+v, want Closed and no ticket", pl)
	}
	if pl := l.poll(waiting.Ticket, t0.Add(time.Second)); pl.Outcome != store.Closed {
		t.Fatalf("a waiting visitor in a room closed live: %v, want Closed", pl.Outcome)
	}
	if pl := l.joinAs("a1", t0.Add(time.Second)); pl.Outcome != store.Admitted || pl.Ticket != first.Ticket {
		t.Fatalf("the live session's replayed arrival in a closed room: %+v, want its session", pl)
	}
	// Reopened in passthrough: the waiting visitor and newcomers walk in.
	l.operate(store.Action{Op: store.OpLimits, Set: store.Overrides{Mode: store.Passthrough}}, t0.Add(2*time.Second))
	if pl := l.poll(waiting.Ticket, t0.Add(2*time.Second)); pl.Outcome != store.Admitted || pl.Ticket != waiting.Ticket {
		t.Fatalf("the waiting visitor after passthrough: %+v, want admitted with the same ticket", pl)
	}
	for i := 0; i < 3; i++ {
		if pl := l.join(t0.Add(2 * time.Second)); pl.Outcome != store.Admitted {
			t.Fatalf("newcomer %d in passthrough: %v", i, pl.Outcome)
		}
	}
	// Back to the configured mode: the capacity holds newcomers again.
	l.operate(store.Action{Op: store.OpClear}, t0.Add(3*time.Second))
	if pl := l.join(t0.Add(3 * time.Second)); pl.Outcome != store.Waiting {
		t.Fatalf("after clearing the mode, a newcomer %v, want waiting", pl.Outcome)
	}
}

func TestLiveRandomModeUsesTheRoomsWindow(t *testing.T) {
	st, _ := newStore(t)
	p := policy(0, 1, 1)
	p.Mode, p.RandomWindow = store.Fifo, time.Minute
	l := newLine(t, st, p)
	l.join(t0)
	var tickets []int64
	for i := 0; i < 30; i++ {
		tickets = append(tickets, l.join(t0).Ticket)
	}
	if pl := l.poll(tickets[0], t0); pl.CallFrom != pl.CallTo {
		t.Fatalf("first come, first served: the ticket's group is %d..%d", pl.CallFrom, pl.CallTo)
	}
	l.operate(store.Action{Op: store.OpLimits, Set: store.Overrides{Mode: store.Random}}, t0)
	pl := l.poll(tickets[0], t0)
	if pl.CallFrom == pl.CallTo || pl.Line.Overrides.Mode != store.Random || pl.Line.Mode(store.Fifo) != store.Random {
		t.Fatalf("random order set live: group %d..%d, mode %q", pl.CallFrom, pl.CallTo, pl.Line.Overrides.Mode)
	}
}

func TestResetStartsAFreshLine(t *testing.T) {
	st, _ := newStore(t)
	l := newLine(t, st, policy(0, 1, 1))
	in := l.join(t0)
	out := l.join(t0)
	l.operate(store.Action{Op: string(store.Pause)}, t0)
	l.operate(store.Action{Op: store.OpLimits, Set: store.Overrides{Burst: intp(3)}}, t0)
	old := in.Line.Epoch
	ln := l.operate(store.Action{Op: store.OpReset}, t0.Add(time.Second))
	if ln.Epoch <= old || ln.Issued != 0 || ln.Admitted != 0 || ln.Active != 0 || !ln.Paused ||
		ln.Overrides.Burst == nil || *ln.Overrides.Burst != 3 {
		t.Fatalf("after a reset: %+v (old epoch %d); want a later epoch, an empty line, still paused, overrides kept", ln, old)
	}
	// Old passes: the session is void, the ticket is lost (its holder
	// joins the new line as a newcomer).
	if l.renew(l.ref(in, t0), t0.Add(2*time.Second)) {
		t.Fatal("a session of the line before the reset renewed")
	}
	pl := l.check(st.Poll(ctx, "r", l.p, store.Ticket{Number: out.Ticket, Epoch: old}, t0.Add(2*time.Second)))
	if pl.Outcome != store.Lost || pl.Line.Issued != 0 || pl.Line.Epoch != ln.Epoch {
		t.Fatalf("a ticket of the old line: %+v, want lost, the new line still empty", pl)
	}
	// Resetting twice at once still gives a new epoch.
	if again := l.operate(store.Action{Op: store.OpReset}, t0.Add(2*time.Second)); again.Epoch <= ln.Epoch {
		t.Fatalf("a second reset kept epoch %d", again.Epoch)
	}
}

func TestAuditLogsEachActionWithItsStates(t *testing.T) {
	st, srv := newStore(t)
	l := newLine(t, st, policy(0, 1, 1))
	l.join(t0)
	l.join(t0)
	l.join(t0)
	api := store.Actor{Via: "api", Client: "ab12"}
	l.operate(store.Action{Op: store.OpAdmit, N: 2, Actor: api}, t0.Add(time.Second))
	l.operate(store.Action{Op: store.OpLimits, Set: store.Overrides{PerMinute: floatp(12.5), Mode: store.Random}}, t0.Add(2*time.Second))
	l.operate(store.Action{Op: string(store.QueueAll)}, t0.Add(3*time.Second))
	l.operate(store.Action{Op: store.OpReset}, t0.Add(4*time.Second))
	// A visitor's call and a refused one write no entry.
	l.join(t0.Add(5 * time.Second))
	if _, err := st.Operate(ctx, "r", l.p, store.Action{Op: "explode", Actor: api}, t0); !errors.Is(err, store.ErrRejected) {
		t.Fatalf("an unknown action: %v", err)
	}
	pages, err := st.Audit(ctx, []store.AuditRead{{Room: "r", Offset: 0, Limit: 10}})
	if err != nil {
		t.Fatal(err)
	}
	got := pages[0]
	var actions []string
	for _, e := range got {
		actions = append(actions, e.Action)
	}
	if strings.Join(actions, " ") != "reset queue_all limits admit" {
		t.Fatalf("audit actions %q, want newest first: reset queue_all limits admit", actions)
	}
	admit, limits, reset := got[3], got[2], got[0]
	if admit.Via != "api" || admit.Client != "ab12" || admit.N != 2 || admit.Room != "r" ||
		!admit.Time.Equal(t0.Add(time.Second)) || admit.Before.Admitted != 1 || admit.After.Admitted != 3 {
		t.Errorf("admit entry %+v", admit)
	}
	if limits.Via != "panel" || limits.Before.PerMinute != nil || limits.After.PerMinute == nil ||
		*limits.After.PerMinute != 12.5 || limits.After.Mode != store.Random || limits.Before.Mode != "" {
		t.Errorf("limits entry %+v", limits)
	}
	if reset.Before.Issued != 3 || reset.After.Issued != 0 || reset.After.Epoch <= reset.Before.Epoch || !reset.After.QueueAll {
		t.Errorf("reset entry %+v", reset)
	}
	// Pages of several rooms' logs, in one request.
	devstack.TakeCalls(srv)
	pages, err = st.Audit(ctx, []store.AuditRead{{Room: "r", Offset: 1, Limit: 2}, {Room: "empty", Offset: 0, Limit: 5},
		{Room: "r", Offset: 3, Limit: 5}, {Room: "r", Offset: 4, Limit: 5}, {Room: "r", Offset: store.AuditCap, Limit: 5}})
	if err != nil || len(pages) != 5 || len(pages[0]) != 2 || pages[0][0].Action != "queue_all" || pages[0][1].Action != "limits" ||
		len(pages[1]) != 0 || len(pages[2]) != 1 || pages[2][0].Action != "admit" || len(pages[3]) != 0 || len(pages[4]) != 0 {
		t.Fatalf("pages %+v, %v; want 2 entries from the second, none, the oldest, none, none", pages, err)
	}
	if n := devstack.TakeCalls(srv); n != 1 {
		t.Fatalf("%d requests for one Audit call, want 1", n)
	}
	if _, err := st.Audit(ctx, []store.AuditRead{{Room: "r", Limit: store.MaxAuditPage}, {Room: "empty", Limit: 1}}); !errors.Is(err, store.ErrRejected) {
		t.Fatalf("more than %d entries in one call: %v", store.MaxAuditPage, err)
	}
	// The log is capped.
	for i := 0; i < store.AuditCap+5; i++ {
		l.operate(store.Action{Op: string(store.Resume)}, t0.Add(6*time.Second))
	}
	var n int64
	do(t, st, &n, "LLEN", st.Keys("r")[9])
	if n != store.AuditCap {
		t.Fatalf("audit log of %d entries, want the cap %d", n, store.AuditCap)
	}
}

func TestHistoryCountsEachMinute(t *testing.T) {
	st, _ := newStore(t)
	l := newLine(t, st, policy(0, 1, 2))
	l.quiet = true
	for i := 0; i < 5; i++ {
		l.join(t0.Add(time.Duration(i) * time.Second))
	}
	// A refused pass, and a closed room's newcomer, are refusals.
	if _, err := st.Join(store.WithRefusal(ctx), "r", l.p, store.Arrival{ID: "refused-pass"}, t0.Add(10*time.Second)); err != nil {
		t.Fatal(err)
	}
	m1 := t0.Add(time.Minute)
	l.operate(store.Action{Op: store.OpAdmit, N: 2}, m1)
	l.operate(store.Action{Op: store.OpLimits, Set: store.Overrides{Mode: store.Reject}}, m1)
	l.join(m1.Add(time.Second))
	got, err := st.History(ctx, "r", t0.Add(-time.Hour), t0.Add(2*time.Minute))
	if err != nil {
		t.Fatal(err)
	}
	want := []store.Minute{
		{Start: t0, Epoch: l.epoch, Issued: 6, Admitted: 2, Active: 2, Waiting: 4, Joins: 6, Admissions: 2, Refusals: 1,
			IssuedMoved: [2]time.Duration{0, 10 * time.Second}, AdmittedMoved: [2]time.Duration{0, time.Second}},
		{Start: m1, Epoch: l.epoch, Issued: 6, Admitted: 4, Active: 2, Waiting: 2, Joins: 0, Admissions: 2, Refusals: 1,
			IssuedMoved: [2]time.Duration{-time.Millisecond, -time.Millisecond}},
	}
	if len(got) != len(want) {
		t.Fatalf("history %+v, want %+v", got, want)
	}
	for i := range want {
		if got[i] != want[i] {
			t.Errorf("minute %d: %+v, want %+v", i, got[i], want[i])
		}
	}
	// A day later the slots are reused: the old minutes are gone, and the
	// hash never holds more than a day of fields.
	day := t0.Add(24 * time.Hour)
	l.join(day)
	if got, err = st.History(ctx, "r", day.Add(-24*time.Hour), day); err != nil || len(got) != 2 || !got[0].Start.Equal(m1) || !got[1].Start.Equal(day) {
		t.Fatalf("a day later: %+v, %v; want the minute after t0 and today's", got, err)
	}
	var fields int64
	do(t, st, &fields, "HLEN", st.Keys("r")[8])
	if fields > store.HistoryMinutes {
		t.Fatalf("history of %d fields", fields)
	}
}

// TestOriginAdmitIsAudited: an origin's admit=N is an operator action like
// the panel's: the admission and its entry in the room's audit log, in one
// store call, with the origin as the actor.
func TestOriginAdmitIsAudited(t *testing.T) {
	e := newEnv(t)
	w := e.get(shop + "/")
	session := pass(t, w)
	if session == "" {
		t.Fatalf("the first visitor was not let in: %d %s", w.Code, w.Body)
	}
	for i := 0; i < 3; i++ {
		if w := e.get(shop + "/"); !strings.Contains(w.Body.String(), "You are in line") {
			t.Fatalf("visitor %d was not queued: %d %s", i+2, w.Code, w.Body)
		}
	}
	e.storeCalls()
	w = e.get(shop+"/command?c=admit=2", withCookie(cookieShop+"="+session))
	if w.Body.String() != "commanded" || w.HeaderMap.Get(queue.CommandHeader) != "" {
		t.Fatalf("the command's answer: %d %v %s", w.Code, w.HeaderMap, w.Body)
	}
	if n := e.storeCalls(); n != 1 {
		t.Errorf("the origin's admit took %d store calls, want 1", n)
	}
	st := &store.Upstash{URL: e.config[edge.KeyUpstashURL], Token: redistest.Token, Transport: native.Upstash{}, Timeout: 10 * time.Second}
	logs, err := st.Audit(ctx, []store.AuditRead{{Room: "shop", Limit: 10}})
	if err != nil {
		t.Fatal(err)
	}
	if len(logs) != 1 || len(logs[0]) != 1 {
		t.Fatalf("audit log %+v, want the one admission", logs)
	}
	got := logs[0][0]
	if got.Via != "origin" || got.Action != store.OpAdmit || got.N != 2 || got.Room != "shop" ||
		got.After.Admitted != got.Before.Admitted+2 || got.After.Issued != 4 || !got.Time.Equal(e.now) {
		t.Errorf("audit entry %+v, want the origin's admit of 2 at %v, calling tickets to 3 of 4", got, e.now)
	}
	if !strings.Contains(strings.Join(e.logs, "\n"), "origin admit=2: now serving 3 of 4") {
		t.Errorf("no log line of the admission in %q", e.logs)
	}
}
