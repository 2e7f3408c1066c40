package control

import (
	"context"
	"errors"
	"fmt"
	"math"
	"strings"
	"testing"
	"time"

	"github.com/edgequeue/waitingroom/queue"
	"github.com/edgequeue/waitingroom/store"
)

var t0 = time.Date(2026, 11, 22, 12, 0, 0, 0, time.UTC)

// recorder is a Store that answers with a fixed line and history and
// records the actions it was asked for.
type recorder struct {
	line    store.Line
	minutes []store.Minute
	audit   map[string][]store.AuditEntry
	acts    []store.Action
	err     error
	// readTooMuch: an Audit call asked for more than store.MaxAuditPage
	// entries, or for none.
	readTooMuch bool
}

func (r *recorder) Stats(context.Context, string, store.Policy, time.Time) (store.Line, error) {
	return r.line, r.err
}

func (r *recorder) Operate(_ context.Context, _ string, _ store.Policy, a store.Action, _ time.Time) (store.Line, error) {
	r.acts = append(r.acts, a)
	return r.line, r.err
}

// History answers the minutes from from to to, as store.Upstash does.
func (r *recorder) History(_ context.Context, _ string, from, to time.Time) ([]store.Minute, error) {
	var out []store.Minute
	for _, m := range r.minutes {
		if at := m.Start.Unix() / 60; at >= from.Unix()/60 && at <= to.Unix()/60 {
			out = append(out, m)
		}
	}
	return out, r.err
}

// Audit reads as store.Upstash does, and fails the test's next check
// (readTooMuch) when one call asks for more than the store allows.
func (r *recorder) Audit(_ context.Context, reads []store.AuditRead) ([][]store.AuditEntry, error) {
	pages := make([][]store.AuditEntry, len(reads))
	asked := 0
	for i, rd := range reads {
		all := r.audit[rd.Room]
		asked += rd.Limit
		if rd.Offset < len(all) {
			pages[i] = all[rd.Offset:min(len(all), rd.Offset+rd.Limit)]
		}
	}
	if asked > store.MaxAuditPage || len(reads) == 0 {
		r.readTooMuch = true
	}
	return pages, r.err
}

func room(t *testing.T, name, config string) *queue.Room {
	t.Helper()
	r, err := queue.ParseRoom(name, []byte(`{"paths": ["/"], `+config[1:]))
	if err != nil {
		t.Fatal(err)
	}
	return r
}

func intp(v int) *int           { return &v }
func floatp(v float64) *float64 { return &v }
func strp(v string) *string     { return &v }

func TestActionsRefuseBadInputWithoutAStoreCall(t *testing.T) {
	rooms := []*queue.Room{
		room(t, "shop", `{"max_active_users": 100}`),
		room(t, "closed", `{"mode": "reject"}`),
		room(t, "sharded", `{"max_active_users": 8, "shards": 4}`),
	}
	who := store.Actor{Via: "api", Client: "ab"}
	tests := []struct {
		name  string
		do    func(o *Operator) error
		field string
		is    error
		// text is what the message must say, if anything.
		text string
	}{
		{"admit 0", func(o *Operator) error { _, err := o.Admit(ctx, "shop", 0, who); return err }, "n", nil, ""},
		{"admit too many", func(o *Operator) error { _, err := o.Admit(ctx, "shop", store.MaxCallsPerOp+1, who); return err }, "n", nil, ""},
		{"admit in no room", func(o *Operator) error { _, err := o.Admit(ctx, "nope", 1, who); return err }, "", ErrNoRoom, ""},
		{"unknown control", func(o *Operator) error { _, err := o.Control(ctx, "shop", "explode", who); return err }, "control", nil, ""},
		{"nothing to set", func(o *Operator) error { _, err := o.SetLimits(ctx, "shop", Limits{}, who); return err }, "limits", nil, ""},
		{"negative capacity", func(o *Operator) error {
			_, err := o.SetLimits(ctx, "shop", Limits{MaxActiveUsers: intp(-1)}, who)
			return err
		}, "max_active_users", nil, ""},
		{"rate too high", func(o *Operator) error {
			_, err := o.SetLimits(ctx, "shop", Limits{NewUsersPerMinute: floatp(1e8)}, who)
			return err
		}, "new_users_per_minute", nil, ""},
		{"rate NaN", func(o *Operator) error {
			_, err := o.SetLimits(ctx, "shop", Limits{NewUsersPerMinute: floatp(math.NaN())}, who)
			return err
		}, "new_users_per_minute", nil, ""},
		{"rate below a hundredth", func(o *Operator) error {
			_, err := o.SetLimits(ctx, "shop", Limits{NewUsersPerMinute: floatp(0.001)}, who)
			return err
		}, "new_users_per_minute", nil, ""},
		{"burst 0", func(o *Operator) error { _, err := o.SetLimits(ctx, "shop", Limits{Burst: intp(0)}, who); return err }, "burst", nil, ""},
		{"unknown mode", func(o *Operator) error {
			_, err := o.SetLimits(ctx, "shop", Limits{Mode: strp("lifo")}, who)
			return err
		}, "mode", nil, ""},
		{"no limit at all", func(o *Operator) error {
			_, err := o.SetLimits(ctx, "shop", Limits{MaxActiveUsers: intp(0)}, who)
			return err
		}, "max_active_users", nil, ""},
		{"a configured reject room", func(o *Operator) error {
			_, err := o.SetLimits(ctx, "closed", Limits{Mode: strp("fifo")}, who)
			return err
		}, "", ErrModeLocked, ""},
		{"a live capacity below the shards", func(o *Operator) error {
			_, err := o.SetLimits(ctx, "sharded", Limits{MaxActiveUsers: intp(3)}, who)
			return err
		}, "max_active_users", nil, "3 is below the room's 4 shards: each shard needs at least one place"},
		{"an action id the store cannot keep", func(o *Operator) error {
			o.ActionID = `a"b`
			_, err := o.Control(ctx, "shop", store.Pause, who)
			return err
		}, "id", nil, "want only letters, digits"},
		{"reset unconfirmed", func(o *Operator) error { _, err := o.Reset(ctx, "shop", "Shop", who); return err }, "", ErrConfirm, ""},
		{"reset confirmed blank", func(o *Operator) error { _, err := o.Reset(ctx, "shop", "", who); return err }, "", ErrConfirm, ""},
		{"audit limit 0", func(o *Operator) error { _, err := o.Audit(ctx, "", 0); return err }, "limit", nil, ""},
		{"audit limit too high", func(o *Operator) error { _, err := o.Audit(ctx, "", store.MaxAuditPage+1); return err }, "limit", nil, ""},
		{"history of 0 minutes", func(o *Operator) error { _, err := o.History(ctx, "shop", 0); return err }, "minutes", nil, ""},
		{"history of 2 days", func(o *Operator) error { _, err := o.History(ctx, "shop", 48*time.Hour); return err }, "minutes", nil, ""},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			rec := &recorder{}
			err := tc.do(&Operator{Rooms: rooms, Store: rec, Now: t0})
			var in *InputError
			switch {
			case tc.is != nil && !errors.Is(err, tc.is):
				t.Fatalf("error %v, want %v", err, tc.is)
			case tc.field != "" && (!errors.As(err, &in) || in.Field != tc.field):
				t.Fatalf("error %v, want an InputError on %s", err, tc.field)
			case !strings.Contains(fmt.Sprint(err), tc.text):
				t.Fatalf("error %v, want it to say %q", err, tc.text)
			}
			if len(rec.acts) != 0 {
				t.Fatalf("a refused action reached the store: %+v", rec.acts)
			}
		})
	}
}

var ctx = context.Background()

func TestActionsReachTheStoreAndAreLogged(t *testing.T) {
	rooms := []*queue.Room{room(t, "shop", `{"max_active_users": 100, "new_users_per_minute": 60}`)}
	rec := &recorder{line: store.Line{Epoch: 7, Issued: 10, Admitted: 4}}
	var logged []store.AuditEntry
	o := &Operator{Rooms: rooms, Store: rec, Now: t0, Logged: func(e store.AuditEntry) { logged = append(logged, e) }}
	who := store.Actor{Via: "panel", Client: "ff"}
	steps := []func() error{
		func() error { _, err := o.Admit(ctx, "shop", 5, who); return err },
		func() error { _, err := o.Control(ctx, "shop", store.QueueAll, who); return err },
		// Capacity 0 is fine while a rate is in force.
		func() error {
			_, err := o.SetLimits(ctx, "shop", Limits{MaxActiveUsers: intp(0), Mode: strp("random")}, who)
			return err
		},
		func() error { _, err := o.ClearOverrides(ctx, "shop", who); return err },
		func() error { _, err := o.Reset(ctx, "shop", "shop", who); return err },
	}
	for i, step := range steps {
		if err := step(); err != nil {
			t.Fatalf("step %d: %v", i, err)
		}
	}
	want := []string{"admit", "queue_all", "limits", "clear", "reset"}
	if len(rec.acts) != len(want) || len(logged) != len(want) {
		t.Fatalf("actions %+v, logged %+v", rec.acts, logged)
	}
	for i, a := range rec.acts {
		if a.Op != want[i] || a.Actor != who || logged[i].Action != want[i] || logged[i].After.Epoch != 7 {
			t.Errorf("action %d: %+v, logged %+v; want %s", i, a, logged[i], want[i])
		}
	}
	// Each action is named afresh, and its entry says which it is; an id
	// the caller gives (the API's Idempotency-Key) is the action's.
	ids := map[string]bool{}
	for i, a := range rec.acts {
		if len(a.ID) != 32 || ids[a.ID] || logged[i].ID != a.ID {
			t.Errorf("action %d: id %q, logged %q; want a new id of 32 hex digits", i, a.ID, logged[i].ID)
		}
		ids[a.ID] = true
	}
	o.ActionID = "retry-1"
	if _, err := o.Control(ctx, "shop", store.Pause, who); err != nil || rec.acts[len(rec.acts)-1].ID != "retry-1" {
		t.Fatalf("pause with the caller's id: %v, sent %+v", err, rec.acts[len(rec.acts)-1])
	}
	o.ActionID = ""
	if s := rec.acts[2].Set; s.Capacity == nil || *s.Capacity != 0 || s.Mode != store.Random || s.PerMinute != nil {
		t.Errorf("limits sent %+v", s)
	}
	// A store failure is returned and nothing is logged.
	rec.err = store.ErrUnavailable
	if _, err := o.Admit(ctx, "shop", 1, who); !errors.Is(err, store.ErrUnavailable) || len(logged) != len(want)+1 {
		t.Fatalf("admit with the store down: %v, %d logged", err, len(logged))
	}
}

// minute is a history record at t0 plus m minutes.
func minute(m int, epoch, issued, admitted int64) store.Minute {
	return store.Minute{Start: t0.Add(time.Duration(m) * time.Minute), Epoch: epoch, Issued: issued, Admitted: admitted}
}

func TestWaitsFromTheRunningCounts(t *testing.T) {
	epoch := t0.UnixMilli()
	// 60 tickets a minute for ten minutes, called from minute 5 at 60 a
	// minute: everyone waits five minutes.
	var minutes []store.Minute
	for m := 0; m < 15; m++ {
		issued := int64(min(m+1, 10) * 60)
		admitted := int64(max(0, min(m-4, 10)) * 60)
		minutes = append(minutes, minute(m, epoch, issued, admitted))
	}
	rooms := []*queue.Room{room(t, "shop", `{"new_users_per_minute": 60}`)}
	rec := &recorder{minutes: minutes, line: store.Line{Epoch: epoch, Issued: 600, Admitted: 600}}
	o := &Operator{Rooms: rooms, Store: rec, Now: t0.Add(14*time.Minute + 30*time.Second)}
	st, err := o.Stats(ctx, "shop")
	if err != nil {
		t.Fatal(err)
	}
	if st.AvgWaitSeconds == nil || *st.AvgWaitSeconds != 300 || *st.P50WaitSeconds != 300 || *st.P90WaitSeconds != 300 {
		t.Fatalf("waits %v %v %v, want 300 s each", st.AvgWaitSeconds, st.P50WaitSeconds, st.P90WaitSeconds)
	}
	if st.AdmittedLastMinute != 60 {
		t.Fatalf("admitted in the last minute %d, want 60", st.AdmittedLastMinute)
	}
	points, err := o.History(ctx, "shop", 20*time.Minute)
	if err != nil {
		t.Fatal(err)
	}
	if len(points) != 20 || !points[0].Missing || points[5].Missing || !points[5].Start.Equal(t0) {
		t.Fatalf("20 minutes ending at t0+14m: %d points, first missing %v, t0 present %v", len(points), points[0].Missing, !points[5].Missing)
	}
	for i, p := range points[5:] {
		called := i >= 5 && i < 15
		if called != (p.P50WaitSeconds != nil) || (called && (*p.P50WaitSeconds != 300 || *p.P90WaitSeconds != 300)) {
			t.Errorf("minute %d: p50 %v p90 %v", i, p.P50WaitSeconds, p.P90WaitSeconds)
		}
	}
}

func TestWaitsAcrossAReset(t *testing.T) {
	old, fresh := t0.UnixMilli(), t0.Add(3*time.Minute).UnixMilli()
	minutes := []store.Minute{
		minute(0, old, 100, 0), minute(1, old, 100, 0), minute(2, old, 100, 100),
		// Reset in minute 3: the new line's tickets wait a minute each.
		minute(3, fresh, 50, 0), minute(4, fresh, 50, 50),
	}
	rooms := []*queue.Room{room(t, "shop", `{"max_active_users": 10}`)}
	o := &Operator{Rooms: rooms, Store: &recorder{minutes: minutes}, Now: t0.Add(4*time.Minute + 30*time.Second)}
	points, err := o.History(ctx, "shop", 5*time.Minute)
	if err != nil {
		t.Fatal(err)
	}
	// Old line: issued within minute 0, called within minute 2: two minutes.
	if p := points[2].P50WaitSeconds; p == nil || *p != 120 {
		t.Errorf("old line's wait %v, want 120 s", p)
	}
	if p := points[4].P50WaitSeconds; p == nil || *p != 60 {
		t.Errorf("new line's wait %v, want 60 s", p)
	}
	if points[3].P50WaitSeconds != nil {
		t.Errorf("minute of the reset: nobody called, yet a wait %v", *points[3].P50WaitSeconds)
	}
}
