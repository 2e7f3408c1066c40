package pagetest

import (
	"context"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/chromedp/cdproto/emulation"
	"github.com/chromedp/cdproto/page"
	"github.com/chromedp/chromedp"
	"github.com/edgequeue/waitingroom/tools/headless"
)

// what the skip message names.
const suite = "the visitors' pages in Chromium (tools/suites/pagetest)"

// within bounds every wait for the page: a deadline, never a measure (two
// slow cores, other jobs running).
const within = 90 * time.Second

// The viewports: the desktop and the phone of the screenshots, and the
// narrowest screen a page must fit without scrolling sideways.
var (
	desktop = viewport{"desktop", 1280, 800, false}
	phone   = viewport{"phone", 390, 844, true}
	narrow  = viewport{"320px", 320, 640, true}
)

type viewport struct {
	name          string
	width, height int64
	mobile        bool
}

func (v viewport) set(tab *headless.Tab) {
	tab.T.Helper()
	opts := []chromedp.EmulateViewportOption{}
	if v.mobile {
		opts = append(opts, chromedp.EmulateMobile)
	}
	tab.Do("a "+v.name+" viewport", chromedp.EmulateViewport(v.width, v.height, opts...))
}

// textSize sets the browser's default text size as a reader who enlarges
// text does (16 px is 100%).
func textSize(tab *headless.Tab, percent int64) {
	tab.T.Helper()
	if _, err := chromedp.Call(tab.Ctx, page.SetFontSizes, page.SetFontSizesParams{FontSizes: &page.FontSizes{Standard: 16 * percent / 100}}); err != nil {
		tab.T.Fatalf("text at %d%%: %v", percent, err)
	}
}

// noScript turns the tab's JavaScript off (or on again), as a reader
// who disabled it has it.
func noScript(tab *headless.Tab, off bool) {
	tab.T.Helper()
	if _, err := chromedp.Call(tab.Ctx, emulation.SetScriptExecutionDisabled, emulation.SetScriptExecutionDisabledParams{Value: off}); err != nil {
		tab.T.Fatal(err)
	}
}

// open loads path in the tab and returns the answer's status.
func open(tab *headless.Tab, url string) int64 {
	tab.T.Helper()
	return tab.Load("opening "+url, chromedp.Navigate(url))
}

// noHorizontalScroll fails unless the page fits its viewport's width.
func noHorizontalScroll(tab *headless.Tab, where string) {
	tab.T.Helper()
	if w := headless.Eval[[]int](tab, "the page's width", `[document.documentElement.scrollWidth, document.documentElement.clientWidth]`); w[0] > w[1] {
		tab.T.Errorf("%s: the page is %d px wide in a %d px viewport: it scrolls sideways", where, w[0], w[1])
	}
}

// screenshot captures the viewport to $SCREENSHOTS/queue-<name>.png when
// SCREENSHOTS is set (make page-screenshots: docs/).
func screenshot(tab *headless.Tab, name string) {
	tab.T.Helper()
	dir := os.Getenv("SCREENSHOTS")
	if dir == "" {
		return
	}
	ctx, cancel := context.WithTimeout(tab.Ctx, within)
	defer cancel()
	png, err := chromedp.Run(ctx, chromedp.CaptureScreenshot())
	if err != nil {
		tab.T.Fatal(err)
	}
	path := filepath.Join(dir, "queue-"+name+".png")
	if err := os.MkdirAll(dir, 0o755); err != nil {
		tab.T.Fatal(err)
	}
	if err := os.WriteFile(path, png, 0o644); err != nil {
		tab.T.Fatal(err)
	}
	tab.T.Logf("screenshot: %s", path)
}

// checkProblems fails when the browser reported a console error, an
// exception or a CSP violation against the tab's pages.
func checkProblems(t *testing.T, tab *headless.Tab) {
	t.Helper()
	if p := tab.Problems(); len(p) > 0 {
		t.Errorf("the browser reported:\n%s", strings.Join(p, "\n"))
	}
}
