// Package attack is the list of what the waiting room withstands. Each
// test attacks the real wasm ($WASM, else bin/main.wasm) in the real local
// stack (tools/devstack: the local Compute host, Redis behind the Upstash
// stand-in, and a recording origin) over real HTTP, as a visitor would;
// different clients are different loopback addresses (127.x.y.z), which
// the host reports as the client's IP. make test runs it against the Go
// and the TinyGo build.
//
// # One visitor, one place (line_test.go)
//
//   - TestAFirstRequestEarnsOnlyAnArrivalPass: a request without a pass is
//     answered 307 back to the same URL (marked: see tools/suites/e2e's
//     cookies_test.go for the mark), setting the room's cookie to a
//     signed "arrival" pass, with no store call and nothing at the origin;
//     coming back with it joins the line (a ticket or a session).
//   - TestAReplayedArrivalPassYieldsOneTicket: one arrival pass replayed
//     by 20 clients at once yields one ticket number for all of them, and
//     one place in the line.
//   - TestACookielessFloodTakesNoPlace: 500 cookieless requests, one per
//     connection from 20 addresses, make no store call and reach no
//     origin; a real visitor afterwards gets the free place (or ticket 1).
//   - TestOneClientCannotJoinMoreThanItsLimitPerMinute: one address that
//     joins again and again (keeping cookies) is let in 30 times in a
//     minute (joins_per_ip_per_minute's default), then answered 429 with
//     Retry-After and a page saying why; another address still joins.
//
// # The path and the host (paths_test.go)
//
//   - TestHostilePathsAndHostsCannotWalkPastTheRoom: over 40 requests, each
//     on its own connection with its target sent byte for byte, while the
//     room's one place is taken: dot segments plain, percent-encoded and
//     mixed, encoded slashes and backslashes, raw backslashes, double
//     slashes, NUL, invalid escapes, an absolute-form target and a query,
//     past a /static/ bypass of a whole-site room; /./tickets/buy and its
//     kin past a /tickets/ room; other cases of a case_insensitive_paths
//     room's path; and a room's host in upper case, with a trailing dot or
//     a port. Each is queued or answered 400; none reaches the origin.
//
// # Sessions under real browsers (sessions_test.go)
//
//   - TestTwoTabsClaimingOneTicketShareOneSession: two concurrent polls of
//     a ticket just called are both admitted with the same session, and
//     the line counts one more active visitor, not two.
//   - TestACopiedSessionPassIsSentToTheLine: a session pass copied to a
//     browser with another User-Agent (bind_session's default) is sent to
//     the line, not the origin; its owner still gets in.
//   - TestACopiedSessionPassFromAnotherNetworkIsSentToTheLine: with
//     bind_session "ip_prefix", the pass from another /24 is sent to the
//     line; from another address of the same /24 it gets in.
//   - TestBindSessionNoneLetsACopiedPassThrough: the trade-off of
//     bind_session "none", documented: a copied pass gets in.
//   - TestACrossSiteBeaconCannotEndASession: a departure beacon with
//     Sec-Fetch-Site cross-site, or an Origin other than the host (or
//     "null"), is refused with 403, and the session stays active; the
//     room's own same-origin beacon still ends it.
//   - TestAnEndedSessionsOldPassCannotOvershootCapacity: with one place,
//     a visitor who left (beacon) or was revoked (origin command) and
//     replays the old pass never gets in once the next visitor is in.
//
// # Headers, pages and logs (headers_test.go)
//
//   - TestVisitorsCannotSendTheRoomsHeadersToTheOrigin: a visitor's
//     Waiting-Room-Fail-Open and Waiting-Room-Command never reach the
//     origin, on an admitted request or a bypassed one.
//   - TestEveryEdgePageForbidsSniffingFramingAndReferrers: the queue,
//     busy, problem (origin down, bad request), closed and admin pages
//     carry X-Content-Type-Options nosniff, Referrer-Policy no-referrer or
//     same-origin, and a Content-Security-Policy (with frame-ancestors
//     'none' on admin).
//   - TestForgedLogLinesStayOneLine: a path with %0A or %0D%0A (to an
//     origin that is down, and to a disabled admin panel) is logged on one
//     line: no log line begins with the text after the break. A Host with
//     a CR, raw or encoded, is refused with 400 before it is logged.
//
// # The admin panel (admin_test.go)
//
//   - TestAdminPasswordCannotBeGuessedAtSpeed: after 10 wrong passwords in
//     a minute, one address is answered 429; the right password from
//     another address still opens the panel.
//   - TestAShortAdminPasswordDisablesThePanel: an admin_password shorter
//     than 16 characters disables the panel, with a message saying so.
//
// # Faults (faults_test.go)
//
//   - TestAStoreOutageCostsNobodyTheirPlaceOrSession: the store is down
//     for longer than the claim window, the queue timeout and the
//     heartbeat while a shopper browses and two visitors poll; afterwards
//     both keep their tickets and order, and the shopper is still in.
//   - TestALostAnswerCostsNoClaim: the store turns a called ticket into a
//     session but its answer is lost (the visitor sees the busy page);
//     the next polls get that same session: no new ticket at the back,
//     no second place.
//
// # Invite links (invites_test.go)
//
//   - TestAnInvitedVisitorIsCalledAheadWithinTheShare: three visitors
//     invited after ten others joined a full room hold priority places
//     (the queue page says so) and are called first, but one in five
//     admissions (priority_share 0.2) while the others wait.
//   - TestASingleUseInviteSeatsOneClient: a single-use link followed again
//     by its client, with its cookie or without, keeps one place; another
//     client is refused with a 410 page and a log line saying why.
//   - TestATamperedInviteIsRefusedWithoutAStoreCall: a changed code gets a
//     400 page and no store call; eleven refused links in a minute put
//     the client in the penalty box (429), good link or not.
//
// Not here: the edge's clock cannot be set over HTTP; the store's own
// tests cover a clock that jumps.
package attack
