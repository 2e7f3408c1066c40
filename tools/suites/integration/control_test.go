package integration

import (
	"errors"
	"testing"
	"time"

	"github.com/edgequeue/waitingroom/control"
	"github.com/edgequeue/waitingroom/queue"
	"github.com/edgequeue/waitingroom/store"
)

// TestOperatorOnTheRealStore: the control package's readings and actions
// over the real script. Ten visitors join at t0 into a room of capacity 2;
// two minutes later the operator admits three: their wait, read back off
// the history, is two minutes.
func TestOperatorOnTheRealStore(t *testing.T) {
	st, _ := newStore(t)
	r, err := queue.ParseRoom("r", []byte(`{"paths": ["/"], "max_active_users": 2, "inactivity_timeout": 600, "session_duration": 600}`))
	if err != nil {
		t.Fatal(err)
	}
	l := newLine(t, st, r.Policy(t0))
	l.quiet = true
	for i := 0; i < 10; i++ {
		l.join(t0)
	}
	o := &control.Operator{Rooms: []*queue.Room{r}, Store: st, Now: t0.Add(2 * time.Minute)}
	who := store.Actor{Via: "api", Client: "ab"}
	if _, err := o.Admit(ctx, "r", 3, who); err != nil {
		t.Fatal(err)
	}
	if _, err := o.SetLimits(ctx, "r", control.Limits{MaxActiveUsers: intp(4), NewUsersPerMinute: floatp(30)}, who); err != nil {
		t.Fatal(err)
	}
	o.Now = o.Now.Add(20 * time.Second) // within the claim window (30 s)
	s, err := o.Stats(ctx, "r")
	if err != nil {
		t.Fatal(err)
	}
	if s.Issued != 10 || s.NowServing != 5 || s.QueueLength != 5 || s.Called != 3 || s.ActiveSessions != 2 {
		t.Fatalf("stats %+v: want 10 issued, 5 called so far, 5 waiting, 3 called not arrived, 2 active", s)
	}
	if s.MaxSessions != 4 || *s.Overrides.MaxActiveUsers != 4 || *s.Configured.MaxActiveUsers != 2 ||
		*s.Effective.NewUsersPerMinute != 30 || s.Overrides.Burst != nil || s.Mode != "fifo" {
		t.Fatalf("limits: max %d, configured %+v, overrides %+v, effective %+v", s.MaxSessions, s.Configured, s.Overrides, s.Effective)
	}
	// Tickets 3 to 5 were called two minutes after they were issued.
	if s.P50WaitSeconds == nil || *s.P50WaitSeconds < 90 || *s.P50WaitSeconds > 150 {
		t.Fatalf("p50 wait %v, want about 120 s", deref(s.P50WaitSeconds))
	}
	if s.ETALastInLineSeconds == nil || s.AdmittedLastMinute != 3 {
		t.Fatalf("eta %v, admitted in the last minute %d (want 3)", s.ETALastInLineSeconds, s.AdmittedLastMinute)
	}
	points, err := o.History(ctx, "r", 5*time.Minute)
	if err != nil {
		t.Fatal(err)
	}
	var joins, admissions int64
	for _, p := range points {
		joins, admissions = joins+p.Joins, admissions+p.Admissions
	}
	if len(points) != 5 || joins != 10 || admissions != 5 {
		t.Fatalf("%d points with %d joins and %d admissions, want 5 points, 10 and 5", len(points), joins, admissions)
	}
	if _, err := o.Reset(ctx, "r", "R", who); !errors.Is(err, control.ErrConfirm) {
		t.Fatalf("reset with the wrong name: %v", err)
	}
	if _, err := o.Reset(ctx, "r", "r", who); err != nil {
		t.Fatal(err)
	}
	audit, err := o.Audit(ctx, "", 10)
	if err != nil || len(audit.Entries) != 3 || audit.Entries[0].Action != "reset" || audit.Entries[2].Action != "admit" || audit.Next != "" {
		t.Fatalf("audit %+v, %v", audit, err)
	}
}

func deref(v *float64) any {
	if v == nil {
		return nil
	}
	return *v
}
