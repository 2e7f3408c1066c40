package pagetest

import (
	"net/http"
	"strings"
	"testing"

	"github.com/edgequeue/waitingroom/tools/headless"
)

// TestQueuePageFirstInPausedRoom: the first visitor of a room that has
// let nobody in, paused before they came, reads each thing once and
// nothing that is not so: the pause said once (not in the live region
// and the note both), no "Now serving #0" (nobody has been), and the
// progress since arrival empty (nobody has gone ahead of them, paused
// or not), no word twice in a row ("let in in"), in English and German,
// and the page stays accessible.
func TestQueuePageFirstInPausedRoom(t *testing.T) {
	headless.Chromium(t, suite)
	axe := axeSource(t)
	st := start(t)
	st.operate(t, http.MethodPost, "fresh/pause", "")
	br := headless.Start(t, suite, 1280, 800)
	type page struct {
		Text, Serving         string
		Progress, ProgressMax float64
	}
	tests := []struct {
		name, languages, paused string
	}{
		{"English", "en-GB,en;q=0.9", "Entry is paused for the moment"},
		{"German", "de-AT,de;q=0.9", "Der Einlass ist im Moment angehalten"},
	}
	for i, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			tab := br.Tab(t, map[string]string{"Accept-Language": tc.languages})
			if status := open(tab, st.HostURL+"/fresh/"); status != http.StatusOK {
				t.Fatalf("the queue page answered %d", status)
			}
			got := headless.Eval[page](tab, "reading the page", `(() => {
				const p = document.getElementById("wr-progress");
				return {Text: document.body.innerText, Serving: document.getElementById("wr-serving").textContent.trim(),
					Progress: p.value, ProgressMax: p.max};
			})()`)
			t.Logf("the page shows: serving %q, progress %v of %v", got.Serving, got.Progress, got.ProgressMax)
			if n := strings.Count(got.Text, tc.paused); n != 1 {
				t.Errorf("the page says %q %d times, want once:\n%s", tc.paused, n, got.Text)
			}
			if got.Serving == "#0" || strings.Contains(got.Text, "#0") {
				t.Errorf("the page shows now serving %q in a room that has let nobody in", got.Serving)
			}
			words := strings.Fields(strings.ToLower(got.Text))
			for j := 1; j < len(words); j++ {
				if words[j] == words[j-1] {
					t.Errorf("the page says %q twice in a row: %s", words[j], strings.Join(words[max(j-5, 0):min(j+5, len(words))], " "))
				}
			}
			if got.ProgressMax <= 0 || got.Progress >= got.ProgressMax {
				t.Errorf("progress since arrival %v of %v: full for a visitor nobody has gone ahead of", got.Progress, got.ProgressMax)
			}
			if pos := headless.Eval[string](tab, "the place", `document.getElementById("wr-position").textContent.trim()`); pos != "1" && i == 0 {
				t.Errorf("place %q, want 1: the room's first visitor", pos)
			}
			readable(t, tab, axe, "the paused room's queue page in "+tc.name)
		})
	}
}
