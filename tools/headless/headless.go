// Package headless drives headless Chromium (Debian's chromium, or another
// Chromium on PATH) from the suites that check the service's pages in a
// real browser: the admin panel's (tools/suites/paneltest) and the visitors'
// (tools/suites/pagetest). One Browser is one Chromium process; each Tab is a tab
// in a browser context of its own (its own cookies and cache), so that one
// Browser can play several visitors at once.
//
// A Tab keeps what the browser reported against the page: console errors,
// uncaught exceptions, and every Content-Security-Policy violation (a
// listener for securitypolicyviolation is put into every document the tab
// loads, before the page's own script, and reports to the console, where
// the browser's own CSP messages go too).
//
// Start's options set up the profile: BlockCookies blocks cookies, as a
// reader may. A Tab also keeps the redirects it followed (Redirects),
// which the browser reports apart from the answers.
//
// Without a Chromium on PATH a test is skipped with a line that says so,
// unless REQUIRE_CHROMIUM is set, as CI sets it: there a missing browser
// fails.
package headless

import (
	"context"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/chromedp/cdproto/network"
	"github.com/chromedp/cdproto/page"
	"github.com/chromedp/chromedp"
)

// Chromium is the path of the browser to drive. Without one it skips t
// (naming what), or fails it when REQUIRE_CHROMIUM is set.
func Chromium(t testing.TB, what string) string {
	t.Helper()
	for _, name := range []string{"chromium", "chromium-browser", "google-chrome"} {
		if path, err := exec.LookPath(name); err == nil {
			return path
		}
	}
	if os.Getenv("REQUIRE_CHROMIUM") != "" {
		t.Fatal("FAIL: Chromium is required here (REQUIRE_CHROMIUM is set) and none is on PATH: apt-get install chromium")
	}
	t.Skipf("SKIPPED %s: no chromium on PATH (apt-get install chromium, then make test again)", what)
	return ""
}

// Browser is one headless Chromium process, ended when the test ends.
type Browser struct {
	ctx context.Context
}

// Option sets up the browser's profile, in its user data directory,
// before Start starts it.
type Option func(userDataDir string) error

// BlockCookies blocks cookies for every site, as a reader who blocked them
// in the browser's settings has them: the browser keeps none and sends
// none (Chromium's cookies content setting, in the profile's preferences;
// the tabs' browser contexts inherit it).
func BlockCookies(userDataDir string) error {
	dir := filepath.Join(userDataDir, "Default")
	if err := os.MkdirAll(dir, 0o755); err != nil {
		return err
	}
	return os.WriteFile(filepath.Join(dir, "Preferences"), []byte(`{"profile":{"default_content_setting_values":{"cookies":2}}}`), 0o644)
}

// Start starts Chromium with a window of width×height pixels and the
// options' profile; what names the check for the skip message (see
// Chromium).
func Start(t testing.TB, what string, width, height int, options ...Option) *Browser {
	t.Helper()
	path := Chromium(t, what)
	dir := t.TempDir()
	for _, o := range options {
		if err := o(dir); err != nil {
			t.Fatalf("setting up %s's profile: %v", path, err)
		}
	}
	opts := append(chromedp.DefaultExecAllocatorOptions[:], chromedp.ExecPath(path), chromedp.NoSandbox,
		chromedp.UserDataDir(dir), chromedp.WindowSize(width, height))
	alloc, cancelAlloc := chromedp.NewExecAllocator(context.Background(), opts...)
	t.Cleanup(cancelAlloc)
	ctx, cancel := chromedp.NewContext(alloc)
	t.Cleanup(cancel)
	// The first action starts the process: tabs are its children.
	if err := chromedp.Do(ctx); err != nil {
		t.Fatalf("starting %s: %v", path, err)
	}
	return &Browser{ctx: ctx}
}

// Tab is one tab, in a browser context of its own, and what the browser
// reported against its pages. T is the test its failures end; a subtest
// may set it to itself.
type Tab struct {
	T   testing.TB
	Ctx context.Context

	mu        sync.Mutex
	problems  []string
	responses []Response
	redirects []Response
}

// Response is an answer the tab received: to a page (Type "Document"),
// a fetch ("Fetch"), a beacon ("Ping"), a script...
type Response struct {
	URL     string
	Status  int64
	Type    string
	Headers map[string]string // names in lower case
}

// watchCSP reports every CSP violation to the console, where the tab's
// watcher collects it; it runs before any script of the page.
const watchCSP = `document.addEventListener("securitypolicyviolation", e =>
	console.error("Content Security Policy violation: " + e.effectiveDirective + " blocked " + (e.blockedURI || "inline") + " at line " + e.lineNumber));`

// Tab opens a tab in a new browser context; every request it sends carries
// headers (nil for none).
func (b *Browser) Tab(t testing.TB, headers map[string]string) *Tab {
	t.Helper()
	ctx, cancel := chromedp.NewContext(b.ctx, chromedp.WithNewBrowserContext())
	t.Cleanup(cancel)
	tab := &Tab{T: t, Ctx: ctx}
	// Subscribed before the first page, so that none of its messages
	// is missed.
	messages := chromedp.Console(ctx)
	responses := chromedp.Events(ctx, network.ResponseReceived)
	if _, err := chromedp.Call(ctx, network.Enable, network.EnableParams{}); err != nil {
		t.Fatalf("opening a tab: %v", err)
	}
	if len(headers) > 0 {
		h := network.Headers{}
		for k, v := range headers {
			h[k] = v
		}
		if _, err := chromedp.Call(ctx, network.SetExtraHTTPHeaders, network.SetExtraHTTPHeadersParams{Headers: h}); err != nil {
			t.Fatal(err)
		}
	}
	if _, err := chromedp.Call(ctx, page.AddScriptToEvaluateOnNewDocument, page.AddScriptToEvaluateOnNewDocumentParams{Source: watchCSP}); err != nil {
		t.Fatal(err)
	}
	go func() {
		for m, err := range messages {
			if err != nil {
				return
			}
			// A page's HTTP status is the test's to check (a refusal is
			// meant to answer 400, a queue page 200 or 503); anything
			// else is a problem.
			if (m.Type == chromedp.ConsoleError && m.Source != "network") || m.IsException() || strings.Contains(m.Text, "Content Security Policy") {
				tab.mu.Lock()
				tab.problems = append(tab.problems, m.String()+" ("+m.URL+")")
				tab.mu.Unlock()
			}
		}
	}()
	// Redirects are kept as they arrive, before the browser's next
	// message is read (Listen): when a page has loaded, every redirect on
	// the way to it is there.
	if err := chromedp.Listen(ctx, func(ev any) {
		if e, ok := ev.(*network.EventRequestWillBeSent); ok && e.RedirectResponse != nil {
			r := response(e.RedirectResponse, e.Type)
			tab.mu.Lock()
			tab.redirects = append(tab.redirects, r)
			tab.mu.Unlock()
		}
	}); err != nil {
		t.Fatalf("opening a tab: %v", err)
	}
	go func() {
		for ev, err := range responses {
			if err != nil {
				return
			}
			r := response(ev.Response, ev.Type)
			tab.mu.Lock()
			tab.responses = append(tab.responses, r)
			tab.mu.Unlock()
		}
	}()
	return tab
}

// response is what a Tab keeps of an answer of type kind.
func response(resp *network.Response, kind network.ResourceType) Response {
	r := Response{URL: resp.URL, Status: resp.Status, Type: string(kind), Headers: map[string]string{}}
	for k, v := range resp.Headers {
		r.Headers[strings.ToLower(k)] = fmt.Sprint(v)
	}
	return r
}

// Redirects returns the redirects the tab followed so far, in order
// (Responses holds none: the browser reports them as it sends the next
// request).
func (tab *Tab) Redirects() []Response {
	tab.mu.Lock()
	defer tab.mu.Unlock()
	return append([]Response(nil), tab.redirects...)
}

// Responses returns the answers the tab received so far, in order.
func (tab *Tab) Responses() []Response {
	tab.mu.Lock()
	defer tab.mu.Unlock()
	return append([]Response(nil), tab.responses...)
}

// Problems returns what the browser reported since the last call, and
// forgets it.
func (tab *Tab) Problems() []string {
	tab.mu.Lock()
	defer tab.mu.Unlock()
	p := tab.problems
	tab.problems = nil
	return p
}

// Do runs actions on the page; any failure ends the test.
func (tab *Tab) Do(what string, actions ...chromedp.Action[chromedp.Void]) {
	tab.T.Helper()
	ctx, cancel := context.WithTimeout(tab.Ctx, 90*time.Second)
	defer cancel()
	if err := chromedp.Do(ctx, actions...); err != nil {
		tab.T.Fatalf("%s: %v", what, err)
	}
}

// Load runs actions that lead to a new page (a click on a link or a
// button, a navigation) and returns the page's HTTP status.
func (tab *Tab) Load(what string, actions ...chromedp.Action[chromedp.Void]) int64 {
	tab.T.Helper()
	ctx, cancel := context.WithTimeout(tab.Ctx, 90*time.Second)
	defer cancel()
	resp, err := chromedp.RunResponse(ctx, actions...)
	if err != nil {
		tab.T.Fatalf("%s: %v", what, err)
	}
	return resp.Status
}

// Eval evaluates a JavaScript expression on the tab's page (a promise is
// awaited).
func Eval[T any](tab *Tab, what, js string) T {
	tab.T.Helper()
	ctx, cancel := context.WithTimeout(tab.Ctx, 60*time.Second)
	defer cancel()
	v, err := chromedp.Run(ctx, chromedp.Evaluate[T](js, chromedp.EvalAwaitPromise))
	if err != nil {
		tab.T.Fatalf("%s: %v", what, err)
	}
	return v
}

// Until evaluates the JavaScript expression js on the page until it is
// true (see Await). The page may navigate meanwhile: an evaluation that
// fails on the way is tried again.
func Until(tab *Tab, what, js string, within time.Duration) {
	tab.T.Helper()
	var last error
	ok := Await(within, func() bool {
		ctx, cancel := context.WithTimeout(tab.Ctx, 10*time.Second)
		defer cancel()
		var ok bool
		ok, last = chromedp.Run(ctx, chromedp.Evaluate[bool](js))
		return last == nil && ok
	})
	if !ok {
		tab.T.Fatalf("waited %v for %s (%s); last error: %v", within, what, js, last)
	}
}

// Await tries cond every tenth of a second until it holds, for at most
// within (a deadline, not a measure: generous, for a loaded machine), and
// says whether it held.
func Await(within time.Duration, cond func() bool) bool {
	deadline := time.Now().Add(within)
	for {
		if cond() {
			return true
		}
		if time.Now().After(deadline) {
			return false
		}
		time.Sleep(100 * time.Millisecond)
	}
}
