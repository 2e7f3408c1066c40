package pagetest

import (
	"net/http"
	"strconv"
	"strings"
	"testing"

	"github.com/chromedp/cdproto/fetch"
	"github.com/chromedp/cdproto/network"
	"github.com/chromedp/chromedp"
	"github.com/edgequeue/waitingroom/tools/headless"
)

// TestDecoyPage: a browser the operator's rule sends to the decoy line
// meets the room's queue page, accessible (axe-core, desktop and 320 px)
// while its script does the way out's work; left alone, the page does the
// room's top rung and takes the visitor into the real line, where they
// hold one of its first tickets.
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

	t.Run("accessible while it works", func(t *testing.T) {
		// The page's way out (a navigation to itself) is answered 204
		// in the browser, so the decoy's page stays to be read.
		tab := br.Tab(t, map[string]string{"Accept-Language": "en-GB,en;q=0.9"})
		loaded := false
		if err := chromedp.Listen(tab.Ctx, func(ev any) {
			e, ok := ev.(*fetch.EventRequestPaused)
			if !ok {
				return
			}
			if e.ResourceType != network.ResourceTypeDocument || !loaded {
				loaded = loaded || e.ResourceType == network.ResourceTypeDocument
				go chromedp.Call(tab.Ctx, fetch.ContinueRequest, fetch.ContinueRequestParams{RequestID: e.RequestID})
				return
			}
			go chromedp.Call(tab.Ctx, fetch.FulfillRequest, fetch.FulfillRequestParams{RequestID: e.RequestID, ResponseCode: http.StatusNoContent})
		}); err != nil {
			t.Fatal(err)
		}
		if _, err := chromedp.Call(tab.Ctx, fetch.Enable, fetch.EnableParams{Patterns: []*fetch.RequestPattern{{URLPattern: "*/lure/*"}}}); err != nil {
			t.Fatal(err)
		}
		if status := open(tab, st.HostURL+"/lure/item"); status != http.StatusOK {
			t.Fatalf("the decoy's page answered %d, want 200", status)
		}
		if got := read(tab); got.Main != "wr-queue" || len(got.Seed) != 32 || got.Bits != "16" {
			t.Errorf("the decoy's page: %+v, want the queue page with the top rung's work", got)
		}
		readable(t, tab, axe, "the decoy's page")
	})

	t.Run("the way out", func(t *testing.T) {
		tab := br.Tab(t, map[string]string{"Accept-Language": "en-GB,en;q=0.9"})
		open(tab, st.HostURL+"/lure/item")
		headless.Until(tab, "the real line's queue page", `(() => {
			const w = document.getElementById("wr-work");
			return !!document.querySelector("main#wr-queue") && !!w && w.dataset.seed === "";
		})()`, searchWithin)
		// The real line's tickets are the first few (the tab above may
		// have joined with its work too: its page's polls carry the
		// cookie); a decoy's are past 600.
		got := read(tab)
		if n, err := strconv.Atoi(strings.TrimPrefix(got.Ticket, "#")); err != nil || n < 1 || n > 2 {
			t.Errorf("after the way out: %+v, want one of the real line's first two tickets", got)
		}
		checkProblems(t, tab)
	})
}
