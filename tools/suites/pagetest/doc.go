// Package pagetest checks what visitors see in a real browser: headless
// Chromium (Debian's chromium, driven from Go with chromedp through
// tools/headless, as tools/suites/paneltest drives the admin panel) against the
// real wasm ($WASM, else bin/main.wasm) in the local stack
// (tools/devstack), with real Redis behind the Upstash stand-in. make test
// runs it against the Go and the TinyGo build.
//
// TestQueuePage puts three visitors in line behind the one who holds a
// room's only place, opens the queue page and checks, by the page's DOM
// contract (docs/visitors.md, "The queue page"):
//
//   - the page comes after one arrival redirect, and its address is the
//     one asked for (its script drops the arrival mark); the origin never
//     sees the mark;
//   - the place, the people ahead, the wait, the time of the update, the
//     progress bar, the polite live region, the operator's message and
//     the visible refresh link render; the language follows
//     Accept-Language (English, German);
//   - no Refresh header and no timed refresh outside <noscript> (WCAG
//     F41), and a strict Content-Security-Policy (hashes, no
//     unsafe-inline); the browser reports no CSP violation, console error
//     or exception while the page runs its script;
//   - axe-core (npm, tools/suites/pagetest/package.json) finds no WCAG 2.0, 2.1
//     or 2.2 A or AA violation on the queue page in two languages, at
//     desktop width, at 320 px (where the page must not scroll sideways)
//     and with text at 200%, nor on the busy and the closed pages;
//   - Tab reaches the refresh link, which shows a focus ring; nothing
//     moves under prefers-reduced-motion; the page names its icon (else
//     Chromium asks the room for /favicon.ico, a store call a view);
//   - an admission through the admin API moves the place without a reload
//     (a marker set on the page survives), and announces it, while polls
//     that find the place unchanged announce nothing; admitting the
//     visitor takes them to the page they asked for, on the origin;
//   - without JavaScript the page shows the refresh link and reloads
//     itself by its <noscript> refresh.
//
// It logs the page's weight in bytes and its first paint and first
// contentful paint (the performance API), and writes screenshots (desktop
// 1280×800 and phone 390×844, English and German) to $SCREENSHOTS when it
// is set (make page-screenshots: docs/queue-*.png, shown in docs/visitors.md and the README).
//
// TestCookiesBlocked opens a page of the room in Chromium with cookies
// blocked (headless.BlockCookies): one arrival redirect, then the cookies
// page (403) in the reader's language, accessible (axe-core, desktop and
// 320 px), within its Content-Security-Policy, its address without the
// arrival mark (so a reload starts afresh: one redirect again), its link
// back to the page asked for; no store call, nothing at the origin.
//
// TestOriginPageScript checks the heartbeat script on an origin page (the
// demo origin's includes it): an idle reader's session outlives the room's
// inactivity timeout while their page pings, and in a room with
// leave_beacon the departure beacon frees their place when the page goes.
//
// Without a chromium on PATH, or axe-core in node_modules, the tests are
// skipped with a line that says so, unless REQUIRE_CHROMIUM is set, as CI
// sets it: there either missing fails. Every wait is a generous deadline
// for a loaded machine, never a measure.
package pagetest
