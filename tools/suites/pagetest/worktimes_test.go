package pagetest

import (
	"crypto/rand"
	"encoding/hex"
	"encoding/json"
	"net/http"
	"net/http/httptest"
	"os"
	"strconv"
	"testing"

	"github.com/chromedp/cdproto/emulation"
	"github.com/chromedp/cdproto/page"
	"github.com/chromedp/chromedp"
	"github.com/edgequeue/waitingroom/templates"
	"github.com/edgequeue/waitingroom/tools/benchreport"
	"github.com/edgequeue/waitingroom/tools/headless"
)

// TestWorkSearchTimes measures the work page's search for make bench-work
// and writes the times to the file WORK_TIMES names (benchreport.WorkTimes);
// without it, it is skipped. The page is the edge's own (templates.Work,
// its policy), served by the test with a fresh seed each time, its way on
// answered 204 so that it stays to be read; WORK_SEARCHES searches a rung
// (15), at each rung from 14 to 20 bits: in its worker on this machine's
// CPU, and on the page's own thread throttled 4× (DevTools throttles that
// thread alone), as a mid-range phone runs it.
func TestWorkSearchTimes(t *testing.T) {
	out := os.Getenv("WORK_TIMES")
	if out == "" {
		t.Skip("WORK_TIMES names no file to write: make bench-work sets it")
	}
	searches := 15
	if n, err := strconv.Atoi(os.Getenv("WORK_SEARCHES")); err == nil && n > 0 {
		searches = n
	}
	headless.Chromium(t, suite)
	work, err := templates.Work.Default()
	if err != nil {
		t.Fatal(err)
	}
	const theme = ":root{--wr-brand:#1a56db}"
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.URL.Path == "/next" {
			w.WriteHeader(http.StatusNoContent)
			return
		}
		w.Header().Set("Content-Type", "text/html; charset=utf-8")
		w.Header().Set("Content-Security-Policy", work.Policy(theme))
		w.Write([]byte(work.Render(map[string]string{"lang": "en", "title": "Joining the line", "theme": theme, "seed": r.URL.Query().Get("seed"),
			"bits": r.URL.Query().Get("bits"), "next_url": "/next", "cookie": "wr_bench_work"})))
	}))
	t.Cleanup(srv.Close)
	br := headless.Start(t, suite, 1280, 800)
	version := headless.Eval[string](br.Tab(t, nil), "the browser's version", `navigator.userAgent.match(/Chrom(e|ium)\/[\d.]+/)[0]`)
	times := benchreport.WorkTimes{Browser: version}
	for _, throttle := range []float64{1, throttle} {
		tab := br.Tab(t, nil)
		if throttle > 1 {
			if _, err := chromedp.Call(tab.Ctx, page.AddScriptToEvaluateOnNewDocument, page.AddScriptToEvaluateOnNewDocumentParams{Source: onThePagesThread}); err != nil {
				t.Fatal(err)
			}
		}
		if _, err := chromedp.Call(tab.Ctx, emulation.SetCPUThrottlingRate, emulation.SetCPUThrottlingRateParams{Rate: throttle}); err != nil {
			t.Fatal(err)
		}
		run := benchreport.WorkRun{Throttle: throttle}
		for bits := 14; bits <= 20; bits += 2 {
			rung := benchreport.WorkRung{Bits: bits}
			for range searches {
				var seed [16]byte
				rand.Read(seed[:])
				open(tab, srv.URL+"/work?bits="+strconv.Itoa(bits)+"&seed="+hex.EncodeToString(seed[:]))
				headless.Until(tab, "the search", `!!document.getElementById("wr-work").dataset.ms`, searchWithin)
				got := headless.Eval[[2]float64](tab, "its time", `[Number(document.getElementById("wr-work").dataset.ms), Number(document.getElementById("wr-work").dataset.hashes)]`)
				rung.Ms, rung.Hashes = append(rung.Ms, got[0]), append(rung.Hashes, got[1])
			}
			t.Logf("%s× throttled, %d bits: %v ms", strconv.FormatFloat(throttle, 'f', -1, 64), bits, rung.Ms)
			run.Rungs = append(run.Rungs, rung)
		}
		times.Runs = append(times.Runs, run)
		checkProblems(t, tab)
	}
	b, err := json.Marshal(times)
	if err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(out, b, 0o644); err != nil {
		t.Fatal(err)
	}
}
