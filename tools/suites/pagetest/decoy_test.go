package pagetest

import (
	"fmt"
	"net/http"
	"testing"

	"github.com/chromedp/cdproto/fetch"
	"github.com/chromedp/cdproto/network"
	"github.com/chromedp/chromedp"
	"github.com/edgequeue/waitingroom/tools/headless"
)

// TestDecoyPage: a browser the operator's rule sends to the decoy line
// comes as any newcomer does (the work page, then its join, where it is
// judged) and meets the room's queue page, accessible (axe-core, desktop
// and 320 px) while its script does the way out's work; left alone, the
// page does the room's top rung and its next poll takes the visitor into
// the real line, where they hold one of its first tickets.
func TestDecoyPage(t *testing.T) {
	headless.Chromium(t, suite)
	axe := axeSource(t)
	st := start(t)
	st.operate(t, http.MethodPost, "lure/pause", "") // the way out ends on the queue page
	br := headless.Start(t, suite, 1280, 800)
	type shown struct{ Main, Seed, Bits, Ticket string }
	read := func(tab *headless.Tab) shown {
		return headless.Eval[shown](tab, "reading the queue page", `(() => {
			const m = document.querySelector("main"), w = document.getElementById("wr-work"), t = document.getElementById("wr-ticket");
			return {Main: m ? m.id : "", Seed: w ? w.dataset.seed : "", Bits: w ? w.dataset.bits : "", Ticket: t ? t.textContent : ""};
		})()`)
	}
	// ticketIs is a script that reports whether the tab shows the queue
	// page with a ticket in [lo, hi]: a decoy's are past 600.
	ticketIs := func(lo, hi int) string {
		return fmt.Sprintf(`(() => {
			const t = document.getElementById("wr-ticket"), n = t ? +t.textContent.replace(/[^0-9]/g, "") : 0;
			return !!document.querySelector("main#wr-queue") && n >= %d && n <= %d;
		})()`, lo, hi)
	}

	t.Run("accessible while it works", func(t *testing.T) {
		// The page's polls are answered 503 in the browser (a failed
		// poll is tried again later), so the decoy's page stays to be
		// read, its way out never sent.
		tab := br.Tab(t, map[string]string{"Accept-Language": "en-GB,en;q=0.9"})
		if err := chromedp.Listen(tab.Ctx, func(ev any) {
			e, ok := ev.(*fetch.EventRequestPaused)
			if !ok {
				return
			}
			if e.ResourceType != network.ResourceTypeFetch {
				go chromedp.Call(tab.Ctx, fetch.ContinueRequest, fetch.ContinueRequestParams{RequestID: e.RequestID})
				return
			}
			go chromedp.Call(tab.Ctx, fetch.FulfillRequest, fetch.FulfillRequestParams{RequestID: e.RequestID, ResponseCode: http.StatusServiceUnavailable})
		}); err != nil {
			t.Fatal(err)
		}
		if _, err := chromedp.Call(tab.Ctx, fetch.Enable, fetch.EnableParams{Patterns: []*fetch.RequestPattern{{URLPattern: "*/lure/*"}}}); err != nil {
			t.Fatal(err)
		}
		if status := open(tab, st.HostURL+"/lure/item"); status != http.StatusOK {
			t.Fatalf("the work page answered %d, want 200", status)
		}
		headless.Until(tab, "the decoy's queue page, after the door's work", ticketIs(600, 1<<30), searchWithin)
		if got := read(tab); len(got.Seed) != 32 || got.Bits != "16" {
			t.Errorf("the decoy's page: %+v, want the queue page with the top rung's work", got)
		}
		readable(t, tab, axe, "the decoy's page")
	})

	t.Run("the way out", func(t *testing.T) {
		tab := br.Tab(t, map[string]string{"Accept-Language": "en-GB,en;q=0.9"})
		open(tab, st.HostURL+"/lure/item")
		// The real line's tickets are the first few (the tab above may
		// have joined with its work too: the tabs share the cookies).
		headless.Until(tab, "the real line's queue page", ticketIs(1, 2), searchWithin)
		// A real place shows a way out too (a decoy's looks the same):
		// its page searches it once, and a reload keeps the solution.
		solvedBy := `(document.getElementById("wr-work").dataset.by || "")`
		headless.Until(tab, "the real place's way out, searched", solvedBy+` !== ""`, searchWithin)
		headless.Eval[bool](tab, "reloading the page", `setTimeout(() => location.reload(), 0), true`)
		headless.Until(tab, "the reloaded page's way out, kept", solvedBy+` === "kept"`, within)
		checkProblems(t, tab)
	})
}
