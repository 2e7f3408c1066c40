package sim

import (
	"testing"
	"time"

	"github.com/edgequeue/waitingroom/tools/redistest"
)

func TestZZ(t *testing.T) {
	cfg := Crowd(20000, 4000, 1500, 40*time.Minute)
	runOurs(t, cfg, `"max_active_users":1500`)
	tc, gate := Models(redistest.Start(t), redistest.Start(t), cfg)
	runPolicy(t, cfg, tc, tc.Redis.Addr)
	runPolicy(t, cfg, gate, gate.Redis.Addr)
}
