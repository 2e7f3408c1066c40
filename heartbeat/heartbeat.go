// Package heartbeat is the script origin pages include to keep an admitted
// reader's session while the page is visible: the edge serves it at
// ScriptPath, and it posts to Path every interval the edge answers with
// (see edge/session.go for the answer, docs/visitors.md "Keeping readers' places:
// the heartbeat" for its use).
package heartbeat

import (
	"crypto/sha256"
	_ "embed" // the script
	"encoding/hex"
	"time"
)

// The edge's paths for the heartbeat: the script pings Path, and pages load
// it from ScriptPath.
const (
	Path       = "/_wr/heartbeat"
	ScriptPath = "/_wr/heartbeat.js"
)

// Script is the heartbeat script, served as it is written.
//
//go:embed heartbeat.js
var Script string

// Version names the script's content: a tag asking for ScriptPath?v=Version
// may be cached for a year, since another script has another version. It
// is computed when asked, not at init (tools/edgerules), and asked only
// where the script or its tag is served.
func Version() string {
	sum := sha256.Sum256([]byte(Script))
	return hex.EncodeToString(sum[:8])
}

// Every is the seconds between the script's pings for a room whose
// heartbeat (queue.Room.Heartbeat) is h: rounded up, so that each ping
// finds the session's renewal due, and at least one.
func Every(h time.Duration) int {
	return max(1, int((h+time.Second-1)/time.Second))
}

// Tag is the element an origin page includes to run the heartbeat.
func Tag() string {
	return `<script src="` + ScriptPath + `?v=` + Version() + `" defer></script>`
}
