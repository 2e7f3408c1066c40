package pagetest

import (
	"os"
	"strings"
	"testing"

	"github.com/edgequeue/waitingroom/tools/headless"
)

// axePath is axe-core's browser build, installed from npm by make
// (tools/suites/pagetest/node_modules; package.json pins the version).
const axePath = "node_modules/axe-core/axe.min.js"

// wcagTags are the rules axe runs: WCAG 2.0, 2.1 and 2.2, levels A and AA.
const wcagTags = `["wcag2a","wcag2aa","wcag21a","wcag21aa","wcag22a","wcag22aa"]`

// axeSource reads axe-core, or skips the test saying how to install it
// (fails where REQUIRE_CHROMIUM says the suite must run).
func axeSource(t *testing.T) string {
	t.Helper()
	b, err := os.ReadFile(axePath)
	if err != nil {
		if os.Getenv("REQUIRE_CHROMIUM") != "" {
			t.Fatalf("FAIL: axe-core is required here: %v (make tools/suites/pagetest/node_modules)", err)
		}
		t.Skipf("SKIPPED the accessibility check: %v (make tools/suites/pagetest/node_modules, then make test again)", err)
	}
	return string(b)
}

// violation is one rule axe found broken, and where.
type violation struct {
	ID, Impact, Help string
	Nodes            []string
}

// readable holds the tab's page, as it is now, to what every page owes
// its visitors: axe-core finds no violation at the tab's width nor at 320
// px, where it fits without scrolling sideways, and the page logged no
// problem. The tab is left at 320 px.
func readable(t *testing.T, tab *headless.Tab, axe, page string) {
	t.Helper()
	accessible(tab, axe, page)
	narrow.set(tab)
	accessible(tab, axe, page+", 320 px")
	noHorizontalScroll(tab, page+" at 320 px")
	checkProblems(t, tab)
}

// accessible runs axe-core on the tab's page, as it is now, and fails for
// every WCAG A or AA violation it reports. The script is evaluated through
// the DevTools protocol, which the page's Content-Security-Policy does not
// govern: the page itself is not changed to allow it.
func accessible(tab *headless.Tab, axe, where string) {
	tab.T.Helper()
	if !headless.Eval[bool](tab, "axe-core present", `typeof axe !== "undefined"`) {
		headless.Eval[bool](tab, "loading axe-core", axe+"\n;true")
	}
	type result struct {
		Violations []violation
		Passes     int
		Incomplete []string
	}
	r := headless.Eval[result](tab, "running axe-core", `axe.run(document, {
		runOnly: {type: "tag", values: `+wcagTags+`}, resultTypes: ["violations", "incomplete"]
	}).then(r => ({Violations: r.violations.map(v => ({ID: v.id, Impact: v.impact || "", Help: v.help,
		Nodes: v.nodes.map(n => n.target.join(" ") + ": " + n.failureSummary)})),
		Passes: r.passes.length, Incomplete: r.incomplete.map(v => v.id)}))`)
	// What axe could not decide needs a person's eye: said, not failed.
	tab.T.Logf("%s: axe-core: %d rules passed, %d violated, undecided: %q", where, r.Passes, len(r.Violations), r.Incomplete)
	for _, v := range r.Violations {
		tab.T.Errorf("%s: axe-core: %s (%s): %s\n\t%s", where, v.ID, v.Impact, v.Help, strings.Join(v.Nodes, "\n\t"))
	}
}
