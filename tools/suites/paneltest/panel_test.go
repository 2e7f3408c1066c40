package paneltest

import (
	"context"
	"encoding/base64"
	"io"
	"net/http"
	"os"
	"path/filepath"
	"regexp"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/chromedp/chromedp"
	"github.com/chromedp/chromedp/kb"
	"github.com/edgequeue/waitingroom/control"
	"github.com/edgequeue/waitingroom/tools/devstack"
	"github.com/edgequeue/waitingroom/tools/headless"
)

// browser is a headless Chromium tab on the panel, sending the admin
// password with every request.
type browser struct {
	*headless.Tab
	base string // the panel's URL
}

func openBrowser(t *testing.T, st *devstack.Stack) *browser {
	t.Helper()
	auth := "Basic " + base64.StdEncoding.EncodeToString([]byte("operator:"+adminPassword))
	tab := headless.Start(t, "the admin panel's browser check", 1280, 2000).Tab(t, map[string]string{"Authorization": auth})
	return &browser{Tab: tab, base: st.HostURL + "/_wr/admin"}
}

// eval evaluates a JavaScript expression on the page.
func eval[T any](b *browser, what, js string) T {
	b.T.Helper()
	return headless.Eval[T](b.Tab, what, js)
}

// open loads the panel at query and fails unless it answers 200.
func (b *browser) open(query string) {
	b.T.Helper()
	if status := b.Load("opening the panel", chromedp.Navigate(b.base+query)); status != http.StatusOK {
		b.T.Fatalf("the panel%s answered %d", query, status)
	}
}

// submit clicks the button of the room's form posting to action, after
// setting its fields (CSS selector → value), and returns the status of
// the page it leads to.
func (b *browser) submit(room int, action string, fields map[string]string) int64 {
	b.T.Helper()
	form := "#room-" + strconv.Itoa(room) + ` form[action*="/` + action + `"]`
	var steps []chromedp.Action[chromedp.Void]
	for sel, v := range fields {
		steps = append(steps, chromedp.Clear(chromedp.CSS(sel)), chromedp.SendKeys(chromedp.CSS(sel), v))
	}
	steps = append(steps, chromedp.Click(chromedp.CSS(form+" button"), chromedp.NodeVisible))
	return b.Load(action+" in room "+strconv.Itoa(room), steps...)
}

// row is the summary table's cells for a room: name, mode, waiting, now
// serving, issued, active, called, capacity, rate, state.
type row []string

func (b *browser) summary(room string) row {
	b.T.Helper()
	rows := eval[map[string][]string](b, "reading the summary", `(() => {
		const out = {};
		for (const tr of document.querySelectorAll("#rooms tbody tr")) {
			const cells = [...tr.cells].map(c => c.textContent);
			out[cells[0]] = cells;
		}
		return out;
	})()`)
	r, ok := rows[room]
	if !ok || len(r) != 10 {
		b.T.Fatalf("no summary row for room %s: %q", room, rows)
	}
	return r
}

func (r row) num(t *testing.T, col int) int {
	t.Helper()
	n, err := strconv.Atoi(r[col])
	if err != nil {
		t.Fatalf("column %d of %q is not a number", col, r)
	}
	return n
}

// audit is the audit log's rows on the page: time, room, action, by,
// before, after.
func (b *browser) audit() [][]string {
	b.T.Helper()
	return eval[[][]string](b, "reading the audit log", `[...document.querySelectorAll("#audit tbody tr")].map(tr => [...tr.cells].map(c => c.textContent))`)
}

// cutOff lists what the viewport or its own box cuts off: a table's cell
// or a value of "Now" wider than its box (its text overflows), and any
// element shown past the viewport's right or left edge. Hidden elements
// (charts' closed data tables) and what is clipped to be read by screen
// readers only (.vh, the tables' heads on a phone) are passed over.
const cutOff = `(() => {
	const width = document.scrollingElement.clientWidth, out = [];
	const name = el => el.tagName.toLowerCase() + (el.id ? "#" + el.id : "") + " " + JSON.stringify(el.textContent.trim().slice(0, 40));
	const clipped = el => {
		for (let e = el; e; e = e.parentElement) {
			if (getComputedStyle(e).clip !== "auto") return true;
		}
		return false;
	};
	for (const el of document.body.querySelectorAll("*")) {
		if (el.getClientRects().length === 0 || clipped(el)) continue;
		const r = el.getBoundingClientRect();
		if (r.right > width + 0.5 || r.left < -0.5) {
			out.push(name(el) + ": from " + Math.round(r.left) + " to " + Math.round(r.right) + " px, past the viewport's " + width);
		} else if (el.matches("td, th, dd") && el.scrollWidth > el.clientWidth + 1) {
			out.push(name(el) + ": " + el.scrollWidth + " px of text in a " + el.clientWidth + " px box");
		}
	}
	return out;
})()`

// screenshot writes the viewport to bin/admin-panel<suffix>.png, or
// beside where PANEL_SCREENSHOT says: its name with suffix before the
// .png (the phone's, "-phone", beside the desktop's).
func (b *browser) screenshot(t *testing.T, suffix string) {
	ctx, cancel := context.WithTimeout(b.Ctx, 60*time.Second)
	defer cancel()
	png, err := chromedp.Run(ctx, chromedp.CaptureScreenshot())
	if err != nil {
		t.Fatal(err)
	}
	path := filepath.Join("..", "..", "..", "bin", "admin-panel.png")
	if p := os.Getenv("PANEL_SCREENSHOT"); p != "" {
		path = p
	}
	path = strings.TrimSuffix(path, ".png") + suffix + ".png"
	if err := os.MkdirAll(filepath.Dir(path), 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(path, png, 0o644); err != nil {
		t.Fatal(err)
	}
	t.Logf("the panel's screenshot: %s", path)
}

// TestPanelInChromium: see the package's doc.
func TestPanelInChromium(t *testing.T) {
	headless.Chromium(t, "the admin panel's browser check") // skip before starting anything
	st, logs := start(t)
	seed(t, st, time.Now())
	visit(t, st, "/", 4)
	visit(t, st, "/sale/", 2)
	b := openBrowser(t, st)
	defer func() {
		if t.Failed() {
			t.Logf("the stack's log:\n%s", logs.String())
		}
	}()

	t.Run("refresh", func(t *testing.T) {
		b.T = t
		b.open("")
		if got := eval[string](b, "the refresh", `document.querySelector('meta[http-equiv="refresh"]')?.content ?? ""`); got != "30" {
			t.Fatalf("meta refresh %q, want 30", got)
		}
		if !strings.Contains(eval[string](b, "the header", `document.querySelector("header").textContent`), "Updated at") {
			t.Fatal(`no "Updated at" in the header`)
		}
		b.Load("turning the refresh off", chromedp.Click(chromedp.CSS(`header a[href$="refresh=off"]`), chromedp.NodeVisible))
		if got := eval[bool](b, "the refresh", `document.querySelector('meta[http-equiv="refresh"]') === null && location.search === "?refresh=off"`); !got {
			t.Fatal("after turning the refresh off, the page still refreshes itself or is not at ?refresh=off")
		}
	})

	t.Run("charts", func(t *testing.T) {
		b.T = t
		type chart struct {
			Room, Title, Desc string
			InSVG             bool
			Rows              int
			Width             float64
			Marks             int
		}
		charts := eval[[]chart](b, "reading the charts", `[...document.querySelectorAll('svg[role="img"]')].map(s => {
			const [t, d] = (s.getAttribute("aria-labelledby") || "").split(" ").map(id => document.getElementById(id));
			const fig = s.closest("figure");
			return {Room: s.closest("section").id, Title: t ? t.textContent : "", Desc: d ? d.textContent : "",
				InSVG: !!t && !!d && s.contains(t) && s.contains(d),
				Rows: fig.querySelector("details > summary") ? fig.querySelectorAll("details tbody tr").length : -1,
				Width: s.getBoundingClientRect().width, Marks: s.querySelectorAll("path, circle").length};
		})`)
		if len(charts) != 16 {
			t.Fatalf("%d charts, want 8 for each of the 2 rooms", len(charts))
		}
		for i, c := range charts {
			wantRows := 60
			if i%8 >= 4 {
				wantRows = 144 // the day, ten minutes a row
			}
			if c.Title == "" || c.Desc == "" || !c.InSVG || c.Rows != wantRows || c.Width < 300 {
				t.Errorf("chart %d of %s: %+v; want a title and a description inside the SVG, a table of %d rows, and a width on screen", i, c.Room, c, wantRows)
			}
		}
		hourFlow := regexp.MustCompile(`^Joins and admissions, per minute, from \d\d:\d\d to \d\d:\d\d UTC\. joins: latest \d+, highest (\d+), total (\d+)\. admissions: .* (\d+) of 60 periods have no data\.$`)
		m := hourFlow.FindStringSubmatch(charts[0].Desc)
		if m == nil || m[1] == "0" || m[3] == "0" {
			t.Errorf("the shop's joins of the last hour: %q; want joins, and the quiet minutes as gaps", charts[0].Desc)
		}
		for _, c := range charts[:8] {
			if c.Marks == 0 {
				t.Errorf("the shop's chart %q draws nothing: %s", c.Title, c.Desc)
			}
		}
	})

	t.Run("stats", func(t *testing.T) {
		b.T = t
		r := b.summary("shop")
		if r[1] != "fifo" || r[7] != "60" || r[8] != "20" || r[9] != "admitting" {
			t.Errorf("the shop's row %q; want fifo, capacity 60, rate 20, admitting", r)
		}
		if issued := r.num(t, 4); issued < 100 {
			t.Errorf("the shop has issued %d tickets, after the seeded hour's", issued)
		}
		dl := eval[string](b, "the shop's numbers", `document.querySelector("#room-0 dl").textContent`)
		for _, s := range []string{"Active sessions", "Wait of those called in the last 5 minutes", "Store latency of this reading"} {
			if !strings.Contains(dl, s) {
				t.Errorf("no %q in the shop's numbers: %s", s, dl)
			}
		}
	})

	// What a panel page costs, for the record (not a test: the machine's
	// load decides it).
	t.Run("cost", func(t *testing.T) {
		req, err := http.NewRequest(http.MethodGet, b.base+"?refresh=off", nil)
		if err != nil {
			t.Fatal(err)
		}
		req.SetBasicAuth("operator", adminPassword)
		st.StoreCalls()
		began := time.Now()
		resp, err := http.DefaultClient.Do(req)
		if err != nil {
			t.Fatal(err)
		}
		body, err := io.ReadAll(resp.Body)
		resp.Body.Close()
		if err != nil || resp.StatusCode != http.StatusOK {
			t.Fatalf("the panel: %d %v", resp.StatusCode, err)
		}
		t.Logf("the panel of 2 rooms: %d bytes in %v, %d store calls", len(body), time.Since(began).Round(time.Millisecond), st.StoreCalls())
	})

	t.Run("screenshot", func(t *testing.T) {
		b.T = t
		b.Do("sizing the window", chromedp.EmulateViewport(1280, 2300))
		b.screenshot(t, "")
	})

	// A phone (390 px, as a mobile browser lays it out): the page must not
	// scroll sideways, nor cut off a table's cell or a value of "Now".
	t.Run("phone", func(t *testing.T) {
		b.T = t
		b.Do("a phone's viewport", chromedp.EmulateViewport(390, 844, chromedp.EmulateMobile))
		defer b.Do("the desktop's viewport again", chromedp.EmulateViewport(1280, 2300))
		b.open("?refresh=off")
		if w := eval[[]int](b, "the page's width", `[document.scrollingElement.scrollWidth, document.scrollingElement.clientWidth]`); w[0] > w[1] {
			t.Errorf("the panel is %d px wide in a %d px viewport: it scrolls sideways", w[0], w[1])
		}
		if cut := eval[[]string](b, "what is cut off", cutOff); len(cut) > 0 {
			t.Errorf("%d elements cut off at 390 px, among them:\n%s", len(cut), strings.Join(cut[:min(len(cut), 20)], "\n"))
		}
		// Tall enough for the rooms and the first room's numbers.
		b.Do("a taller phone", chromedp.EmulateViewport(390, 1800, chromedp.EmulateMobile))
		b.screenshot(t, "-phone")
	})

	t.Run("audit pages", func(t *testing.T) {
		b.T = t
		rows := b.audit()
		if len(rows) != 20 || rows[0][2] != "resume" || !strings.HasPrefix(rows[0][3], "api "+seedClient) {
			t.Fatalf("the audit log's first page: %q; want 20 entries, the seeded resume on top, by the API", rows)
		}
		b.Load("the older entries", chromedp.Click(chromedp.CSS(`#audit a[rel="next"]`), chromedp.NodeVisible))
		older := b.audit()
		if len(older) == 0 || older[0][0] >= rows[19][0] || !strings.Contains(eval[string](b, "the URL", "location.href"), "refresh=off&audit=") {
			t.Fatalf("the audit log's second page: %q at %s; want older entries, with the refresh still off", older, eval[string](b, "the URL", "location.href"))
		}
		b.Load("the newest entries", chromedp.Click(chromedp.CSS(`#audit a[rel="first"]`), chromedp.NodeVisible))
		if again := b.audit(); len(again) != 20 || strings.Join(again[0], "|") != strings.Join(rows[0], "|") {
			t.Fatalf("back at the newest entries: %q, want the first page again", again)
		}
	})

	t.Run("keyboard", func(t *testing.T) {
		b.T = t
		b.open("?refresh=off")
		n := eval[int](b, "numbering the controls", `(() => {
			const all = [...document.querySelectorAll('a[href], button, input:not([type="hidden"]), select, summary')];
			all.forEach((el, i) => el.dataset.order = i);
			return all.length;
		})()`)
		// The header's links (refresh, two rooms, the audit log), each
		// room's fields and buttons (one form an operator action) and
		// chart tables, the audit log's pager.
		forms := 0
		for _, a := range control.Actions() {
			forms += len(a.Fields) + 1
		}
		if want := 4 + 2*(forms+8) + 1; n != want {
			t.Fatalf("%d controls on the page, want %d", n, want)
		}
		type focus struct {
			Order           string
			Outline, Offset string
		}
		for i := 0; i < n; i++ {
			b.Do("Tab", chromedp.KeyEvent(kb.Tab))
			f := eval[focus](b, "the focused control", `(() => {
				const el = document.activeElement, s = getComputedStyle(el);
				return {Order: el.dataset.order ?? el.tagName, Outline: s.outlineStyle + " " + s.outlineWidth, Offset: s.outlineOffset};
			})()`)
			if f.Order != strconv.Itoa(i) {
				t.Fatalf("Tab %d reached control %s, want control %d: the order skips or jumps", i+1, f.Order, i)
			}
			if f.Outline != "solid 3px" {
				t.Fatalf("control %d shows no focus ring: outline %q", i, f.Outline)
			}
		}
	})

	t.Run("controls", func(t *testing.T) {
		b.T = t
		b.open("?refresh=off")
		epoch := eval[string](b, "the epoch", `[...document.querySelectorAll("#room-0 dt")].find(dt => dt.textContent === "Line epoch").nextElementSibling.textContent`)
		if status := b.submit(0, "pause", nil); status != http.StatusOK {
			t.Fatalf("pause: %d", status)
		}
		if url := eval[string](b, "the URL", "location.href"); !strings.HasSuffix(url, "/_wr/admin?refresh=off#room-0") {
			t.Errorf("after pause the browser is at %s, want the room on the panel with the refresh off", url)
		}
		before := b.summary("shop")
		if before[9] != "paused" {
			t.Fatalf("after pause the shop is %q", before[9])
		}
		if status := b.submit(0, "admit", map[string]string{"#room-0-n": "2"}); status != http.StatusOK {
			t.Fatalf("admit 2: %d", status)
		}
		// Now serving counts positions: tickets whose holders stopped
		// polling (the played traffic's, as real time passes) are passed
		// over on the way to the two called, so it moves by at least 2.
		after := b.summary("shop")
		if got, want := after.num(t, 3), before.num(t, 3)+2; got < want {
			t.Errorf("now serving %d after admit 2 in a paused room, want at least %d", got, want)
		}
		if status := b.submit(0, "limits", map[string]string{"#room-0-max_active_users": "9"}); status != http.StatusOK {
			t.Fatalf("a live capacity: %d", status)
		}
		if r := b.summary("shop"); r[7] != "9" {
			t.Errorf("capacity %q after setting it live to 9", r[7])
		}
		live := eval[[]string](b, "the limits table", `[...document.querySelectorAll("#room-0 table tbody tr")[0].cells].map(c => c.textContent)`)
		if strings.Join(live, "|") != "Capacity (max_active_users)|60|9|9" {
			t.Errorf("the capacity's row %q, want configured 60, live 9, in force 9", live)
		}

		if status := b.submit(0, "reset", map[string]string{"#room-0-confirm": "shopp"}); status != http.StatusBadRequest {
			t.Fatalf("a reset confirmed with the wrong name: %d, want 400", status)
		}
		if msg := eval[string](b, "the refusal", `document.querySelector("main").textContent`); !strings.Contains(msg, `the confirmation must be the room's name, "shop", exactly`) {
			t.Errorf("the refusal says %q", msg)
		}
		if status := b.Load("back to the panel", chromedp.Click(chromedp.CSS(`main a[href*="/_wr/admin"]`), chromedp.NodeVisible)); status != http.StatusOK {
			t.Fatalf("the way back: %d", status)
		}
		if got := eval[string](b, "the epoch", `[...document.querySelectorAll("#room-0 dt")].find(dt => dt.textContent === "Line epoch").nextElementSibling.textContent`); got != epoch {
			t.Fatalf("the epoch moved from %s to %s without a reset", epoch, got)
		}
		if status := b.submit(0, "reset", map[string]string{"#room-0-confirm": "shop"}); status != http.StatusOK {
			t.Fatalf("a reset confirmed with the room's name: %d", status)
		}
		if got := eval[string](b, "the epoch", `[...document.querySelectorAll("#room-0 dt")].find(dt => dt.textContent === "Line epoch").nextElementSibling.textContent`); got == epoch {
			t.Errorf("the epoch is still %s after the reset", got)
		}
		if status := b.submit(0, "clear", nil); status != http.StatusOK {
			t.Fatalf("clear: %d", status)
		}
		if status := b.submit(0, "resume", nil); status != http.StatusOK {
			t.Fatalf("resume: %d", status)
		}
		if r := b.summary("shop"); r[7] != "60" || r[9] != "admitting" {
			t.Errorf("after clear and resume the shop's row is %q, want capacity 60 again, admitting", r)
		}
		rows := b.audit()
		var did []string
		for _, r := range rows[:min(6, len(rows))] {
			if r[1] != "shop" || !regexp.MustCompile(`^panel [0-9a-f]{16}$`).MatchString(r[3]) {
				t.Errorf("audit entry %q: want the shop, by the panel and a client hash", r)
			}
			did = append(did, r[2])
		}
		if got := strings.Join(did, ", "); got != "resume, clear, reset, limits, admit 2, pause" {
			t.Errorf("the audit log's newest entries: %s; want resume, clear, reset, limits, admit 2, pause", got)
		}
	})

	if p := b.Problems(); len(p) > 0 {
		t.Errorf("the browser reported:\n%s", strings.Join(p, "\n"))
	}
}
