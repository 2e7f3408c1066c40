// Package paneltest checks the admin panel in a real browser: headless
// Chromium (Debian's chromium), driven from Go with chromedp through
// tools/headless (as tools/suites/pagetest drives the visitors' pages), against the
// real wasm ($WASM, else bin/main.wasm) in the local stack
// (tools/devstack), with real Redis behind the Upstash stand-in. make test
// runs it against the Go and the TinyGo build.
//
// Before the browser opens, the test plays an hour of a room's traffic
// into the store in virtual time (joins, polls, operator actions through
// the API's actor, a minute now and then with no call at all), through the
// same store client the edge uses: the guest's clock is the real one, so
// the hour must be in the store before the page asks for it. Then
// TestPanelInChromium opens the panel with basic auth and checks, in the
// page as Chromium built it:
//
//   - the self-refresh (a meta refresh, and the link that turns it off);
//   - every chart: an SVG with role img, a title and a description that
//     summarise it, and its data table; no Content-Security-Policy
//     violation reported by the browser (the page has no script, the
//     charts no external asset);
//   - the numbers of the summary table and the audit log's pages;
//   - the keyboard: Tab reaches every link, field, button and table
//     summary, in document order, and each shows a focus ring;
//   - the forms, posted by clicking their buttons (so with the page's own
//     CSRF token): pause, admit 2 (now serving moves by exactly 2), a live
//     capacity (shown as the live override), a reset with a wrong
//     confirmation (a readable 400 page whose link leads back), a reset
//     with the room's name (a new epoch), each then on top of the audit
//     log, done by "panel";
//   - a phone's width (390 px): the page does not scroll sideways, and no
//     table's cell, value of "Now" or other element is cut off.
//
// It writes screenshots of the panel, on a desktop and on the phone, to
// bin/admin-panel.png and bin/admin-panel-phone.png, or where
// PANEL_SCREENSHOT says, the phone's with -phone before the .png (make
// panel-screenshot: docs/admin-panel.png and docs/admin-panel-phone.png,
// shown in docs/operations.md).
//
// Without a chromium (or chromium-browser, google-chrome) on PATH the
// test is skipped with a line that says so, unless REQUIRE_CHROMIUM is
// set, as CI sets it: there a missing browser fails.
package paneltest
