package admin

import (
	"math"
	"testing"
	"time"

	"github.com/edgequeue/waitingroom/control"
)

func secs(v float64) *float64 { return &v }

// minutes is n points a minute apart ending at 15:59 UTC, point i made by f.
func minutes(n int, f func(i int) control.Point) []control.Point {
	end := time.Date(2025, 3, 1, 15, 59, 0, 0, time.UTC)
	out := make([]control.Point, n)
	for i := range out {
		out[i] = f(i)
		out[i].Start = end.Add(-time.Duration(n-1-i) * time.Minute)
	}
	return out
}

func TestHistoryCharts(t *testing.T) {
	steady := func(i int) control.Point {
		return control.Point{Joins: 2, Admissions: 1, Active: int64(i), Waiting: 5, Refusals: 0, P50WaitSeconds: secs(float64(i)), P90WaitSeconds: secs(float64(2 * i))}
	}
	for _, tc := range []struct {
		name   string
		points []control.Point
		// want: per chart key and series, the hour's and the day's values (nil: not checked)
		hourSlots, daySlots int
		hourStart, dayStart string
		check               func(t *testing.T, hour, day []Chart)
	}{
		{name: "no history", hourSlots: 0, daySlots: 0},
		{
			name: "a full day", points: minutes(1440, steady), hourSlots: 60, daySlots: 144,
			hourStart: "15:00", dayStart: "16:00",
			check: func(t *testing.T, hour, day []Chart) {
				want(t, hour[0].Series[0].Values[59], 2, "the hour's last joins")
				want(t, day[0].Series[0].Values[143], 20, "the day's last joins: ten minutes summed")
				want(t, day[1].Series[0].Values[143], 1439, "the day's last active: the highest minute")
				want(t, day[2].Series[1].Values[0], 18, "the day's first p90: the highest minute")
			},
		},
		{
			name: "a short first slot", points: minutes(25, steady), hourSlots: 25, daySlots: 3,
			hourStart: "15:35", dayStart: "15:30",
			check: func(t *testing.T, hour, day []Chart) {
				want(t, day[0].Series[0].Values[0], 10, "five minutes of joins in the first slot")
				want(t, day[0].Series[0].Values[2], 20, "ten in the last")
			},
		},
		{
			name: "missing minutes and minutes nobody was called",
			points: minutes(20, func(i int) control.Point {
				switch {
				case i < 10:
					return control.Point{Missing: true, Joins: 99}
				case i == 15:
					return control.Point{Joins: 4, Active: 3}
				}
				return control.Point{Joins: 1, Active: 1, P50WaitSeconds: secs(3)}
			}),
			hourSlots: 20, daySlots: 2, hourStart: "15:40", dayStart: "15:40",
			check: func(t *testing.T, hour, day []Chart) {
				want(t, hour[0].Series[0].Values[9], math.NaN(), "a missing minute's joins")
				want(t, hour[0].Series[0].Values[15], 4, "joins")
				want(t, hour[2].Series[0].Values[15], math.NaN(), "the wait of a minute nobody was called in")
				want(t, day[0].Series[0].Values[0], math.NaN(), "a slot of missing minutes")
				want(t, day[0].Series[0].Values[1], 13, "the minutes with data, summed")
				want(t, day[2].Series[0].Values[1], 3, "the wait of the minutes with one")
			},
		},
	} {
		t.Run(tc.name, func(t *testing.T) {
			hour, day := historyCharts("r0", tc.points)
			if len(hour) != 4 || len(day) != 4 {
				t.Fatalf("%d and %d charts, want 4 each", len(hour), len(day))
			}
			if n := hour[0].slots(); n != tc.hourSlots {
				t.Errorf("the hour has %d slots, want %d", n, tc.hourSlots)
			}
			if n := day[0].slots(); n != tc.daySlots {
				t.Errorf("the day has %d slots, want %d", n, tc.daySlots)
			}
			if tc.hourStart != "" && (hour[0].at(0).Format("15:04") != tc.hourStart || day[0].at(0).Format("15:04") != tc.dayStart) {
				t.Errorf("the hour starts at %s, the day at %s; want %s and %s", hour[0].at(0).Format("15:04"), day[0].at(0).Format("15:04"), tc.hourStart, tc.dayStart)
			}
			if hour[0].ID != "r0-hour-flow" || day[3].ID != "r0-day-refused" || day[0].Step != 10*time.Minute {
				t.Errorf("IDs %q and %q, day step %v", hour[0].ID, day[3].ID, day[0].Step)
			}
			if tc.check != nil {
				tc.check(t, hour, day)
			}
			for _, c := range append(hour, day...) {
				wellFormed(t, c.HTML())
			}
		})
	}
}

func want(t *testing.T, got, want float64, what string) {
	t.Helper()
	if got != want && !(math.IsNaN(got) && math.IsNaN(want)) {
		t.Errorf("%s: %g, want %g", what, got, want)
	}
}
