package pagetest

import (
	"net/http"
	"strings"
	"testing"

	"github.com/edgequeue/waitingroom/tools/headless"
)

// TestCookiesBlocked: Chromium with cookies blocked, as a reader may set
// it, meets one arrival redirect and then the page that asks for cookies
// (403), in the reader's language, not "too many redirects". The page is
// accessible (axe-core, at desktop width and at 320 px), runs within its
// Content-Security-Policy, drops the arrival mark from its address (a
// reload, once cookies are allowed, then starts afresh) and links back to
// the page asked for. None of it costs a store call or reaches the
// origin.
func TestCookiesBlocked(t *testing.T) {
	headless.Chromium(t, suite)
	axe := axeSource(t)
	st := start(t)
	br := headless.Start(t, suite, 1280, 800, headless.BlockCookies)
	type page struct {
		Main, Lang, Title, Address, Retry string
		// Header: the page names the Waiting-Room-Pass header, a note
		// for apps that a visitor cannot act on (apps ask for JSON,
		// whose answer names it).
		Header bool
	}
	tests := []struct {
		name, languages, path string
		want                  page
	}{
		{"English", "en-GB,en;q=0.9", asked, page{"wr-cookies", "en", "Please allow cookies", asked, asked, false}},
		{"German", "de-AT,de;q=0.9", "/de/?x=1", page{"wr-cookies", "de", "Bitte Cookies erlauben", "/de/?x=1", "/de/?x=1", false}},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			tab := br.Tab(t, map[string]string{"Accept-Language": tc.languages})
			st.StoreCalls()
			for load := 1; load <= 2; load++ {
				// The second load is the reader's reload of the page.
				if status := open(tab, st.HostURL+tc.path); status != http.StatusForbidden {
					t.Fatalf("load %d: the page answered %d, want 403 (the cookies page)", load, status)
				}
				if r := tab.Redirects(); len(r) != load || r[load-1].Status != http.StatusTemporaryRedirect {
					t.Fatalf("load %d: the tab followed %d redirects in all (%v), want one a load, a 307", load, len(r), r)
				}
				got := headless.Eval[page](tab, "reading the page", `({Main: document.querySelector("main").id, Lang: document.documentElement.lang,
					Title: document.querySelector("h1").textContent, Address: location.pathname + location.search,
					Retry: document.getElementById("wr-retry").getAttribute("href"),
					Header: document.body.innerText.includes("Waiting-Room-Pass")})`)
				if got != tc.want {
					t.Errorf("load %d: the page shows %+v, want %+v", load, got, tc.want)
				}
			}
			readable(t, tab, axe, "the cookies page in "+tc.name)
			if n := st.StoreCalls(); n != 0 {
				t.Errorf("%d store calls, want none", n)
			}
		})
	}
	if !strings.Contains(st.logs.String(), "no cookies: the arrival pass given") {
		t.Error("no log line says why the cookies page was shown")
	}
	if seen := st.OriginRequests(); len(seen) != 0 {
		t.Errorf("the origin saw %d requests, want none", len(seen))
	}
}
