package pagetest

import (
	"net/http"
	"regexp"
	"strconv"
	"strings"
	"testing"

	"github.com/chromedp/cdproto/emulation"
	"github.com/chromedp/chromedp"
	"github.com/chromedp/chromedp/kb"
	"github.com/edgequeue/waitingroom/tools/devstack"
	"github.com/edgequeue/waitingroom/tools/headless"
	"github.com/edgequeue/waitingroom/tools/upstashdev"
)

// asked is the page the visitor asked for: where admission must take them.
const asked = "/products/42?colour=blue"

// shown is what the queue page shows, read by its DOM contract's ids.
type shown struct {
	Lang, DataLang, Refresh        string
	Position, Ahead, Wait, Updated string
	UpdatedIsTime                  bool
	Datetime                       string
	Progress                       bool
	ProgressValue, ProgressMax     float64
	Live, Status                   string
	RefreshLink                    bool
	Message                        string
	MetaRefresh, NoscriptRefresh   string
}

func read(tab *headless.Tab) shown {
	tab.T.Helper()
	return headless.Eval[shown](tab, "reading the queue page", `(() => {
		const $ = id => document.getElementById(id), text = id => $(id) ? $(id).textContent.trim() : "";
		const main = document.querySelector("main#wr-queue"), p = $("wr-progress"), u = $("wr-updated"), a = $("wr-refresh");
		const meta = document.querySelector('meta[http-equiv="refresh" i]');
		const ns = [...document.querySelectorAll("head noscript")].map(n => n.innerHTML).join("");
		const nsMeta = ns.match(/http-equiv=["']?refresh["']?\s+content=["']?(\d+)/i);
		return {Lang: document.documentElement.lang, DataLang: main ? main.dataset.lang : "", Refresh: main ? main.dataset.refresh : "",
			Position: text("wr-position"), Ahead: text("wr-ahead"), Wait: text("wr-wait"), Updated: text("wr-updated"),
			UpdatedIsTime: !!u && u.tagName === "TIME", Datetime: u ? u.getAttribute("datetime") || "" : "",
			Progress: !!p && p.tagName === "PROGRESS", ProgressValue: p ? p.value : 0, ProgressMax: p ? p.max : 0,
			Live: $("wr-status") ? $("wr-status").getAttribute("aria-live") || "" : "", Status: text("wr-status"),
			RefreshLink: !!a && a.tagName === "A" && a.hasAttribute("href") && a.getClientRects().length > 0,
			Message: text("wr-message"),
			MetaRefresh: meta && !meta.closest("noscript") ? meta.content : "",
			NoscriptRefresh: meta && meta.closest("noscript") ? meta.content : (nsMeta ? nsMeta[1] : "")};
	})()`)
}

// clock24 is a time of day on 24 hours, as the edge writes it (a time
// zone's name follows); twelveHours is the AM or PM of a 12-hour clock.
var (
	clock24     = regexp.MustCompile(`^([01]\d|2[0-3]):[0-5]\d:[0-5]\d\b`)
	twelveHours = regexp.MustCompile(`(?i)\b[ap]\.?m\b`)
)

// lineUp sends n visitors to the shop's line, outside the browser.
func lineUp(t *testing.T, st *stack, n int) {
	t.Helper()
	for i := 0; i < n; i++ {
		st.visitor().waits(t, "/")
	}
}

// TestQueuePage: see the package's doc.
func TestQueuePage(t *testing.T) {
	headless.Chromium(t, suite)
	axe := axeSource(t)
	st := start(t)
	st.visitor().in(t, "/") // the only place, held for the whole run
	lineUp(t, st, 3)
	br := headless.Start(t, suite, 1280, 800)
	en := br.Tab(t, map[string]string{"Accept-Language": "en-GB,en;q=0.9"})

	t.Run("renders", func(t *testing.T) {
		en.T = t
		if status := open(en, st.HostURL+asked); status != int64(http.StatusOK) {
			t.Fatalf("the queue page answered %d", status)
		}
		s := read(en)
		t.Logf("the queue page shows %+v", s)
		// One arrival redirect, to the address marked; the page drops
		// the mark, so its polls and a reload use the address asked for.
		if r := en.Redirects(); len(r) != 1 || r[0].Status != http.StatusTemporaryRedirect {
			t.Errorf("the tab followed %v, want one 307 (the arrival redirect)", r)
		}
		if addr := headless.Eval[string](en, "the address", `location.pathname + location.search`); addr != asked {
			t.Errorf("the queue page's address is %q, want %q", addr, asked)
		}
		if s.Lang != "en" || s.DataLang != "en" {
			t.Errorf(`<html lang=%q>, <main data-lang=%q>; want "en" for Accept-Language en-GB`, s.Lang, s.DataLang)
		}
		if s.Position != "4" || s.Ahead != "3" {
			t.Errorf("place %q with %q ahead; want 4 and 3 (three visitors arrived first)", s.Position, s.Ahead)
		}
		if s.Wait == "" || !s.UpdatedIsTime || s.Datetime == "" || s.Updated == "" {
			t.Errorf("wait %q, updated %q (a <time>: %v, datetime %q): want a wait and the time of the update", s.Wait, s.Updated, s.UpdatedIsTime, s.Datetime)
		}
		if !s.Progress || s.ProgressMax <= 0 || s.ProgressValue < 0 || s.ProgressValue > s.ProgressMax {
			t.Errorf("progress: a <progress> %v, value %v of %v", s.Progress, s.ProgressValue, s.ProgressMax)
		}
		if s.Live != "polite" {
			t.Errorf(`#wr-status aria-live=%q, want "polite"`, s.Live)
		}
		if !s.RefreshLink || s.MetaRefresh != "" || s.NoscriptRefresh == "" {
			t.Errorf("refresh: a visible link %v, a timed refresh outside <noscript> %q (want none: WCAG F41), inside %q (want one)",
				s.RefreshLink, s.MetaRefresh, s.NoscriptRefresh)
		}
		if s.Message != "The summer sale is on: thank you for waiting." {
			t.Errorf("the operator's message %q", s.Message)
		}
		if n, err := strconv.Atoi(s.Refresh); err != nil || n < 1 {
			t.Errorf("data-refresh %q, want the seconds between polls", s.Refresh)
		}
		doc := lastDocument(t, en)
		if r := doc.Headers["refresh"]; r != "" {
			t.Errorf("the page's answer carries Refresh: %s: it reloads the page with scripting on (WCAG F41)", r)
		}
		csp := directives(doc.Headers["content-security-policy"])
		for name, want := range map[string]string{"default-src": "'none'", "script-src": "'sha256-", "style-src": "'sha256-",
			"connect-src": "'self'", "frame-ancestors": "'none'", "base-uri": "'none'", "form-action": "'none'"} {
			if !strings.Contains(csp[name], want) {
				t.Errorf("the page's Content-Security-Policy has %s %q, want %s", name, csp[name], want)
			}
		}
		for _, name := range []string{"script-src", "style-src"} {
			if strings.Contains(csp[name], "unsafe-") {
				t.Errorf("the page's Content-Security-Policy allows %s %s", name, csp[name])
			}
		}
	})

	// What the page costs a visitor, for the record (the machine's load
	// decides the time: reported, never asserted).
	t.Run("weight", func(t *testing.T) {
		en.T = t
		type cost struct {
			Transfer, Body, Decoded    float64
			Resources                  []string
			FirstByte, FirstPaint, FCP float64
		}
		headless.Until(en, "the first contentful paint", `performance.getEntriesByName("first-contentful-paint").length > 0`, within)
		c := headless.Eval[cost](en, "the page's cost", `(() => {
			const nav = performance.getEntriesByType("navigation")[0];
			const paint = name => (performance.getEntriesByName(name)[0] || {startTime: -1}).startTime;
			return {Transfer: nav.transferSize, Body: nav.encodedBodySize, Decoded: nav.decodedBodySize, FirstByte: nav.responseStart,
				Resources: performance.getEntriesByType("resource").filter(r => r.initiatorType !== "fetch" && !r.name.endsWith("/favicon.ico")).map(r => r.name),
				FirstPaint: paint("first-paint"), FCP: paint("first-contentful-paint")};
		})()`)
		t.Logf("the queue page: %.0f bytes of HTML (%.0f on the wire with headers); after navigation: the answer's first byte at %.0f ms (the local host runs the wasm), first paint at %.0f ms, first contentful paint at %.0f ms",
			c.Decoded, c.Transfer, c.FirstByte, c.FirstPaint, c.FCP)
		// (The browser's own request for an icon is checked at the end.)
		if len(c.Resources) > 0 {
			t.Errorf("the page loaded %q: everything must be inline", c.Resources)
		}
	})

	t.Run("accessible", func(t *testing.T) {
		en.T = t
		accessible(en, axe, "the queue page in English, desktop")
		narrow.set(en)
		accessible(en, axe, "the queue page in English, 320 px")
		noHorizontalScroll(en, "the queue page at 320 px")
		desktop.set(en)
		textSize(en, 200)
		accessible(en, axe, "the queue page in English, text at 200%")
		noHorizontalScroll(en, "the queue page with text at 200%")
		narrow.set(en)
		noHorizontalScroll(en, "the queue page at 320 px with text at 200%")
		desktop.set(en)
		textSize(en, 100)
	})

	t.Run("live", func(t *testing.T) {
		en.T = t
		before := read(en)
		headless.Eval[bool](en, "marking the page", `window.__marker = 1; true`)
		documents := len(answers(en, "Document"))
		st.admit(t, "shop", 1)
		headless.Until(en, "the place to move without a reload",
			`document.getElementById("wr-position").textContent.trim() === "3" && window.__marker === 1`, within)
		after := read(en)
		if after.Ahead != "2" || after.Updated == "" || after.Datetime == before.Datetime {
			t.Errorf("after one admission: %+v (before: %+v); want 2 ahead and the time of the update", after, before)
		}
		// The script writes the time as the edge does, hours 00 to 23
		// (English's own would be "05:29:45 AM UTC").
		if !clock24.MatchString(after.Updated) || twelveHours.MatchString(after.Updated) {
			t.Errorf("the script shows the update at %q, want 24-hour time (hh:mm:ss, no AM or PM)", after.Updated)
		}
		headless.Until(en, "the change announced", `document.getElementById("wr-status").textContent.includes("3")`, within)
		if n := len(answers(en, "Document")); n != documents {
			t.Errorf("%d pages loaded while the place moved: the page reloaded", n-documents)
		}
		// Polls that find the place unchanged announce nothing: a
		// screen reader hears the page only when the place moves.
		headless.Eval[bool](en, "watching the live region", `window.__announced = 0;
			new MutationObserver(() => window.__announced++).observe(document.getElementById("wr-status"), {childList: true, characterData: true, subtree: true});
			true`)
		polls := len(answers(en, "Fetch"))
		if !headless.Await(within, func() bool { return len(answers(en, "Fetch")) >= polls+3 }) {
			t.Fatalf("the page polled %d times in %v, want 3", len(answers(en, "Fetch"))-polls, within)
		}
		if n := headless.Eval[int](en, "the announcements", `window.__announced`); n != 0 {
			t.Errorf("the live region changed %d times over 3 polls that found the place unchanged", n)
		}
	})

	t.Run("keyboard and motion", func(t *testing.T) {
		en.T = t
		// Tab reaches the refresh link, which shows where the focus is.
		var outline string
		for range 10 {
			en.Do("Tab", chromedp.KeyEvent(kb.Tab))
			if headless.Eval[bool](en, "the focus", `document.activeElement.id === "wr-refresh"`) {
				outline = headless.Eval[string](en, "the focus ring", `(s => s.outlineStyle + " " + s.outlineWidth)(getComputedStyle(document.activeElement))`)
				break
			}
		}
		if outline == "" || strings.HasPrefix(outline, "none") || strings.HasSuffix(outline, " 0px") {
			t.Errorf("the refresh link's focus ring: %q (reached by Tab: %v)", outline, outline != "")
		}
		// A reader who asks for less motion gets none.
		if _, err := chromedp.Call(en.Ctx, emulation.SetEmulatedMedia, emulation.SetEmulatedMediaParams{
			Features: []*emulation.MediaFeature{{Name: "prefers-reduced-motion", Value: "reduce"}}}); err != nil {
			t.Fatal(err)
		}
		moving := headless.Eval[[]string](en, "what moves", `[...document.querySelectorAll("*")].filter(e => {
			const s = getComputedStyle(e);
			return s.animationName !== "none" || s.transitionDuration.split(",").some(d => parseFloat(d) > 0);
		}).map(e => e.tagName + (e.id ? "#" + e.id : ""))`)
		if len(moving) > 0 {
			t.Errorf("with prefers-reduced-motion: reduce, these still move: %q", moving)
		}
		if _, err := chromedp.Call(en.Ctx, emulation.SetEmulatedMedia, emulation.SetEmulatedMediaParams{}); err != nil {
			t.Fatal(err)
		}
	})

	t.Run("no script", func(t *testing.T) {
		tab := br.Tab(t, map[string]string{"Accept-Language": "en"})
		noScript(tab, true)
		if status := open(tab, st.HostURL+"/no-script"); status != int64(http.StatusOK) {
			t.Fatalf("the queue page answered %d", status)
		}
		s := read(tab)
		if !s.RefreshLink || s.NoscriptRefresh != s.Refresh {
			t.Errorf("without JavaScript: a visible refresh link %v, the <noscript> refresh %q (want every %s s)", s.RefreshLink, s.NoscriptRefresh, s.Refresh)
		}
		// The noscript refresh reloads the page: a second document comes.
		waitDocuments(t, tab, 2)
		checkProblems(t, tab)
	})

	t.Run("German", func(t *testing.T) {
		de := br.Tab(t, map[string]string{"Accept-Language": "de-AT,de;q=0.9,en;q=0.5"})
		if status := open(de, st.HostURL+"/de"); status != int64(http.StatusOK) {
			t.Fatalf("the queue page answered %d", status)
		}
		s := read(de)
		if s.Lang != "de" || s.DataLang != "de" {
			t.Errorf(`<html lang=%q>, <main data-lang=%q>; want "de" for Accept-Language de-AT`, s.Lang, s.DataLang)
		}
		if s.Message != "Der Sommerschlussverkauf läuft: danke fürs Warten." {
			t.Errorf("the operator's message in German %q, want the room's texts.de.message", s.Message)
		}
		accessible(de, axe, "the queue page in German")
		for _, v := range []viewport{desktop, phone} {
			v.set(de)
			screenshot(de, "de-"+v.name)
		}
		checkProblems(t, de)
	})

	t.Run("screenshots", func(t *testing.T) {
		en.T = t
		for _, v := range []viewport{desktop, phone} {
			v.set(en)
			screenshot(en, "en-"+v.name)
		}
		desktop.set(en)
	})

	// Chromium asks for /favicon.ico unless the page names an icon: a
	// request into the room, a store call for each page view. (Checked before the
	// admission: the demo origin's page names none.)
	if strings.Contains(st.logs.String(), `"path":"/favicon.ico"`) {
		t.Error(`the queue page led Chromium to ask the room for /favicon.ico: the page must name its icon (e.g. <link rel="icon" href="data:,">)`)
	}

	t.Run("admission", func(t *testing.T) {
		en.T = t
		headless.Eval[bool](en, "marking the page", `window.__marker = 1; true`)
		st.admit(t, "shop", 10)
		headless.Until(en, "the visitor to reach the page they asked for",
			`location.pathname + location.search === "`+asked+`" && document.body.textContent.includes("`+devstack.OriginReached+`")`, within)
		if body := headless.Eval[string](en, "the origin's page", `document.body.textContent`); !strings.Contains(body, asked) {
			t.Errorf("the origin's page says %q, want the address asked for, %s", body, asked)
		}
	})
	checkProblems(t, en)
	st.noMarkAtOrigin(t)

	t.Run("busy", func(t *testing.T) {
		tab := br.Tab(t, map[string]string{"Accept-Language": "en"})
		st.Upstash.SetFaults(upstashdev.Faults{Drop: true})
		status := open(tab, st.HostURL+"/busy")
		st.Upstash.SetFaults(upstashdev.Faults{})
		if status != http.StatusServiceUnavailable {
			t.Fatalf("with the store down the page answered %d, want 503 (busy)", status)
		}
		if lang := headless.Eval[string](tab, "the language", `document.documentElement.lang`); lang != "en" {
			t.Errorf("the busy page's lang %q", lang)
		}
		accessible(tab, axe, "the busy page")
		checkProblems(t, tab)
	})

	t.Run("closed", func(t *testing.T) {
		tab := br.Tab(t, map[string]string{"Accept-Language": "de"})
		if status := open(tab, st.HostURL+"/outlet/"); status != http.StatusServiceUnavailable {
			t.Fatalf("the closed room answered %d, want 503", status)
		}
		if lang := headless.Eval[string](tab, "the language", `document.documentElement.lang`); lang != "de" {
			t.Errorf("the closed page's lang %q, want de", lang)
		}
		accessible(tab, axe, "the closed page")
		checkProblems(t, tab)
	})

	t.Run("closed live", func(t *testing.T) {
		st.visitor().in(t, "/shut/") // the only place: the tab waits
		tab := br.Tab(t, map[string]string{"Accept-Language": "fr"})
		if status := open(tab, st.HostURL+"/shut/"); status != int64(http.StatusOK) {
			t.Fatalf("the queue page answered %d", status)
		}
		headless.Until(tab, "the queue page", `document.querySelector("main").id === "wr-queue"`, within)
		st.operate(t, http.MethodPatch, "shut/limits", `{"mode":"reject"}`)
		// The page's next poll meets the closed room and shows its page.
		headless.Until(tab, "the closed page", `document.querySelector("main").id === "wr-problem" && document.documentElement.lang === "fr"`, within)
		checkProblems(t, tab)
	})
}

// directives splits a Content-Security-Policy into its directives' values.
func directives(policy string) map[string]string {
	out := map[string]string{}
	for _, d := range strings.Split(policy, ";") {
		name, value, _ := strings.Cut(strings.TrimSpace(d), " ")
		out[name] = value
	}
	return out
}

// answers is the tab's answers of one type: "Document" (pages), "Fetch"
// (the page script's polls)...
func answers(tab *headless.Tab, kind string) []headless.Response {
	var out []headless.Response
	for _, r := range tab.Responses() {
		if r.Type == kind {
			out = append(out, r)
		}
	}
	return out
}

// lastDocument is the answer of the page the tab shows.
func lastDocument(t *testing.T, tab *headless.Tab) headless.Response {
	t.Helper()
	docs := answers(tab, "Document")
	if len(docs) == 0 {
		t.Fatal("the tab received no page")
	}
	return docs[len(docs)-1]
}

// waitDocuments waits until the tab has loaded n pages.
func waitDocuments(t *testing.T, tab *headless.Tab, n int) {
	t.Helper()
	if !headless.Await(within, func() bool { return len(answers(tab, "Document")) >= n }) {
		t.Fatalf("the tab loaded %d pages in %v, want %d", len(answers(tab, "Document")), within, n)
	}
}
