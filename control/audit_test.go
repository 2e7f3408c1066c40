package control

import (
	"encoding/json"
	"errors"
	"fmt"
	"sort"
	"strings"
	"testing"
	"time"

	"github.com/edgequeue/waitingroom/queue"
	"github.com/edgequeue/waitingroom/store"
)

// logs are rooms' audit logs, newest first, each entry named by its
// room and its time in milliseconds after t0.
type logs map[string][]store.AuditEntry

func entryAt(room string, ms int) store.AuditEntry {
	return store.AuditEntry{Room: room, Time: t0.Add(time.Duration(ms) * time.Millisecond), Action: "pause"}
}

// name is how a test writes an entry: room@ms.
func name(e store.AuditEntry) string {
	return fmt.Sprintf("%s@%d", e.Room, e.Time.Sub(t0).Milliseconds())
}

// roomsOf are n rooms, r0, r1...
func roomsOf(t *testing.T, n int) []*queue.Room {
	rooms := make([]*queue.Room, n)
	for i := range rooms {
		rooms[i] = room(t, fmt.Sprintf("r%d", i), `{"max_active_users": 1}`)
	}
	return rooms
}

// merged is every entry of the logs in the merged log's order: newest
// first, and at the same millisecond the room first in the config first.
func merged(rooms []*queue.Room, l logs) []string {
	type at struct {
		e    store.AuditEntry
		room int
	}
	var all []at
	for i, r := range rooms {
		for _, e := range l[r.Name] {
			all = append(all, at{e, i})
		}
	}
	sort.SliceStable(all, func(a, b int) bool {
		return all[a].e.Time.After(all[b].e.Time) || all[a].e.Time.Equal(all[b].e.Time) && all[a].room < all[b].room
	})
	out := make([]string, len(all))
	for i, a := range all {
		out[i] = name(a.e)
	}
	return out
}

// pageThrough reads the whole merged log limit entries a page, a new
// Operator (a new request) for each page, spent calls already spent
// before it reads, and returns the entries and the pages' sizes.
func pageThrough(t *testing.T, rooms []*queue.Room, rec *recorder, limit, spent int) (got []string, pages []int) {
	t.Helper()
	cursor := ""
	for n := 0; ; n++ {
		if n > 10000 {
			t.Fatalf("no end after %d pages", n)
		}
		o := &Operator{Rooms: rooms, Store: rec, Now: t0}
		for i := 0; i < spent; i++ {
			if _, err := o.store().History(ctx, rooms[0].Name, t0, t0); err != nil {
				t.Fatal(err)
			}
		}
		page, err := o.Audit(ctx, cursor, limit)
		if err != nil {
			t.Fatalf("page %d at %q: %v", n+1, cursor, err)
		}
		if rec.readTooMuch {
			t.Fatalf("page %d: a store call asked for more than %d entries", n+1, store.MaxAuditPage)
		}
		if len(page.Entries) > limit {
			t.Fatalf("page %d: %d entries, limit %d", n+1, len(page.Entries), limit)
		}
		for _, e := range page.Entries {
			got = append(got, name(e))
		}
		pages = append(pages, len(page.Entries))
		if page.Next == "" {
			return got, pages
		}
		cursor = page.Next
	}
}

// cut keeps a failure's message readable.
func cut(s string) string {
	if len(s) > 600 {
		return s[:600] + "…"
	}
	return s
}

func TestAuditPagesMergeEveryRoom(t *testing.T) {
	interleaved := func(rooms, each int) logs {
		l := logs{}
		for i := 0; i < rooms; i++ {
			for k := each - 1; k >= 0; k-- {
				r := fmt.Sprintf("r%d", i)
				l[r] = append(l[r], entryAt(r, k*rooms+i))
			}
		}
		return l
	}
	tests := []struct {
		name         string
		rooms        int
		logs         logs
		limit, spent int
		// fullPages: every page but the last holds limit entries.
		fullPages bool
	}{
		{"no entries", 3, logs{}, 20, 0, true},
		{"one room", 1, interleaved(1, 45), 20, 0, true},
		{"two rooms interleaved", 2, interleaved(2, 30), 7, 0, true},
		{"full logs of 8 rooms", 8, interleaved(8, store.AuditCap), 200, 0, true},
		{"50 rooms, the panel's page after its rooms", 50, interleaved(50, 40), 20, 6, true},
		{"one busy room among 50 quiet ones", 50, func() logs {
			l := interleaved(50, 1)
			for k := 1; k <= 500; k++ {
				l["r7"] = append([]store.AuditEntry{entryAt("r7", 1000+k)}, l["r7"]...)
			}
			return l
		}(), 100, 0, true},
		{"the same millisecond in every room", 5, func() logs {
			l := logs{}
			for i := 4; i >= 0; i-- {
				for _, r := range []string{"r0", "r1", "r2", "r3", "r4"} {
					l[r] = append(l[r], entryAt(r, i))
				}
			}
			return l
		}(), 3, 0, true},
		{"300 rooms, an entry each: more than one call reads", 300, interleaved(300, 1), 50, 0, false},
		{"200 rooms in the panel's two calls", 200, interleaved(200, 3), 20, 6, false},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			rooms := roomsOf(t, tc.rooms)
			rec := &recorder{audit: tc.logs}
			got, pages := pageThrough(t, rooms, rec, tc.limit, tc.spent)
			want := merged(rooms, tc.logs)
			if g, w := strings.Join(got, " "), strings.Join(want, " "); g != w {
				t.Fatalf("paged through %d entries in %d pages, want the %d of the logs merged:\ngot  %s\nwant %s", len(got), len(pages), len(want), cut(g), cut(w))
			}
			for i, n := range pages[:len(pages)-1] {
				if n == 0 || tc.fullPages && n != tc.limit {
					t.Errorf("page %d of %d holds %d entries (limit %d): %v", i+1, len(pages), n, tc.limit, pages)
					break
				}
			}
		})
	}
}

// TestAuditCursorOutlastsNewActions: actions taken between two pages
// push entries onto their rooms' logs, moving the older entries down;
// the next page neither repeats an entry nor skips one.
func TestAuditCursorOutlastsNewActions(t *testing.T) {
	rooms := roomsOf(t, 3)
	old := logs{}
	for _, r := range []string{"r0", "r1", "r2"} {
		for ms := 100; ms > 0; ms -= 10 {
			old[r] = append(old[r], entryAt(r, ms+len(r)))
		}
	}
	for _, pushed := range []map[string]int{{"r0": 1}, {"r1": 4, "r2": 30}, {"r0": 9, "r1": 9, "r2": 9}} {
		t.Run(fmt.Sprint(pushed), func(t *testing.T) {
			rec := &recorder{audit: logs{}}
			for r, l := range old {
				rec.audit[r] = append([]store.AuditEntry(nil), l...)
			}
			first, err := (&Operator{Rooms: rooms, Store: rec, Now: t0}).Audit(ctx, "", 8)
			if err != nil {
				t.Fatal(err)
			}
			for r, n := range pushed {
				for k := 0; k < n; k++ {
					rec.audit[r] = append([]store.AuditEntry{entryAt(r, 1000+k)}, rec.audit[r]...)
				}
			}
			got := []string{}
			for _, e := range first.Entries {
				got = append(got, name(e))
			}
			for cursor := first.Next; cursor != ""; {
				page, err := (&Operator{Rooms: rooms, Store: rec, Now: t0}).Audit(ctx, cursor, 8)
				if err != nil {
					t.Fatal(err)
				}
				for _, e := range page.Entries {
					got = append(got, name(e))
				}
				cursor = page.Next
			}
			if g, w := strings.Join(got, " "), strings.Join(merged(rooms, old), " "); g != w {
				t.Fatalf("after actions %v between the pages:\ngot  %s\nwant %s", pushed, cut(g), cut(w))
			}
		})
	}
}

func TestAuditRefusesCursorsItDidNotGive(t *testing.T) {
	rooms := roomsOf(t, 3)
	o := &Operator{Rooms: rooms, Now: t0}
	fp := o.fingerprint()
	other := (&Operator{Rooms: roomsOf(t, 4)}).fingerprint()
	for _, cursor := range []string{
		"x", fp, fp + ".x", fp + ".x.0-1.", fp + ".x.3-1", fp + ".x.0-1001", fp + ".x.0-0", fp + ".x.1-2_0-1",
		fp + ".x.01-2", fp + ".-1-0.", fp + ".5-3.", fp + ".5.", fp + ".5-0-1.", fp + ".x.0-1_0-2", fp + ".x.0--1",
		other + ".x.", "<script>", strings.Repeat(fp+".", 100),
	} {
		t.Run(cursor, func(t *testing.T) {
			rec := &recorder{}
			_, err := (&Operator{Rooms: rooms, Store: rec, Now: t0}).Audit(ctx, cursor, 10)
			var in *InputError
			if !errors.As(err, &in) || in.Field != "cursor" {
				t.Fatalf("error %v, want an InputError on cursor", err)
			}
			if rec.readTooMuch || len(cursor) > 3 && strings.Contains(in.Message, cursor) {
				t.Errorf("read the store, or echoed the cursor: %v", in)
			}
		})
	}
	// What a cursor says is the same however it was made.
	for _, cursor := range []string{fp + ".x.", fp + ".1772366400899-2.0-12_2-1000"} {
		if _, err := (&Operator{Rooms: rooms, Store: &recorder{}, Now: t0}).Audit(ctx, cursor, 10); err != nil {
			t.Errorf("%s: %v", cursor, err)
		}
	}
}

// TestAuditOfTooManyRoomsForTheBudget: the panel's two calls read the
// newest entries of 400 rooms; when they do not fit in the calls left, the
// page says so rather than handing out a cursor that would never move.
func TestAuditOfTooManyRoomsForTheBudget(t *testing.T) {
	for _, tc := range []struct {
		rooms int
		fit   bool
	}{{2 * store.MaxAuditPage, true}, {2*store.MaxAuditPage + 1, false}} {
		t.Run(fmt.Sprint(tc.rooms), func(t *testing.T) {
			rooms := roomsOf(t, tc.rooms)
			l := logs{}
			for i, r := range rooms {
				l[r.Name] = []store.AuditEntry{entryAt(r.Name, i)}
			}
			var logged []string
			o := &Operator{Rooms: rooms, Store: &recorder{audit: l}, Now: t0, Logf: func(f string, a ...any) { logged = append(logged, fmt.Sprintf(f, a...)) }}
			for i := 0; i < MaxStoreCalls-2; i++ {
				o.store().History(ctx, "r0", t0, t0)
			}
			page, err := o.Audit(ctx, "", 20)
			switch {
			case tc.fit && (err != nil || len(page.Entries) == 0 || name(page.Entries[0]) != name(l[rooms[tc.rooms-1].Name][0])):
				t.Fatalf("%+v, %v; want the newest entry of all", page, err)
			case !tc.fit && (!errors.Is(err, ErrBudget) || len(logged) != 1 || !strings.Contains(logged[0], "do not fit")):
				t.Fatalf("error %v, logged %q; want ErrBudget and a line saying why", err, logged)
			}
		})
	}
}

// TestOverviewIsStatsAndHistory: the panel's one reading of a room says
// what Stats and History say, with the store calls of Stats alone.
func TestOverviewIsStatsAndHistory(t *testing.T) {
	epoch := t0.Add(-5 * time.Hour).UnixMilli()
	var minutes []store.Minute
	// A day of a line whose waits grow: older tickets waited longer, so
	// reading more history than Stats does would change its waits.
	for m := -300; m <= 0; m++ {
		issued := int64(300+m) * 10
		admitted := max(0, int64(300+m)*10-int64(300+m)*5)
		minutes = append(minutes, minute(m, epoch, issued, admitted))
	}
	rooms := []*queue.Room{room(t, "shop", `{"new_users_per_minute": 60}`)}
	rec := &recorder{minutes: minutes, line: store.Line{Epoch: epoch, Issued: 3000, Admitted: 1500, Recent: 5, RecentSince: t0.Add(-time.Minute)}}
	for _, span := range []time.Duration{time.Hour, MaxHistory} {
		o := &Operator{Rooms: rooms, Store: rec, Now: t0.Add(30 * time.Second), Clock: func() time.Time { return t0 }}
		st, points, err := o.Overview(ctx, "shop", span)
		if err != nil {
			t.Fatal(err)
		}
		if o.store().used != StatsCalls {
			t.Errorf("Overview made %d store calls, want %d", o.store().used, StatsCalls)
		}
		wantStats, err := o.Stats(ctx, "shop")
		if err != nil {
			t.Fatal(err)
		}
		wantPoints, err := o.History(ctx, "shop", span)
		if err != nil {
			t.Fatal(err)
		}
		got, _ := json.Marshal([]any{st, points})
		want, _ := json.Marshal([]any{wantStats, wantPoints})
		if string(got) != string(want) {
			t.Errorf("span %v: Overview %s\nwant %s", span, got, want)
		}
	}
}
