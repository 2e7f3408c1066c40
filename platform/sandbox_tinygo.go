//go:build tinygo

package platform

// defaultSandboxRequests is the TinyGo build's: few enough requests that a
// sandbox ends before its 8 MiB heap fills (about forty queue pages), so it
// runs no collection. TinyGo 0.33's collections cost tens to hundreds of
// milliseconds and grow with what a sandbox has served, so a sandbox that
// lives on to collect costs more per request than a fresh one
// (BENCHMARKS.md, "Reusable sandboxes"). sandbox_requests still sets it.
const defaultSandboxRequests = 20
