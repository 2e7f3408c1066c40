//go:build !tinygo

package platform

import "github.com/edgequeue/waitingroom/edge"

// defaultSandboxRequests is the Go build's: a reused sandbox skips Go's
// costly start (BENCHMARKS.md, "Reusable sandboxes").
const defaultSandboxRequests = edge.DefaultSandboxRequests
