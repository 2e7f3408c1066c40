// Package heartbeatjs runs the heartbeat script (package heartbeat) in
// Node against a fake page with a virtual clock: what it pings and when,
// while visible and hidden, and when it sends the departure beacon. The
// browser suite (tools/suites/pagetest) runs it in Chromium through the edge.
package heartbeatjs

import (
	"encoding/json"
	"os"
	"os/exec"
	"path/filepath"
	"reflect"
	"testing"

	"github.com/edgequeue/waitingroom/heartbeat"
)

// step is one thing that happens to the page (see harness.js).
type step struct {
	Answer     any    `json:"answer,omitempty"` // the next ping's answer: a JSON object, "error", or 503
	Load       bool   `json:"load,omitempty"`
	Advance    int    `json:"advance,omitempty"` // milliseconds
	Visibility string `json:"visibility,omitempty"`
	PageHide   *bool  `json:"pagehide,omitempty"`
}

type answer struct {
	Next   int  `json:"next_seconds"`
	Beacon bool `json:"leave_beacon"`
}

func TestScriptInAFakePage(t *testing.T) {
	node, err := exec.LookPath("node")
	if err != nil {
		t.Fatalf("node is not installed: %v", err)
	}
	script := filepath.Join(t.TempDir(), "heartbeat.js")
	if err := os.WriteFile(script, []byte(heartbeat.Script), 0o644); err != nil {
		t.Fatal(err)
	}
	yes, no := true, false
	steps := []step{
		{Load: true, Answer: answer{3, true}},            // t=0: a ping as the page loads
		{Advance: 3000, Answer: answer{3, true}},         // t=3000: the next, after next_seconds
		{Advance: 1000, Visibility: "hidden"},            // t=4000: hidden: no more pings
		{Advance: 10000},                                 // t=14000
		{Visibility: "visible", Answer: answer{5, true}}, // at once when shown again
		{Advance: 5000, Answer: "error"},                 // t=19000: a failed ping keeps the interval
		{Advance: 5000, Answer: 503},                     // t=24000: so does a refusal
		{Advance: 5000, Answer: answer{0, false}},        // t=29000: nothing to keep: the pings stop
		{Advance: 60000},                                 // t=89000
		{PageHide: &yes},                                 // no beacon asked
		{Visibility: "hidden"},
		{Visibility: "visible", Answer: answer{10, true}}, // t=89000: shown again, asks
		{PageHide: &yes},                                  // into the back/forward cache: no beacon
		{PageHide: &no},                                   // left for good: the beacon
	}
	arg, err := json.Marshal(steps)
	if err != nil {
		t.Fatal(err)
	}
	out, err := exec.Command(node, "harness.js", script, string(arg)).Output()
	if err != nil {
		t.Fatalf("node: %v: %s", err, out)
	}
	var got struct {
		Log    [][]any  `json:"log"`
		Leaked []string `json:"leaked"`
	}
	if err := json.Unmarshal(out, &got); err != nil {
		t.Fatalf("%s: %v", out, err)
	}
	ping := func(at float64) []any { return []any{at, "ping", heartbeat.Path, "POST", "same-origin"} }
	want := [][]any{ping(0), ping(3000), ping(14000), ping(19000), ping(24000), ping(29000), ping(89000),
		{89000.0, "beacon", "/_wr/leave"}}
	if !reflect.DeepEqual(got.Log, want) {
		t.Errorf("the script did\n%v\nwant\n%v", got.Log, want)
	}
	if len(got.Leaked) != 0 {
		t.Errorf("the script left globals: %v", got.Leaked)
	}
}
