package e2e

import (
	"fmt"
	"regexp"
	"strings"
	"testing"

	"github.com/edgequeue/waitingroom/tools/devstack"
)

// sandboxRequests is how many requests the host lets one sandbox serve,
// as Viceroy does (its first and five more).
const sandboxRequests = 6

var reusedLine = regexp.MustCompile(`fastlyhost: sandbox (\d+) serves request (\d+) \(reused: its request (\d+)\)`)

// startReusing starts the stack with sandboxes reused, whatever the
// build's default.
func startReusing(t *testing.T) *env {
	return startStack(t, loadTimeout, room, sandboxRequestsAt("100"))
}

// Both builds reuse sandboxes when sandbox_requests is not set (the TinyGo
// build for 20 requests, more than the host's six): the TinyGo build did
// not until its heap started large (BENCHMARKS.md, "Reusable sandboxes").
func TestSandboxesReusedByDefault(t *testing.T) {
	e := startStack(t, loadTimeout, room, nil)
	v := &visitor{e: e}
	for i := 0; i < 2*sandboxRequests; i++ {
		if !v.in(fmt.Sprintf("/page/%d", i)) {
			t.Fatalf("request %d did not reach the origin", i)
		}
	}
	e.checkAllReused()
}

// checkAllReused fails unless the host served its requests in as few
// sandboxes as it lets them (sandboxRequests each), every request after a
// sandbox's first logged as reused: otherwise the test did not show what
// it claims, about requests of one sandbox.
func (e *env) checkAllReused() {
	e.t.Helper()
	requests, sandboxes := e.stack.Host.Served()
	if want := (requests + sandboxRequests - 1) / sandboxRequests; sandboxes != want {
		e.t.Fatalf("%d requests in %d sandboxes, want %d: %s", requests, sandboxes, want, e.logs)
	}
	if n := uint64(len(reusedLine.FindAllString(e.logs.String(), -1))); n != requests-sandboxes {
		e.t.Fatalf("%d reused requests in the log, want %d: %s", n, requests-sandboxes, e.logs)
	}
}

// Two visitors served by one sandbox each see only their own state: the
// first is let in, the second waits, whatever order their requests come in.
func TestReusedSandboxKeepsVisitorsApart(t *testing.T) {
	e := startReusing(t)
	first, second := &visitor{e: e}, &visitor{e: e}
	if !first.in("/") {
		t.Fatal("the first visitor should take the burst")
	}
	if a := second.get("/"); !strings.Contains(a.body, "You are in line") || !strings.Contains(a.body, `<dd id="wr-position">1</dd>`) {
		t.Fatalf("the second visitor: %d %.300s", a.status, a.body)
	}
	if first.cookie == second.cookie {
		t.Fatal("both visitors hold the same pass")
	}
	for i := 0; i < 2; i++ {
		if !first.in(fmt.Sprintf("/page/%d", i)) {
			t.Fatalf("the first visitor's request %d did not reach the origin", i)
		}
		if p := second.poll(); p.Ticket != 2 || p.Ahead != 0 {
			t.Fatalf("the second visitor's poll %d: %+v", i, p)
		}
	}
	// A visitor without a cookie, after both, is new: in line behind the
	// second, not holding either's place.
	if p := (&visitor{e: e}).poll(); p.Ticket != 3 || p.Ahead != 1 {
		t.Fatalf("a third visitor: %+v", p)
	}
	e.checkAllReused()
}

// An operator's change to the config store takes effect at the next
// request of a sandbox that has served requests before it.
func TestReusedSandboxSeesConfigChange(t *testing.T) {
	e := startReusing(t)
	first, second := &visitor{e: e}, &visitor{e: e}
	if !first.in("/") {
		t.Fatal("the first visitor should take the burst")
	}
	if second.in("/") {
		t.Fatal("the second visitor should wait")
	}
	_, before := e.stack.Host.Served()
	e.stack.Manifest.ConfigStores[devstack.ConfigStore]["room.shop"] = strings.Replace(room, `"paths"`, `"mode":"passthrough","paths"`, 1)
	if !second.in("/") {
		t.Fatal("the room is passthrough now, yet the second visitor still waits")
	}
	if _, after := e.stack.Host.Served(); after != before {
		t.Fatalf("the change was seen by a fresh sandbox (%d sandboxes, then %d), not a reused one", before, after)
	}
	e.checkAllReused()
}
