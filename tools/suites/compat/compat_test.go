// Package compat checks the Upstash REST stand-in against Upstash's own
// JavaScript client, so that what the stand-in accepts is what Upstash does.
package compat

import (
	"os"
	"os/exec"
	"path/filepath"
	"testing"

	"github.com/edgequeue/waitingroom/tools/redistest"
)

func TestUpstashClient(t *testing.T) {
	node, err := exec.LookPath("node")
	if err != nil {
		t.Fatalf("node is not installed: %v", err)
	}
	if _, err := os.Stat(filepath.Join("node_modules", "@upstash", "redis")); err != nil {
		t.Fatalf("@upstash/redis is not installed: run `npm ci` in tools/suites/compat (make test does): %v", err)
	}
	_, url := redistest.Upstash(t)
	cmd := exec.Command(node, "compat.mjs")
	cmd.Env = append(os.Environ(), "UPSTASH_REDIS_REST_URL="+url, "UPSTASH_REDIS_REST_TOKEN="+redistest.Token,
		"UPSTASH_DISABLE_TELEMETRY=1")
	out, err := cmd.CombinedOutput()
	t.Logf("%s", out)
	if err != nil {
		t.Fatalf("@upstash/redis against the stand-in: %v", err)
	}
}
