package pagetest

import (
	"fmt"
	"math"
	"net/http"
	"strings"
	"testing"
	"time"

	"github.com/chromedp/cdproto/emulation"
	"github.com/chromedp/cdproto/fetch"
	"github.com/chromedp/cdproto/page"
	"github.com/chromedp/chromedp"
	"github.com/edgequeue/waitingroom/tools/headless"
)

// noteWork keeps, across the tab's pages, the bits the work page asked,
// and the time its search took, the hashes it tried and where it ran,
// which its script writes on the page as it leaves (data-ms, data-hashes,
// data-by). It watches from the document's start: a search can end, and
// the page leave, before the page has finished loading.
const noteWork = `new MutationObserver(() => {
	const w = document.getElementById("wr-work");
	if (!w || w.tagName !== "MAIN") return; // the queue page's way out, not the door's work
	sessionStorage.setItem("wr-bits", w.dataset.bits || "");
	if (w.dataset.ms) {
		sessionStorage.setItem("wr-ms", w.dataset.ms);
		sessionStorage.setItem("wr-hashes", w.dataset.hashes);
		sessionStorage.setItem("wr-by", w.dataset.by);
	}
}).observe(document, {subtree: true, childList: true, attributes: true});`

// onThePagesThread takes Worker away from a tab's pages, so that the
// work page searches on its own thread: DevTools' CPU throttling slows
// that thread, not a worker's.
const onThePagesThread = `delete window.Worker;`

// throttle is how much slower than this machine's the tab's CPU runs: a
// mid-range phone's, as the issue measures it.
const throttle = 4

// searchWithin bounds a throttled search, a deadline and not a measure.
// The hashes a search takes are geometric, so a search outlasts k times
// its mean once in e^k: at the slowest rate seen here (50,000 hashes a
// second on a loaded machine), the top rung's mean is 21 s, and five
// minutes is 14 of them (one in a million), where the page's usual 90 s
// would be 4 (one in 70).
const searchWithin = 5 * time.Minute

// TestWorkPage: a newcomer meets the work page. It is accessible
// (axe-core, desktop and 320 px) while it works, and within its
// Content-Security-Policy. Without JavaScript it says why it needs it and
// links on, or, at the ladder's lowest rung, takes the browser on into the
// line after its wait. With JavaScript it searches in a worker and takes
// the visitor to the line. With the CPU throttled 4× (which DevTools does
// to the page's thread alone, so the test takes the worker away) it
// searches on its own thread, at each rung of the ladder: 14, 16 and 18
// bits (the base rungs of three doors) and 20 (the top, at a door whose
// line is paused, as its snapshot shows). Each search's time and hashes,
// as the page measures them, are logged: reported, not checked, since a
// loaded machine is slower.
func TestWorkPage(t *testing.T) {
	headless.Chromium(t, suite)
	axe := axeSource(t)
	st := start(t)
	for _, door := range []string{"door14", "door16", "door18", "door20", "calm"} {
		st.operate(t, http.MethodPost, door+"/pause", "") // everyone waits: each solve ends on the queue page
	}
	// The top door's snapshot: the app's arrival fills it with the empty
	// line (a calm room asks no work), and the app joins; once that
	// snapshot has lapsed, the next newcomer's arrival fills it again,
	// with the app waiting in a paused line: the top rung.
	app := st.visitor()
	app.waits(t, "/door20/")
	priced(t, st, "/door20/", 20)
	br := headless.Start(t, suite, 1280, 800)

	// workPage is what the work page shows without JavaScript.
	type workPage struct {
		Main, Bits, Note, Link, Refresh, Live, Progress string
	}
	readWork := func(tab *headless.Tab) workPage {
		return headless.Eval[workPage](tab, "reading the work page", `(() => {
			const m = document.querySelector("main"), ns = document.querySelector("main noscript"), meta = document.querySelector("head noscript");
			return {Main: m.id, Bits: m.dataset.bits, Note: ns ? ns.textContent : "", Link: ns && ns.querySelector("a") ? ns.querySelector("a").getAttribute("href") : "",
				Refresh: meta ? meta.innerHTML : "",
				Live: document.getElementById("wr-work-live").getAttribute("aria-live"), Progress: document.getElementById("wr-work-progress").getAttribute("aria-label")};
		})()`)
	}
	t.Run("accessible while it works", func(t *testing.T) {
		// The top rung's page, held on screen: its going on to the line
		// is answered 204 in the browser (a navigation answered so goes
		// nowhere), so the page stays, working or done, while axe-core
		// reads it.
		app.waits(t, "/door20/")
		tab := br.Tab(t, map[string]string{"Accept-Language": "en-GB,en;q=0.9"})
		if err := chromedp.Listen(tab.Ctx, func(ev any) {
			if e, ok := ev.(*fetch.EventRequestPaused); ok {
				go chromedp.Call(tab.Ctx, fetch.FulfillRequest, fetch.FulfillRequestParams{RequestID: e.RequestID, ResponseCode: http.StatusNoContent})
			}
		}); err != nil {
			t.Fatal(err)
		}
		if _, err := chromedp.Call(tab.Ctx, fetch.Enable, fetch.EnableParams{Patterns: []*fetch.RequestPattern{{URLPattern: "*_wr_arrival=*"}}}); err != nil {
			t.Fatal(err)
		}
		if status := open(tab, st.HostURL+"/door20/item?x=1"); status != http.StatusOK {
			t.Fatalf("the work page answered %d, want 200", status)
		}
		if got := readWork(tab); got.Main != "wr-work" || got.Bits != "20" || got.Live != "polite" || got.Progress == "" {
			t.Errorf("the work page: %+v", got)
		}
		readable(t, tab, axe, "the work page")
	})

	t.Run("without JavaScript, above the lowest rung", func(t *testing.T) {
		app.waits(t, "/door20/")
		tab := br.Tab(t, map[string]string{"Accept-Language": "en-GB,en;q=0.9"})
		noScript(tab, true)
		if status := open(tab, st.HostURL+"/door20/item?x=1"); status != http.StatusOK {
			t.Fatalf("the work page answered %d, want 200", status)
		}
		got := readWork(tab)
		if got.Main != "wr-work" || got.Bits != "20" || !strings.Contains(got.Note, "needs JavaScript") || !strings.HasPrefix(got.Link, "/door20/item?x=1&_wr_arrival=") ||
			strings.Contains(got.Refresh, "url=") {
			t.Errorf("the work page without JavaScript: %+v", got)
		}
		checkProblems(t, tab)
	})

	t.Run("without JavaScript, at the lowest rung", func(t *testing.T) {
		tab := br.Tab(t, map[string]string{"Accept-Language": "en-GB,en;q=0.9"})
		noScript(tab, true)
		if status := open(tab, st.HostURL+"/calm/item?x=1"); status != http.StatusOK {
			t.Fatalf("the work page answered %d, want 200", status)
		}
		got := readWork(tab)
		if got.Bits != "14" || !strings.Contains(got.Note, "a short wait instead") || !strings.Contains(got.Refresh, "url=/calm/item?x=1&amp;_wr_arrival=") {
			t.Errorf("the work page without JavaScript at the lowest rung: %+v", got)
		}
		// Its refresh takes the browser on after the wait, into the line.
		headless.Until(tab, "the queue page after the wait", `!!document.querySelector("main#wr-queue")`, within)
		checkProblems(t, tab)
	})

	t.Run("each rung", func(t *testing.T) {
		var lines []string
		for _, rung := range []struct {
			bits     int
			throttle float64
		}{{14, 1}, {14, throttle}, {16, throttle}, {18, throttle}, {20, throttle}} {
			bits := rung.bits
			path := fmt.Sprintf("/door%d/item", bits)
			if bits == 20 {
				app.waits(t, "/door20/")
			}
			tab := br.Tab(t, map[string]string{"Accept-Language": "en-GB,en;q=0.9"})
			scripts := []string{noteWork}
			if rung.throttle > 1 {
				scripts = append(scripts, onThePagesThread)
			}
			for _, js := range scripts {
				if _, err := chromedp.Call(tab.Ctx, page.AddScriptToEvaluateOnNewDocument, page.AddScriptToEvaluateOnNewDocumentParams{Source: js}); err != nil {
					t.Fatal(err)
				}
			}
			if _, err := chromedp.Call(tab.Ctx, emulation.SetCPUThrottlingRate, emulation.SetCPUThrottlingRateParams{Rate: rung.throttle}); err != nil {
				t.Fatal(err)
			}
			open(tab, st.HostURL+path)
			// The queue page's script has run once the address has lost
			// the arrival mark.
			headless.Until(tab, "the queue page after the work", `!!document.querySelector("main#wr-queue") && !location.search`, searchWithin)
			type solved struct {
				Bits, Address, By string
				Ms, Hashes        float64
			}
			got := headless.Eval[solved](tab, "the solve", `({Bits: sessionStorage.getItem("wr-bits") || "", Address: location.pathname + location.search,
				By: sessionStorage.getItem("wr-by") || "", Ms: Number(sessionStorage.getItem("wr-ms")), Hashes: Number(sessionStorage.getItem("wr-hashes"))})`)
			by := "worker"
			if rung.throttle > 1 {
				by = "page"
			}
			if got.Bits != fmt.Sprint(bits) || got.Address != path || got.By != by || !(got.Hashes > 0) {
				t.Errorf("%s: asked %q bits, searched by %q, %v hashes, now at %q; want %d bits, by the %s, some hashes, at %s", path, got.Bits, got.By, got.Hashes, got.Address, bits, by, path)
			}
			lines = append(lines, fmt.Sprintf("%d bits, CPU %g×, by the %s: %v, %.0f hashes (%.0f expected), %.0f hashes a second", bits, rung.throttle, got.By,
				time.Duration(got.Ms*float64(time.Millisecond)).Round(time.Millisecond), got.Hashes, math.Ldexp(1, bits), got.Hashes/got.Ms*1000))
			checkProblems(t, tab)
		}
		t.Logf("the work page's searches:\n\t%s", strings.Join(lines, "\n\t"))
	})
}

// priced waits until a newcomer to path is asked bits of work: until the
// POP's snapshot, which the door prices from, shows the line as it is.
func priced(t *testing.T, st *stack, path string, bits int) {
	t.Helper()
	deadline := time.Now().Add(within)
	for {
		// A newcomer who does not follow the arrival's redirect: one
		// asked no work does not join.
		v := st.visitor()
		v.c.CheckRedirect = func(*http.Request, []*http.Request) error { return http.ErrUseLastResponse }
		p := v.ask(t, path)
		if p.Status == "work" && p.Challenge != nil && p.Challenge.Bits == bits {
			return
		}
		if time.Now().After(deadline) {
			t.Fatalf("a newcomer to %s: %+v, still not asked %d bits after %v", path, p, bits, within)
		}
		time.Sleep(time.Second)
	}
}
